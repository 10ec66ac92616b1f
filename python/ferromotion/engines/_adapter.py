"""What an engine adapter is (:class:`EngineAdapter`), the base every shipped one builds on
(:class:`AdapterBase`) and the registry :func:`ferromotion.engines.engine_adapter` reads.

**Adding an engine** is one module and one line: a class in ``engines/_NAME.py`` that subclasses
:class:`AdapterBase` and implements ``state`` and ``jacobian`` (the drop, one initial state), plus
``states``/``jacobians`` when the engine can run many rows at once (worlds, ``vmap``, threads),
plus ``fixture_NAME`` for each conformance fixture beyond the drop it can express; then one
:func:`register_engine` line in :data:`REGISTRY`'s table below. Nothing else names an engine:
the audit, the conformance runner and the CLI read the registry.

Rows. ``states(drop, ks, dt, X)`` runs m rollouts at once: row i from ``X[i] = [y0, v0]`` at
stiffness ``ks[i]``, every row at the same dt; ``jacobians`` returns each row's x(T) and the
engine's own J. A batched answer must equal the one-state answer row by row (bit for bit where
the engine's rows are independent programs: MuJoCo's threads, Newton's worlds; to the engine's
float tolerance where batching changes the arithmetic: XLA's vectorised MJX and JAX).
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any, Dict, Optional, Protocol, Sequence, Tuple, runtime_checkable

import numpy as np

#: Central-difference probe for an engine's map: below the kinks a fixed-step contact map has
#: every |v|*dt (4.4e-4 m at dt = 1e-4 s), above its evaluation noise (~1e-14 for MJX).
FD_EPS = 1e-6


@runtime_checkable
class EngineAdapter(Protocol):
    """The contract of an engine adapter (SI units; x = [y, v] of the drop, J = dx(T)/dx0).

    Attributes: ``name`` (as registered), ``version``, ``gradient_route`` (how the engine's own
    gradient is taken), ``law`` (its contact law in words), ``law_maps_onto_ours`` (then the
    audit makes the blame split), ``law_differs`` (why not, when not), ``fd_eps`` (the probe of
    central differences of the engine's own map), ``batch_route`` (how rows run together).
    """

    name: str
    version: str
    gradient_route: str
    law: str
    law_maps_onto_ours: bool
    law_differs: str
    fd_eps: float
    batch_route: str

    def state(self, drop: Any, k: float, dt: float, x0: Any) -> np.ndarray:
        """x(T) of one rollout of ``drop`` from x0 at stiffness k (N/m) and step dt (s)."""

    def jacobian(self, drop: Any, k: float, dt: float, x0: Any) -> Tuple[np.ndarray, np.ndarray]:
        """(x(T), the engine's own dx(T)/dx0) of one rollout."""

    def states(self, drop: Any, ks: Any, dt: float, X: Any) -> np.ndarray:
        """(m, 2): x(T) of row i from X[i] at stiffness ks[i]."""

    def jacobians(self, drop: Any, ks: Any, dt: float, X: Any) -> Tuple[np.ndarray, np.ndarray]:
        """((m, 2), (m, 2, 2)): each row's x(T) and the engine's own J."""

    def fixture_drop(self, doc: Dict[str, Any], k: float, dt: float, x0: Any,
                     jac: bool = True) -> Tuple[np.ndarray, Optional[np.ndarray]]:
        """The ``drop`` conformance fixture: (x(T), J or None)."""


def rows(ks: Sequence[float], X: Any) -> Tuple[np.ndarray, np.ndarray]:
    """Check and align a batch's stiffnesses (m,) and initial states (m, 2)."""
    k = np.asarray(ks, dtype=float).reshape(-1)
    x = np.asarray(X, dtype=float)
    if x.ndim != 2 or x.shape[0] != k.size or x.shape[1] != 2:
        raise ValueError(f"X: expected shape ({k.size}, 2) (one [y0, v0] per stiffness), got {x.shape}")
    return k, x


class AdapterBase:
    """Defaults every adapter shares: rows run one after another (an engine that batches
    overrides ``states`` and ``jacobians``), and the drop fixture read from its document."""

    name = "?"
    version = "?"
    gradient_route = "?"
    law = ""
    law_maps_onto_ours = False
    law_differs = ""
    fd_eps = FD_EPS
    batch_route = "one rollout at a time"

    def state(self, drop: Any, k: float, dt: float, x0: Any) -> np.ndarray:
        raise NotImplementedError

    def jacobian(self, drop: Any, k: float, dt: float, x0: Any) -> Tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def states(self, drop: Any, ks: Any, dt: float, X: Any) -> np.ndarray:
        k, x = rows(ks, X)
        return np.array([self.state(drop, float(ki), dt, xi) for ki, xi in zip(k, x)]).reshape(-1, 2)

    def jacobians(self, drop: Any, ks: Any, dt: float, X: Any) -> Tuple[np.ndarray, np.ndarray]:
        k, x = rows(ks, X)
        got = [self.jacobian(drop, float(ki), dt, xi) for ki, xi in zip(k, x)]
        return (np.array([s for s, _ in got]).reshape(-1, 2), np.array([j for _, j in got]).reshape(-1, 2, 2))

    def fixture_drop(self, doc: Dict[str, Any], k: float, dt: float, x0: Any,
                     jac: bool = True) -> Tuple[np.ndarray, Optional[np.ndarray]]:
        from .. import Drop

        p = doc["parameters"]
        drop = Drop(height=float(x0[0]), velocity=float(x0[1]), t_final=float(doc["t_final"]),
                    gravity=float(p["gravity"]), mass=float(p["mass"]), zeta=float(p["zeta"]))
        if jac:
            return self.jacobian(drop, k, dt, x0)
        return self.state(drop, k, dt, x0), None


def fixture_method(adapter: Any, fixture: str) -> Any:
    """The adapter's method for a conformance fixture (``fixture_<name>``), None when it has none."""
    return getattr(adapter, f"fixture_{fixture}", None)


@dataclasses.dataclass(frozen=True)
class EngineEntry:
    """One registered engine: where its adapter class lives, its keywords, the extra that installs it."""

    module: str
    cls: str
    extra: str
    kwargs: Tuple[Tuple[str, Any], ...] = ()


#: name -> entry, in the order the CLI lists them. :func:`register_engine` adds one.
REGISTRY: Dict[str, EngineEntry] = {}


def register_engine(name: str, module: str, cls: str, extra: str, **kwargs: Any) -> None:
    """Register an adapter: ``module`` is relative to ``ferromotion.engines`` (``"._mujoco"``)."""
    REGISTRY[name] = EngineEntry(module=module, cls=cls, extra=extra, kwargs=tuple(sorted(kwargs.items())))


# The table: one line per engine.
register_engine("mujoco", "._mujoco", "MuJoCo", "mujoco")
register_engine("mjx", "._mujoco", "MJX", "mjx")
register_engine("jax", "._jax", "Jax", "jax")
register_engine("torch", "._jax", "Torch", "torch")
register_engine("newton", "._newton", "Newton", "newton")
register_engine("drake-tamsi", "._drake", "Drake", "drake", approximation="tamsi")
register_engine("drake-sap", "._drake", "Drake", "drake", approximation="sap")


def make_adapter(engine: str) -> Any:
    """The adapter object for ``engine`` (imports the engine; ImportError names the extra)."""
    entry = REGISTRY.get(engine)
    if entry is None:
        raise ValueError(f"unknown engine {engine!r}; expected one of {', '.join(REGISTRY)}")
    try:
        module = importlib.import_module(entry.module, package=__package__)
        return getattr(module, entry.cls)(**dict(entry.kwargs))
    except ImportError as e:
        raise ImportError(f"engine {engine!r} is not installed ({e}); pip install 'ferromotion[{entry.extra}]' "
                          "or run scripts/engines_env.sh") from e
