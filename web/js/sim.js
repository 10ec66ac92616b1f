// The facade over the WebAssembly core: the only module that imports web/pkg/.
//
// It loads the module, owns every handle's free(), turns the core's JSON answers into
// objects and catches every error. A caught error is reported once, as a sentence, through
// the `report(sentence, kind)` callback the page passes in, and the call returns
// null/false; nothing here throws. The core's errors arrive as JS Errors whose message is
// the core's own and whose name is the failure's kind (InvalidParameter, NoImpact, ...).

const PKG = "../pkg/ferromotion_wasm.js";

/** A caught error as a sentence for the status line. */
export function sentence(err) {
  if (err instanceof WebAssembly.RuntimeError) {
    return `The simulation core stopped on an internal error (${err.message}). This is a bug; reload the page to start again.`;
  }
  const text = String(err && err.message !== undefined ? err.message : err).trim();
  const s = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?]$/.test(s) ? s : `${s}.`;
}

/**
 * Load the core and open a bench at the spec's defaults, or at a scenario's drop, k and
 * dt ({drop, k, dt}, SI units). Resolves to a Bench, or to null after reporting why.
 */
export async function openBench({ report = () => {}, scenario } = {}) {
  let pkg;
  try {
    pkg = await import(PKG);
    await pkg.default();
  } catch (err) {
    report(
      `The simulation core could not be loaded (${err.message}). Build it with “make wasm”, then reload the page.`,
      "error",
    );
    return null;
  }
  const raw = attempt(report, () =>
    new pkg.Bench(scenario === undefined ? undefined : JSON.stringify(scenario)));
  return raw ? new Bench(pkg, raw, report) : null;
}

function attempt(report, fn) {
  try {
    return fn();
  } catch (err) {
    report(sentence(err), "error");
    return null;
  }
}

/** The lab's bench: controls and readouts, one handle into the core. */
export class Bench {
  #pkg;
  #raw;
  #report;

  constructor(pkg, raw, report) {
    this.#pkg = pkg;
    this.#raw = raw;
    this.#report = report;
  }

  /**
   * Change some controls: {log10k, divisor (1, 10 or 100), tolerance: {on, rtol, events}}.
   * Stops at the first refusal, reports it and returns false; true when all were taken.
   */
  apply({ log10k, divisor, tolerance } = {}) {
    const raw = this.#raw;
    return (
      attempt(this.#report, () => {
        if (log10k !== undefined) raw.setLog10K(log10k);
        if (divisor !== undefined) raw.setDtDivisor(divisor);
        if (tolerance !== undefined) raw.setTolerance(tolerance.on, tolerance.rtol, tolerance.events);
        return true;
      }) === true
    );
  }

  /** Every readout for the current controls (the core's BenchReadout), or null. */
  readout() {
    return attempt(this.#report, () => JSON.parse(this.#raw.readoutJson()));
  }

  /** Errors against k (N/m) at the current step (the core's Sweep), or null. */
  curve(ks) {
    return attempt(this.#report, () => JSON.parse(this.#raw.curveJson(Float64Array.from(ks))));
  }

  /** The bench's drop (the core's Drop: height, velocity, t_final, gravity, mass, zeta). */
  drop() {
    return attempt(this.#report, () => JSON.parse(this.#raw.dropJson()));
  }

  /** (1+e)·g/|v| in 1/s for restitution e, gravity g (m/s²) and impact speed (m/s), or null. */
  timeOfImpactTerm(restitution, gravity, speed) {
    return attempt(this.#report, () => this.#pkg.timeOfImpactTerm(restitution, gravity, speed));
  }

  /** The core's version string. */
  version() {
    return this.#pkg.version();
  }

  /** Release the core's memory; the bench is unusable afterwards. */
  free() {
    if (this.#raw) {
      this.#raw.free();
      this.#raw = null;
    }
  }
}
