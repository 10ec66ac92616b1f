// The quadruped's report, WebAssembly against native, bit for bit.
//
//   node tests/golden/quadruped_parity.mjs
//
// Needs target/wasm/node-pkg/ (`make wasm`) and target/golden/quadruped_native.json
// (`cargo run --release -p ferromotion-quadruped --example quadruped_table -- --json`, the
// default experiment without its trajectories). Runs `quadruped({})` (the same defaults;
// the report arrives as a JS value), drops the trajectories, and compares every number with
// Object.is. The native side is JSON text, which has no NaN or Infinity (serde_json writes
// null): a native null against a wasm non-finite number counts as the same value.
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const pkg = join(root, "target/wasm/node-pkg/ferromotion_wasm.js");
const nativePath = join(root, "target/golden/quadruped_native.json");
for (const p of [pkg, nativePath]) {
  if (!existsSync(p)) {
    console.error(`quadruped parity: ${p} is missing (make wasm; the quadruped_table example with --json)`);
    process.exit(2);
  }
}
const wasm = createRequire(import.meta.url)(pkg);
const native = JSON.parse(readFileSync(nativePath, "utf8"));
const report = wasm.quadruped({});
for (const law of [report.rigid, ...report.penalty]) law.trajectory = null;

let compared = 0;
const diffs = [];
function walk(a, b, path) {
  if (typeof a === "number" && typeof b === "number") {
    compared += 1;
    if (!Object.is(a, b)) diffs.push(`${path}: native ${a} wasm ${b}`);
  } else if (a === null && typeof b === "number" && !Number.isFinite(b)) {
    compared += 1;
  } else if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) diffs.push(`${path}: lengths ${a.length} vs ${b.length}`);
    a.forEach((x, i) => walk(x, b[i], `${path}[${i}]`));
  } else if (a && b && typeof a === "object" && typeof b === "object") {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) walk(a[k], b[k], `${path}.${k}`);
  } else if (a !== b) {
    diffs.push(`${path}: native ${JSON.stringify(a)} wasm ${JSON.stringify(b)}`);
  }
}
walk(native, report, "report");
if (diffs.length) {
  console.error(`quadruped parity: ${diffs.length} differences of ${compared} numbers, first:\n  ${diffs.slice(0, 8).join("\n  ")}`);
  process.exit(1);
}
console.log(`quadruped parity: ${compared} numbers bit-identical (native vs WebAssembly)`);
