//! The JS types of what crosses the door, declared once for the generated package's
//! `ferromotion_wasm.d.ts`: the core's serde structs as TypeScript interfaces (the same keys,
//! `number` for every f64 and count, `T | null` for an `Option`), and each export's
//! parameters and result named by them (`unchecked_param_type`, `unchecked_return_type`).
//!
//! `make test` checks both sides: `tsc --checkJs` type-checks `web/js/sim.js` against these
//! declarations, and `tests/golden/types.mjs` compares every declared interface's keys with
//! the object the core really sends (or its defaults document), so a field added to a core
//! struct and not here fails. Options are read as `Settings<T>`: any subset of the keys,
//! at any depth (missing keys take the core's defaults; an unknown one is refused).

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = r#"
/** Any subset of a core struct's keys, at every depth: the rest take the core's defaults. */
export type Settings<T> = { [K in keyof T]?: Setting<T[K]> };
type Setting<V> = V extends readonly unknown[] ? V : V extends object ? Settings<V> : V;
/** An options argument: some settings, or nothing (`undefined`, `null`) for the defaults. */
export type Given<T> = Settings<T> | null | undefined;

/** A core error as JS receives it: the core's message, the variant as `name`, its fields. */
export interface CoreError extends Error {
  name: string;
  fields: Record<string, unknown>;
}

/** A point mass dropped on flat ground (SI units). */
export interface Drop {
  height: number; velocity: number; t_final: number; gravity: number; mass: number; zeta: number;
}
export type JacobianMethod = "richardson" | "forward";
/** The tolerance route's options. */
export interface ToleranceOptions {
  rtol: number; atol: number | null; events: boolean; eps: number; max_steps: number;
  min_step: number; jacobian: JacobianMethod;
}
/** The lab's controls. */
export interface WorkbenchConfig {
  drop: Drop; k: number; base_dt: number; dt_divisor: number; tolerance: boolean;
  tolerance_options: ToleranceOptions;
}
export interface CurveOptions { corrected: boolean; blame: boolean }
export interface SweepOptions { dt: number; tolerance: ToleranceOptions | null; blame: boolean; corrected: boolean }
export interface ExactOptions { restitution: number | null; graze_speed: number }
export interface FixedOptions { max_steps: number }
export interface CorrectedOptions { locate: boolean; max_steps: number }
export interface FlowOptions { root_rtol: number; max_events: number }
export interface Rk4Options { max_steps: number }
export interface CheckOptions {
  eps: number[]; taylor_h: number[]; random_directions: number; coordinates: boolean; seed: number;
  tol: number; graze_speed: number; scale: number[] | null; full_sweep: boolean;
}
export interface ObjectiveInfo {
  name: string; units: string; description: string; route: string; integrator: string;
  tolerances: [string, number][];
}
export type FitRoute = "fixed" | "corrected" | "tolerance" | "flow" | "exact";
/** Forward matching's options. */
export interface FitOptions {
  params: string[]; route: FitRoute; k: number; dt: number; restitution: number | null;
  tolerance: ToleranceOptions; probe: number | null; max_iterations: number; max_step: number;
  continuation: boolean; ftol: number; xtol: number; weak_rel: number; weak_width: number;
  interval: "profile" | "wald"; sigma_scale: "stated" | "residual" | "either"; check: boolean;
  check_options: CheckOptions;
}
/** Measured heights and/or velocities at sample times. */
export interface Observations {
  t: number[]; y: number[] | null; v: number[] | null; sigma_y: number | null; sigma_v: number | null;
  mask_y: boolean[] | null; mask_v: boolean[] | null;
}
/** The quadruped's two-axis comparison (its robot as the core's `Quadruped`). */
export interface QuadrupedExperiment {
  robot: Record<string, unknown>; dt: number; t_final: number; refinement: number; stiffness: number[];
  damping_ratio: number; reference_mass: number; clearance: number; speed: number; typical_probe: number;
  probe_tol: number; min_probe: number; converged_gradient: boolean; max_steps: number;
}

export interface StepStability { omega_dt: number; spectral_radius: number; stable: boolean }
/** One route's answer: x(T) = [y, v], J row-major, the cost's counters, the call's wall time. */
export interface RouteResult {
  state: [number, number]; jacobian: [number, number, number, number];
  steps: number; rejected_steps: number; force_evals: number; state_force_evals: number; rollouts: number;
  probe_gap: number | null; probe_dependent: boolean; step_stability: StepStability | null;
  wall_s?: number; wall_resolution_s?: number;
}

/** A log-log least-squares line: y ~ x^slope. */
export interface ExponentFit { slope: number; intercept: number; r2: number; points: number }
/** The blame split at (k, dt). */
export interface Blame {
  integrator_share: number; contact_share: number; ratio: number; noise_floor: number;
  integrator_below_floor: boolean; contact_below_floor: boolean;
}
/** The route answers of a readout (the tolerance route's only when it is on). */
export interface RouteReadout {
  state: [number, number]; jacobian: [number, number, number, number]; errors: Record<string, number>;
  cost: Record<string, number>; wall_s: number | null; probe_dependent: boolean;
}
/** Every readout the lab shows for its current controls. */
export interface WorkbenchReadout {
  drop: Drop; k: number; dt: number; dt_divisor: number; k_dt2: number; exact: Record<string, unknown>;
  fixed: RouteReadout; corrected: RouteReadout; flow: RouteReadout; tolerance: RouteReadout | null;
  restitution_at_k: number; exponent: ExponentFit; refinement: Record<string, unknown>; blame: Blame;
  yardstick: Record<string, unknown>; fixed_cost_ratio: number; corrected_cost_ratio: number;
  contact_exponent: ExponentFit; wall_resolution_s: number;
}
/** A stiffness sweep: its options inline, the rigid reference and one row per stiffness. */
export interface Sweep {
  dt: number; tolerance: ToleranceOptions | null; blame: boolean; corrected: boolean;
  exact: Record<string, unknown>; rows: Record<string, unknown>[];
}
/** The lab's curve: the sweep, its exponent (or the refusal) and the wrong-sign bands. */
export interface Curve {
  sweep: Sweep; exponent: ExponentFit | null; exponent_error: { kind: string; message: string } | null;
  wrong_sign: { from: number; to: number }[];
}
/** hybrid_jacobian on the drop's rigid bounce released to hit the ground at `speed`. */
export interface HybridDrop {
  speed: number; height: number; t1: number; dt: number; x: number[]; jacobian: number[];
  events: Record<string, unknown>[]; probe_gap: number;
}
/** The core's defaults the Python signatures show. */
export interface Defaults {
  drop: Drop; tolerance: ToleranceOptions; dt: number; k: number; max_steps: number; locate: boolean;
  graze_speed: number; root_rtol: number; max_events: number; check: CheckOptions;
}
/** Every route at one force-evaluation budget, and the probe-size trap. */
export interface EqualBudget {
  k: number; budget: number; flow_jacobian: number[]; rows: Record<string, unknown>[];
  probe_trap: Record<string, unknown>[]; probe_spread: number[]; wall_resolution_s: number;
}
/** The descent experiment: landscape, starts and one result per arm. */
export interface Descent {
  problem: Record<string, unknown>; target: number[]; landscape: Record<string, unknown>;
  arms: Record<string, unknown>[];
}
/** What a fit compares with data at sample times. */
export interface FitPredictions { y: number[]; v: number[]; events: number[] }
/** Forward matching's report. */
export interface FitReport {
  schema: string; route: FitRoute; params: Record<string, unknown>[]; status: string; cost_start: number;
  cost: number; observations: number; dof: number; chi2: number; chi2_limit: number; consistent: boolean;
  singular_values: number[]; condition: number; weak_directions: unknown[]; identifiable: boolean;
  iterations: Record<string, unknown>[]; evaluations: number; check_evaluations: number; t: number[];
  y_fit: number[]; v_fit: number[]; residual_y: number[]; residual_v: number[]; drop: Drop; k: number;
  restitution: number | null; wall_s: number | null; receipt: Record<string, unknown>;
}
/** The quadruped's two-axis comparison, every law's run included. */
export interface QuadrupedReport {
  config: QuadrupedExperiment; inputs: string[]; outputs: string[]; rigid: Record<string, unknown>;
  penalty: Record<string, unknown>[]; verdict: Record<string, unknown>;
}
/** The "two contacts at once" panel's settings: the V-groove and its soft twin. */
export interface TwoContactsOptions {
  angle_degrees: number; restitution: number; height: number; t_final: number; gravity: number;
  half_width: number; per_side: number; stiffness: number; dt: number; mass: number;
}
/** The rigid groove at one offset: a Jacobian, or the refusal's kind and what it names. */
export interface RigidAnswer {
  verdict: string; x: [number, number, number, number] | null; jacobian: number[] | null; commuted: boolean;
  impacts: number; orders: number[][]; outcomes: number[][]; spread: number | null; message: string | null;
}
/** The fixed-step soft-contact simulator at one offset: x(T), its tangent (row-major), its steps. */
export interface SoftAnswer { x: [number, number, number, number]; jacobian: number[]; steps: number }
/** One offset of the panel. */
export interface ContactRow {
  offset: number; rigid: RigidAnswer; soft: SoftAnswer; state_gap: number | null; gradient_error: number | null;
}
/** The V-groove through zero offset: the rigid answer beside the soft simulator's. */
export interface TwoContacts {
  options: TwoContactsOptions; angle: number; zeta: number; soft_restitution: number; zero: number;
  rows: ContactRow[];
}
/** A gradient check's receipt as JSON text and its one-line summary. */
export interface CheckAnswer { json: string; summary: string }
"#;
