// Every WebAssembly export refuses a key it does not know, naming it (the one reader at the door,
// crates/ferromotion-wasm/src/door.rs): a misspelt option must never be ignored silently.
//
// Each export is called once as written below (it must answer), then once per object it takes
// (and per object nested in one: a config's drop) with one unknown key added to that object
// alone: the call must throw the core's `Scenario` error whose message and `fields.reason` name
// that key. An export of the module that is missing from both tables fails the test: add it to
// CALLS (it takes an object or a JSON document) or to NO_OBJECT (it takes numbers only).
//
//   node tests/golden/unknown_keys.mjs
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const pkg = join(root, "target/wasm/node-pkg/ferromotion_wasm.js");
if (!existsSync(pkg)) {
  console.error(`unknown_keys: ${pkg} is missing: run \`make wasm\``);
  process.exit(2);
}
const wasm = createRequire(import.meta.url)(pkg);

const KEY = "misspelt_key";
const DROP = { height: 1, velocity: 0, t_final: 0.8, gravity: 9.81, mass: 1, zeta: 0.1606 };
const K = 1e6;
const DT = 1e-4;
const T = [0.2, 0.4, 0.6, 0.8];
/** Observations the fit reads: the drop's own heights by the flow route (one bounce by 0.8 s). */
const OBS = { t: T, y: wasm.fitPredict(DROP, T, { route: "flow", k: K }).y, sigma_y: 0.01 };

/**
 * [export, call, slow]: `call(s)` makes the call, passing every object argument through
 * `s(slot, value)`, which returns the value as it is or with the unknown key added. `slow`:
 * the valid call is not made (it runs for seconds), only the refusals.
 */
const CALLS = [
  ["Workbench", (s) => new wasm.Workbench(s("config", { drop: s("config.drop", DROP), k: K,
    tolerance_options: s("config.tolerance_options", { rtol: 1e-6 }) })).free()],
  ["Workbench.curve", (s) => withBench((b) => b.curve(Float64Array.of(1e5, 1e6), s("options", { corrected: true })))],
  ["quadruped", (s) => wasm.quadruped(s("config", { max_steps: 10 })), true],
  ["fit", (s) => wasm.fit(s("drop", DROP), s("observations", OBS),
    s("options", { route: "flow", k: K, params: ["height"] }))],
  ["fitPredict", (s) => wasm.fitPredict(s("drop", DROP), T, s("options", { route: "flow", k: K }))],
  ["evaluateJson", (s) => wasm.evaluateJson(JSON.stringify(s("scenario", { drop: s("scenario.drop", DROP), k: K, dt: DT })))],
  ["fixedJson", (s) => wasm.fixedJson(JSON.stringify(s("drop", DROP)), K, DT)],
  ["validateDrop", (s) => wasm.validateDrop(s("drop", DROP))],
  ["dropImpactSpeed", (s) => wasm.dropImpactSpeed(s("drop", DROP))],
  ["dropFirstImpactTime", (s) => wasm.dropFirstImpactTime(s("drop", DROP))],
  ["dropTimeOfImpactTerm", (s) => wasm.dropTimeOfImpactTerm(s("drop", DROP), 4.0)],
  ["routeExact", (s) => wasm.routeExact(s("drop", DROP), s("options", { graze_speed: 1e-3 }))],
  ["routeFixed", (s) => wasm.routeFixed(s("drop", DROP), K, DT, s("options", { max_steps: 1e7 }))],
  ["routeCorrected", (s) => wasm.routeCorrected(s("drop", DROP), K, DT, s("options", { locate: true }))],
  ["routeFlow", (s) => wasm.routeFlow(s("drop", DROP), K, s("options", {}))],
  ["routeTolerance", (s) => wasm.routeTolerance(s("drop", DROP), K, s("options", { rtol: 1e-6 }))],
  ["routeRk4", (s) => wasm.routeRk4(s("drop", DROP), K, DT, s("options", {}))],
  ["blameSplit", (s) => wasm.blameSplit(s("drop", DROP), K, DT)],
  ["divergenceExponent", (s) => wasm.divergenceExponent(s("drop", DROP), DT)],
  ["equalBudget", (s) => wasm.equalBudget(s("drop", DROP), K, 2000), true],
  ["twoContacts", (s) => wasm.twoContacts(s("options", { angle_degrees: 100, per_side: 1 }))],
  ["sweep", (s) => wasm.sweep(s("drop", DROP), Float64Array.of(1e5, 1e6),
    s("options", { dt: DT, tolerance: s("options.tolerance", { rtol: 1e-6 }) }))],
  ["checkGradient", (s) => wasm.checkGradient((x) => x[0] * x[0], [2], [1], s("objective", { name: "x^2" }),
    undefined, undefined, s("options", { random_directions: 1 }), [])],
];

/** Exports that take no object (numbers, or nothing), and the module's own entry points. */
const NO_OBJECT = [
  "Workbench.config", "Workbench.setLog10K", "Workbench.setK", "Workbench.setDtDivisor", "Workbench.setDt",
  "Workbench.setTolerance", "Workbench.readout", "Workbench.hybridDrop", "Workbench.free",
  "descent", "maxSteps", "grazeSpeed", "limitRestitution", "version", "scriptDefaults", "logGrid", "fitDemo",
];

function withBench(f) {
  const b = new wasm.Workbench();
  try {
    return f(b);
  } finally {
    b.free();
  }
}

// The module's exports (functions, and the Workbench class's methods) against the two tables.
const exported = Object.keys(wasm).filter((n) => typeof wasm[n] === "function" && !/^(start|initSync|__)/.test(n));
const methods = Object.getOwnPropertyNames(wasm.Workbench.prototype)
  .filter((n) => n !== "constructor" && !n.startsWith("__") && typeof wasm.Workbench.prototype[n] === "function")
  .map((n) => `Workbench.${n}`);
const known = new Set([...CALLS.map(([name]) => name), ...NO_OBJECT]);
const failures = [];
for (const name of [...exported, ...methods]) {
  if (!known.has(name)) failures.push(`${name}: an export this test does not know: add it to CALLS or NO_OBJECT`);
}
for (const name of known) {
  const [cls, method] = name.split(".");
  const there = method ? typeof wasm[cls]?.prototype?.[method] === "function" : typeof wasm[name] === "function";
  if (!there) failures.push(`${name}: listed here but not exported`);
}

let refusals = 0;
for (const [name, call, slow] of CALLS) {
  const slots = [];
  const record = (slot, value) => {
    slots.push(slot);
    return value;
  };
  if (slow) {
    try {
      call(record);
    } catch {
      // only the slots were wanted; the slow call's own answer is not
    }
  } else {
    try {
      call(record);
    } catch (e) {
      failures.push(`${name}: the valid call failed: ${e.name}: ${e.message}`);
      continue;
    }
  }
  for (const target of slots) {
    const spoil = (slot, value) => (slot === target ? { ...value, [KEY]: 1 } : value);
    try {
      call(spoil);
      failures.push(`${name}: an unknown key in \`${target}\` was accepted`);
    } catch (e) {
      const named = e.name === "Scenario" && e.message.includes(`\`${KEY}\``) && String(e.fields?.reason).includes(KEY);
      if (named) refusals += 1;
      else failures.push(`${name}: an unknown key in \`${target}\`: ${e.name}: ${e.message} (fields ${JSON.stringify(e.fields)})`);
    }
  }
}

for (const f of failures) console.log(`FAIL ${f}`);
console.log(`unknown_keys: ${exported.length} exports and ${methods.length} Workbench methods; ` +
  `${refusals} unknown keys refused by name, ${failures.length} failed`);
process.exit(failures.length ? 1 : 0);
