// The lesson's numbers. The course text (the steps, the pass conditions, "If your run fails")
// quotes what this workbench measures; none of those numbers is typed into the page. They are
// read once at load from a second Workbench handle at fixed, named settings (the learner's own
// workbench is never moved for this) and written into every <span data-fact="name">. The same
// formatters as the readout cards are used, so a fact and the card showing the same quantity
// print the same digits (tests/test_browser_lesson.py checks that against the live cards).
// Presentation only: every number comes from the core's readout through sim.js.
import { exp, int, num, signText, slope, times } from "./format.js";
import { openWorkbench } from "./sim.js";

/** The settings the text talks about: log10 k of the soft end, the stiff example and the top. */
const SOFT = 2;
const STIFF = 6;
const TOP = 8;

/**
 * Read the facts from a fresh workbench at the spec's defaults; resolves to {name: text}, or
 * null after reporting why (the spans then keep their placeholder).
 */
export async function readFacts({ report = () => {} } = {}) {
  const wb = await openWorkbench({ report });
  if (!wb) return null;
  try {
    const at = (change) => (wb.apply(change) ? wb.readout() : null);
    // The tolerance route the text talks about: the core's default rtol, no event location,
    // the gradient by central differences (the probe sizes the text quotes).
    const config = wb.config();
    if (!config) return null;
    const RTOL = config.tolerance_options.rtol;
    const off = { on: false, rtol: RTOL, events: false, jacobian: "richardson" };
    const on = { on: true, rtol: RTOL, events: false, jacobian: "richardson" };
    const soft = at({ log10k: SOFT, divisor: 1, tolerance: on });
    const stiff = at({ log10k: STIFF, divisor: 1, tolerance: on });
    const top = at({ log10k: TOP, divisor: 1, tolerance: off });
    const fit10 = at({ log10k: STIFF, divisor: 10, tolerance: off });
    const fit100 = at({ log10k: STIFF, divisor: 100, tolerance: off });
    // Where |dy| bottoms out at dt, on the full audit's half-decade grid from 10^2 to 10^6.
    const grid = [2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5, 6].map((lk) => at({ log10k: lk, divisor: 1, tolerance: off }));
    if (![soft, stiff, top, fit10, fit100, ...grid].every(Boolean)) return null;
    const best = grid.reduce((a, b) => (b.fixed.errors.dy < a.fixed.errors.dy ? b : a));
    const s = soft.fixed.errors;
    const x = stiff.fixed.errors;
    const t = stiff.tolerance;
    const b = stiff.blame;
    return {
      version: `core ${wb.version()}`,
      "soft.dy": num(s.dy),
      "soft.dv": num(s.dv),
      "soft.gradient": num(s.gradient),
      "soft.sign": signText(s.sign),
      "soft.tol_gradient": num(soft.tolerance.errors.gradient),
      "stiff.dy": num(x.dy),
      "stiff.gradient": num(x.gradient),
      "stiff.dv_dy0": num(x.dv_dy0),
      "stiff.dv_dy0_exact": num(x.dv_dy0_exact),
      fall: times(s.dy / x.dy),
      "dymin.k": exp(best.k, 1),
      "dymin.dy": num(best.fixed.errors.dy),
      "dymin.rise": times(x.dy / best.fixed.errors.dy),
      "exp1.slope": slope(stiff.exponent.slope),
      "exp1.r2": stiff.exponent.r2.toFixed(3),
      "exp1.points": String(stiff.exponent.points),
      "exp10.slope": slope(fit10.exponent.slope),
      "exp100.slope": slope(fit100.exponent.slope),
      "ref.r10": times(stiff.refinement.ratio_10),
      "ref.r100": times(stiff.refinement.ratio_100),
      "top.kdt2": num(top.k_dt2),
      "top.gradient": num(top.fixed.errors.gradient),
      "top.sign": signText(top.fixed.errors.sign),
      "tol.rtol": exp(RTOL, 0),
      "tol.gradient": num(t.errors.gradient),
      "tol.lands": t.lands ? "it lands on the exact answer" : "it does not land on the exact answer",
      "tol.probe": t.probe_dependent
        ? `but flagged PROBE-DEPENDENT: its central differences at two probe sizes disagree by ${num(t.probe_gap)}, above the flag's threshold ${num(t.probe_threshold)}, so the value depends on the probe and is shown, not to be trusted`
        : `its central differences at two probe sizes agree (gap ${num(t.probe_gap)}, under the flag's threshold ${num(t.probe_threshold)})`,
      "tol.steps": int(t.cost.steps),
      "tol.rollouts": String(t.cost.rollouts),
      "tol.evals": int(t.cost.force_evals),
      "tol.fixed_evals": int(stiff.yardstick.cost.force_evals),
      "tol.ratio": times(t.cost_ratio),
      "blame.integrator": num(b.integrator_share),
      "blame.contact": num(b.contact_share),
      "blame.ratio": num(b.ratio),
    };
  } finally {
    wb.free();
  }
}

/** Write the facts into the page's [data-fact] spans. */
export function paintFacts(facts) {
  for (const span of document.querySelectorAll("[data-fact]")) {
    const text = facts[span.dataset.fact];
    if (text !== undefined) span.textContent = text;
  }
  document.body.dataset.facts = "ready";
}

/** The print button, and the notes opened for printing (closed <details> do not print). */
export function wirePrint() {
  const opened = [];
  addEventListener("beforeprint", () => {
    for (const d of document.querySelectorAll("#handout details:not([open])")) {
      d.open = true;
      opened.push(d);
    }
  });
  addEventListener("afterprint", () => {
    for (const d of opened.splice(0)) d.open = false;
  });
  const button = document.getElementById("print-handout");
  if (button) button.addEventListener("click", () => print());
}
