// Fuzz the WebAssembly boundary from Node (docs/model.md §9, issue 8): seeded random calls of every
// export of the `--target nodejs` build, with plausible, huge, tiny, non-finite and random-bit
// numbers, broken JSON and malformed option objects (wrong types, unknown keys). Property: each
// call returns a finite result (every number in the returned value or JSON finite, no `null`
// inside a number array) or throws a JS `Error` carrying
// the core's message, named after the core's variant, with the variant's fields as an object
// (errors.rs) -- never a
// `WebAssembly.RuntimeError` (a Rust panic is an `unreachable` trap, and a trapped instance
// is not to be trusted again). After every error a canary call must return the same answer
// as before the fuzzing started: the module still works.
//
//   node tests/golden/fuzz_wasm.mjs            (FUZZ_CALLS, default 3000; FUZZ_SEED)
//
// Expensive exports are called at a lower rate (a readout runs ~15 rollouts, the descent
// experiment ~150 ms); the quadruped's experiment takes ~10 s in wasm when its configuration
// is valid, so it is fuzzed with a tiny `max_steps` (its refusal paths, not its physics).
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const pkg = join(root, "target/wasm/node-pkg/ferromotion_wasm.js");
if (!existsSync(pkg)) {
  console.error(`fuzz_wasm: ${pkg} is missing: run \`make wasm\``);
  process.exit(2);
}
const wasm = createRequire(import.meta.url)(pkg);

const CALLS = Number(process.env.FUZZ_CALLS ?? 3000);
const SEED = Number(process.env.FUZZ_SEED ?? 20261129) >>> 0;
// The core's FerroError variants (FerroError::kind), and "Error" for a scenario that fails
// to parse before the core sees it (serde_json's message, still a plain Error).
const KINDS = new Set([
  "InvalidParameter", "StepDoesNotDivide", "TooManySteps", "NoImpact", "Grazing",
  "StepSizeUnderflow", "StepTooSmall", "NonFinite", "HiddenState", "TwoEventsInOneStep", "EventsInAdjacentSteps",
  "ProbeDependent",
  "Scenario", "ContactSolveFailed", "Unstable", "Error",
]);

// --- seeded randomness (mulberry32) --------------------------------------------------------
let state = SEED;
function random() {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const chance = (p) => random() < p;
const pick = (xs) => xs[Math.floor(random() * xs.length)];
const uniform = (lo, hi) => lo + (hi - lo) * random();
const logUniform = (lo, hi) => 10 ** uniform(Math.log10(lo), Math.log10(hi));

const SPECIAL = [
  NaN, Infinity, -Infinity, 0, -0, 5e-324, -5e-324, 2.2250738585072014e-308, Number.MAX_VALUE,
  -Number.MAX_VALUE, 1e-300, 1e300, -1e300, 1, -1, 0.5, 2 ** 53, 2 ** 32, -(2 ** 31), 1e-8, 1e12,
];
const bits = new DataView(new ArrayBuffer(8));

/** Any float: special values, random bit patterns, any magnitude with either sign. */
function anyNumber() {
  switch (Math.floor(random() * 4)) {
    case 0:
      return pick(SPECIAL);
    case 1:
      bits.setUint32(0, Math.floor(random() * 2 ** 32));
      bits.setUint32(4, Math.floor(random() * 2 ** 32));
      return bits.getFloat64(0);
    case 2:
      return (chance(0.5) ? -1 : 1) * 10 ** uniform(-320, 309);
    default:
      return uniform(-1e3, 1e3);
  }
}

/** Half the time a plausible value in [lo, hi] (log-uniform when lo > 0), else any float. */
function number(lo, hi) {
  if (chance(0.5)) return lo > 0 ? logUniform(lo, hi) : uniform(lo, hi);
  return anyNumber();
}

/** A JSON token for a number: the number, or (for the non-finite ones JSON cannot carry, and
 * sometimes anyway) text that a JSON parser must refuse or read as the wrong type. */
function token(x) {
  if (Number.isFinite(x) && chance(0.97)) return JSON.stringify(x);
  return pick(["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "null", '"1"', "true", "[]", "{}", ""]);
}

const DROP_FIELDS = {
  height: [0.05, 5], velocity: [-3, 3], t_final: [0.3, 3], gravity: [1, 30], mass: [0.1, 10], zeta: [0, 0.99],
};

/** A drop document: some fields, plausible or not; sometimes an unknown field or broken text. */
function dropText() {
  if (chance(0.03)) return pick(["", "{", "[]", "null", '{"height": }', "\u0000", "{}".repeat(3), "x".repeat(100)]);
  const fields = Object.entries(DROP_FIELDS)
    .filter(() => chance(0.5))
    .map(([name, [lo, hi]]) => `"${name}": ${token(number(lo, hi))}`);
  if (chance(0.03)) fields.push(`"${pick(["k", "Height", "extra", ""])}": 1`);
  return `{${fields.join(", ")}}`;
}

const stiffness = () => number(10, 1e9);
const step = () => (chance(0.6) ? pick([1e-3, 2e-4, 1e-4, 5e-5, 1e-5]) : anyNumber());
const ks = () => Float64Array.from({ length: Math.floor(random() * 5) }, stiffness);

function scenarioText() {
  if (chance(0.05)) return dropText();
  const parts = [];
  if (chance(0.7)) parts.push(`"drop": ${dropText()}`);
  if (chance(0.95)) parts.push(`"k": ${token(stiffness())}`);
  if (chance(0.7)) parts.push(`"dt": ${token(step())}`);
  return `{${parts.join(", ")}}`;
}

/** A quadruped configuration that the core refuses quickly: a step cap of a few steps, and
 * often one field replaced by a bad value. */
function quadrupedText() {
  const fields = [`"max_steps": ${pick([0, 1, 10])}`];
  for (const name of ["dt", "t_final", "damping_ratio", "reference_mass", "clearance", "speed", "typical_probe",
    "probe_tol", "min_probe"]) {
    if (chance(0.2)) fields.push(`"${name}": ${token(anyNumber())}`);
  }
  if (chance(0.2)) fields.push(`"refinement": ${pick([0, 1, 3, -1, 1e12, 0.5])}`);
  if (chance(0.2)) fields.push(`"stiffness": [${Array.from({ length: Math.floor(random() * 3) }, () => token(anyNumber())).join(", ")}]`);
  if (chance(0.05)) fields.push('"robot": {}');
  return chance(0.05) ? dropText() : `{${fields.join(", ")}}`;
}

/** The object a JSON text describes, or the text itself when it is not JSON (a string is
 * not an options object: the binding must refuse it). */
function value(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A bench's controls (the core's WorkbenchConfig) as an object: some keys, plausible or
 * not, sometimes of the wrong type or unknown. */
function configObject() {
  if (chance(0.05)) return pick([null, undefined, "{}", 3, [], { k: "1e6" }, { stiffness: 1 }]);
  const c = {};
  if (chance(0.5)) c.drop = value(dropText());
  if (chance(0.8)) c.k = value(token(stiffness()));
  if (chance(0.6)) c.base_dt = value(token(step()));
  if (chance(0.3)) c.dt_divisor = pick([1, 10, 100, 0, 3, -1, 2 ** 40, NaN, "10"]);
  if (chance(0.3)) c.tolerance = chance(0.8) ? chance(0.5) : "yes";
  if (chance(0.3)) c.tolerance_options = { rtol: number(1e-12, 1e-3), events: chance(0.5) };
  return c;
}

/** A route's options object (the core's FixedOptions/ToleranceOptions): some keys, plausible
 * or not, sometimes of the wrong type or unknown. */
function routeOptions() {
  if (chance(0.05)) return pick([null, undefined, "{}", 3, [], { max_steps: "1e7" }, { extra: 1 }]);
  const o = {};
  if (chance(0.3)) o.max_steps = pick([1e7, 10, 0, -1, 1.5, 2 ** 53, NaN, "10"]);
  if (chance(0.3)) o.rtol = number(1e-12, 1e-3);
  if (chance(0.3)) o.events = chance(0.9) ? chance(0.5) : "yes";
  if (chance(0.2)) o.jacobian = pick(["richardson", "forward", "Forward", 1]);
  return o;
}

// --- the calls -------------------------------------------------------------------------------
let lastArgs = [];
/** Call `fn` with `args`, remembered for the failure report. */
function call(fn, ...args) {
  lastArgs = args;
  return fn(...args);
}
const show = (args) => args.map((a) => (a instanceof Float64Array ? `[${Array.from(a)}]` : JSON.stringify(a) ?? String(a))).join(", ");

const benches = [];
// What each live bench was built from and the controls it accepted since (the last few), so
// that a slow or failing call on a bench can be reproduced.
const history = new Map();
function bench() {
  if (benches.length === 0 || (benches.length < 3 && chance(0.05))) {
    const config = chance(0.3) ? undefined : configObject();
    lastArgs = [config];
    const b = new wasm.Workbench(config); // may throw: counted as an error
    benches.push(b);
    history.set(b, [`new Workbench(${JSON.stringify(config)})`]);
    return b;
  }
  if (benches.length > 1 && chance(0.02)) {
    const [b] = benches.splice(Math.floor(random() * benches.length), 1);
    history.delete(b);
    b.free();
  }
  return pick(benches);
}

// [name, weight, call]: weights are relative call rates.
const EXPORTS = [
  ["fixedJson", 20, () => call(wasm.fixedJson, dropText(), stiffness(), step())],
  ["routeFixed", 5, () => call(wasm.routeFixed, value(dropText()), stiffness(), step(), routeOptions())],
  ["routeTolerance", 1, () => call(wasm.routeTolerance, value(dropText()), stiffness(), routeOptions())],
  ["evaluateJson", 5, () => call(wasm.evaluateJson, scenarioText())],
  ["dropTimeOfImpactTerm", 10, () => call(wasm.dropTimeOfImpactTerm, value(dropText()), chance(0.2) ? undefined : number(1e-4, 10))],
  ["limitRestitution", 10, () => call(wasm.limitRestitution, number(0, 1))],
  ["maxSteps", 1, () => call(wasm.maxSteps)],
  ["grazeSpeed", 1, () => call(wasm.grazeSpeed)],
  ["version", 1, () => call(wasm.version)],
  ["descent", 0.02, () => call(wasm.descent)],
  ["quadruped", 2, () => call(wasm.quadruped, value(quadrupedText()))],
  ["new Workbench", 3, () => bench() && undefined],
  ["Workbench.setLog10K", 10, () => method("setLog10K", number(2, 8))],
  ["Workbench.setK", 10, () => method("setK", stiffness())],
  ["Workbench.setDtDivisor", 10, () => method("setDtDivisor", pick([1, 10, 100, 0, 3, 1000, -1, 2 ** 32 - 1, 2 ** 40, NaN]))],
  ["Workbench.setDt", 10, () => method("setDt", chance(0.5) ? pick([1e-4, 1e-5, 1e-6, 1e-3, 5e-5]) : anyNumber())],
  ["Workbench.setTolerance", 10, () => method("setTolerance", chance(0.5), number(1e-12, 1e-3), chance(0.5),
    pick([undefined, "richardson", "forward", "Forward", ""]))],
  ["Workbench.config", 2, () => method("config")],
  ["Workbench.readout", 0.6, () => method("readout")],
  ["Workbench.curve", 2, () => method("curve", ks(), pick([undefined, null, {}, { corrected: true }, { blame: chance(0.5) }, { extra: 1 }, "x"]))],
  ["Workbench.hybridDrop", 5, () => method("hybridDrop", number(1e-4, 10))],
];
/** Call a method of a random live bench, its arguments and the bench's history remembered. */
function method(name, ...args) {
  const b = bench();
  const past = history.get(b);
  lastArgs = [`bench after ${past.join("; ")}`, ...args];
  const out = b[name](...args);
  if (name.startsWith("set")) {
    past.push(`${name}(${show(args)})`);
    if (past.length > 8) past.splice(1, 1);
  }
  return out;
}
const called = new Set(EXPORTS.map(([name]) => name.replace(/^new /, "").replace(/^Workbench\./, "")));
const total = EXPORTS.reduce((s, [, w]) => s + w, 0);
function choose() {
  let r = random() * total;
  for (const e of EXPORTS) if ((r -= e[1]) < 0) return e;
  return EXPORTS[0];
}

// Exports this file does not know yet are still called, with random arguments by arity.
for (const name of Object.keys(wasm)) {
  if (typeof wasm[name] !== "function" || called.has(name) || name === "start" || name === "initSync") continue;
  const fn = wasm[name];
  EXPORTS.push([`${name} (generic)`, 1, () => call(fn, ...Array.from({ length: fn.length }, () =>
    chance(0.5) ? anyNumber() : dropText()))]);
  console.log(`fuzz_wasm: ${name} is not described here; called with random arguments`);
}

/** Every number in a result is finite, and no number array holds a null (serde's NaN). */
function check(value, where) {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error(`non-finite ${value} at ${where}`);
  } else if (Array.isArray(value)) {
    if (value.some((v) => typeof v === "number") && value.some((v) => v === null)) {
      throw new Error(`null (a NaN?) in a number array at ${where}: ${JSON.stringify(value).slice(0, 200)}`);
    }
    value.forEach((v, i) => check(v, `${where}[${i}]`));
  } else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) check(v, `${where}.${k}`);
  }
}

const DEFAULT_DROP = JSON.stringify({ height: 1, velocity: 0, t_final: 0.8, gravity: 9.81, mass: 1, zeta: 0.1606 });
const canary = () => wasm.fixedJson(DEFAULT_DROP, 1e6, 1e-4) + wasm.limitRestitution(0.1606);
const expected = canary();

const errors = {};
const failures = [];
let results = 0;
let slowest = { ms: 0, name: "" };
for (let i = 0; i < CALLS && failures.length === 0; i++) {
  const [name, , run] = choose();
  lastArgs = [];
  const t0 = performance.now();
  try {
    const out = run();
    if (typeof out === "string") check(name === "version" ? out.length : JSON.parse(out), name);
    else if (out !== undefined) check(out, name);
    results += 1;
  } catch (e) {
    const ms = performance.now() - t0;
    if (ms > slowest.ms) slowest = { ms, name: `${name}(${show(lastArgs)})` };
    if (e instanceof WebAssembly.RuntimeError || !(e instanceof Error)) {
      failures.push(`call ${i} ${name}(${show(lastArgs)}): the module aborted: ${e}`);
      break;
    }
    if (!KINDS.has(e.name) || !e.message) {
      failures.push(`call ${i} ${name}(${show(lastArgs)}): not a core error: ${e.name}: ${e.message}`);
      continue;
    }
    // A core error carries its variant's fields as an object (a JSON parse error, "Error", none).
    if (e.name !== "Error" && (typeof e.fields !== "object" || e.fields === null || Array.isArray(e.fields))) {
      failures.push(`call ${i} ${name}(${show(lastArgs)}): ${e.name} without its fields object`);
      continue;
    }
    errors[e.name] = (errors[e.name] ?? 0) + 1;
    const now = canary();
    if (now !== expected) failures.push(`call ${i} ${name}(${show(lastArgs)}): after ${e.name} the canary changed`);
    continue;
  }
  const ms = performance.now() - t0;
  if (ms > slowest.ms) slowest = { ms, name: `${name}(${show(lastArgs)})` };
}
benches.forEach((b) => b.free());

const nErrors = Object.values(errors).reduce((a, b) => a + b, 0);
const byName = Object.entries(errors).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(", ");
console.log(`fuzz_wasm: seed ${SEED}, ${results + nErrors} calls over ${EXPORTS.length} exports: ${results} results ` +
  `(all finite), ${nErrors} core errors (${byName}); module alive after each; slowest call ` +
  `${slowest.ms.toFixed(0)} ms (${slowest.name})`);
for (const f of failures) console.log(`FAIL ${f}`);
console.log(`fuzz_wasm: ${results + nErrors} passed, ${failures.length} failed`);
process.exit(failures.length ? 1 : 0);
