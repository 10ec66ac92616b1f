// The bench page: wires the controls to the core (through sim.js, never web/pkg/ directly)
// and writes the readouts. Every number shown comes from the core's readout; this file
// only formats it. The controls are re-synced from each readout, so what the page shows
// is always what the core computed, and the URL carries the state so a link reproduces it.
import { openBench } from "./sim.js";

const $ = (id) => document.getElementById(id);
const el = {
  status: $("status"),
  readouts: $("readouts"),
  stiffness: $("stiffness"),
  kLabel: $("k-label"),
  dtButtons: [...document.querySelectorAll("#dt-buttons button")],
  dtLabel: $("dt-label"),
  tolerance: $("tolerance"),
  events: $("events"),
  rtol: $("rtol"),
  speed: $("speed"),
  speedTerm: $("speed-term"),
};

// ---- formatting (presentation only) ------------------------------------------------------

const exp = (x, digits) => x.toExponential(digits).replace("e+", "e");

/** About three significant figures: 0.0103, 45.5, 1,601; scientific outside [0.01, 1e4). */
function num(x) {
  if (x === null || x === undefined) return "n/a";
  if (x === 0) return "0";
  if (!Number.isFinite(x)) return String(x);
  const a = Math.abs(x);
  let s = exp(x, 2);
  if (a >= 100 && a < 1e4) s = x.toLocaleString("en-US", { maximumFractionDigits: 0 });
  else if (a >= 1e-2 && a < 100) s = x.toPrecision(3);
  return s.replace(/^-/, "−");
}
const signed = (x) => (x > 0 ? `+${num(x)}` : num(x));
const int = (n) => n.toLocaleString("en-US");
const kText = (k) => `k = ${exp(k, 1)} N/m`;
const dtText = (dt) => `dt = ${exp(dt, 0)} s`;
const signText = (right) => (right ? "RIGHT SIGN" : "WRONG SIGN");
const share = (x, below) => (below ? `< floor (${num(x)})` : num(x));

// ---- status line -------------------------------------------------------------------------

function report(text, kind) {
  el.status.textContent = text;
  el.status.dataset.kind = kind;
}

// ---- readouts ----------------------------------------------------------------------------

function put(name, text) {
  const node = el.readouts.querySelector(`[data-r="${name}"]`);
  if (node.textContent !== text) node.textContent = text;
  return node;
}

function render(r) {
  const e = r.fixed.errors;
  put("forward", `${num(e.forward)} ${e.forward_unit}`);
  put("forward-parts", `|dy| = ${num(e.dy)} m and |dv| = ${num(e.dv)} m/s at T; the headline is the larger.`);
  put("gradient", num(e.gradient));
  put("sign", signText(e.right_sign)).dataset.sign = e.right_sign ? "right" : "wrong";
  put("sign-values", `Fixed route ${signed(e.dv_dy0)} 1/s, exact ${signed(e.dv_dy0_exact)} 1/s.`);

  const fit = r.exponent;
  put("exponent", `${fit.slope.toFixed(3)} (R² = ${fit.r2.toFixed(3)})`);
  put("exponent-detail", `Slope of log(gradient error) on log k over ${fit.points} stiffnesses from 1e4 to 1e8 N/m at ${dtText(r.dt)}.`);

  const ref = r.refinement;
  put("refine", `×${num(ref.ratio_10)} at dt ÷ 10, ×${num(ref.ratio_100)} at dt ÷ 100`);
  put("refine-detail", `Gradient error ${ref.errors.map(num).join(", ")} at dt = ${[1, 10, 100].map((d) => exp(ref.base_dt / d, 0)).join(", ")} s: each ratio is against the base dt.`);

  const c = r.fixed.cost;
  put("cost-fixed", `Fixed route: ${int(c.steps)} steps, ${int(c.force_evals)} force evaluations, ${c.rollouts} rollout (k·dt²/m = ${num(r.k_dt2)}).`);
  const t = r.tolerance;
  put("cost-tolerance", t
    ? `Tolerance route: ${int(t.cost.steps)} steps (${int(t.cost.rejected_steps)} rejected), ${int(t.cost.force_evals)} force evaluations over ${t.cost.rollouts} rollouts, ${num(t.cost_ratio)}× the fixed route.`
    : "Tolerance route off.");

  const b = r.blame;
  put("blame-integrator", share(b.integrator_share, b.integrator_below_floor));
  put("blame-contact", share(b.contact_share, b.contact_below_floor));
  put("blame-ratio", num(b.ratio));
  put("blame-floor", num(b.noise_floor));
  put("blame-detail", `Absolute max |ΔJ|: fixed route against the continuous penalty flow (integrator), flow against the exact bounce (contact model). The contact share scales as k^${num(r.contact_exponent.slope)}; the flow alone has gradient error ${num(r.flow.errors.gradient)}.`);

  const x = r.exact;
  put("impact", `Time-of-impact term (1+e)·g/|v| = ${num(x.time_of_impact_term)} 1/s at this drop's impact speed of ${num(x.impact_speed)} m/s.`);
  put("restitution", `Restitution ${num(x.restitution)} in the stiff limit (the exact bounce uses it); ${r.restitution_at_k === null ? "none at this k: the ball does not leave the floor" : `${num(r.restitution_at_k)} at this k`}.`);

  put("tolerance", t
    ? `${t.lands ? "Lands on the exact answer" : "Does not land on the exact answer"}: gradient error ${num(t.errors.gradient)}, ${signText(t.errors.right_sign)} (dv(T)/dy0 = ${signed(t.errors.dv_dy0)} 1/s)${t.probe_dependent ? ", PROBE-DEPENDENT" : ""}.`
    : "Off. Tick “Run it too” to compare it.");
  put("tolerance-detail", t
    ? `rtol = ${exp(t.rtol, 0)}, event location ${t.events ? "on" : "off"}; forward error ${num(t.errors.forward)} ${t.errors.forward_unit}; probe gap ${num(t.probe_gap)} against the flag threshold ${num(t.probe_threshold)}.`
    : "");
}

/** Set the controls from what the core computed, so a refused change leaves no trace. */
function syncControls(r) {
  el.stiffness.value = Math.log10(r.k).toFixed(1);
  el.stiffness.setAttribute("aria-valuetext", kText(r.k));
  el.kLabel.textContent = kText(r.k);
  const divisor = Math.round(r.refinement.base_dt / r.dt);
  for (const button of el.dtButtons) {
    button.setAttribute("aria-pressed", String(Number(button.dataset.divisor) === divisor));
  }
  el.dtLabel.textContent = dtText(r.dt);
  el.tolerance.checked = r.tolerance !== null;
  if (r.tolerance) el.events.checked = r.tolerance.events;
}

// ---- URL state ---------------------------------------------------------------------------

/** Settings named in the URL (?log10k=6&dt=10&tol=1&rtol=1e-6&events=1), as a change. */
function changeFromUrl() {
  const q = new URLSearchParams(location.search);
  const change = {};
  if (q.has("log10k")) {
    const [lo, hi] = [Number(el.stiffness.min), Number(el.stiffness.max)];
    change.log10k = Math.min(hi, Math.max(lo, Number(q.get("log10k"))));
  }
  if (q.has("dt")) change.divisor = Number(q.get("dt"));
  if (q.has("rtol")) el.rtol.value = q.get("rtol");
  if (q.has("events")) el.events.checked = q.get("events") === "1";
  if (q.has("tol")) change.tolerance = toleranceSetting(q.get("tol") === "1");
  return change;
}

function writeUrl() {
  const pressed = el.dtButtons.find((b) => b.getAttribute("aria-pressed") === "true");
  const q = new URLSearchParams({
    log10k: el.stiffness.value,
    dt: pressed ? pressed.dataset.divisor : "1",
    tol: el.tolerance.checked ? "1" : "0",
    rtol: el.rtol.value,
    events: el.events.checked ? "1" : "0",
  });
  history.replaceState(null, "", `?${q}`);
}

function toleranceSetting(on) {
  return { on, rtol: Number(el.rtol.value), events: el.events.checked };
}

// ---- wiring ------------------------------------------------------------------------------

let bench = null;
let last = null;

/** Apply a change, recompute and redraw. A refused change is reported by sim.js. */
function update(change) {
  const t0 = performance.now();
  const taken = bench.apply(change);
  const r = bench.readout();
  if (!r) return;
  last = r;
  render(r);
  syncControls(r);
  writeUrl();
  el.readouts.dataset.ms = (performance.now() - t0).toFixed(1);
  if (taken) report(`Ready. Core ${bench.version()}: every number below is computed in your browser.`, "ok");
  updateSpeedTerm();
}

function updateSpeedTerm() {
  const drop = bench.drop();
  const term = drop && bench.timeOfImpactTerm(last.exact.restitution, drop.gravity, Number(el.speed.value));
  el.speedTerm.textContent = term === null ? "refused (see the status line)" : `(1+e)·g/|v| = ${num(term)} 1/s`;
}

async function main() {
  bench = await openBench({ report });
  if (!bench) return;
  for (const node of document.querySelectorAll("input, button, select")) node.disabled = false;

  el.stiffness.addEventListener("input", () => update({ log10k: Number(el.stiffness.value) }));
  for (const button of el.dtButtons) {
    button.addEventListener("click", () => update({ divisor: Number(button.dataset.divisor) }));
  }
  const tolerance = () => update({ tolerance: toleranceSetting(el.tolerance.checked) });
  el.tolerance.addEventListener("change", tolerance);
  el.events.addEventListener("change", tolerance);
  el.rtol.addEventListener("change", tolerance);
  el.speed.addEventListener("input", updateSpeedTerm);
  addEventListener("pagehide", (event) => {
    if (!event.persisted) bench.free();
  });

  update(changeFromUrl());
  el.readouts.setAttribute("aria-busy", "false");
}

main();
