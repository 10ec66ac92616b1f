// Golden parity: the WebAssembly build against the native build, bit for bit (docs/model.md §11).
//
//   node tests/golden/parity.mjs
//
// Needs target/wasm/node-pkg/ (`make wasm`: wasm-bindgen --target nodejs) and
// target/golden/native.json (the core's `golden_dump` example, see scripts/test.sh). Runs
// `evaluateJson` on every drop of tests/golden/drops.json and compares the parsed result
// with the native dump: every number with Object.is, every other value with ===. Both
// sides are printed by serde_json (shortest round-trip digits) and JSON.parse rounds
// correctly, so equal parsed numbers means equal bits. Exits 1 on any difference.
//
// Wall times are not physics and differ from run to run: `scenario::evaluate` takes no
// clock, so its rows carry `wall_s: null` on both sides, and a key named in UNTIMED is
// compared by kind only (both null, or both numbers), never by value (docs/model.md §11).
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const paths = {
  pkg: join(root, "target/wasm/node-pkg/ferromotion_wasm.js"),
  native: join(root, "target/golden/native.json"),
  drops: join(root, "tests/golden/drops.json"),
};
const howTo = {
  pkg: "run `make wasm` (scripts/wasm.sh)",
  native:
    "run `cargo run --release -p ferromotion-core --example golden_dump > target/golden/native.json`",
  drops: "run `python3 tests/golden/make_drops.py`",
};
for (const [what, p] of Object.entries(paths)) {
  if (!existsSync(p)) {
    console.error(`parity: ${p} is missing: ${howTo[what]}`);
    process.exit(2);
  }
}

const wasm = createRequire(import.meta.url)(paths.pkg);
const drops = JSON.parse(readFileSync(paths.drops, "utf8"));
const native = JSON.parse(readFileSync(paths.native, "utf8"));
if (native.length !== drops.length) {
  console.error(
    `parity: native.json has ${native.length} entries for ${drops.length} drops; ` +
      `regenerate it: ${howTo.native}`,
  );
  process.exit(1);
}

let numbers = 0;
const diffs = [];
const UNTIMED = new Set(["wall_s", "wall_resolution_s"]);
const kind = (v) => (v === null ? "null" : typeof v);
function compare(a, b, where) {
  if (UNTIMED.has(where.split(".").at(-1))) {
    if (kind(a) !== kind(b) || !["null", "number"].includes(kind(a))) {
      diffs.push(`${where}: native ${JSON.stringify(a)} vs wasm ${JSON.stringify(b)} (a wall time: null or a number on both sides)`);
    }
    return;
  }
  if (typeof a === "number" && typeof b === "number") {
    numbers += 1;
    if (!Object.is(a, b)) diffs.push(`${where}: native ${a} vs wasm ${b}`);
  } else if (a !== null && b !== null && typeof a === "object" && typeof b === "object") {
    if (Array.isArray(a) !== Array.isArray(b)) {
      diffs.push(`${where}: native ${JSON.stringify(a)} vs wasm ${JSON.stringify(b)}`);
      return;
    }
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      compare(a[key], b[key], Array.isArray(a) ? `${where}[${key}]` : `${where}.${key}`);
    }
  } else if (a !== b) {
    diffs.push(`${where}: native ${JSON.stringify(a)} vs wasm ${JSON.stringify(b)}`);
  }
}

const t0 = performance.now();
let refused = 0;
drops.forEach((drop, i) => {
  let got;
  try {
    got = JSON.parse(wasm.evaluateJson(JSON.stringify(drop)));
  } catch (e) {
    refused += 1;
    got = { error: e.name, message: e.message };
  }
  compare(native[i], got, `drop ${i} (k = ${drop.k}, dt = ${drop.dt})`);
});
const seconds = ((performance.now() - t0) / 1000).toFixed(2);

// The error mapping (crates/ferromotion-wasm/src/errors.rs): a refused input throws an
// Error named after the core's variant, carrying the core's message unchanged.
const refusals = [
  [() => wasm.evaluateJson('{"k": -1}'), "InvalidParameter", "invalid parameter `k` = -1: must be finite and > 0"],
  [() => wasm.evaluateJson('{"k": 1e6, "drop": {"t_final": 0.1}}'), "NoImpact", "no impact before t_final = 0.1 s"],
  [() => wasm.evaluateJson('{"k": 1e6, "spring": 1}'), "Scenario", "invalid scenario: unknown field `spring`"],
  [() => wasm.limitRestitution(1.5), "InvalidParameter", "invalid parameter `zeta` = 1.5"],
];
for (const [call, name, start] of refusals) {
  try {
    call();
    diffs.push(`expected a ${name} error, got a result`);
  } catch (e) {
    if (!(e instanceof Error) || e.name !== name || !e.message.startsWith(start)) {
      diffs.push(`expected ${name}: ${start}..., got ${e && e.name}: ${e && e.message}`);
    }
  }
}

if (diffs.length > 0) {
  console.error(`parity: FAILED: ${diffs.length} differences in ${numbers} numbers; the first few:`);
  for (const d of diffs.slice(0, 8)) console.error(`  ${d}`);
  process.exit(1);
}
console.log(
  `parity: ${numbers} numbers over ${drops.length} drops (${refused} refused on both sides) ` +
    `bit-identical, native vs wasm ${wasm.version()}; wasm run ${seconds} s; ` +
    `${refusals.length} refusals named and worded as in the core`,
);
