# Hand-written stub of the private extension module (crates/ferromotion-py), checked
# against the built module by `python -m mypy.stubtest ferromotion._core`.
#
# `drop` arguments accept any object with float attributes height, velocity, t_final,
# gravity, mass and zeta (the public ferromotion.Drop); the core validates them.
# `options` arguments are dicts, or (names, values) tuple pairs standing for
# dict(zip(names, values)), read as the core's own serde structs (ExactOptions,
# FixedOptions, ...): missing keys take the core's defaults (DEFAULTS), an unknown key or a
# wrong type raises ScenarioError. Scalar results are the core's serde documents; a route's
# answer is the package's Route around a RouteAnswer, whose document is made when first read.

import os
from typing import Any, Callable, Optional, Protocol, Sequence, TypedDict, Union, final

import numpy as np
import numpy.typing as npt

from ferromotion._results import Route

__all__ = [
    "__version__",
    "DEFAULTS",
    "FerroError",
    "InvalidParameter",
    "StepDoesNotDivide",
    "TooManySteps",
    "NoImpact",
    "Grazing",
    "StepSizeUnderflow",
    "StepTooSmall",
    "NonFinite",
    "HiddenState",
    "TwoEventsInOneStep",
    "EventsInAdjacentSteps",
    "ProbeDependent",
    "UnguardedSwitch",
    "ContactSolveFailed",
    "Unstable",
    "ScenarioError",
    "FixtureError",
    "validate_drop",
    "impact_speed",
    "first_impact_time",
    "exact",
    "fixed",
    "corrected",
    "flow",
    "tolerance",
    "rk4",
    "blame",
    "divergence_exponent",
    "fit_loglog",
    "wrong_sign_bands",
    "contact_share_exponent",
    "dt_refinement",
    "limit_restitution",
    "realised_restitution",
    "time_of_impact_term",
    "matched_dt",
    "log_grid",
    "evaluate",
    "step_stability",
    "descent",
    "standard_arms",
    "sweep",
    "Workbench",
    "EXAMPLES",
    "RECEIPT_SCHEMA",
    "MODE_NAMES",
    "FOOT_NAMES",
    "hybrid_jacobian",
    "tumbling_cube",
    "tumbling_cube_hybrid",
    "rimless_wheel_closed_form",
    "rimless_wheel_multiplier",
    "hybrid_jvp",
    "system_exact",
    "systems_catalogue",
    "system_check",
    "PiecesHandle",
    "NotDifferentiable",
    "SetValued",
    "step_jacobian",
    "check_gradient",
    "check_example",
    "check_jacobian",
    "fixtures",
    "read_fixture",
    "read_fixture_file",
    "judge_drop",
    "conformance",
    "conditioning",
    "quadruped",
    "equal_budget",
    "quadruped_rollout",
    "Receipt",
    "RouteAnswer",
    "QuadrupedRun",
    "FIT_SCHEMA",
    "FIT_DEMO",
    "fit",
    "fit_predict",
    "FitReport",
    "FitObjective",
]

__version__: str
DEFAULTS: dict[str, Any]
EXAMPLES: list[str]  # the core's check::examples::EXAMPLES
RECEIPT_SCHEMA: str  # "ferromotion.receipt/2"
FIT_SCHEMA: str  # "ferromotion.fit/1"
FIT_DEMO: dict[str, Any]  # the core's FitDemo: the fit demo's truth and settings
MODE_NAMES: list[str]  # contact-mode names by code (0 separated, 1 sticking, 2/3 sliding forward/backward)
FOOT_NAMES: list[str]  # FL, FR, HL, HR

class _DropLike(Protocol):
    @property
    def height(self) -> float: ...
    @property
    def velocity(self) -> float: ...
    @property
    def t_final(self) -> float: ...
    @property
    def gravity(self) -> float: ...
    @property
    def mass(self) -> float: ...
    @property
    def zeta(self) -> float: ...

_F64 = npt.NDArray[np.float64]
_Options = Optional[dict[str, Any] | tuple[tuple[str, ...], tuple[Any, ...]]]

class _StepStability(TypedDict):
    omega_dt: float
    spectral_radius: float
    stable: bool

@final
class RouteAnswer:
    # One route's answer (the core's RouteResult), converted only when read.
    def document(self) -> dict[str, Any]: ...  # the core's RouteResult document

class _Fit(TypedDict):
    slope: float
    intercept: float
    r2: float
    points: int

class _Blame(TypedDict):
    integrator_share: float
    contact_share: float
    ratio: float
    noise_floor: float
    integrator_below_floor: bool
    contact_below_floor: bool

class _Refinement(TypedDict):
    base_dt: float
    errors: list[float]  # at base_dt, base_dt/10, base_dt/100
    ratio_10: float
    ratio_100: float

class _WorkbenchConfig(TypedDict):
    drop: dict[str, float]
    k: float
    base_dt: float
    dt_divisor: int
    tolerance: bool
    tolerance_options: dict[str, Any]  # rtol, atol, events, eps, max_steps, min_step, jacobian

class _ArmLike(Protocol):
    # route: "exact", "fixed", "tolerance", "corrected" or "central_differences"
    @property
    def route(self) -> str: ...
    @property
    def k(self) -> Optional[float]: ...
    @property
    def dt(self) -> Optional[float]: ...
    @property
    def rtol(self) -> Optional[float]: ...

class _Arm(TypedDict, total=False):
    route: str  # the tag; then k, dt or rtol as the route takes them
    k: float
    dt: float
    rtol: float

class FerroError(Exception):
    fields: dict[str, Any]  # the core variant's fields ({"name", "value", "limit"}, ...); {} for the binding's own
class InvalidParameter(FerroError, ValueError): ...
class StepDoesNotDivide(FerroError): ...
class TooManySteps(FerroError): ...
class NoImpact(FerroError): ...
class Grazing(FerroError): ...
class StepSizeUnderflow(FerroError): ...
class StepTooSmall(FerroError): ...
class NonFinite(FerroError): ...
class HiddenState(FerroError): ...
class TwoEventsInOneStep(FerroError): ...
class EventsInAdjacentSteps(FerroError): ...
class ProbeDependent(FerroError): ...
class UnguardedSwitch(FerroError): ...
class NotDifferentiable(FerroError): ...
class SetValued(FerroError): ...
class ContactSolveFailed(FerroError): ...
class Unstable(FerroError): ...
class ScenarioError(FerroError): ...
class FixtureError(FerroError, ValueError): ...

def validate_drop(drop: _DropLike) -> None: ...
def impact_speed(drop: _DropLike) -> float: ...
def first_impact_time(drop: _DropLike) -> float: ...
def exact(drop: _DropLike, options: _Options = None) -> Route: ...
def fixed(drop: _DropLike, k: float, dt: float, options: _Options = None) -> Route: ...
def corrected(drop: _DropLike, k: float, dt: float, options: _Options = None) -> Route: ...
def flow(drop: _DropLike, k: float, options: _Options = None) -> Route: ...
def tolerance(drop: _DropLike, k: float, options: _Options = None) -> Route: ...
def rk4(drop: _DropLike, k: float, dt: float, options: _Options = None) -> Route: ...
def blame(drop: _DropLike, k: float, dt: float) -> _Blame: ...
def divergence_exponent(drop: _DropLike, dt: float) -> _Fit: ...
def fit_loglog(x: Sequence[float], y: Sequence[float]) -> _Fit: ...
def wrong_sign_bands(k: Sequence[float], right_sign: Sequence[bool]) -> list[tuple[float, float]]: ...
def contact_share_exponent(drop: _DropLike) -> _Fit: ...
def dt_refinement(drop: _DropLike, k: float, base_dt: float) -> _Refinement: ...
def step_stability(drop: _DropLike, k: float, dt: float) -> _StepStability: ...
def limit_restitution(drop: _DropLike) -> float: ...
def realised_restitution(drop: _DropLike, k: float, speed: Optional[float] = None) -> Optional[float]: ...
def time_of_impact_term(drop: _DropLike, speed: Optional[float] = None) -> float: ...
def matched_dt(drop: _DropLike, k: float) -> float: ...
def log_grid(lo: float, hi: float, per_decade: int) -> _F64: ...
def evaluate(scenario: str) -> dict[str, Any]: ...

# descent: the core's Descent document: problem, target [2], landscape {heights, velocities,
# loss (row-major, NaN where infeasible), grid_minimum, local_minima, starts}, arms [{arm,
# label, runs [{path, iterations, converged, cannot_step, force_evals, final_loss}],
# converged, cannot_step, iterations, force_evals}]. `problem`: the core's Problem (its drop
# is `drop`).
def descent(
    drop: _DropLike,
    arms: Optional[Sequence[_ArmLike]] = None,
    grid: Optional[int] = None,
    problem: Optional[dict[str, Any]] = None,
) -> dict[str, Any]: ...
def standard_arms() -> list[_Arm]: ...

# options: the core's SweepOptions (dt, tolerance: ToleranceOptions or None, corrected, blame).
# The answer: the numpy columns (dt, k, exact, fixed, tolerance, tolerance_cost_ratio, corrected,
# blame), options (the SweepOptions document), exponent / exponent_error (documents or None),
# wrong_sign (the bands' documents) and json (the core's serialisation of the sweep).
def sweep(drop: _DropLike, ks: npt.NDArray[np.float64], options: Optional[dict[str, Any]] = None,
          progress: Optional[Callable[[int, int], Any]] = None) -> dict[str, Any]: ...

@final
class Workbench:
    # options: the core's WorkbenchConfig without its drop
    def __new__(cls, drop: _DropLike, options: Optional[dict[str, Any]] = None) -> Workbench: ...
    def set_k(self, k: float) -> None: ...
    def set_log10_k(self, log10_k: float) -> None: ...
    def set_dt_divisor(self, divisor: int) -> None: ...
    def set_tolerance(self, on: bool, rtol: Optional[float] = None, events: Optional[bool] = None,
                      jacobian: Optional[str] = None) -> None: ...
    def config(self) -> _WorkbenchConfig: ...
    def dt(self) -> float: ...
    def readout(self) -> dict[str, Any]: ...
    def curve(self, ks: npt.NDArray[np.float64]) -> dict[str, Any]: ...

# --- gradient qualification -------------------------------------------------------------
# `system` of hybrid_jacobian: a shipped system's document {"system": KIND, PARAM: number or list
# of numbers, ...} (fm.systems' classes' to_dict(); the kinds and parameters are the core's
# registry, systems_catalogue()), or any object with `dim` and the methods of the core's
# HybridSystem trait (rhs, rhs_jacobian, guard_count, guard, guard_gradient, reset,
# reset_jacobian; optional `name` and hidden_state()), called back with the GIL held.

class _HybridEvent(TypedDict):
    t: float
    mode_before: int
    guard: int
    mode_after: int
    guard_speed: float
    saltation_max: float

@final
class PiecesHandle:
    def jvp(self, d: Any) -> _F64: ...
    def piece_for(self, d: Any) -> int: ...
    def jacobian(self) -> _F64: ...

class _Piece(TypedDict):
    orders: list[list[int]]
    cone: _F64  # (rows, n)
    matrix: _F64  # (n, n)

class _Hybrid(TypedDict, total=False):
    x: _F64  # (n,)
    mode: int
    jacobian: Optional[_F64]  # (n, n), row-major; None where the pieces disagree
    not_differentiable: str  # the core's refusal, where jacobian is None
    pieces: list[_Piece]
    enumerated: bool
    largest_difference: float
    piece_tolerance: float
    commuted: bool
    handle: PiecesHandle
    events: list[_HybridEvent]
    probe_gap: float
    spectral_radius: float
    worst_gain: float

class _Conditioning(TypedDict):
    singular_values: list[float]  # n_in, descending
    condition_number: float
    weak_directions: list[list[float]]  # m rows of n_in

class _Trajectory(TypedDict):
    t: _F64  # (n + 1,)
    state: _F64  # (n + 1, 22): q (11), v (11)
    modes: npt.NDArray[np.int8]  # (n, 4), codes into MODE_NAMES
    points: _F64  # (n + 1, 12, 2): hips, knees, feet

def hybrid_jacobian(
    system: Any,
    x0: Any,
    t0: float,
    t1: float,
    mode: int = 0,
    options: Optional[dict[str, Any]] = None,  # the core's HybridOptions
) -> _Hybrid: ...
def hybrid_jvp(
    system: Any,
    x0: Any,
    t0: float,
    t1: float,
    d: Any,
    mode: int = 0,
    options: Optional[dict[str, Any]] = None,
) -> _F64: ...
def system_exact(system: dict[str, Any], x0: Any, t0: float, t1: float, mode: int = 0) -> Optional[_Hybrid]: ...
def systems_catalogue() -> list[dict[str, Any]]: ...
def system_check(system: dict[str, Any]) -> dict[str, Any]: ...

def tumbling_cube(cube: Any, x0: Any, t_final: float) -> dict[str, Any]: ...
def tumbling_cube_hybrid(cube: Any, x0: Any, t0: float, t1: float) -> dict[str, Any]: ...
# The rimless wheel (core: systems/wheel/): its closed form, and its return map's N-step
# derivative measured per horizon (chained through one hybrid_jacobian per step; direct).
def rimless_wheel_closed_form(wheel: Any) -> dict[str, Any]: ...
def rimless_wheel_multiplier(
    wheel: Any, horizons: Sequence[int], direct: bool = False, options: Any = None
) -> list[dict[str, Any]]: ...

# Conformance fixtures (core: conformance.rs): (name, JSON text) of each shipped
# fixture; a fixture document read and validated; the verdict on an engine's x(T) and J.
def fixtures() -> list[tuple[str, str]]: ...
def read_fixture(text: str, path: str | None = None) -> dict[str, Any]: ...
def read_fixture_file(path: str | os.PathLike[str]) -> dict[str, Any]: ...
def conformance(text: str, state: Any, jacobian: Any) -> dict[str, Any]: ...
def judge_drop(drop: _DropLike, state: Any, jacobian: Any) -> dict[str, Any]: ...

class _HalfDt(TypedDict):
    x: _F64  # (n,)
    jacobian: _F64  # (n, n), row-major
    events: int
    spread: float

class _StepHybrid(_Hybrid):
    split_residual: float
    step_calls: int
    half_dt: Optional[_HalfDt]

# The black-box driver: step(x, dt) -> x, guards g(x) -> float, resets (none, or one callable
# or None per guard) R(x) -> x; batched (batch True or an int): step(X, dt) -> (m, n), g(X) -> (m,),
# R(X) -> (m, n). The core runs with the GIL released and takes it back for each call.
# manifold: ("free" | "ball", index) blocks. progress: called with the core's StepProgress
# document. Ctrl-C: {"stopped": what finished} instead of the answer.
def step_jacobian(
    step: Callable[[_F64, float], Any],
    x0: Any,
    t0: float,
    t1: float,
    guards: Sequence[Callable[[_F64], Any]] = ...,
    resets: Sequence[Optional[Callable[[_F64], Any]]] = ...,
    name: Optional[str] = None,
    options: Optional[dict[str, Any]] = None,  # the core's StepOptions
    batch: Optional[Union[bool, int]] = None,
    manifold: Sequence[tuple[str, int]] = ...,
    progress: Optional[Callable[[dict[str, Any]], Any]] = None,
) -> Any: ...

# objective: the core's ObjectiveInfo {"name", "units", "description", "route", "integrator": str,
# "tolerances": [(str, float)]}; options: the core's CheckOptions.
# extra: (key, value) pairs appended to the receipt's environment.extra.
def check_gradient(
    f: Callable[[_F64], Any],
    grad: Any,
    x: Any,
    objective: dict[str, Any],
    events: Optional[Callable[[_F64], Any]] = None,
    hvp: Optional[Callable[[_F64], Any]] = None,
    options: Optional[dict[str, Any]] = None,
    extra: Sequence[tuple[str, str]] = ...,
) -> Receipt: ...
def check_example(
    name: str, options: Optional[dict[str, Any]] = None, extra: Sequence[tuple[str, str]] = ...
) -> Receipt: ...
# Exactly one of jacobian (an (m, n) array), jvp (p -> J p) or vjp (w -> J^T w).
def check_jacobian(
    f: Callable[[_F64], Any],
    x: Any,
    objective: dict[str, Any],
    jacobian: Any = None,
    jvp: Optional[Callable[[_F64], Any]] = None,
    vjp: Optional[Callable[[_F64], Any]] = None,
    options: Optional[dict[str, Any]] = None,
    extra: Sequence[tuple[str, str]] = ...,
) -> Receipt: ...
def conditioning(jacobian: Any, rel: float = 1e-8) -> _Conditioning: ...

@final
class Receipt:
    def to_json(self) -> str: ...
    def summary(self) -> str: ...

# --- forward matching (fit/) -----------------------------------------------
# `options`: the core's FitOptions (missing keys take DEFAULTS["fit"]); unknown keys raise ScenarioError.

# `observations`: {"t", "y", "v", "sigma_y", "sigma_v", "mask_y", "mask_v"} (missing keys: None).
def fit(drop: _DropLike, observations: dict[str, Any], options: Optional[dict[str, Any]] = None) -> FitReport: ...
def fit_predict(drop: _DropLike, t: Any, options: Optional[dict[str, Any]] = None) -> dict[str, Any]: ...

@final
class FitReport:
    def document(self) -> dict[str, Any]: ...
    def to_json(self) -> str: ...

@final
class FitObjective:
    def __new__(
        cls, drop: _DropLike, observations: dict[str, Any], options: Optional[dict[str, Any]] = None
    ) -> FitObjective: ...
    def __call__(self, z: Any) -> Optional[float]: ...
    @property
    def evaluations(self) -> int: ...
    @property
    def names(self) -> list[str]: ...
    def start(self) -> list[float]: ...
    def coordinates(self, theta: Sequence[float]) -> list[float]: ...
    def theta(self, z: Sequence[float]) -> list[float]: ...

# --- the quadruped ----------------------------------------------------------------------
# `config`: the core's QuadrupedExperiment as JSON (missing fields take its defaults,
# DEFAULTS["quadruped"]); unknown fields raise ScenarioError.

def quadruped(config: str) -> QuadrupedRun: ...
def equal_budget(drop: _DropLike, options: Optional[dict[str, Any]] = None) -> dict[str, Any]: ...
def quadruped_rollout(config: str, stiffness: Optional[float] = None, steps: Optional[int] = None) -> _Trajectory: ...

@final
class QuadrupedRun:
    def to_json(self) -> str: ...
    def table(self) -> str: ...
    def trajectory(self, index: int) -> Optional[_Trajectory]: ...
