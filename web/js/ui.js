// The lab page: wires the workbench's controls to the core (through sim.js, never web/pkg/
// directly), writes the readouts and the error plot, keeps the view in the URL, and hands
// each readout to the learner's progress (progress.js) and the "go further" panels
// (further.js). Every number shown comes from the core's readout; this file only formats
// and places it. The controls are re-synced from each readout, so what the page shows is
// always what the core computed.
import { Further } from "./further.js";
import { dtText, duration, exp, int, kText, num, retext, share, short, signText, signed, slope, tidy, times, wall } from "./format.js";
import { paintFacts, readFacts, wirePrint } from "./lesson.js";
import { LogPlot } from "./plots.js";
import { Progress } from "./progress.js";
import { Background, openWorkbench } from "./sim.js";

const $ = (id) => document.getElementById(id);
const el = {
  bench: $("workbench"),
  output: $("workbench-output"),
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
  jacobian: $("jacobian"),
  jacobianNote: $("jacobian-note"),
  tolSetting: $("tolerance-setting"),
  corrected: $("corrected"),
  routeRows: $("route-rows"),
  announce: $("announce"),
  plotSub: $("error-plot-sub"),
  strip: $("strip"),
  plots: document.querySelector(".plot-panel"),
};
const CONTROLS = [el.stiffness, ...el.dtButtons, el.tolerance, el.events, el.rtol, el.jacobian, el.corrected];

/** The tolerance route's gradient methods as the page words them (the core's names as keys). */
const METHOD = { richardson: "central differences", forward: "forward sensitivities" };

/**
 * Enable the controls unless the workbench is locked or not ready. Event location stays
 * switched on and disabled while forward sensitivities are chosen: the core refuses forward
 * without events, so the page never offers that pair.
 */
function enableControls(locked) {
  const forward = el.jacobian.value === "forward";
  if (forward && !el.events.checked) el.events.checked = true;
  for (const c of CONTROLS) {
    const disabled = locked || !ready || (c === el.events && forward);
    if (c.disabled !== disabled) c.disabled = disabled;
  }
  attr(el.jacobianNote, "data-active", String(forward));
}

/** Stiffnesses of the error plot's curves: eight per decade from 1e2 to 1e8 N/m. */
const CURVE_KS = Array.from({ length: 49 }, (_, i) => 10 ** (2 + i / 8));

// What `make bench-lab` and the browser tests read: update timings (ms, from the input
// event's timestamp to every readout and plot on screen updated (a slider move writes those
// off screen right after its frame, see "on screen first"), the checklist graded and, with
// `forceLayout`, style and layout recomputed; a key step's "change" work included) and how
// many background jobs run. `core` holds the part of each update spent in the core's
// readout; `parts` splits each update (ms): event (the wait from the event's timestamp to the
// listener), core, progress, readouts, strip+controls, plots, further, commit (grading the
// committed value), layout. `after` holds what a slider move leaves for after its frame (the
// off-screen readouts and plots, the checklist, steps and hints painted, and their style and
// layout with `forceLayout`), ms.
const hook = (window.ferromotionLab = { timings: [], core: [], parts: [], after: [], background: 0, ready: false, updates: 0 });

// ---- status line -------------------------------------------------------------------------

function report(sentence, kind) {
  text(el.status, tidy(sentence));
  attr(el.status, "data-kind", kind);
}

const failed = (what) => report(`Something in the page failed (${String(what).replace(/\.$/, "")}). Reload to start again.`, "error");
addEventListener("error", (event) => failed(event.message));
addEventListener("unhandledrejection", (event) => failed(event.reason && event.reason.message ? event.reason.message : event.reason));

// ---- readouts ----------------------------------------------------------------------------

// ---- on screen first -----------------------------------------------------------------------
// A slider move writes, in its own frame, only the readout cards and plots that are on screen
// (or within 200 px of it); those off screen are written right after that frame, with the
// checklist (see afterFrame). On a phone the slider's screen holds the strip and the controls,
// and the cards lie a thousand pixels below: their text, the route table and the plots' markers
// are then no work for the move's frame. Anything that is not a slider move writes everything.

/** Elements known to be off screen (an IntersectionObserver keeps this; unknown counts as on). */
const offScreen = new WeakSet();
const watch = new IntersectionObserver((entries) => {
  for (const e of entries) {
    if (e.isIntersecting) offScreen.delete(e.target);
    else offScreen.add(e.target);
  }
}, { rootMargin: "200px 0px" });
/** Off-screen writes held back by the current slider move: node -> text; and the route rows and plots. */
const held = { render: null, texts: new Map(), routes: null, plots: null };
/** True while a slider move is being painted (its off-screen writes are held back). */
let holding = false;
const cardOf = new WeakMap();
function card(n) {
  let c = cardOf.get(n);
  if (!c) {
    c = n.closest("article, .plot-panel") ?? n;
    cardOf.set(n, c);
  }
  return c;
}
/** Whether a write to `n` waits until after the move's frame. */
const holdFor = (n) => holding && offScreen.has(card(n));

/** Whether every readout card is off screen (a phone at its slider): the move skips render(). */
function cardsOff() {
  for (const c of el.readouts.children) if (c.tagName === "ARTICLE" && !offScreen.has(c)) return false;
  return true;
}

/** Write everything held back (after the move's frame, or before any other update). */
function release() {
  if (held.render) render(held.render);
  held.render = null;
  for (const [n, value] of held.texts) text(n, value);
  held.texts.clear();
  if (held.routes) paintRoutes(held.routes);
  if (held.plots) drawCurves(held.plots);
  held.routes = null;
  held.plots = null;
}

/** The readout nodes by name, looked up once (a slider move writes about thirty of them). */
const readoutNodes = new Map();
function put(name, value) {
  let n = readoutNodes.get(name);
  if (!n) {
    n = el.readouts.querySelector(`[data-r="${name}"]`);
    readoutNodes.set(name, n);
  }
  if (holdFor(n)) {
    held.texts.set(n, value);
    return n;
  }
  held.texts.delete(n);
  return text(n, value);
}

/**
 * Write a node's text or an attribute only when it changes: an unchanged write still costs a
 * style pass. The text last written here is remembered, so the DOM is not read back (only
 * this file writes these nodes).
 */
const written = new WeakMap();
function text(n, value) {
  if (written.get(n) !== value) {
    if (n.textContent !== value) retext(n, value);
    written.set(n, value);
  }
  return n;
}

function attr(n, name, value) {
  if (n.getAttribute(name) !== value) n.setAttribute(name, value);
  return n;
}

/** corrected: the corrected route is drawn; linked: the page opened on a link's view. */
const view = { corrected: false, linked: false };

/**
 * Force evaluations and wall time per gradient: "8,001 evals · 1.9 ms" (the table), or with
 * `word` spelled out for the cost card ("8,001 force evaluations · 1.9 ms").
 */
function costText(row, tick, word = "evals") {
  const evals = row.cost.force_evals ? `${int(row.cost.force_evals)} ${word}` : "closed form";
  return `${evals}\u00a0· ${wall(row.wall_s, tick)}`;
}

/** A route table row's cells: name, |dy|, gradient error, sign, cost, cost ratio. */
function routeCells(name, row, ratio, tick) {
  const e = row.errors;
  return [
    name,
    `${num(e.dy)} m`,
    num(e.gradient) + (row.probe_dependent ? " (PROBE-DEPENDENT)" : ""),
    signText(e.sign),
    costText(row, tick),
    ratio === null ? "—" : times(ratio),
  ].map((text, i) => ({ text, cls: i === 3 ? e.sign : i === 4 ? "cost" : "" }));
}

/**
 * Write the route table. Rows are rewritten in place (only the cells whose text changed), so
 * a slider move creates no elements; a row is built only when the set of routes changes.
 */
function paintRoutes(rows) {
  const body = el.routeRows;
  if (holdFor(body)) {
    held.routes = rows;
    return;
  }
  held.routes = null;
  while (body.rows.length > rows.length) body.lastElementChild.remove();
  rows.forEach((cells, r) => {
    let tr = body.rows[r];
    if (!tr) {
      tr = document.createElement("tr");
      // Each cell carries its column's name: the phone lays a row out as labelled lines.
      const heads = body.parentElement.tHead.rows[0].cells;
      cells.forEach((_, i) => {
        const td = document.createElement(i === 0 ? "th" : "td");
        if (i === 0) td.scope = "row";
        else td.dataset.label = heads[i].textContent;
        tr.append(td);
      });
      body.append(tr);
    }
    cells.forEach(({ text, cls }, i) => {
      const td = tr.cells[i];
      if (td.textContent !== text) retext(td, text);
      if (td.className !== cls) td.className = cls;
    });
  });
}

function render(r) {
  const e = r.fixed.errors;
  put("forward", `|dy| = ${num(e.dy)} m`);
  put("forward-parts", `Height error at T, in metres at every stiffness; beside it the velocity error |dv| = ${num(e.dv)} m/s.`);
  put("gradient", num(e.gradient));
  put("gradient-words", e.gradient >= 1
    ? `The worst entry is off by ${num(e.gradient)} times the largest entry of the exact Jacobian.`
    : `The worst entry is off by ${num(100 * e.gradient)}% of the largest entry of the exact Jacobian.`);
  attr(put("sign", signText(e.sign)), "data-sign", e.sign);
  put("sign-values", `Fixed route ${signed(e.dv_dy0)} 1/s; exact ${signed(e.dv_dy0_exact)} 1/s.${e.sign === "right_far_off"
    ? ` The signs agree, but the gradient error is ${num(e.gradient)}: the integrator is unstable at this step (k·dt²/m = ${num(r.k_dt2)}), so the agreement is an accident.`
    : ""}`);

  const fit = r.exponent;
  put("exponent", `${slope(fit.slope)} (R² = ${fit.r2.toFixed(3)})`);
  put("exponent-detail", `Slope of log(gradient error) against log k over ${fit.points} stiffnesses from 1e4 to 1e8 N/m at ${dtText(r.dt)}.`);

  // Predict, then measure: the card stays empty until the learner has pressed both dt ÷ 10
  // and dt ÷ 100 at this stiffness (progress.js keeps what was pressed where).
  const ref = r.refinement;
  const measured = progress.refinedHere(r);
  put("refine", measured ? `${times(ref.ratio_10)} at dt ÷ 10, ${times(ref.ratio_100)} at dt ÷ 100` : "not measured yet");
  put("refine-detail", measured
    ? `Gradient error ${ref.errors.map(num).join(", ")} at dt = ${ref.steps.map((s) => exp(s, 0)).join(", ")} s; both ratios are against the base dt.`
    : `Press dt ÷ 10 and dt ÷ 100 at this stiffness; the card then shows how the gradient error moved${progress.prediction ? ", beside your prediction" : ""}.`);
  put("refine-prediction", measured ? progress.predictionEcho(ref) : "");
  put("refine-why", progress.refineWhy(r));

  const c = r.fixed.cost;
  const tick = r.wall_resolution_s;
  const yard = `the fixed route at the base ${dtText(r.yardstick.dt)} (${int(r.yardstick.cost.force_evals)} force evaluations · ${wall(r.yardstick.wall_s, tick)})`;
  // At the base dt the fixed route is the yardstick itself: no ratio of a run to itself.
  put("cost-fixed", r.dt_divisor === 1
    ? `Fixed route: ${int(c.steps)} steps, ${costText(r.fixed, tick, "force evaluations")}, ${c.rollouts} rollout (k·dt²/m = ${num(r.k_dt2)}). This run, the fixed route at the base ${dtText(r.yardstick.dt)}, is the yardstick: every cost ratio on this page is against it.`
    : `Fixed route: ${int(c.steps)} steps, ${costText(r.fixed, tick, "force evaluations")}, ${c.rollouts} rollout (k·dt²/m = ${num(r.k_dt2)}): ${times(r.fixed_cost_ratio)} the force evaluations of ${yard}, the yardstick every cost ratio on this page is against.`);
  const cc = r.corrected.cost;
  put("cost-corrected", view.corrected
    ? `Corrected route: ${int(cc.steps)} steps, ${costText(r.corrected, tick, "force evaluations")}, ${cc.rollouts} rollout: ${times(r.corrected_cost_ratio)} the force evaluations of the fixed route at the base dt.`
    : "");
  const t = r.tolerance;
  put("cost-tolerance", t
    ? `Tolerance route (${METHOD[t.jacobian_method]}): ${int(t.cost.steps)} steps (${int(t.cost.rejected_steps)} rejected) summed over ${t.cost.rollouts} rollout${t.cost.rollouts === 1 ? "" : "s"}, ${costText(t, tick, "force evaluations")}: ${times(t.cost_ratio)} the force evaluations of the fixed route at the base dt.`
    : "Tolerance route off.");
  put("cost-clock", tick === null
    ? "Wall times: not measured."
    : `Wall time: how long each route took for its gradient, measured once in this browser on a clock that resolves ${duration(tick)}; it varies from run to run and with what else the machine is doing, while the evaluation counts do not.`);

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

  const rows = [routeCells("fixed", r.fixed, r.fixed_cost_ratio, tick)];
  if (view.corrected) rows.push(routeCells("corrected", r.corrected, r.corrected_cost_ratio, tick));
  if (t) rows.push(routeCells(`tolerance${t.lands ? " (lands)" : ""}`, t, t.cost_ratio, tick));
  rows.push(routeCells("flow (reference)", r.flow, null, tick));
  paintRoutes(rows);
  const how = !t ? ""
    : t.jacobian_method === "forward"
      ? "Its derivative comes from forward sensitivities: the variational equation rides along one rollout and jumps by the saltation matrix at each located contact switch, so there is no probe size to depend on."
      : `Its derivative comes from central differences at two probe sizes; they differ by ${num(t.probe_gap)} against the threshold ${num(t.probe_threshold)} (1e-3 of the largest Jacobian entry)${t.probe_dependent ? ", so the row is flagged PROBE-DEPENDENT: the value moves with the probe and is not to be trusted" : ""}.`;
  put("tolerance-detail", t
    ? `Tolerance route: rtol = ${exp(t.rtol, 0)}, event location ${t.events ? "on" : "off"}. ${how} It ${t.lands ? "lands on" : "does not land on"} the exact answer (it lands only with the right sign, a gradient error below 1e-2 and no PROBE-DEPENDENT flag).`
    : "The flow row is the exact derivative of the same spring-damper with no time stepping: the blame split's reference.");
}

/** The phone's sticky strip: stiffness, sign, gradient error and the tolerance route's verdict. */
const stripNodes = new Map();
function paintStrip(r) {
  const e = r.fixed.errors;
  const set = (name, value) => {
    let n = stripNodes.get(name);
    if (!n) {
      n = el.strip.querySelector(`[data-s="${name}"]`);
      stripNodes.set(name, n);
    }
    return text(n, value);
  };
  set("k", kText(r.k));
  attr(set("sign", signText(e.sign)), "data-sign", e.sign);
  set("gradient", `gradient error ${num(e.gradient)}`);
  // Step F's answer too, so a phone need not scroll to the route table for it.
  const t = r.tolerance;
  const tol = set("tolerance", t ? `tolerance route ${t.lands ? "lands" : "misses"} (${num(t.errors.gradient)})` : "");
  if (tol.hidden !== !t) tol.hidden = !t;
  if (t) attr(tol, "data-lands", String(t.lands));
}

/** Set the controls from what the core computed, so a refused change leaves no trace. */
function syncControls(r) {
  const value = (Math.round(Math.log10(r.k) * 10) / 10).toFixed(1);
  if (el.stiffness.value !== value) el.stiffness.value = value;
  attr(el.stiffness, "aria-valuetext", `${kText(r.k)}, ${signText(r.fixed.errors.sign)}`);
  text(el.kLabel, kText(r.k));
  for (const button of el.dtButtons) {
    attr(button, "aria-pressed", String(Number(button.dataset.divisor) === r.dt_divisor));
  }
  text(el.dtLabel, dtText(r.dt));
  text(el.plotSub, `(fixed step, ${dtText(r.dt)})`);
  check(el.tolerance, r.tolerance !== null);
  if (r.tolerance) {
    check(el.events, r.tolerance.events);
    if (el.jacobian.value !== r.tolerance.jacobian_method) el.jacobian.value = r.tolerance.jacobian_method;
    selectRtol(r.tolerance.rtol);
  }
  enableControls(progress.locked);
  const rtol = Number(el.rtol.value);
  text(el.tolSetting, `${r.tolerance ? "On" : "Off"} · rtol = ${exp(rtol, 0)} · events ${el.events.checked ? "on" : "off"} · ${METHOD[el.jacobian.value]} · atol = rtol × 1e-2`);
  check(el.corrected, view.corrected);
}

/** Tick or untick a checkbox, leaving it alone when it already is. */
function check(box, on) {
  if (box.checked !== on) box.checked = on;
}

function selectRtol(rtol) {
  const value = exp(rtol, 0);
  if (el.rtol.value === value) return;
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
  if (holdFor(el.plots)) {
    held.plots = r;
    return;
  }
  held.plots = null;
  const dt = r.dt;
  const fc = curves.get(`fc|${dt}`);
  // The fixed (and corrected) curve at the current step with the tolerance route off; the
  // tolerance curve at the base step (its fixed rows are not drawn).
  const base = view.corrected
    ? want(`fc|${dt}`, { config: { tolerance: false }, corrected: true })
    : fc && fc.sweep ? fc : want(`f|${dt}`, { config: { tolerance: false } });
  const tolKey = r.tolerance ? `t|${r.tolerance.rtol}|${r.tolerance.events}|${r.tolerance.jacobian_method}` : null;
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
      series.push({ label: `relative gradient error, tolerance (rtol ${exp(r.tolerance.rtol, 0)}${r.tolerance.events ? ", events" : ""}${r.tolerance.jacobian_method === "forward" ? ", forward" : ""})`, cls: "s-tolerance", dashed: true, points: tol.sweep.rows.map((w) => [w.k, w.tolerance.errors.gradient]) });
      summary += ` The tolerance route's gradient error stays between ${num(Math.min(...tol.sweep.rows.map((w) => w.tolerance.errors.gradient)))} and ${num(Math.max(...tol.sweep.rows.map((w) => w.tolerance.errors.gradient)))}.`;
    }
    errorPlot.setData({ series, bands, bandLabel: "fixed-step sign wrong", summary });
    forwardPlot.setData({ series: forward, bands, bandLabel: "fixed-step sign wrong", summary: forwardSummary });
  }
  forwardPlot.setMarker({ x: r.k, label: kText(r.k), points: [{ y: r.fixed.errors.dy, cls: "s-forward" }] });
  const points = [{ y: r.fixed.errors.gradient, cls: "s-gradient" }];
  if (view.corrected) points.push({ y: r.corrected.errors.gradient, cls: "s-corrected" });
  if (r.tolerance) points.push({ y: r.tolerance.errors.gradient, cls: "s-tolerance", ring: true });
  errorPlot.setMarker({ x: r.k, label: kText(r.k), points });
}

// ---- URL state ---------------------------------------------------------------------------

/** The tolerances a link may ask for (the rtol select offers 1e-4 to 1e-12). */
const RTOL_RANGE = [1e-14, 1e-2];
/** The URL parameters a link may carry (README "For instructors" documents them). */
const URL_KEYS = ["k", "dt", "tol", "ev", "jac", "cor"];

/** A link's value as quoted back in a sentence: at most 12 characters. */
const quoted = (v) => `“${v.length > 12 ? `${v.slice(0, 12)}…` : v}”`;

/**
 * The view named in the URL (?k=1e6&dt=1e-4&tol=1e-12&ev=0&jac=richardson&cor=1) as a
 * workbench change.
 * Every value is checked here, before it reaches the core; what cannot be followed is left
 * at its default and named in `refused`, in the learner's terms.
 */
function changeFromUrl(r0) {
  const q = new URLSearchParams(location.search);
  const change = {};
  const refused = [];
  const [lo, hi] = [Number(el.stiffness.min), Number(el.stiffness.max)];
  if (q.has("k")) {
    const k = Number(q.get("k"));
    if (!Number.isFinite(k) || q.get("k").trim() === "") {
      refused.push(`the stiffness k = ${quoted(q.get("k"))} is not a number of N/m`);
    } else if (k <= 0) {
      refused.push(`the stiffness k = ${quoted(q.get("k"))} N/m must be positive`);
    } else {
      const lk = Math.log10(k);
      const inside = Math.min(hi, Math.max(lo, lk));
      change.log10k = Math.round(inside * 10) / 10;
      if (inside !== lk) refused.push(`k = ${num(k)} N/m is off the slider's scale (1e${lo} to 1e${hi} N/m), so it starts at the nearer end`);
    }
  }
  if (q.has("dt")) {
    const dt = Number(q.get("dt"));
    // The core's own steps and divisors (the readout carries them): nothing is divided here.
    const { steps, divisors } = r0.refinement;
    const i = steps.findIndex((s) => Math.abs(dt / s - 1) < 1e-6);
    if (i >= 0) change.divisor = divisors[i];
    else refused.push(`the time step dt = ${quoted(q.get("dt"))} s is not one of this workbench's three (${steps.map((s) => exp(s, 0)).join(", ")} s)`);
  }
  const flag = (name, what, apply) => {
    if (!q.has(name)) return;
    const v = q.get(name);
    if (v === "0" || v === "1") apply(v === "1");
    else refused.push(`${what} must be 1 (on) or 0 (off), not ${quoted(v)}`);
  };
  flag("ev", "event location (ev)", (on) => {
    el.events.checked = on;
  });
  if (q.has("jac")) {
    const jac = q.get("jac");
    if (Object.hasOwn(METHOD, jac)) {
      el.jacobian.value = jac;
      // The page never offers forward without events: a link asking for both gets events on.
      if (jac === "forward" && !el.events.checked) {
        el.events.checked = true;
        if (q.get("ev") === "0") refused.push("forward sensitivities (jac) need event location, so ev is on, not 0");
      }
    } else {
      refused.push(`the gradient method jac must be richardson or forward, not ${quoted(jac)}`);
    }
  }
  if (q.has("tol")) {
    const tol = q.get("tol");
    const rtol = Number(tol);
    if (tol === "off" || tol === "0") change.tolerance = toleranceSetting(false);
    else if (Number.isFinite(rtol) && rtol >= RTOL_RANGE[0] && rtol <= RTOL_RANGE[1] && tol.trim() !== "") {
      selectRtol(rtol);
      change.tolerance = { ...toleranceSetting(true), rtol };
    } else {
      refused.push(`the tolerance rtol = ${quoted(tol)} is outside what the tolerance route can run here (${exp(RTOL_RANGE[0], 0)} to ${exp(RTOL_RANGE[1], 0)}), so that route stays off`);
    }
  }
  flag("cor", "the corrected route (cor)", (on) => {
    view.corrected = on;
  });
  view.linked = URL_KEYS.some((key) => q.has(key));
  return { change, refused };
}

/** The sentence for a link that could not be followed entirely. */
function refusal(refused) {
  const list = refused.join("; ");
  return `This link could not be followed entirely: ${list}. Everything else is as the link asked, and the workbench works as usual.`;
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
      jac: el.jacobian.value,
      cor: view.corrected ? "1" : "0",
    });
    history.replaceState(null, "", `?${q}`);
  }, 150);
}

function toleranceSetting(on) {
  const jacobian = el.jacobian.value;
  return { on, rtol: Number(el.rtol.value), events: el.events.checked || jacobian === "forward", jacobian };
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
    enableControls(locked);
    if (further) further.setLocked(locked);
    if (!locked && last) {
      // The opening view counts as the learner's own, unless a link chose it.
      progress.observe(last, { learner: !view.linked, source: "open" });
      render(last);
      paintStrip(last);
      drawCurves(last);
    }
    el.strip.hidden = locked;
  },
  announce: say,
});

/**
 * Apply a change, recompute and redraw. `learner` is true only for the learner's own
 * trusted input events; `t0` is the event's timestamp (for the timing hook).
 */
function update(change, { learner = false, source = "init", t0 = performance.now() } = {}) {
  const start = performance.now();
  let taken = bench.apply(change);
  let r = bench.readout();
  if (!r) {
    r = recover();
    taken = false;
  }
  if (!r) return;
  const t1 = performance.now();
  hook.core.push(t1 - start);
  last = r;
  // Where the page's own time goes, per part (ms), for the benchmark's breakdown: "event" is
  // the wait from the input event's timestamp to this handler, "core" the core's readout.
  const parts = { event: start - t0, core: t1 - start };
  let mark = t1;
  const step = (name) => {
    const now = performance.now();
    parts[name] = (parts[name] ?? 0) + now - mark;
    mark = now;
  };
  // A slider move (dragged or a key step) paints only the readouts and plots on screen in its
  // frame; those off screen, and the checklist, steps and hints it may change, are painted
  // right after that frame.
  const later = source === "slider-move";
  progress.observe(r, { learner, source, paint: !later });
  step("progress");
  holding = later;
  // No card on screen: not even their numbers are formatted in the move's frame.
  if (later && cardsOff()) held.render = r;
  else {
    held.render = null;
    render(r);
  }
  step("readouts");
  paintStrip(r);
  syncControls(r);
  step("strip+controls");
  drawCurves(r);
  step("plots");
  holding = false;
  further.onReadout(r);
  step("further");
  // The benchmark also counts style and layout, which the browser would do before painting.
  if (hook.forceLayout) void document.body.offsetHeight;
  step("layout");
  hook.parts.push(parts);
  hook.timings.push(performance.now() - t0);
  // A key step fires "change" right after "input", in the same task: its work belongs to
  // this move's frame too (see the change listener), until the task ends.
  openMove = { t0, parts, index: hook.timings.length - 1 };
  setTimeout(() => {
    openMove = null;
  }, 0);
  if (later) afterFrame(1);
  else hook.updates += 1;
  writeUrl();
  announceReadout(r);
  if (taken) report(`Ready. Core ${bench.version()}: every number on this page is computed in your browser.`, "ok");
}

/** The move whose frame is still being built (its task has not ended), for the timing hook. */
let openMove = null;

/**
 * Paint the learner's progress after the next frame (once for any number of moves in it) and
 * only then count the `moves` as done in the hook: what tests and `make bench-lab` wait for
 * is every readout, plot, step and hint painted.
 */
let unsettled = null;
function afterFrame(moves) {
  if (unsettled) {
    unsettled.moves += moves;
    return;
  }
  const batch = (unsettled = { moves });
  const run = () => {
    if (unsettled !== batch) return;
    unsettled = null;
    const t0 = performance.now();
    release();
    progress.paint();
    if (hook.forceLayout) void document.body.offsetHeight;
    hook.after.push(performance.now() - t0);
    hook.updates += batch.moves;
  };
  requestAnimationFrame(() => setTimeout(run, 0));
  setTimeout(run, 100); // a hidden tab draws no frames
}

/**
 * The core could not compute a readout (the status line says why). The only control that
 * can do that is the tolerance route (too tight an rtol for this stiffness): switch it off and
 * read again, so the workbench never stays dead.
 */
function recover() {
  const why = el.status.textContent.replace(/\.$/, "");
  if (!bench.apply({ tolerance: toleranceSetting(false) })) return null;
  const r = bench.readout();
  if (r) report(`The tolerance route could not finish at rtol = ${el.rtol.value} (${why}). It is off again; a looser rtol will run.`, "error");
  return r;
}

async function main() {
  for (const n of [...el.readouts.querySelectorAll("article"), el.plots]) watch.observe(n);
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
  further.setLocked(progress.locked);
  ready = true;
  enableControls(progress.locked);
  // The tolerance route's default rtol is the core's (one the route lands at honestly).
  const config = bench.config();
  if (config) selectRtol(config.tolerance_options.rtol);
  $("version").textContent = `Core ${bench.version()}.`;

  const meta = (event, source) => ({ learner: event.isTrusted, source, t0: event.timeStamp });
  // Every slider move recomputes; only a committed value (released, or a key step) is graded,
  // so a stiffness merely passed through mid-drag ticks nothing.
  el.stiffness.addEventListener("input", (event) => update({ log10k: Number(el.stiffness.value) }, meta(event, "slider-move")));
  el.stiffness.addEventListener("change", (event) => {
    // Grade the committed value. The readouts already show it: the "input" listener rendered
    // this readout, and grading changes no readout card (only the checklist and steps).
    if (!last) return;
    const move = openMove;
    const mark = performance.now();
    progress.observe(last, { learner: event.isTrusted, source: "slider", paint: false });
    afterFrame(0);
    if (move) {
      // Same task as the move: add this work, and the layout it causes, to the move's time.
      move.parts.commit = performance.now() - mark;
      if (hook.forceLayout) {
        const a = performance.now();
        void document.body.offsetHeight;
        move.parts.layout += performance.now() - a;
      }
      hook.timings[move.index] = performance.now() - move.t0;
    }
  });
  for (const button of el.dtButtons) {
    button.addEventListener("click", (event) => update({ divisor: Number(button.dataset.divisor) }, meta(event, "dt")));
  }
  const tolerance = (event) => update({ tolerance: toleranceSetting(el.tolerance.checked) }, meta(event, "tolerance"));
  el.tolerance.addEventListener("change", tolerance);
  el.events.addEventListener("change", tolerance);
  el.rtol.addEventListener("change", tolerance);
  el.jacobian.addEventListener("change", (event) => {
    // Forward needs events: switch them on (and hold them) before the core sees the pair.
    if (el.jacobian.value === "forward") el.events.checked = true;
    enableControls(progress.locked);
    tolerance(event);
  });
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
  const { change, refused } = changeFromUrl(r0);
  update(change, { source: "init" });
  if (refused.length) {
    // Said twice: at the top, where a learner opening the link looks first, and in the
    // status line beside the controls.
    report(refusal(refused), "error");
    const notice = $("link-notice");
    notice.textContent = refusal(refused);
    notice.hidden = false;
  }
  progress.coreVersion = bench.version();
  hook.timings.length = 0;
  hook.core.length = 0;
  el.readouts.setAttribute("aria-busy", "false");
  hook.ready = true;
  document.body.dataset.ready = "true";

  // The lesson's numbers, read once from a second handle after the first paint.
  setTimeout(async () => {
    const facts = await readFacts({ report });
    if (facts) {
      paintFacts(facts);
      progress.repaint();
    }
  }, 0);
}

wirePrint();

main();
