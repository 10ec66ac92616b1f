// The lab page: wires the bench's controls to the core (through sim.js, never web/pkg/
// directly), writes the readouts and the error plot, keeps the view in the URL, and hands
// each readout to the learner's progress (progress.js) and the "go further" panels
// (further.js). Every number shown comes from the core's readout; this file only formats
// and places it. The controls are re-synced from each readout, so what the page shows is
// always what the core computed.
import { Further } from "./further.js";
import { dtText, exp, int, kText, num, share, short, signText, signed, slope, times } from "./format.js";
import { LogPlot } from "./plots.js";
import { Progress } from "./progress.js";
import { Background, openWorkbench } from "./sim.js";

const $ = (id) => document.getElementById(id);
const el = {
  bench: $("bench"),
  output: $("bench-output"),
  lockNote: $("lock-note"),
  status: $("status"),
  readouts: $("readouts"),
  stiffness: $("stiffness"),
  kLabel: $("k-label"),
  dtButtons: [...document.querySelectorAll("#dt-buttons button")],
  dtLabel: $("dt-label"),
  tolerance: $("tolerance"),
  events: $("events"),
  rtol: $("rtol"),
  tolSetting: $("tolerance-setting"),
  corrected: $("corrected"),
  routeRows: $("route-rows"),
  announce: $("announce"),
  plotSub: $("error-plot-sub"),
};
const CONTROLS = [el.stiffness, ...el.dtButtons, el.tolerance, el.events, el.rtol, el.corrected];

/** Stiffnesses of the error plot's curves: eight per decade from 1e2 to 1e8 N/m. */
const CURVE_KS = Array.from({ length: 49 }, (_, i) => 10 ** (2 + i / 8));

// What `make bench-lab` and the browser tests read: update timings (ms, from the input
// event's timestamp to every readout and plot updated) and how many background jobs run.
// `core` holds the part of each update spent in the core (from the event to the readout).
const hook = (window.ferromotionLab = { timings: [], core: [], background: 0, ready: false, updates: 0 });

// ---- status line -------------------------------------------------------------------------

function report(text, kind) {
  el.status.textContent = text;
  el.status.dataset.kind = kind;
}

const failed = (what) => report(`Something in the page failed (${String(what).replace(/\.$/, "")}). Reload to start again.`, "error");
addEventListener("error", (event) => failed(event.message));
addEventListener("unhandledrejection", (event) => failed(event.reason && event.reason.message ? event.reason.message : event.reason));

// ---- readouts ----------------------------------------------------------------------------

function put(name, text) {
  const n = el.readouts.querySelector(`[data-r="${name}"]`);
  if (n.textContent !== text) n.textContent = text;
  return n;
}

const view = { corrected: false };

function routeRow(name, row, ratio) {
  const tr = document.createElement("tr");
  const e = row.errors;
  const cells = [
    name,
    `${num(e.dy)} m (|dv| ${num(e.dv)} m/s)`,
    num(e.gradient) + (row.probe_dependent ? " (PROBE-DEPENDENT)" : ""),
    signText(e.sign),
    row.cost.force_evals ? int(row.cost.force_evals) : "none (closed form)",
    ratio === null ? "—" : times(ratio),
  ];
  for (const [i, text] of cells.entries()) {
    const td = document.createElement(i === 0 ? "th" : "td");
    if (i === 0) td.scope = "row";
    td.textContent = text;
    if (i === 3) td.className = e.sign;
    tr.append(td);
  }
  return tr;
}

function render(r) {
  const e = r.fixed.errors;
  put("forward", `|dy| = ${num(e.dy)} m`);
  put("forward-parts", `Height error at T, in metres at every stiffness; beside it the velocity error |dv| = ${num(e.dv)} m/s.`);
  put("gradient", num(e.gradient));
  put("sign", signText(e.sign)).dataset.sign = e.sign;
  put("sign-values", `Fixed route ${signed(e.dv_dy0)} 1/s; exact ${signed(e.dv_dy0_exact)} 1/s.${e.sign === "right_far_off"
    ? ` The signs agree, but the gradient error is ${num(e.gradient)}: ${num(e.gradient)} times the size of the exact answer. The integrator is unstable at this step (k·dt²/m = ${num(r.k_dt2)}), so the agreement is an accident.`
    : ""}`);

  const fit = r.exponent;
  put("exponent", `${slope(fit.slope)} (R² = ${fit.r2.toFixed(3)})`);
  put("exponent-detail", `Slope of log(gradient error) against log k over ${fit.points} stiffnesses from 1e4 to 1e8 N/m at ${dtText(r.dt)}.`);

  const ref = r.refinement;
  put("refine", `${times(ref.ratio_10)} at dt ÷ 10, ${times(ref.ratio_100)} at dt ÷ 100`);
  put("refine-detail", `Gradient error ${ref.errors.map(num).join(", ")} at dt = ${ref.steps.map((s) => exp(s, 0)).join(", ")} s; both ratios are against the base dt.`);
  put("refine-prediction", progress.predictionEcho(ref));

  const c = r.fixed.cost;
  const yard = `the fixed route at the base ${dtText(r.yardstick.dt)} (${int(r.yardstick.cost.force_evals)} force evaluations)`;
  put("cost-fixed", `Fixed route: ${int(c.steps)} steps, ${int(c.force_evals)} force evaluations, ${c.rollouts} rollout (k·dt²/m = ${num(r.k_dt2)}): ${times(r.fixed_cost_ratio)} ${yard}. Every cost ratio here is against that same run.`);
  const cc = r.corrected.cost;
  put("cost-corrected", view.corrected
    ? `Corrected route: ${int(cc.steps)} steps, ${int(cc.force_evals)} force evaluations, ${cc.rollouts} rollout: ${times(r.corrected_cost_ratio)} the fixed route at the base dt.`
    : "");
  const t = r.tolerance;
  put("cost-tolerance", t
    ? `Tolerance route: ${int(t.cost.steps)} steps (${int(t.cost.rejected_steps)} rejected) summed over ${t.cost.rollouts} rollouts, ${int(t.cost.force_evals)} force evaluations: ${times(t.cost_ratio)} the fixed route at the base dt.`
    : "Tolerance route off.");

  const b = r.blame;
  put("blame-integrator", share(b.integrator_share, b.integrator_below_floor));
  put("blame-contact", share(b.contact_share, b.contact_below_floor));
  put("blame-ratio", num(b.ratio));
  put("blame-floor", num(b.noise_floor));
  put("blame-detail", `Absolute max |ΔJ|: fixed route against the continuous penalty flow (integrator), flow against the exact bounce (contact model). The contact share falls like k^${slope(r.contact_exponent.slope)}.`);

  const x = r.exact;
  put("impact-term", `${num(x.time_of_impact_term)} 1/s`);
  put("impact", `(1+e)·g/|v| at this drop's impact speed, ${num(x.impact_speed)} m/s: the entry of the exact Jacobian that no spring carries.`);
  put("restitution", `e = ${num(x.restitution)}, the push-only law's stiff limit (used by the exact bounce); ${r.restitution_at_k === null ? "at this k the ball never leaves the floor" : `the law realises ${num(r.restitution_at_k)} at this k`}.`);

  const rows = [routeRow("fixed", r.fixed, r.fixed_cost_ratio)];
  if (view.corrected) rows.push(routeRow("corrected", r.corrected, r.corrected_cost_ratio));
  if (t) rows.push(routeRow(`tolerance${t.lands ? " (lands)" : ""}`, t, t.cost_ratio));
  rows.push(routeRow("flow (reference)", r.flow, null));
  el.routeRows.replaceChildren(...rows);
  put("tolerance-detail", t
    ? `Tolerance route: rtol = ${exp(t.rtol, 0)}, event location ${t.events ? "on" : "off"}. Its derivative comes from central differences at two probe sizes; they differ by ${num(t.probe_gap)} against the threshold ${num(t.probe_threshold)} (1e-3 of the largest Jacobian entry)${t.probe_dependent ? ", so the row is flagged PROBE-DEPENDENT: the value moves with the probe and is not to be trusted" : ""}. It ${t.lands ? "lands on" : "does not land on"} the exact answer (it lands only with the right sign, a gradient error below 1e-2 and no PROBE-DEPENDENT flag).`
    : "The flow row is the exact derivative of the same spring-damper with no time stepping: the blame split's reference.");
}

/** Set the controls from what the core computed, so a refused change leaves no trace. */
function syncControls(r) {
  el.stiffness.value = (Math.round(Math.log10(r.k) * 10) / 10).toFixed(1);
  el.stiffness.setAttribute("aria-valuetext", `${kText(r.k)}, ${signText(r.fixed.errors.sign)}`);
  el.kLabel.textContent = kText(r.k);
  for (const button of el.dtButtons) {
    button.setAttribute("aria-pressed", String(Number(button.dataset.divisor) === r.dt_divisor));
  }
  el.dtLabel.textContent = dtText(r.dt);
  el.plotSub.textContent = `(fixed step, ${dtText(r.dt)})`;
  el.tolerance.checked = r.tolerance !== null;
  if (r.tolerance) {
    el.events.checked = r.tolerance.events;
    selectRtol(r.tolerance.rtol);
  }
  const rtol = Number(el.rtol.value);
  el.tolSetting.textContent = `${r.tolerance ? "On" : "Off"} · rtol = ${exp(rtol, 0)} · events ${el.events.checked ? "on" : "off"} · atol = rtol × 1e-2`;
  el.corrected.checked = view.corrected;
}

function selectRtol(rtol) {
  const value = exp(rtol, 0);
  if (![...el.rtol.options].some((o) => o.value === value)) el.rtol.add(new Option(value, value));
  el.rtol.value = value;
}

// ---- the error plot ----------------------------------------------------------------------

// Two panels, so a relative (unitless) error never shares an axis with one in metres.
const errorPlot = new LogPlot($("error-plot"), {
  title: "Relative gradient error against stiffness",
  xLabel: "stiffness k (N/m)",
  yLabel: "relative gradient error (no unit)",
  xDomain: [2, 8],
});
const forwardPlot = new LogPlot($("forward-plot"), {
  title: "Forward error |dy| at T against stiffness",
  xLabel: "stiffness k (N/m)",
  yLabel: "|dy| at T (m)",
  xDomain: [2, 8],
  height: [160, 240],
});
const curves = new Map(); // key -> "pending" | the core's Curve {sweep, exponent, wrong_sign} | {error}
let drawnSignature = "";

/**
 * The curve for `key`, computed in the background from the bench's own controls with the
 * `config` overrides given (a worker builds its own bench from them), or null while it is
 * pending or after it failed.
 */
function want(key, { config, ...options }) {
  if (!curves.has(key)) {
    curves.set(key, "pending");
    background.run("curve", { config: { ...bench.config(), ...config }, ks: CURVE_KS, ...options }).then((res) => {
      if (res.ok) curves.set(key, res.value);
      else {
        curves.set(key, { error: res.message });
        report(res.message, "error");
      }
      if (last) drawCurves(last);
    });
  }
  const v = curves.get(key);
  return v === "pending" || v.error ? null : v;
}

function drawCurves(r) {
  const dt = r.dt;
  const fc = curves.get(`fc|${dt}`);
  // The fixed (and corrected) curve at the current step with the tolerance route off; the
  // tolerance curve at the base step (its fixed rows are not drawn).
  const base = view.corrected
    ? want(`fc|${dt}`, { config: { tolerance: false }, corrected: true })
    : fc && fc.sweep ? fc : want(`f|${dt}`, { config: { tolerance: false } });
  const tolKey = r.tolerance ? `t|${r.tolerance.rtol}|${r.tolerance.events}` : null;
  const tol = r.tolerance ? want(tolKey, { config: { dt_divisor: 1 } }) : null;
  const pending = [];
  if (!base) pending.push(view.corrected ? "the fixed and corrected curves" : "the fixed-step curves");
  if (r.tolerance && !tol) pending.push("the tolerance curve");
  const note = pending.length ? `Computing ${pending.join(" and ")} at ${dtText(dt)} in the background…` : "";
  errorPlot.setNote(note);
  forwardPlot.setNote(base ? "" : note);

  const signature = [base && dt, view.corrected, tolKey && tol ? tolKey : "", pending.join()].join("|");
  if (signature !== drawnSignature) {
    drawnSignature = signature;
    const series = [];
    const forward = [];
    let bands = [];
    let summary = "";
    let forwardSummary = "";
    if (base) {
      const rows = base.sweep.rows;
      forward.push({ label: "|dy| at T, fixed (m)", cls: "s-forward", points: rows.map((w) => [w.k, w.fixed.errors.dy]) });
      forwardSummary = `At ${dtText(dt)} the fixed-step height error |dy| goes from ${num(rows[0].fixed.errors.dy)} m at 1e2 N/m to ${num(rows.at(-1).fixed.errors.dy)} m at 1e8 N/m.`;
      series.push({ label: "relative gradient error, fixed", cls: "s-gradient", points: rows.map((w) => [w.k, w.fixed.errors.gradient]) });
      if (view.corrected) series.push({ label: "relative gradient error, corrected", cls: "s-corrected", points: rows.map((w) => [w.k, w.corrected.errors.gradient]) });
      bands = base.wrong_sign;
      const wrong = bands.map((b) => `${exp(b.from, 1)} to ${exp(b.to, 1)} N/m`).join(" and ");
      summary = `At ${dtText(dt)} the fixed-step gradient error goes from ${num(rows[0].fixed.errors.gradient)} at 1e2 N/m to ${num(rows.at(-1).fixed.errors.gradient)} at 1e8 N/m; its sign is wrong ${wrong ? `from ${wrong}` : "nowhere"}.`;
    }
    if (tol) {
      series.push({ label: `relative gradient error, tolerance (rtol ${exp(r.tolerance.rtol, 0)}${r.tolerance.events ? ", events" : ""})`, cls: "s-tolerance", dashed: true, points: tol.sweep.rows.map((w) => [w.k, w.tolerance.errors.gradient]) });
      summary += ` The tolerance route's gradient error stays between ${num(Math.min(...tol.sweep.rows.map((w) => w.tolerance.errors.gradient)))} and ${num(Math.max(...tol.sweep.rows.map((w) => w.tolerance.errors.gradient)))}.`;
    }
    errorPlot.setData({ series, bands, bandLabel: "fixed-step sign wrong", summary });
    forwardPlot.setData({ series: forward, bands, bandLabel: "fixed-step sign wrong", summary: forwardSummary });
  }
  forwardPlot.setMarker({ x: r.k, label: kText(r.k), points: [{ y: r.fixed.errors.dy, cls: "s-forward" }] });
  const points = [{ y: r.fixed.errors.gradient, cls: "s-gradient" }];
  if (view.corrected) points.push({ y: r.corrected.errors.gradient, cls: "s-corrected" });
  if (r.tolerance) points.push({ y: r.tolerance.errors.gradient, cls: "s-tolerance" });
  errorPlot.setMarker({ x: r.k, label: kText(r.k), points });
}

// ---- URL state ---------------------------------------------------------------------------

/** The view named in the URL (?k=1e6&dt=1e-4&tol=1e-11&ev=0&cor=1), as a bench change. */
function changeFromUrl(r0) {
  const q = new URLSearchParams(location.search);
  const change = {};
  if (q.has("k")) {
    const lk = Math.log10(Number(q.get("k")));
    const [lo, hi] = [Number(el.stiffness.min), Number(el.stiffness.max)];
    // Out-of-range stiffnesses go to the slider's end; non-numbers go to the core, which refuses them.
    change.log10k = Number.isFinite(lk) ? Math.round(Math.min(hi, Math.max(lo, lk)) * 10) / 10 : lk;
  }
  // The core matches the step against its own refinement steps and refuses anything else.
  if (q.has("dt")) change.dt = Number(q.get("dt"));
  if (q.has("ev")) el.events.checked = q.get("ev") === "1";
  if (q.has("tol")) {
    const tol = q.get("tol");
    if (tol === "off" || tol === "0") change.tolerance = toleranceSetting(false);
    else {
      const rtol = Number(tol);
      if (Number.isFinite(rtol) && rtol > 0) selectRtol(rtol);
      change.tolerance = { on: true, rtol, events: el.events.checked };
    }
  }
  view.corrected = q.get("cor") === "1";
  return change;
}

let urlTimer = 0;
function writeUrl() {
  clearTimeout(urlTimer);
  urlTimer = setTimeout(() => {
    if (!last) return;
    const q = new URLSearchParams({
      k: short(last.k),
      dt: exp(last.dt, 0),
      tol: last.tolerance ? exp(last.tolerance.rtol, 0) : "off",
      ev: el.events.checked ? "1" : "0",
      cor: view.corrected ? "1" : "0",
    });
    history.replaceState(null, "", `?${q}`);
  }, 150);
}

function toleranceSetting(on) {
  return { on, rtol: Number(el.rtol.value), events: el.events.checked };
}

// ---- live announcement -------------------------------------------------------------------

let announceTimer = 0;
function announceReadout(r) {
  clearTimeout(announceTimer);
  announceTimer = setTimeout(() => {
    const e = r.fixed.errors;
    let text = `${kText(r.k)}, ${dtText(r.dt)}: gradient error ${num(e.gradient)}, ${signText(e.sign)}; forward error |dy| ${num(e.dy)} m.`;
    if (r.tolerance) text += ` Tolerance route ${r.tolerance.lands ? "lands on" : "misses"} the exact answer, gradient error ${num(r.tolerance.errors.gradient)}.`;
    say(text);
  }, 300);
}

function say(text) {
  el.announce.textContent = text;
}

// ---- wiring ------------------------------------------------------------------------------

let bench = null;
let background = null;
let further = null;
let stepCap = 0;
let last = null;
let ready = false;

const progress = new Progress({
  onLock: (locked) => {
    el.bench.dataset.locked = String(locked);
    el.output.hidden = locked;
    el.lockNote.hidden = !locked;
    for (const c of CONTROLS) c.disabled = locked || !ready;
    if (!locked && last) {
      render(last);
      drawCurves(last);
      progress.observe(last, { learner: false });
    }
  },
  announce: say,
});

/**
 * Apply a change, recompute and redraw. `learner` is true only for the learner's own
 * trusted input events; `t0` is the event's timestamp (for the timing hook).
 */
function update(change, { learner = false, source = "init", t0 = performance.now() } = {}) {
  const taken = bench.apply(change);
  const r = bench.readout();
  if (!r) return;
  hook.core.push(performance.now() - t0);
  last = r;
  render(r);
  syncControls(r);
  drawCurves(r);
  progress.observe(r, { learner, source });
  further.onReadout(r);
  // The benchmark also counts style and layout, which the browser would do before painting.
  if (hook.forceLayout) void document.body.offsetHeight;
  hook.timings.push(performance.now() - t0);
  hook.updates += 1;
  writeUrl();
  announceReadout(r);
  if (taken) report(`Ready. Core ${bench.version()}: every number on this page is computed in your browser.`, "ok");
}

async function main() {
  bench = await openWorkbench({ report });
  if (!bench) return;
  stepCap = bench.maxSteps();
  background = new Background({
    onBusy: (n) => {
      hook.background = n;
      document.body.dataset.background = n ? "busy" : "idle";
    },
  });
  further = new Further({ bench, background, report });
  further.enable();
  ready = true;
  for (const c of CONTROLS) c.disabled = progress.locked;
  // The tolerance route's default rtol is the core's (one the route lands at honestly).
  const config = bench.config();
  if (config) selectRtol(config.tolerance_options.rtol);
  $("version").textContent = `Core ${bench.version()}.`;

  const meta = (event, source) => ({ learner: event.isTrusted, source, t0: event.timeStamp });
  el.stiffness.addEventListener("input", (event) => update({ log10k: Number(el.stiffness.value) }, meta(event, "slider")));
  for (const button of el.dtButtons) {
    button.addEventListener("click", (event) => update({ divisor: Number(button.dataset.divisor) }, meta(event, "dt")));
  }
  const tolerance = (event) => update({ tolerance: toleranceSetting(el.tolerance.checked) }, meta(event, "tolerance"));
  el.tolerance.addEventListener("change", tolerance);
  el.events.addEventListener("change", tolerance);
  el.rtol.addEventListener("change", tolerance);
  el.corrected.addEventListener("change", (event) => {
    view.corrected = el.corrected.checked;
    update({}, meta(event, "corrected"));
  });
  addEventListener("pagehide", (event) => {
    if (!event.persisted) {
      bench.free();
      background.terminate();
    }
  });

  const r0 = bench.readout();
  if (!r0) return;
  update(changeFromUrl(r0), { source: "init" });
  hook.timings.length = 0;
  hook.core.length = 0;
  el.readouts.setAttribute("aria-busy", "false");
  hook.ready = true;
  document.body.dataset.ready = "true";
}

main();
