// Hand-drawn SVG plots: a line plot with a log x axis and a log or linear y axis (errors
// against k, the time-of-impact term against speed, the blame shares; a derivative against
// the probe size) and a heat map (the descent landscape). No library:
// the page stays small, a redraw costs well under a millisecond, and every plot is real
// DOM with a text description for screen readers. Presentation only: the numbers come
// from the core through sim.js; here they are only placed on axes.

const SVG = "http://www.w3.org/2000/svg";

function node(name, attrs = {}, parent = null) {
  const n = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
  if (parent) parent.append(n);
  return n;
}

/** "10" with a superscript exponent, as SVG text. */
function powerLabel(parent, x, y, power, anchor) {
  const t = node("text", { x, y, "text-anchor": anchor, class: "tick" }, parent);
  t.append("10");
  const sup = node("tspan", { dy: -6, "font-size": "0.75em" }, t);
  sup.textContent = String(power).replace("-", "−");
  return t;
}

/** Split a polyline where a point is missing (non-finite or not positive on a log axis). */
function segments(points, ok) {
  const out = [];
  let cur = [];
  for (const p of points) {
    if (ok(p)) cur.push(p);
    else if (cur.length) {
      out.push(cur);
      cur = [];
    }
  }
  if (cur.length) out.push(cur);
  return out;
}

/**
 * Axis labels that would run past the SVG's edge (a phone's short plot) lose their trailing
 * "(…)" note, then shrink until they fit. Call after `g` is in the document (it measures).
 */
function fitAxisLabels(g, w, h) {
  for (const t of g.querySelectorAll("text.axis-label")) {
    const rotated = t.hasAttribute("transform");
    const centre = Math.abs(Number(t.getAttribute("x")));
    const room = 2 * Math.min(centre, (rotated ? h : w) - centre) - 4;
    if (t.getComputedTextLength() <= room) continue;
    t.textContent = t.textContent.replace(/\s*\([^)]*\)\s*$/, "");
    const length = t.getComputedTextLength();
    if (length > room) t.style.fontSize = `${(parseFloat(getComputedStyle(t).fontSize) * room) / length}px`;
  }
}

/** A plot container: the SVG, a legend list and a note line, redrawn on resize. */
class Figure {
  constructor(host, { title, height = [220, 360] }) {
    this.host = host;
    this.heights = height;
    host.classList.add("figure");
    const id = host.id || `fig-${Math.random().toString(36).slice(2)}`;
    this.svg = node("svg", { role: "img", "aria-labelledby": `${id}-title ${id}-desc`, class: "plot" });
    this.titleNode = node("title", { id: `${id}-title` }, this.svg);
    this.titleNode.textContent = title;
    this.descNode = node("desc", { id: `${id}-desc` }, this.svg);
    this.layer = node("g", {}, this.svg);
    this.legend = document.createElement("ul");
    this.legend.className = "legend";
    this.note = document.createElement("p");
    this.note.className = "plot-note";
    host.append(this.svg, this.legend, this.note);
    this.width = 0;
    // Redraw when the width changes, in the next frame: drawing changes the height, and
    // doing it inside the observer's callback would re-trigger it in the same frame.
    let queued = false;
    new ResizeObserver(() => {
      if (queued) return;
      queued = true;
      requestAnimationFrame(() => {
        queued = false;
        const w = Math.floor(host.clientWidth);
        if (w > 0 && w !== this.width) this.draw();
      });
    }).observe(host);
  }

  /** Width and height in CSS pixels for the current container. */
  size() {
    this.width = Math.max(200, Math.floor(this.host.clientWidth || 600));
    const [lo, hi] = this.heights;
    const h = Math.round(Math.min(hi, Math.max(lo, this.width * 0.6)));
    this.svg.setAttribute("viewBox", `0 0 ${this.width} ${h}`);
    this.svg.setAttribute("width", this.width);
    this.svg.setAttribute("height", h);
    return [this.width, h];
  }

  setNote(text) {
    if (this.note.textContent !== text) this.note.textContent = text;
  }

  setLegend(items) {
    this.legend.replaceChildren(
      ...items.map(({ label, cls, kind = "line" }) => {
        const li = document.createElement("li");
        const sw = document.createElement("span");
        sw.className = `swatch ${kind} ${cls}`;
        sw.setAttribute("aria-hidden", "true");
        li.append(sw, label);
        return li;
      }),
    );
  }
}

/** A round tick step (1, 2 or 5 times a power of ten) near `span / 5`. */
export function niceStep(span) {
  const raw = span / 5;
  const p = 10 ** Math.floor(Math.log10(raw));
  const f = raw / p;
  return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

/** A linear tick's label: no float noise ("0.30000000000000004" -> "0.3"), a real minus sign. */
export const linearLabel = (v) => String(Number(v.toPrecision(6))).replace("-", "−");

/**
 * A line plot with a log10 x axis and, by default, a log10 y axis.
 *   setData({series: [{label, cls, points: [[x, y], ...], dots, dashed}], bands: [{from, to}],
 *            bandLabel, summary})
 *   setMarker({x, label, points: [{y, cls, ring}]})  (ring: a hollow, larger circle)
 * x is a data value > 0. With `yScale: "linear"` y may take either sign (a line marks zero
 * when the range crosses it); otherwise y must be > 0 and the axis is log10. With
 * `xScale: "linear"` x may take either sign too and `xDomain` is in data units.
 * A series' `kind` ("dot", "line", "dash") overrides its legend swatch.
 */
export class LogPlot extends Figure {
  constructor(host, { title, xLabel, yLabel, xDomain, yClamp = [-12, 8], yScale = "log", xScale = "log", height }) {
    super(host, { title, height });
    this.xLabel = xLabel;
    this.yLabel = yLabel;
    this.xLinear = xScale === "linear";
    this.xDomain = xDomain; // [lo, hi] in log10 (in data units on a linear x axis)
    this.yClamp = yClamp; // log axis only: [lo, hi] in log10
    this.linear = yScale === "linear";
    this.data = { series: [], bands: [] };
    this.marker = null;
    this.markerLayer = null;
  }

  setData(data) {
    this.data = data;
    this.descNode.textContent = data.summary || "";
    const items = data.series.map((s) => ({
      label: s.label, cls: s.cls, kind: s.kind ?? (s.points.length === 1 ? "dot" : s.dashed ? "dash" : "line"),
    }));
    if (data.bands && data.bands.length) items.push({ label: data.bandLabel, cls: "band", kind: "box" });
    if (data.extraLegend) items.push(...data.extraLegend);
    this.setLegend(items);
    this.draw();
  }

  setMarker(marker) {
    this.marker = marker;
    this.drawMarker();
  }

  /** The linear axis's domain [lo, hi] and tick step, in data units, from every finite y. */
  linearDomain() {
    const ys = [];
    for (const s of this.data.series) for (const [, y] of s.points) if (Number.isFinite(y)) ys.push(y);
    if (this.marker) for (const p of this.marker.points) if (Number.isFinite(p.y)) ys.push(p.y);
    if (!ys.length) return [0, 1, 0.2];
    let lo = Math.min(...ys);
    let hi = Math.max(...ys);
    if (hi - lo < 1e-12 * Math.max(1, Math.abs(lo))) {
      const pad = Math.max(1, Math.abs(lo) * 0.1);
      lo -= pad;
      hi += pad;
    }
    const step = niceStep(hi - lo);
    return [Math.floor(lo / step) * step, Math.ceil(hi / step) * step, step];
  }

  yDomain() {
    if (this.linear) return this.linearDomain();
    let lo = Infinity;
    let hi = -Infinity;
    const see = (y) => {
      if (y > 0 && Number.isFinite(y)) {
        const l = Math.log10(y);
        lo = Math.min(lo, l);
        hi = Math.max(hi, l);
      }
    };
    for (const s of this.data.series) for (const [, y] of s.points) see(y);
    if (this.marker) for (const p of this.marker.points) see(p.y);
    if (!Number.isFinite(lo)) return [-4, 2];
    lo = Math.max(this.yClamp[0], Math.floor(lo));
    hi = Math.min(this.yClamp[1], Math.ceil(hi));
    if (hi - lo < 2) hi = lo + 2;
    return [lo, hi];
  }

  draw() {
    if (!this.host.clientWidth) return;
    const [w, h] = this.size();
    const m = { l: 52, r: 14, t: 14, b: 46 };
    const [x0, x1] = this.xDomain;
    const [y0, y1] = (this.yd = this.yDomain());
    const ty = this.linear ? (y) => y : Math.log10;
    const tx = this.xLinear ? (x) => x : Math.log10;
    this.sx = (x) => m.l + ((tx(x) - x0) / (x1 - x0)) * (w - m.l - m.r);
    this.sy = (y) => m.t + (1 - (ty(y) - y0) / (y1 - y0)) * (h - m.t - m.b);
    this.box = { m, w, h };
    const g = node("g");

    // Shaded bands (e.g. where the sign is wrong) under everything else.
    for (const b of this.data.bands || []) {
      const a = this.sx(b.from);
      const c = this.sx(b.to);
      node("rect", { x: a, y: m.t, width: Math.max(1, c - a), height: h - m.t - m.b, class: "band" }, g);
    }
    // Grid and decade ticks (round linear ticks on a linear x axis).
    if (this.xLinear) {
      const step = niceStep(x1 - x0);
      for (let v = Math.ceil(x0 / step) * step; v <= x1 + step * 1e-9; v += step) {
        const x = this.sx(v);
        const zero = Math.abs(v) < step * 1e-9;
        node("line", { x1: x, x2: x, y1: m.t, y2: h - m.b, class: zero ? "grid zero" : "grid" }, g);
        const t = node("text", { x, y: h - m.b + 18, "text-anchor": "middle", class: "tick" }, g);
        t.textContent = linearLabel(zero ? 0 : v);
      }
    } else {
      const xStep = x1 - x0 > 8 ? 2 : 1;
      for (let p = Math.ceil(x0); p <= x1; p += xStep) {
        const x = this.sx(10 ** p);
        node("line", { x1: x, x2: x, y1: m.t, y2: h - m.b, class: "grid" }, g);
        powerLabel(g, x, h - m.b + 18, p, "middle");
      }
    }
    if (this.linear) {
      const step = this.yd[2];
      for (let i = 0; y0 + i * step <= y1 + step * 1e-9; i++) {
        const v = y0 + i * step;
        const y = this.sy(v);
        node("line", { x1: m.l, x2: w - m.r, y1: y, y2: y, class: Math.abs(v) < step * 1e-9 ? "grid zero" : "grid" }, g);
        const t = node("text", { x: m.l - 6, y: y + 4, "text-anchor": "end", class: "tick" }, g);
        t.textContent = linearLabel(Math.abs(v) < step * 1e-9 ? 0 : v);
      }
    } else {
      const yStep = y1 - y0 > 8 ? 2 : 1;
      for (let p = y0; p <= y1; p += yStep) {
        const y = this.sy(10 ** p);
        node("line", { x1: m.l, x2: w - m.r, y1: y, y2: y, class: "grid" }, g);
        powerLabel(g, m.l - 6, y + 4, p, "end");
      }
    }
    node("rect", { x: m.l, y: m.t, width: w - m.l - m.r, height: h - m.t - m.b, class: "frame" }, g);
    const xl = node("text", { x: m.l + (w - m.l - m.r) / 2, y: h - 6, "text-anchor": "middle", class: "axis-label" }, g);
    xl.textContent = this.xLabel;
    const yl = node("text", {
      x: -(m.t + (h - m.t - m.b) / 2), y: 13, transform: "rotate(-90)", "text-anchor": "middle", class: "axis-label",
    }, g);
    yl.textContent = this.yLabel;

    // Series, clipped to the frame.
    const xOk = this.xLinear ? (x) => Number.isFinite(x) : (x) => x > 0 && Number.isFinite(x);
    const inside = this.linear
      ? ([x, y]) => xOk(x) && Number.isFinite(y)
      : ([x, y]) => xOk(x) && y > 0 && Number.isFinite(y)
        && Math.log10(y) >= y0 - 0.5 && Math.log10(y) <= y1 + 0.5;
    for (const s of this.data.series) {
      for (const seg of segments(s.points, inside)) {
        const pts = seg.map(([x, y]) => `${this.sx(x).toFixed(1)},${this.sy(y).toFixed(1)}`).join(" ");
        node("polyline", { points: pts, class: `series ${s.cls}${s.dashed ? " dashed" : ""}` }, g);
        if (s.dots) for (const [x, y] of seg) node("circle", { cx: this.sx(x), cy: this.sy(y), r: 2.5, class: `dot ${s.cls}` }, g);
      }
    }
    this.markerLayer = node("g", { class: "marker" }, g);
    this.layer.replaceWith(g);
    this.layer = g;
    fitAxisLabels(g, w, h);
    this.drawMarker();
  }

  drawMarker() {
    if (!this.markerLayer || !this.marker || !this.box) return;
    const { m, w, h } = this.box;
    const mk = this.marker;
    const x = this.sx(mk.x);
    const layer = this.markerLayer;
    if (!(x >= m.l - 1 && x <= w - m.r + 1)) {
      layer.replaceChildren();
      return;
    }
    // A slider move only moves the marker: its nodes are kept and their attributes updated.
    let [line, label, ...dots] = layer.children;
    if (!label) {
      line = node("line", { class: "marker-line" }, layer);
      label = node("text", { "text-anchor": "middle", class: "marker-label" }, layer);
    }
    update(line, { x1: x, x2: x, y1: m.t, y2: h - m.b });
    if (label.textContent !== mk.label) label.textContent = mk.label;
    // Centred on the line, but its ends at least 8 px inside the frame (clear of a marker dot
    // on the frame's edge), and its centre at least 40 px in: "k = 1.0e8 N/m" stays inside the
    // plot on a phone.
    const inset = Math.max(40, labelWidth(label, mk.label) / 2 + 8);
    update(label, { x: Math.min(Math.max(x, m.l + inset), w - m.r - inset), y: m.t + 12 });
    const [y0, y1] = this.yd;
    const points = mk.points.filter((p) => (this.linear ? Number.isFinite(p.y) : p.y > 0));
    points.forEach((p, i) => {
      const cy = this.linear
        ? this.sy(Math.min(y1, Math.max(y0, p.y)))
        : this.sy(10 ** Math.min(y1, Math.max(y0, Math.log10(p.y))));
      // A ring (a route that often lands on another's value: the tolerance route on the
      // corrected one) is drawn larger and hollow, so the dot it circles stays visible.
      const dot = dots[i] ?? node("circle", { r: 5 }, layer);
      update(dot, { cx: x, cy, r: p.ring ? 8 : 5, class: `marker-dot ${p.ring ? "marker-ring " : ""}${p.cls}` });
    });
    for (const dot of dots.slice(points.length)) dot.remove();
  }
}

/** Set the attributes that changed (an unchanged write still costs the browser a style pass). */
function update(n, attrs) {
  for (const [k, v] of Object.entries(attrs)) {
    const value = String(v);
    if (n.getAttribute(k) !== value) n.setAttribute(k, value);
  }
}

/**
 * A marker label's width in px, from its computed font on a canvas: no layout is forced, so a
 * slider move stays one style and layout pass. The font is read once per label node.
 */
const measure = document.createElement("canvas").getContext("2d");
const fonts = new WeakMap();
const widths = new Map(); // font + text -> px
function labelWidth(label, text) {
  let font = fonts.get(label);
  if (!font) {
    const cs = getComputedStyle(label);
    font = `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
    fonts.set(label, font);
  }
  const key = `${font}|${text}`;
  let width = widths.get(key);
  if (width === undefined) {
    measure.font = font;
    width = measure.measureText(text).width;
    widths.set(key, width);
  }
  return width;
}

/** Viridis, sampled: presentation colours for the heat map. */
const VIRIDIS = ["#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58", "#b5de2b", "#fde725"];

function viridis(t) {
  const u = Math.min(1, Math.max(0, t)) * (VIRIDIS.length - 1);
  const i = Math.min(VIRIDIS.length - 2, Math.floor(u));
  const f = u - i;
  const a = VIRIDIS[i].match(/\w\w/g).map((c) => parseInt(c, 16));
  const b = VIRIDIS[i + 1].match(/\w\w/g).map((c) => parseInt(c, 16));
  return `rgb(${a.map((v, k) => Math.round(v + f * (b[k] - v))).join(",")})`;
}

/**
 * A heat map of log10(value) on a regular grid, with paths and points on top.
 *   setData({xs, ys, values (row-major [iy][ix], NaN = no value), valueLabel, summary})
 *   setOverlay({paths: [{points: [[x, y]], cls}], points: [{x, y, cls, r}]})
 */
export class Heatmap extends Figure {
  constructor(host, { title, xLabel, yLabel }) {
    super(host, { title, height: [260, 520] });
    this.xLabel = xLabel;
    this.yLabel = yLabel;
    this.data = null;
    this.overlay = { paths: [], points: [] };
  }

  setData(data) {
    this.data = data;
    this.descNode.textContent = data.summary || "";
    this.draw();
  }

  setOverlay(overlay) {
    this.overlay = overlay;
    this.drawOverlay();
  }

  size() {
    this.width = Math.max(200, Math.floor(this.host.clientWidth || 600));
    const h = Math.min(520, Math.round(this.width * 0.85));
    this.svg.setAttribute("viewBox", `0 0 ${this.width} ${h}`);
    this.svg.setAttribute("width", this.width);
    this.svg.setAttribute("height", h);
    return [this.width, h];
  }

  draw() {
    if (!this.host.clientWidth || !this.data) return;
    const [w, h] = this.size();
    const m = { l: 52, r: 14, t: 10, b: 44 };
    const { xs, ys, values } = this.data;
    const dx = xs[1] - xs[0];
    const dy = ys[1] - ys[0];
    const xlo = xs[0] - dx / 2;
    const xhi = xs[xs.length - 1] + dx / 2;
    const ylo = ys[0] - dy / 2;
    const yhi = ys[ys.length - 1] + dy / 2;
    this.sx = (x) => m.l + ((x - xlo) / (xhi - xlo)) * (w - m.l - m.r);
    this.sy = (y) => m.t + (1 - (y - ylo) / (yhi - ylo)) * (h - m.t - m.b);
    const g = node("g");
    const logs = values.map((v) => (v > 0 && Number.isFinite(v) ? Math.log10(v) : NaN));
    const finite = logs.filter(Number.isFinite);
    const lo = Math.min(...finite);
    const hi = Math.max(...finite);
    const cw = this.sx(xs[0] + dx) - this.sx(xs[0]);
    const ch = this.sy(ys[0]) - this.sy(ys[0] + dy);
    const n = xs.length;
    for (let i = 0; i < ys.length; i++) {
      for (let j = 0; j < n; j++) {
        const l = logs[i * n + j];
        const attrs = {
          x: (this.sx(xs[j]) - cw / 2).toFixed(1), y: (this.sy(ys[i]) - ch / 2).toFixed(1),
          width: (cw + 0.6).toFixed(1), height: (ch + 0.6).toFixed(1),
        };
        if (Number.isFinite(l)) attrs.fill = viridis((l - lo) / (hi - lo || 1));
        else attrs.class = "void";
        node("rect", attrs, g);
      }
    }
    node("rect", { x: m.l, y: m.t, width: w - m.l - m.r, height: h - m.t - m.b, class: "frame" }, g);
    const ticks = (lo2, hi2, count) => {
      const out = [];
      for (let k = 0; k <= count; k++) out.push(lo2 + ((hi2 - lo2) * k) / count);
      return out;
    };
    for (const x of ticks(xs[0], xs[xs.length - 1], 4)) {
      const t = node("text", { x: this.sx(x), y: h - m.b + 16, "text-anchor": "middle", class: "tick" }, g);
      t.textContent = x.toFixed(1).replace("-", "−");
    }
    for (const y of ticks(ys[0], ys[ys.length - 1], 4)) {
      const t = node("text", { x: m.l - 6, y: this.sy(y) + 4, "text-anchor": "end", class: "tick" }, g);
      t.textContent = y.toFixed(2);
    }
    const xl = node("text", { x: m.l + (w - m.l - m.r) / 2, y: h - 6, "text-anchor": "middle", class: "axis-label" }, g);
    xl.textContent = this.xLabel;
    const yl = node("text", {
      x: -(m.t + (h - m.t - m.b) / 2), y: 13, transform: "rotate(-90)", "text-anchor": "middle", class: "axis-label",
    }, g);
    yl.textContent = this.yLabel;
    const clip = `${this.host.id || "map"}-clip`;
    const defs = node("defs", {}, g);
    const cp = node("clipPath", { id: clip }, defs);
    node("rect", { x: m.l, y: m.t, width: w - m.l - m.r, height: h - m.t - m.b }, cp);
    this.overlayLayer = node("g", { "clip-path": `url(#${clip})` }, g);
    this.layer.replaceWith(g);
    this.layer = g;
    fitAxisLabels(g, w, h);
    this.range = [lo, hi];
    this.drawOverlay();
  }

  drawOverlay() {
    if (!this.overlayLayer) return;
    const parts = [];
    for (const p of this.overlay.paths) {
      const pts = p.points.map(([x, y]) => `${this.sx(x).toFixed(1)},${this.sy(y).toFixed(1)}`).join(" ");
      parts.push(node("polyline", { points: pts, class: `path ${p.cls}` }));
    }
    for (const p of this.overlay.points) {
      parts.push(node("circle", { cx: this.sx(p.x), cy: this.sy(p.y), r: p.r || 5, class: `pt ${p.cls}` }));
    }
    this.overlayLayer.replaceChildren(...parts);
  }

  /** The colour scale as CSS, for a legend bar: [css gradient, low log10, high log10]. */
  scale() {
    const stops = VIRIDIS.map((c, i) => `${c} ${(100 * i) / (VIRIDIS.length - 1)}%`).join(", ");
    return [`linear-gradient(to right, ${stops})`, ...(this.range || [0, 0])];
  }
}
