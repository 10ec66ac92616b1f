// Number formatting for the lab: presentation only, no physics. Every number passed in
// comes from the core; these functions decide how many digits the page prints.

/** x in exponential notation without the "+": 1.0e6, 2.9e-3. */
export const exp = (x, digits) => x.toExponential(digits).replace("e+", "e");

// One formatter each, built once: `toLocaleString` builds a new one on every call, and a
// slider move prints dozens of numbers (the same output, a fraction of the time).
const WHOLE = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
const GROUPED = new Intl.NumberFormat("en-US");

/**
 * About three significant figures: 0.0103, 45.5, 1,601; exponential outside [0.01, 1e4).
 * The core's non-finite numbers arrive as themselves (see sim.js): NaN prints as "not a
 * number", ±Infinity as "∞" / "−∞"; null (the core's "none") as "n/a".
 */
export function num(x) {
  if (x === null || x === undefined) return "n/a";
  if (x === 0) return "0";
  if (Number.isNaN(x)) return "not a number";
  if (!Number.isFinite(x)) return x > 0 ? "∞" : "−∞";
  const a = Math.abs(x);
  let s = exp(x, 2);
  if (a >= 100 && a < 1e4) s = WHOLE.format(x);
  else if (a >= 1e-2 && a < 100) s = x.toPrecision(3);
  return s.replace(/^-/, "−");
}

/** num() with an explicit sign. */
export const signed = (x) => (x > 0 ? `+${num(x)}` : num(x));
/** A whole number with thousands separators. */
export const int = (n) => GROUPED.format(n);
/** The stiffness as the slider shows it. */
export const kText = (k) => `k = ${exp(k, 1)} N/m`;
/** The fixed step as the dt buttons show it. */
export const dtText = (dt) => `dt = ${exp(dt, 0)} s`;
/** The sign line for the core's three sign states ("right", "wrong", "right_far_off"). */
export const signText = (sign) =>
  ({ right: "RIGHT SIGN", wrong: "WRONG SIGN", right_far_off: "RIGHT SIGN, FAR OFF" })[sign] ?? String(sign);
/** A blame share, or "< floor" when the core says it is below the noise floor. */
export const share = (x, below) => (below ? `< floor (${num(x)})` : num(x));
/**
 * A duration in s with two figures, in the unit that reads best: 3.1 µs, 24 µs, 0.31 ms, 1.9 ms,
 * 12 ms, 1.2 s (a no-break space before the unit, so a line never ends between them).
 */
export function duration(seconds) {
  const ms = seconds * 1e3;
  // Below 99.5 µs in µs (two figures never round up to 1.0e+2 there), from there in ms.
  if (ms * 1e3 < 99.5) return `${(ms * 1e3).toPrecision(2)}\u00a0µs`;
  if (ms < 10) return `${ms.toPrecision(2)}\u00a0ms`;
  if (ms < 1000) return `${Math.round(ms)}\u00a0ms`;
  return `${seconds.toPrecision(2)}\u00a0s`;
}
/**
 * A route's wall time per gradient (the core's `wall_s`, s) read on a clock whose smallest
 * step is `tick` s (the readout's `wall_resolution_s`): "1.9 ms", or "< 0.1 ms" under one
 * tick, or "not timed" when the core timed nothing (null).
 */
export function wall(seconds, tick) {
  if (seconds === null || seconds === undefined) return "not timed";
  if (tick && seconds < tick) return `<\u00a0${duration(tick)}`;
  return duration(seconds);
}
/** A ratio such as a cost ratio: 1.30×. */
export const times = (x) => `${num(x)}×`;
/** A slope such as an exponent: three decimals. */
export const slope = (x) => x.toFixed(3).replace(/^-/, "−");
/** A URL-friendly short form of a power of ten or a tolerance: 1e6, 1.26e6, 1e-11. */
export function short(x) {
  const s = exp(x, 2).replace(/\.?0+e/, "e");
  return s;
}

/**
 * A sentence from the core with its long numbers cut to about three figures:
 * "at t = 0.00005096839959225287 s" -> "at t = 5.10e-5 s". Version numbers such as 0.1.0
 * and whole numbers are left alone.
 */
export function tidy(text) {
  return String(text).replace(/(?<![\d.])-?\d+\.\d{4,}(?:e[+-]?\d+)?(?![\d.])/g, (m) => num(Number(m)).replace(/^−/, "-"));
}

/**
 * Replace a node's text (the one DOM write the lab's modules share, beside their numbers). A
 * node holding one text node has that node's data changed in place: setting textContent would
 * remove it and insert a new one, which the browser then styles and lays out as a new node
 * (benches/lab_bench.py --phone traced four such per slider move).
 */
export function retext(n, value) {
  const t = n.firstChild;
  if (t !== null && t === n.lastChild && t.nodeType === 3 && value !== "") t.data = value;
  else n.textContent = value;
}
