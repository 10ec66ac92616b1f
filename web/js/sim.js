// The facade over the WebAssembly core: the only module that imports web/pkg/.
//
// It loads the module, owns every handle's free() and catches every error. Answers arrive
// from the core as JS values, not JSON text: plain objects with the core's serde keys,
// arrays, `null` where the core says "none" (an Option), and every number as a JS number.
// Non-finite numbers keep their meaning: a NaN from the core is NaN here and ±Infinity is
// ±Infinity (JSON text used to turn both into null); format.js prints them as "not a
// number" and "∞", and plots.js leaves such a point out of its line. A caught error is reported once, as a sentence, through
// the `report(sentence, kind)` callback the page passes in, and the call returns
// null/false; nothing here throws. The core's errors arrive as JS Errors whose message is
// the core's own and whose name is the failure's kind (InvalidParameter, Grazing, ...).
//
// Work too slow for one frame (curves over many stiffnesses, the audit sweep, the
// equal-budget table, the descent experiment, the quadruped) runs in a Web Worker (worker.js) that loads this same module
// and the same wasm; `Background` is the page's side of it.
//
// Types: what crosses is declared once, in crates/ferromotion-wasm/src/types.rs, as the core's own
// structs (the generated web/pkg/ferromotion_wasm.d.ts); this file is type-checked against them
// (`tsc --checkJs`, in `make test`), and tests/golden/types.mjs checks the declarations against the
// objects the core really sends.

// @ts-check

/** @typedef {typeof import("../pkg/ferromotion_wasm.js")} Core the generated package */
/** @typedef {import("../pkg/ferromotion_wasm.js").Drop} Drop */
/** @typedef {import("../pkg/ferromotion_wasm.js").WorkbenchConfig} WorkbenchConfig */
/** @typedef {import("../pkg/ferromotion_wasm.js").FitRoute} FitRoute */
/** @typedef {(sentence: string, kind: string) => void} Report how a caught error is told */
/** @typedef {{done: number, total: number}} Progress a job's progress, from the core */
/**
 * @template T
 * @typedef {{ok: true, value: T} | {ok: false, kind?: string, message: string}} Outcome
 */

/**
 * Load and instantiate the core; resolves to the generated package.
 * @returns {Promise<Core>}
 */
export async function loadCore() {
  const pkg = await import("../pkg/ferromotion_wasm.js");
  await pkg.default();
  return pkg;
}

/**
 * A caught error as a sentence for the status line.
 * @param {any} err
 * @returns {string}
 */
export function sentence(err) {
  if (err instanceof WebAssembly.RuntimeError) {
    return `The simulation core stopped on an internal error (${err.message}). This is a bug; reload the page to start again.`;
  }
  const text = String(err && err.message !== undefined ? err.message : err).trim();
  const s = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?]$/.test(s) ? s : `${s}.`;
}

/**
 * Load the core and open a bench at the core's defaults, or at the controls `config` (the
 * core's WorkbenchConfig: {drop, k, base_dt, dt_divisor, tolerance, tolerance_options}, SI
 * units; missing keys take the defaults). Resolves to a Workbench, or to null after
 * reporting why.
 * @param {{report?: Report, config?: import("../pkg/ferromotion_wasm.js").Given<WorkbenchConfig>}} [options]
 * @returns {Promise<Workbench | null>}
 */
export async function openWorkbench({ report = () => {}, config } = {}) {
  let pkg;
  try {
    pkg = await loadCore();
  } catch (/** @type {any} */ err) {
    report(
      `The simulation core could not be loaded (${err.message}). Build it with “make wasm”, then reload the page.`,
      "error",
    );
    return null;
  }
  const raw = attempt(report, () => new pkg.Workbench(config));
  return raw ? new Workbench(pkg, raw, report) : null;
}

/**
 * Run fn; its value, or null after reporting the error.
 * @template T
 * @param {Report} report
 * @param {() => T} fn
 * @returns {T | null}
 */
function attempt(report, fn) {
  try {
    return fn();
  } catch (err) {
    report(sentence(err), "error");
    return null;
  }
}

/**
 * Run fn; {ok: true, value} or {ok: false, kind, message} (nothing reported).
 * @template T
 * @param {() => T} fn
 * @returns {Outcome<T>}
 */
function outcome(fn) {
  try {
    return { ok: true, value: fn() };
  } catch (/** @type {any} */ err) {
    return { ok: false, kind: err && err.name, message: sentence(err) };
  }
}

/** The lab's bench: controls and readouts, one handle into the core. */
export class Workbench {
  /** @type {Core} */
  #pkg;
  /** @type {import("../pkg/ferromotion_wasm.js").Workbench | null} */
  #raw;
  /** @type {Report} */
  #report;

  /**
   * @param {Core} pkg
   * @param {import("../pkg/ferromotion_wasm.js").Workbench} raw
   * @param {Report} report
   */
  constructor(pkg, raw, report) {
    this.#pkg = pkg;
    this.#raw = raw;
    this.#report = report;
  }

  /**
   * Change some controls: {log10k, divisor (1, 10 or 100), dt (s: one of the readout's
   * refinement.steps), tolerance: {on, rtol, events, jacobian ("richardson" | "forward";
   * omitted: unchanged)}}. Stops at the first refusal, reports it and returns false; true
   * when all were taken.
   * @param {{log10k?: number, divisor?: number, dt?: number,
   *   tolerance?: {on: boolean, rtol: number, events: boolean, jacobian?: "richardson" | "forward"}}} [controls]
   * @returns {boolean}
   */
  apply({ log10k, divisor, dt, tolerance } = {}) {
    return (
      attempt(this.#report, () => {
        const raw = this.#live();
        if (log10k !== undefined) raw.setLog10K(log10k);
        if (divisor !== undefined) raw.setDtDivisor(divisor);
        if (dt !== undefined) raw.setDt(dt);
        if (tolerance !== undefined) raw.setTolerance(tolerance.on, tolerance.rtol, tolerance.events, tolerance.jacobian);
        return true;
      }) === true
    );
  }

  /** The live handle (a freed bench refuses, as the core's handle would). */
  #live() {
    if (!this.#raw) throw new Error("this bench was freed");
    return this.#raw;
  }

  /** Every readout for the current controls (the core's WorkbenchReadout), or null. */
  readout() {
    return attempt(this.#report, () => this.#live().readout());
  }

  /**
   * The current controls, the core's WorkbenchConfig as an object: what a background
   * curve job needs to build its own bench (see jobs.curve).
   */
  config() {
    return attempt(this.#report, () => this.#live().config());
  }

  /**
   * (1+e)·g/|v| in 1/s at an impact speed (m/s) with this drop's limit restitution: {ok, value | message}.
   * @param {number} speed
   */
  timeOfImpactTerm(speed) {
    return outcome(() => this.#pkg.dropTimeOfImpactTerm(this.#live().config().drop, speed));
  }

  /**
   * hybrid_jacobian on this drop's rigid bounce released so that it hits the ground at
   * `speed` (m/s): {ok: true, value: {speed, height, t1, dt, x, jacobian, events,
   * probe_gap}} or the core's refusal {ok: false, kind: "Grazing", message}.
   * @param {number} speed
   */
  hybridAtSpeed(speed) {
    return outcome(() => this.#live().hybridDrop(speed));
  }

  /** The core's grazing threshold, m/s. */
  grazeSpeed() {
    return this.#pkg.grazeSpeed();
  }

  /** The core's step cap per rollout. */
  maxSteps() {
    return this.#pkg.maxSteps();
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

// ---- background jobs ---------------------------------------------------------------------

/**
 * A seeded standard normal generator (mulberry32 and Box–Muller): the lab's simulated measurement noise.
 * @param {number} seed
 * @returns {() => number}
 */
function gaussian(seed) {
  let a = seed >>> 0;
  const uniform = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let r = Math.imul(a ^ (a >>> 15), 1 | a);
    r ^= r + Math.imul(r ^ (r >>> 7), 61 | r);
    return (((r ^ (r >>> 14)) >>> 0) + 0.5) / 4294967296;
  };
  return () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
}

/**
 * The jobs the worker runs, by name; each takes the loaded package and plain arguments and
 * returns plain data (or throws the core's error).
 */
export const jobs = {
  /**
   * {config (a WorkbenchConfig, from Workbench.config()), ks (N/m), corrected, blame} ->
   * the core's Curve {sweep, exponent, exponent_error, wrong_sign}: this thread builds its
   * own bench from the config and asks it for the curve at its current step (and tolerance
   * switch); `progress`, when given, hears {done, total} stiffnesses from the core as it goes.
   * @param {Core} pkg
   * @param {{config: WorkbenchConfig, ks: number[], corrected?: boolean, blame?: boolean}} args
   * @param {(p: Progress) => void} [progress]
   */
  curve(pkg, { config, ks, corrected = false, blame = false }, progress) {
    const bench = new pkg.Workbench(config);
    try {
      const tell = progress && ((/** @type {number} */ done, /** @type {number} */ total) => progress({ done, total }));
      return bench.curve(Float64Array.from(ks), { corrected, blame }, tell);
    } finally {
      bench.free();
    }
  },
  /**
   * {drop (the core's Drop: height, velocity, t_final, gravity, mass, zeta), k (N/m),
   * budget (force evaluations per Jacobian)} -> the core's EqualBudget: every route at that
   * budget scored against the flow, and the probe-size trap (each row's wall_s timed by this
   * thread's clock).
   * @param {Core} pkg
   * @param {{drop: Drop, k: number, budget: number}} args
   */
  equalBudget(pkg, { drop, k, budget }) {
    return pkg.equalBudget(drop, k, budget);
  },
  /**
   * {options (the core's TwoContactsOptions: angle_degrees, restitution, height, t_final,
   * gravity, half_width, per_side, stiffness, dt, mass; missing keys take the core's
   * defaults)} -> the core's TwoContacts: the V-groove at every offset through zero, the
   * rigid groove's verdict (Jacobian, SetValued, ...) beside the fixed-step soft simulator's
   * state and tangent (the "two contacts at once" panel, contacts.js).
   * @param {Core} pkg
   * @param {{options?: import("../pkg/ferromotion_wasm.js").Given<import("../pkg/ferromotion_wasm.js").TwoContactsOptions>}} args
   */
  twoContacts(pkg, { options } = {}) {
    return pkg.twoContacts(options);
  },
  /**
   * The descent experiment at the core's defaults.
   * @param {Core} pkg
   */
  descent(pkg) {
    return pkg.descent();
  },
  /**
   * The fit demo's settings: the core's FitDemo (truth, k, dt, noise, sampling step, parameters).
   * @param {Core} pkg
   */
  fitDemo(pkg) {
    return pkg.fitDemo();
  },
  /**
   * {demo (the core's FitDemo), horizon (s), guess (the starting drop), routes, seed} -> {data:
   * the core's predictions with noise added, fits: one core FitReport per route}: the "Fit a
   * bounce" panel (fitpanel.js). The data are the flow route's closed form (the core's
   * fitPredict) every demo.step s plus seeded Gaussian noise; each fit is the core's fit of the
   * demo's parameters.
   * @param {Core} pkg
   * @param {{demo: any, horizon: number, guess: Drop, routes: FitRoute[], seed: number}} args
   */
  fitBounce(pkg, { demo, horizon, guess, routes, seed }) {
    const n = Math.round(horizon / demo.step);
    const t = Array.from({ length: n }, (_, i) => Math.round((i + 1) * demo.step * 1e10) / 1e10);
    const options = { route: /** @type {FitRoute} */ ("flow"), k: demo.k, dt: demo.dt };
    const drop = { ...guess, height: demo.height, zeta: demo.zeta, t_final: horizon };
    const truth = pkg.fitPredict(drop, Float64Array.from(t), options);
    const normal = gaussian(seed);
    const y = truth.y.map((x) => x + demo.sigma_y * normal());
    const v = truth.v.map((x) => x + demo.sigma_v * normal());
    const observations = { t, y, v, sigma_y: demo.sigma_y, sigma_v: demo.sigma_v };
    const fits = routes.map((route) =>
      pkg.fit({ ...guess, t_final: horizon }, observations, { ...options, route, params: demo.params }));
    return { data: { t, y, v, y_true: truth.y }, fits };
  },
  /**
   * The quadruped's two-axis comparison for a configuration (the core's
   * QuadrupedExperiment; omitted fields take the core's defaults) -> the core's
   * QuadrupedReport, every law's run included, as {report, seconds}: seconds is the time
   * the core took in the thread that ran it.
   * @param {Core} pkg
   * @param {{config?: import("../pkg/ferromotion_wasm.js").Given<import("../pkg/ferromotion_wasm.js").QuadrupedExperiment>}} [args]
   */
  quadruped(pkg, { config = {} } = {}) {
    const t0 = performance.now();
    const report = pkg.quadruped(config);
    const seconds = (performance.now() - t0) / 1000;
    return { report, seconds };
  },
};

/**
 * The page's side of the worker. `run(kind, args)` resolves to {ok: true, value} or
 * {ok: false, message}; `onBusy(count)` hears how many jobs are outstanding. If module
 * workers are unavailable the jobs run on the page instead (slower, but never silent).
 */
export class Background {
  /** @type {Worker | null} */
  #worker = null;
  /** @type {Map<number, (outcome: Outcome<any>) => void>} */
  #pending = new Map();
  /** @type {Map<number, (p: Progress) => void>} */
  #progress = new Map();
  #next = 1;
  /** @type {(count: number) => void} */
  #onBusy;

  /** @param {{onBusy?: (count: number) => void}} [options] */
  constructor({ onBusy = () => {} } = {}) {
    this.#onBusy = onBusy;
    try {
      this.#worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
      this.#worker.onmessage = ({ data }) =>
        data.progress ? this.#progress.get(data.id)?.(data.progress) : this.#settle(data.id, data);
      this.#worker.onerror = (event) => {
        event.preventDefault();
        const message = `The background worker failed (${event.message || "it could not start"}); jobs now run on the page.`;
        this.#worker = null;
        for (const id of [...this.#pending.keys()]) this.#settle(id, { ok: false, message });
      };
    } catch {
      this.#worker = null;
    }
  }

  get busy() {
    return this.#pending.size;
  }

  /**
   * Run the job `kind` with `args`: a promise of {ok, value | message}. `onProgress`, when
   * given, hears the job's progress ({done, total} from the core) while it runs.
   * @param {keyof typeof jobs} kind
   * @param {any} [args]
   * @param {(p: Progress) => void} [onProgress]
   * @returns {Promise<Outcome<any>>}
   */
  run(kind, args = {}, onProgress = undefined) {
    const id = this.#next++;
    /** @type {Promise<Outcome<any>>} */
    const done = new Promise((resolve) => this.#pending.set(id, resolve));
    if (onProgress) this.#progress.set(id, onProgress);
    this.#onBusy(this.#pending.size);
    if (this.#worker) {
      this.#worker.postMessage({ id, kind, args });
    } else {
      // No worker: run here after letting the page paint its "computing" note.
      setTimeout(async () => {
        try {
          const pkg = await loadCore();
          this.#settle(id, { ok: true, value: /** @type {any} */ (jobs[kind])(pkg, args, onProgress) });
        } catch (err) {
          this.#settle(id, { ok: false, message: sentence(err) });
        }
      }, 0);
    }
    return done;
  }

  /**
   * @param {number} id
   * @param {{ok: boolean, value?: any, message?: string}} data
   */
  #settle(id, data) {
    const resolve = this.#pending.get(id);
    if (!resolve) return;
    this.#pending.delete(id);
    this.#progress.delete(id);
    resolve(data.ok ? { ok: true, value: data.value } : { ok: false, message: String(data.message) });
    this.#onBusy(this.#pending.size);
  }

  terminate() {
    if (this.#worker) this.#worker.terminate();
    this.#worker = null;
  }
}
