// The "Fit a bounce" panel under Go further: measured heights and velocities of a bouncing
// ball (the flow route's closed form at k = 1e6 N/m plus seeded noise, 1 mm and 1 cm/s), and
// the core's fit of the initial height and the damping ratio from the learner's guess, once with
// the fixed-step gradient (semi-implicit Euler's autodiff tangent) and once with the right one
// (the flow's). The core computes the data and both fits (fit/, the wasm exports fit
// and fitPredict) in this panel's own background worker; this file only draws and prints what
// the core's FitReport says: estimates, 95% intervals, chi2 against its limit, the checker's
// verdicts, the fitted trajectories and the whitened residuals. Self-contained: it loads itself
// (index.html's script tag) and touches nothing outside #fit-panel.
import { Background } from "./sim.js";
import { num } from "./format.js";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const TRUTH = { height: 1.0, velocity: 0.0, gravity: 9.81, mass: 1.0, zeta: 0.1606 };
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

/**
 * "1.00007 [0.99970, 1.00044]": an estimate and its 95% interval, with enough significant digits
 * that the interval's two ends differ (two beyond the width's first).
 */
function interval(p) {
  const [lo, hi] = p.interval;
  const finite = Number.isFinite(lo) && Number.isFinite(hi) && hi > lo;
  const digits = finite
    ? Math.min(12, Math.max(3, Math.ceil(Math.log10(Math.abs(p.estimate) / (hi - lo))) + 2))
    : 3;
  const show = (x) => (x === null || !Number.isFinite(x) ? "∞" : x.toPrecision(digits).replace("-", "−"));
  return `${show(p.estimate)} [${show(lo)}, ${show(hi)}]`;
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
  for (let i = 0; i <= 5; i++) {
    const x = (xMax * i) / 5;
    text(sx(x), h - m.b + 16, x.toFixed(2));
    const y = lo + ((hi - lo) * i) / 5;
    text(m.l - 6, sy(y) + 4, String(Number(y.toPrecision(2))).replace("-", "−"), "end");
  }
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

class FitPanel {
  #background = new Background();
  #busy = false;

  constructor() {
    $("fit-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.#run();
    });
  }

  #run() {
    if (this.#busy) return;
    const height = Number($("fit-height").value);
    const zeta = Number($("fit-zeta").value);
    const horizon = Number($("fit-horizon").value);
    this.#busy = true;
    $("fit-run").disabled = true;
    $("fit-note").textContent = "Fitting in the background with both gradients…";
    const args = { drop: TRUTH, horizon, guess: { ...TRUTH, height, zeta }, routes: ROUTES.map((r) => r.route),
      noise: { sigma_y: 1e-3, sigma_v: 1e-2, seed: 7 } };
    this.#background.run("fitBounce", args).then((res) => {
      this.#busy = false;
      $("fit-run").disabled = false;
      if (!res.ok) {
        $("fit-note").textContent = `The core refused this fit: ${res.message}`;
        $("fit-result").hidden = true;
        return;
      }
      $("fit-note").textContent = "";
      this.#show(res.value, horizon);
    });
  }

  #show({ data, fits }, horizon) {
    const rows = fits.map((f, i) => {
      const tr = document.createElement("tr");
      const [h, z] = f.params;
      tr.append(
        cell("th", ROUTES[i].label),
        cell("td", f.status),
        cell("td", interval(h)),
        cell("td", interval(z)),
        cell("td", `${num(f.chi2)} (${num(f.chi2_limit)})${f.consistent ? "" : ": misfit"}`),
        cell("td", `${f.receipt.verdicts[0]} / ${f.receipt.verdicts[1]}`),
      );
      return tr;
    });
    $("fit-rows").replaceChildren(...rows);
    $("fit-result").hidden = false; // shown first: the charts are drawn at their box's width
    $("fit-caption").textContent = `Fits of h₀ and ζ to ${data.t.length} heights and velocities over T = ${horizon} s (truth: h₀ = ${TRUTH.height} m, ζ = ${TRUTH.zeta}).`;
    const [fixed, right] = fits;
    const inside = (f) => f.params.every((p, j) => p.interval[0] <= [TRUTH.height, TRUTH.zeta][j] && [TRUTH.height, TRUTH.zeta][j] <= p.interval[1]);
    $("fit-summary").textContent =
      `With the right gradient the fit ${right.consistent && inside(right) ? "recovers the truth inside its 95% intervals" : "ends " + (right.consistent ? "off the truth" : "in a misfit (a local minimum: try another guess)")}; ` +
      `with the fixed-step gradient it ${fixed.consistent && inside(fixed) ? "recovers it too" : "ends in a misfit, χ² = " + num(fixed.chi2) + " against a limit of " + num(fixed.chi2_limit)}.`;
    const pts = (ys) => data.t.map((t, i) => [t, ys[i]]);
    chart($("fit-plot"), {
      title: "Measured heights and the two fitted trajectories",
      summary: `Heights at ${data.t.length} sample times up to ${horizon} s; the fitted trajectories of both gradients.`,
      xLabel: "t (s)", yLabel: "height (m)", xMax: horizon,
      series: [
        { label: "measured (σ = 1 mm)", color: "#1d2430", dots: true, points: pts(data.y) },
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

if ($("fit-panel")) new FitPanel();
