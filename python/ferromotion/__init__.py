"""Ferromotion: certify gradients through contact.

A point mass dropped onto the ground bounces once before the final time T. Every route
below returns its state x(T) = (y, v) and the Jacobian J = dx(T)/dx(0) as numpy arrays:
``state`` of shape (2,) in (m, m/s) and ``jacobian`` of shape (2, 2), rows (y, v) and
columns (y0, v0), so ``J[1, 0]`` is dv(T)/dy0. Every number is computed by the Rust core
(``ferromotion-core``); this package converts and presents.

Beyond the drop: :func:`check_gradient` qualifies any gradient (yours included) and writes a
:class:`Receipt`; :func:`hybrid_jacobian` differentiates a hybrid system through its events or
refuses; :func:`quadruped` compares rigid and penalty contact on a trotting quadruped.

Where things live: one module per topic of the core, everything re-exported here.

- ``routes``: :class:`Drop`, :class:`Route`, :func:`exact`, :func:`fixed`, :func:`corrected`,
  :func:`flow`, :func:`tolerance`, :func:`rk4`, :func:`evaluate` (core: ``physics/``, ``lab/scenario.rs``)
- ``readouts``: :class:`ExponentFit` (a log-log line; ``fm.Fit`` before), :class:`Blame`, :class:`Refinement`, :func:`step_stability` and
  the other readouts (``lab/readout.rs``)
- ``sweep``: :func:`sweep`, :class:`Sweep`, :class:`SweepGrid` (``lab/sweep.rs``)
- ``workbench``: :class:`Workbench`, the browser lab's controls (``lab/workbench.rs``)
- ``descent``: :func:`descent`, :class:`Arm`, :class:`Descent` (``experiments/descent.rs``)
- ``hybrid``: :func:`hybrid_jacobian`, the shipped systems and :class:`StepFunction` (a black-box
  step) (``hybrid.rs``, ``hybrid/black_box.rs``)
- ``check``: :func:`check_gradient`, :func:`check_jacobian`, :func:`check_example`, :class:`Receipt`,
  :func:`conditioning` (``check/``)
- ``quadruped``: :func:`quadruped`, :func:`quadruped_rollout` (the ``ferromotion-quadruped`` crate)
- ``fit``: :func:`fit`, :class:`FitResult`, :class:`FitObjective`, :func:`fit_predict`, :func:`fit_demo`,
  :func:`fit_schema` (``fit/``)

Every default a signature shows comes from the core: :func:`defaults`.

Examples
--------
>>> import ferromotion as fm
>>> drop = fm.Drop()
>>> truth = fm.exact(drop)
>>> autodiff = fm.fixed(drop, k=1e6, dt=1e-4)
>>> bool(truth.jacobian[1, 0] > 0), bool(autodiff.jacobian[1, 0] > 0)   # the sign flips
(True, False)
"""

from __future__ import annotations

from . import _core
from ._core import (
    ContactSolveFailed,
    EventsInAdjacentSteps,
    FerroError,
    FixtureError,
    Grazing,
    HiddenState,
    InvalidParameter,
    NoImpact,
    NonFinite,
    NotDifferentiable,
    ProbeDependent,
    SetValued,
    ScenarioError,
    StepDoesNotDivide,
    StepSizeUnderflow,
    StepTooSmall,
    TooManySteps,
    TwoEventsInOneStep,
    UnguardedSwitch,
    Unstable,
)
from ._common import defaults
from .routes import Drop, Route, corrected, evaluate, exact, fixed, flow, rk4, tolerance
from .readouts import (Blame, EqualBudget, ExponentFit, Refinement, blame, contact_share_exponent, divergence_exponent, dt_refinement,
    equal_budget,
    limit_restitution, log_grid, matched_dt, realised_restitution, step_stability,
    time_of_impact_term)
from .sweep import Sweep, SweepBlame, SweepGrid, SweepRoute, sweep
from .workbench import Workbench
from .descent import Arm, Descent, DescentArm, DescentRun, Landscape, descent, standard_arms
from . import systems
from .hybrid import (BouncingDrop, HybridEvent, HybridSolution, HybridSystem, Interrupted, LocatedSwitch, PartialPass,
    Piece, SlopeBall, StepFunction, WarmStartedDrop, hybrid_jacobian)
from .check import (CheckDirection, Conditioning, EXAMPLES, RECEIPT_SCHEMA, RECEIPT_SCHEMA_V1, RECEIPT_SCHEMA_V2, Receipt,
    check_example, check_gradient, check_jacobian, conditioning, environment, load_receipt, receipt_schema)
from .fit import (FIT_SCHEMA, FitObjective, FitResult, WeakDirection, fit, fit_demo, fit_predict,
    fit_schema)
from .quadruped import (FOOT_NAMES, MODE_NAMES, QuadrupedLaw, QuadrupedReport, QuadrupedTrajectory, quadruped,
    quadruped_rollout)

__version__: str = _core.__version__

__all__ = [
    "Arm",
    "audit_engine",
    "conformance",
    "systems",
    "Blame",
    "blame",
    "BouncingDrop",
    "check_example",
    "check_gradient",
    "check_jacobian",
    "CheckDirection",
    "Conditioning",
    "conditioning",
    "contact_share_exponent",
    "ContactSolveFailed",
    "corrected",
    "defaults",
    "descent",
    "Descent",
    "DescentArm",
    "DescentRun",
    "divergence_exponent",
    "Drop",
    "dt_refinement",
    "equal_budget",
    "EqualBudget",
    "environment",
    "evaluate",
    "EventsInAdjacentSteps",
    "exact",
    "FerroError",
    "FixtureError",
    "ExponentFit",
    "fit",
    "fit_demo",
    "fit_predict",
    "fit_schema",
    "FIT_SCHEMA",
    "FitObjective",
    "FitResult",
    "fixed",
    "EXAMPLES",
    "flow",
    "FOOT_NAMES",
    "Grazing",
    "HiddenState",
    "hybrid_jacobian",
    "HybridEvent",
    "HybridSolution",
    "HybridSystem",
    "InvalidParameter",
    "Landscape",
    "LocatedSwitch",
    "limit_restitution",
    "log_grid",
    "matched_dt",
    "MODE_NAMES",
    "NoImpact",
    "NonFinite",
    "ProbeDependent",
    "quadruped",
    "quadruped_rollout",
    "QuadrupedLaw",
    "QuadrupedReport",
    "QuadrupedTrajectory",
    "realised_restitution",
    "Receipt",
    "receipt_schema",
    "load_receipt",
    "RECEIPT_SCHEMA",
    "RECEIPT_SCHEMA_V1",
    "RECEIPT_SCHEMA_V2",
    "Refinement",
    "rk4",
    "Route",
    "ScenarioError",
    "SlopeBall",
    "standard_arms",
    "StepDoesNotDivide",
    "StepFunction",
    "Interrupted",
    "PartialPass",
    "StepSizeUnderflow",
    "StepTooSmall",
    "step_stability",
    "study",
    "Study",
    "StudyError",
    "sweep",
    "Sweep",
    "SweepBlame",
    "SweepGrid",
    "SweepRoute",
    "time_of_impact_term",
    "tolerance",
    "TooManySteps",
    "TwoEventsInOneStep",
    "NotDifferentiable",
    "SetValued",
    "Piece",
    "systems",
    "UnguardedSwitch",
    "Unstable",
    "WarmStartedDrop",
    "WeakDirection",
    "Workbench",
]

from .study import Study, StudyError, study  # noqa: E402  (study.py builds on the names above)
from .engines import audit_engine  # noqa: E402  (the engines are imported only when an audit runs)
from .engines.conformance import conformance  # noqa: E402  (fixtures as data; no engine needed)


#: Old names still answered, each with a DeprecationWarning saying what it is now.
_RENAMED = {
    "Fit": ("ExponentFit", "fm.Fit is renamed fm.ExponentFit (a log-log line's exponent); fm.fit is forward "
            "matching, a different thing"),
    "check_fixture": ("check_example", "fm.check_fixture is renamed fm.check_example: the gradient checker's "
                      "named objectives are worked examples; a fixture is a conformance fixture "
                      "(fm.conformance, `ferromotion fixtures export`)"),
    "FIXTURES": ("EXAMPLES", "fm.FIXTURES is renamed fm.EXAMPLES (the gradient checker's worked examples); a "
                 "fixture is a conformance fixture (fm.conformance)"),
}


def __getattr__(name: str) -> object:
    """The old names in ``_RENAMED`` (``fm.Fit``, ``fm.check_fixture``, ``fm.FIXTURES``), each
    with a DeprecationWarning."""
    if name in _RENAMED:
        import warnings
        new, why = _RENAMED[name]
        warnings.warn(why, DeprecationWarning, stacklevel=2)
        return globals()[new]
    raise AttributeError(f"module 'ferromotion' has no attribute {name!r}")
