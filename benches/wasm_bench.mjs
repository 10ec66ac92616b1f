// The core in WebAssembly under Node, for `make bench`: ns per step of the fixed route with
// its tangent (wasm-bindgen --target nodejs build in target/wasm/node-pkg, `make wasm`).
// Prints one JSON object on stdout. A benchmark: it asserts nothing.
//
//   node benches/wasm_bench.mjs [K] [DT]      (default k = 1e6 N/m, dt = 1e-6 s)
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { measureFixed } from "./wasm_timing.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = join(root, "target/wasm/node-pkg/ferromotion_wasm.js");
if (!existsSync(pkg)) {
  console.error(`wasm_bench: ${pkg} is missing: run \`make wasm\``);
  process.exit(2);
}
const wasm = createRequire(import.meta.url)(pkg);
const k = Number(process.argv[2] ?? 1e6);
const dt = Number(process.argv[3] ?? 1e-6);
const r = measureFixed(wasm, k, dt);
console.log(JSON.stringify({ impl: "wasm-node", node: process.version, ...r }));
