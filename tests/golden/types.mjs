// The JS types declared for what crosses the wasm door (crates/ferromotion-wasm/src/types.rs, in
// the generated ferromotion_wasm.d.ts) against the objects the core really sends: for each
// declared interface, an object made by the core (an export's answer, or the defaults document
// for an options struct) must have exactly the declared keys (an optional key may be absent),
// at every depth where the declaration names an interface, and each export's declared result
// type must be the interface checked here. Read with TypeScript's own compiler API, so a key
// added to a core struct and not declared, or declared and gone, fails.
//
//   node tests/golden/types.mjs
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const pkgDir = join(root, "target/wasm/node-pkg");
const dts = join(pkgDir, "ferromotion_wasm.d.ts");
if (!existsSync(dts)) {
  console.error(`types: ${dts} is missing: run \`make wasm\``);
  process.exit(2);
}
const require = createRequire(import.meta.url);
const ts = require(join(root, "node_modules/typescript"));
const wasm = require(join(pkgDir, "ferromotion_wasm.js"));

const program = ts.createProgram([dts], { strict: true, noEmit: true });
const checker = program.getTypeChecker();
const file = program.getSourceFile(dts);
const declared = new Map();
ts.forEachChild(file, (node) => {
  if (ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node) || ts.isFunctionDeclaration(node)
      || ts.isClassDeclaration(node)) {
    if (node.name) declared.set(node.name.text, node);
  }
});

// One object per declared interface, made by the core.
const DROP = { height: 1, velocity: 0, t_final: 0.8, gravity: 9.81, mass: 1, zeta: 0.1606 };
const T = [0.2, 0.4, 0.6, 0.8];
const bench = new wasm.Workbench();
const defaults = wasm.scriptDefaults();
const predictions = wasm.fitPredict(DROP, Float64Array.from(T), { route: "flow", k: 1e6 });
const fitOptions = { route: "flow", k: 1e6, params: ["height"] };
const twoContacts = wasm.twoContacts({ angle_degrees: 100, per_side: 2 });
const SAMPLES = {
  Defaults: () => defaults,
  Drop: () => defaults.drop,
  ToleranceOptions: () => defaults.tolerance,
  CheckOptions: () => defaults.check,
  WorkbenchConfig: () => bench.config(),
  WorkbenchReadout: () => bench.readout(),
  Curve: () => bench.curve(Float64Array.of(1e5, 1e6), { corrected: true }),
  Sweep: () => wasm.sweep(DROP, Float64Array.of(1e5, 1e6), { dt: 1e-4 }).sweep,
  HybridDrop: () => bench.hybridDrop(4),
  RouteResult: () => wasm.routeFixed(DROP, 1e6, 1e-4, {}),
  StepStability: () => wasm.routeFixed(DROP, 1e6, 1e-4, {}).step_stability,
  Blame: () => wasm.blameSplit(DROP, 1e6, 1e-4),
  ExponentFit: () => wasm.divergenceExponent(DROP, 1e-4),
  EqualBudget: () => wasm.equalBudget(DROP, 1e6, 2000),
  Descent: () => wasm.descent(),
  FitPredictions: () => predictions,
  TwoContacts: () => twoContacts,
  TwoContactsOptions: () => twoContacts.options,
  ContactRow: () => twoContacts.rows[twoContacts.zero],
  RigidAnswer: () => twoContacts.rows[twoContacts.zero].rigid,
  SoftAnswer: () => twoContacts.rows[0].soft,
  FitReport: () => wasm.fit(DROP, { t: T, y: predictions.y, sigma_y: 0.01 }, fitOptions),
  CheckAnswer: () => wasm.checkGradient((x) => x[0] * x[0], [2], [1], { name: "x^2" }, undefined, undefined,
    { random_directions: 1 }, []),
};
// Options structs the core never sends whole: each declared key, sent alone, must not be refused
// as unknown (tests/golden/unknown_keys.mjs shows an unknown one is); the ones the defaults
// document carries are compared whole in SAMPLES above.
const ACCEPTS = {
  CurveOptions: (o) => bench.curve(Float64Array.of(1e6), o),
  SweepOptions: (o) => wasm.sweep(DROP, Float64Array.of(1e6), o),
  ExactOptions: (o) => wasm.routeExact(DROP, o),
  FixedOptions: (o) => wasm.routeFixed(DROP, 1e6, 1e-4, o),
  CorrectedOptions: (o) => wasm.routeCorrected(DROP, 1e6, 1e-4, o),
  FlowOptions: (o) => wasm.routeFlow(DROP, 1e6, o),
  Rk4Options: (o) => wasm.routeRk4(DROP, 1e6, 1e-4, o),
  FitOptions: (o) => wasm.fitPredict(DROP, Float64Array.from(T), o),
  Observations: (o) => wasm.fit(DROP, o, fitOptions),
  ObjectiveInfo: (o) => wasm.checkGradient((x) => x[0] * x[0], [2], [1], o, undefined, undefined,
    { random_directions: 1 }, []),
  QuadrupedExperiment: (o) => wasm.quadruped({ ...o, max_steps: 1 }),
};

const failures = [];
let checked = 0;

/** The object type an interface (or `X | null`) declares, or null for anything else. */
function objectType(type) {
  const parts = type.isUnion() ? type.types.filter((t) => !(t.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined))) : [type];
  if (parts.length !== 1) return null;
  const t = parts[0];
  if (!(t.flags & ts.TypeFlags.Object) || checker.isArrayType(t) || checker.isTupleType(t)) return null;
  if (checker.getIndexInfosOfType(t).length > 0) return null; // Record<string, ...>: keys not declared
  return t.getProperties().length > 0 ? t : null;
}

/** `value` has exactly the keys `type` declares (optional ones may be absent), recursively. */
function compare(type, value, where) {
  if (value === null || value === undefined) return;
  const keys = new Set(Object.keys(value));
  for (const prop of type.getProperties()) {
    const optional = (prop.flags & ts.SymbolFlags.Optional) !== 0;
    if (!keys.has(prop.name)) {
      if (!optional) failures.push(`${where}.${prop.name}: declared, but the core's object has no such key`);
      continue;
    }
    keys.delete(prop.name);
    const propType = checker.getTypeOfSymbol(prop);
    const inner = objectType(propType);
    if (inner && typeof value[prop.name] === "object") compare(inner, value[prop.name], `${where}.${prop.name}`);
    const element = checker.isArrayType(propType) ? objectType(checker.getTypeArguments(propType)[0]) : null;
    if (element && Array.isArray(value[prop.name]) && value[prop.name].length) {
      compare(element, value[prop.name][0], `${where}.${prop.name}[0]`);
    }
  }
  for (const extra of keys) failures.push(`${where}.${extra}: sent by the core, not declared`);
  checked += 1;
}

const typeOf = (name) => checker.getDeclaredTypeOfSymbol(checker.getSymbolAtLocation(declared.get(name).name));
for (const [name, make] of Object.entries(SAMPLES)) {
  if (!declared.has(name)) {
    failures.push(`${name}: not declared in ferromotion_wasm.d.ts`);
    continue;
  }
  const sample = make();
  compare(typeOf(name), sample, name);
}
for (const [name, call] of Object.entries(ACCEPTS)) {
  if (!declared.has(name)) {
    failures.push(`${name}: not declared in ferromotion_wasm.d.ts`);
    continue;
  }
  for (const prop of typeOf(name).getProperties()) {
    try {
      call({ [prop.name]: null }); // a declared key: never refused as unknown (null may be a wrong type)
    } catch (e) {
      if (e.name === "Scenario" && e.message.includes(`unknown field \`${prop.name}\``)) {
        failures.push(`${name}.${prop.name}: declared, but the core refuses it as unknown`);
      }
    }
  }
  checked += 1;
}

// Results not made here, and why.
const UNSAMPLED = {
  QuadrupedReport: "one run takes ~10 s in wasm; tests/golden/quadruped_parity.mjs compares the whole report with native",
};
// Every export whose result the door declares names one of the interfaces checked above.
const RESULT = /(?:export function (\w+)|^\s+(\w+))\([^)]*\): (\w+);/gm;
const text = file.getFullText();
for (const m of text.matchAll(RESULT)) {
  const result = m[3];
  if (/^[A-Z]/.test(result) && declared.has(result) && !(result in SAMPLES) && !(result in UNSAMPLED) && declared.get(result).kind !== ts.SyntaxKind.ClassDeclaration) {
    failures.push(`${m[1] ?? m[2]} returns ${result}, which no sample here checks`);
  }
}
bench.free();

for (const f of failures) console.log(`FAIL ${f}`);
console.log(`types: ${checked} declared interfaces compared with the core's objects, ${failures.length} failed`);
process.exit(failures.length ? 1 : 0);
