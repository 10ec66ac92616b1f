// The "Fit a bounce" panel under Go further: measured heights and velocities of a bouncing
// ball (the flow route's closed form plus seeded noise; the truth, k, dt and noise are the
// core's FitDemo, the wasm export fitDemo), and the core's fit of the initial height and the
// damping ratio from the learner's guess, once with the fixed-step gradient (semi-implicit
// Euler's autodiff tangent) and once with the right one (the flow's). Written in the lab's panel
// idiom (further.js's header): a class that Further constructs, closed until the core has
// loaded (enable()), an empty field asked for in the learner's words, a refusal in the panel's
// red note, numbers from format.js and round ticks from plots.js. The fits take about a second,
// so like the quadruped they run in a worker of their own, opened on the first fit.
// Presentation only: every number comes from the core's FitReport.
import { Background } from "./sim.js";
import { num } from "./format.js";
import { linearLabel, niceStep } from "./plots.js";
const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const ROUTES = [
  { route: "fixed", label: "fixed-step gradient (autodiff tangent)", color: "#b3261e", dash: "6 4" },
  { route: "flow", label: "right gradient (the flow's)", color: "#1b7a3e", dash: "" },
];

function el(name, attrs = {}, parent = null) {
  const n = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, v);
  if (parent) parent.append(n);
  return n;
}

function cell(tag, text) {
  const c = document.createElement(tag);
  c.textContent = text;
  if (tag === "th") c.scope = "row";
  return c;
}

/** x with `digits` significant figures, never JavaScript's "1.41e+3": exponential (1.4e3) outside [1e-3, 1e4). */
function figures(x, digits) {
  if (!Number.isFinite(x)) return num(x);
  const a = Math.abs(x);
  const s = a !== 0 && (a < 1e-3 || a >= 1e4) ? x.toExponential(digits - 1).replace("e+", "e") : String(Number(x.toPrecision(digits)));
  return s.replace(/^-/, "−");
}

/**
 * "1.00007 [0.99970, 1.00044]": an estimate and its 95% interval, with enough significant digits
 * that the interval's two ends differ (two beyond the width's first). A bound past the
 * parameter's domain (`top`: ζ < 1) prints as the domain's end, ")" for an open one; returns
 * whether it was cut.
 */
function interval(p, top = Infinity) {
  const [lo, hi] = p.interval;
  const finite = Number.isFinite(lo) && Number.isFinite(hi) && hi > lo;
  const digits = finite
    ? Math.min(12, Math.max(3, Math.ceil(Math.log10(Math.abs(p.estimate) / (hi - lo))) + 2))
    : 3;
  const cut = hi >= top;
  const upper = cut ? `${figures(top, 1)})` : `${figures(hi, digits)}]`;
  return { text: `${figures(p.estimate, digits)} [${figures(lo, digits)},\u00a0${upper}`, cut };
}

/** Round ticks over [lo, hi]: multiples of 1, 2 or 5 times a power of ten. */
function ticks(lo, hi) {
  const step = niceStep(hi - lo);
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9 * step; v += step) out.push(Math.abs(v) < 1e-12 * step ? 0 : v);
  return out;
}

/** A small line-and-dot chart on linear axes, scaled to its box (viewBox), with a title and a summary. */
function chart(host, { title, summary, xLabel, yLabel, xMax, series, zeroLine = false }) {
  // Drawn at the box's own width, so that its 12 px labels stay 12 px on a phone.
  const w = Math.max(300, Math.min(720, host.clientWidth || 640));
  const h = w < 500 ? 220 : 260;
  const m = { l: 56, r: 12, t: 12, b: 40 };
  const ys = series.flatMap((s) => s.points.map(([, y]) => y)).filter(Number.isFinite);
  let lo = Math.min(...ys);
  let hi = Math.max(...ys);
  if (zeroLine) {
    lo = Math.min(lo, 0);
    hi = Math.max(hi, 0);
  }
  const pad = 0.05 * (hi - lo || 1);
  lo -= pad;
  hi += pad;
  const sx = (x) => m.l + (x / xMax) * (w - m.l - m.r);
  const sy = (y) => m.t + (1 - (y - lo) / (hi - lo)) * (h - m.t - m.b);
  const id = host.id;
  const svg = el("svg", { viewBox: `0 0 ${w} ${h}`, role: "img", "aria-labelledby": `${id}-t ${id}-d`, class: "fit-chart" });
  el("title", { id: `${id}-t` }, svg).textContent = title;
  el("desc", { id: `${id}-d` }, svg).textContent = summary;
  const axis = { stroke: "#566070", "stroke-width": 1 };
  el("line", { x1: m.l, y1: h - m.b, x2: w - m.r, y2: h - m.b, ...axis }, svg);
  el("line", { x1: m.l, y1: m.t, x2: m.l, y2: h - m.b, ...axis }, svg);
  const text = (x, y, s, anchor = "middle") => {
    const t = el("text", { x, y, "text-anchor": anchor, "font-size": 12, fill: "#1d2430" }, svg);
    t.textContent = s;
  };
  for (const x of ticks(0, xMax)) text(sx(x), h - m.b + 16, linearLabel(x));
  for (const y of ticks(lo, hi)) text(m.l - 6, sy(y) + 4, linearLabel(y), "end");
  text((m.l + w - m.r) / 2, h - 6, xLabel);
  const yl = el("text", { x: 14, y: (m.t + h - m.b) / 2, "text-anchor": "middle", "font-size": 12, fill: "#1d2430",
    transform: `rotate(-90 14 ${(m.t + h - m.b) / 2})` }, svg);
  yl.textContent = yLabel;
  if (zeroLine) el("line", { x1: m.l, x2: w - m.r, y1: sy(0), y2: sy(0), stroke: "#8a93a0", "stroke-dasharray": "2 3" }, svg);
  for (const s of series) {
    const pts = s.points.filter(([, y]) => Number.isFinite(y));
    if (s.dots) {
      for (const [x, y] of pts) el("circle", { cx: sx(x), cy: sy(y), r: 2.6, fill: s.color }, svg);
    } else {
      el("polyline", { points: pts.map(([x, y]) => `${sx(x)},${sy(y)}`).join(" "), fill: "none", stroke: s.color,
        "stroke-width": 2, "stroke-dasharray": s.dash || "" }, svg);
    }
  }
  const legend = document.createElement("ul");
  legend.className = "fit-legend";
  for (const s of series) {
    const li = document.createElement("li");
    const swatch = document.createElement("span");
    swatch.className = "fit-swatch";
    swatch.style.borderColor = s.color;
    swatch.style.borderStyle = s.dots ? "dotted" : s.dash ? "dashed" : "solid";
    li.append(swatch, document.createTextNode(s.label));
    legend.append(li);
  }
  host.replaceChildren(svg, legend);
}

export class FitPanel {
  #background = null; // opened on the first fit
  #ready = false;
  #busy = false;
  #demo = null; // the core's FitDemo

  constructor() {
    $("fit-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.#run();
    });
    this.#sync();
  }

  /** The core has loaded: the panel's controls open. */
  enable() {
    this.#ready = true;
    this.#sync();
  }

  #sync() {
    const off = !this.#ready || this.#busy;
    for (const n of $("fit-form").querySelectorAll("input, select, button")) n.disabled = off;
  }

  #note(text, kind = "") {
    const n = $("fit-note");
    n.textContent = text;
    n.dataset.kind = kind;
  }

  /** The learner's guess, or null after asking in the learner's words for what is missing. */
  #guess() {
    const fields = [["fit-height", "the drop height h₀ in metres, e.g. 1.1"], ["fit-zeta", "the damping ratio ζ, between 0 and 1, e.g. 0.1"]];
    for (const [id, what] of fields) {
      if ($(id).value.trim() === "" || !Number.isFinite(Number($(id).value))) {
        $("fit-result").hidden = true;
        this.#note(`Type a guess of ${what}, then press the button.`, "error");
        return null;
      }
    }
    return { height: Number($("fit-height").value), zeta: Number($("fit-zeta").value) };
  }

  async #run() {
    if (this.#busy || !this.#ready) return;
    const guess = this.#guess();
    if (!guess) return;
    const horizon = Number($("fit-horizon").value);
    this.#busy = true;
    this.#sync();
    this.#note("Fitting in the background with both gradients…");
    this.#background ??= new Background();
    if (!this.#demo) {
      const d = await this.#background.run("fitDemo", {});
      this.#demo = d.ok ? d.value : null;
    }
    const demo = this.#demo;
    const res = demo
      ? await this.#background.run("fitBounce", { demo, horizon, guess, routes: ROUTES.map((r) => r.route), seed: 7 })
      : { ok: false, message: "the core's demo settings could not be read" };
    this.#busy = false;
    this.#sync();
    if (!res.ok) {
      $("fit-result").hidden = true;
      this.#note(`No fit from h₀ = ${guess.height} m, ζ = ${guess.zeta}: ${res.message}`, "error");
      return;
    }
    this.#note("");
    this.#show(res.value, horizon, demo);
  }

  #show({ data, fits }, horizon, demo) {
    const truth = [demo.height, demo.zeta];
    let cut = false;
    const rows = fits.map((f, i) => {
      const tr = document.createElement("tr");
      const [h, z] = f.params.map((p, j) => interval(p, j === 1 ? 1 : Infinity));
      cut ||= z.cut;
      const result = f.consistent
        ? `${f.status === "converged" ? "fits the data" : f.status}: χ² ${num(f.chi2)} ≤ ${num(f.chi2_limit)}`
        : `misfit${f.status === "converged" ? " (converged to a wrong minimum)" : ` (${f.status})`}: χ² ${num(f.chi2)} > ${num(f.chi2_limit)}`;
      tr.append(
        cell("th", ROUTES[i].label),
        cell("td", h.text),
        cell("td", z.text),
        cell("td", result),
        cell("td", `${f.receipt.verdicts[0]} / ${f.receipt.verdicts[1]}`),
      );
      return tr;
    });
    $("fit-rows").replaceChildren(...rows);
    $("fit-cut").hidden = !cut;
    $("fit-result").hidden = false; // shown first: the charts are drawn at their box's width
    $("fit-caption").textContent = `Fits of h₀ and ζ to ${data.t.length} heights and velocities over T = ${horizon} s (truth: h₀ = ${demo.height} m, ζ = ${demo.zeta}).`;
    const [fixed, right] = fits;
    const inside = (f) => f.params.every((p, j) => p.interval[0] <= truth[j] && truth[j] <= p.interval[1]);
    $("fit-summary").textContent =
      `With the right gradient the fit ${right.consistent && inside(right) ? "recovers the truth inside its 95% intervals" : "ends " + (right.consistent ? "off the truth" : "in a misfit (a local minimum: try another guess)")}; ` +
      `with the fixed-step gradient it ${fixed.consistent && inside(fixed) ? "recovers it too" : "ends in a misfit, χ² = " + num(fixed.chi2) + " against a limit of " + num(fixed.chi2_limit)}.`;
    const pts = (ys) => data.t.map((t, i) => [t, ys[i]]);
    chart($("fit-plot"), {
      title: "Measured heights and the two fitted trajectories",
      summary: `Heights at ${data.t.length} sample times up to ${horizon} s; the fitted trajectories of both gradients.`,
      xLabel: "t (s)", yLabel: "height (m)", xMax: horizon,
      series: [
        { label: `measured (σ = ${demo.sigma_y * 1e3} mm)`, color: "#1d2430", dots: true, points: pts(data.y) },
        ...fits.map((f, i) => ({ label: ROUTES[i].label, color: ROUTES[i].color, dash: ROUTES[i].dash, points: pts(f.y_fit) })),
      ],
    });
    chart($("fit-resid"), {
      title: "Whitened height residuals of the two fits",
      summary: "Residuals (fitted minus measured height) in units of σ; a right fit scatters within a few σ of zero.",
      xLabel: "t (s)", yLabel: "residual (σ)", xMax: horizon, zeroLine: true,
      series: fits.map((f, i) => ({ label: ROUTES[i].label, color: ROUTES[i].color, dots: true, points: pts(f.residual_y) })),
    });
  }
}
