// The core's step cap reaches the WebAssembly build (docs/model.md §4, §9; issue 8): a dt that would
// need more steps than the cap (1e7 per rollout) is refused with the core's TooManySteps
// error, computed from T/dt before any step is run, so the lab shows a message instead of a
// frozen tab; and the refused control leaves the bench as it was.
//
//   node tests/golden/step_cap.mjs      (needs target/wasm/node-pkg, `make wasm`)
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const pkg = join(root, "target/wasm/node-pkg/ferromotion_wasm.js");
if (!existsSync(pkg)) {
  console.error(`step_cap: ${pkg} is missing: run \`make wasm\``);
  process.exit(2);
}
const wasm = createRequire(import.meta.url)(pkg);

const CAP = 10_000_000;
const DROP = JSON.stringify({ height: 1.0, velocity: 0.0, t_final: 0.8, gravity: 9.81, mass: 1.0, zeta: 0.1606 });

/** `fn` throws the core's TooManySteps, saying how many steps it would have needed
 * (`steps`: a regular expression source). */
function refusesSteps(fn, steps) {
  assert.throws(fn, (e) => {
    assert.ok(e instanceof Error && !(e instanceof WebAssembly.RuntimeError), `not a JS Error: ${e}`);
    assert.equal(e.name, "TooManySteps", e.message);
    assert.match(e.message, new RegExp(`goes past its cap of ${CAP.toLocaleString("en-US")} steps \\(\`max_steps\`\\): T/dt = ${steps} steps would be needed`));
    return true;
  });
}

const checks = {
  "maxSteps() is the core's cap": () => assert.equal(wasm.maxSteps(), CAP),

  "a Workbench with dt = 1e-8 s (8e7 steps) is refused": () =>
    refusesSteps(() => new wasm.Workbench({ k: 1e6, base_dt: 1e-8 }), "8e7"),

  // The bench's dt-refinement readout always runs base dt/10 and dt/100: the bench is
  // refused when its finest step (base dt/100) would pass the cap.
  "a bench at base dt = 8e-6 s (dt/100: exactly the cap, 1e7 steps) is accepted; 5e-6 s (1.6e7) is not": () => {
    new wasm.Workbench({ k: 1e6, base_dt: 8e-6 }).free();
    refusesSteps(() => new wasm.Workbench({ k: 1e6, base_dt: 5e-6 }), "1\\.(6|59+\\d*)e7");
  },

  "a bench at base dt = 1e-6 s (dt/100 needs 8e7 steps) is refused; one at 1e-4 s takes every button": () => {
    refusesSteps(() => new wasm.Workbench({ k: 1e6, base_dt: 1e-6 }), "8e7");
    const b = new wasm.Workbench({ k: 1e6, base_dt: 1e-4 });
    b.setDtDivisor(100);
    b.setDtDivisor(10);
    b.setDtDivisor(1);
    b.setDt(1e-6);
    assert.equal(b.readout().dt_divisor, 100);
    b.setK(1e4);
    b.free();
  },

  "the fixed route and the scenario evaluation refuse it too": () => {
    refusesSteps(() => wasm.fixedJson(DROP, 1e6, 1e-8), "8e7");
    refusesSteps(() => wasm.evaluateJson(JSON.stringify({ k: 1e6, dt: 1e-8 })), "8e7");
  },

  "dt = 1e-6 s (8e5 steps) works": () => {
    const r = JSON.parse(wasm.fixedJson(DROP, 1e6, 1e-6));
    assert.equal(r.cost.steps, 800_000);
    assert.ok(r.jacobian.every(Number.isFinite));
  },
};

let passed = 0;
let failed = 0;
for (const [name, check] of Object.entries(checks)) {
  try {
    check();
    passed += 1;
    console.log(`ok   ${name}`);
  } catch (e) {
    failed += 1;
    console.log(`FAIL ${name}\n     ${e.message.split("\n").join("\n     ")}`);
  }
}
console.log(`step_cap: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
