"""Audit the simulator you actually use: the drop run through MuJoCo, MJX, JAX, PyTorch, Newton or Drake.

Each adapter builds *the drop* (``fm.Drop()``: 1 m from rest, T = 0.8 s, zeta = 0.1606, m = 1 kg)
in a real engine with its contact parameters mapped to ours, and returns two things the engine
itself computes: its map x0 -> x(T) = [y(T), v(T)] and its own gradient of that map.
:func:`audit_engine` then measures, per stiffness k:

* whether the engine's gradient is the derivative of its own map (central differences of the
  engine's rollouts, and a full :func:`ferromotion.check_gradient` receipt at one k);
* the sign of dv(T)/dy0 against our exact rigid answer, the gradient error and its divergence
  exponent in k, beside the same numbers from our fixed route (``fm.fixed``);
* dt refinement at one k, on the engine itself;
* the blame split against our ``flow`` where the engine's law is ours (JAX, PyTorch); MuJoCo's
  soft constraint adds ``d*m*g`` while in contact, Newton drops the damping on the way out,
  Drake's TAMSI damps by Hunt–Crossley and its SAP evaluates our law implicitly: none of these
  maps exactly (see ``_mujoco``, ``_newton``, ``_drake``).

The engines live in their own environment (``scripts/engines_env.sh`` -> ``.venv-engines``;
extras ``ferromotion[jax]``, ``[torch]``, ``[mujoco]``, ``[mjx]``, ``[newton]``, ``[drake]``).
Nothing here mocks an engine. ``conformance`` holds the fixtures as data (no engine needed).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import _core
from .. import Drop, ExponentFit, Receipt, check_gradient, exact, fixed, flow
from .._results import SIGN_TEXT
from ._adapter import FD_EPS, REGISTRY, AdapterBase, EngineAdapter, make_adapter, register_engine
from ._mujoco_model import MuJoCoModelStep, TangentBlock, mujoco_step_function  # any MuJoCo model, black box
from ._mujoco_warp import mujoco_warp_step_function  # the same through MuJoCo Warp (float32 declared)
from ._step_function import black_box_beside_engine, step_function  # an engine's step as a black box

__all__ = ["ENGINES", "EngineAdapter", "AdapterBase", "register_engine", "EngineAudit", "audit_engine", "engine_adapter",
           "step_function", "black_box_beside_engine", "mujoco_step_function", "MuJoCoModelStep", "TangentBlock",
           "mujoco_warp_step_function"]

#: The engines :func:`audit_engine` knows, with the extra that installs each (the registry's table,
#: ``ferromotion.engines._adapter``: one line per engine).
ENGINES: Dict[str, str] = {name: entry.extra for name, entry in REGISTRY.items()}

#: Stiffnesses fitted for the divergence exponent, as ``fm.divergence_exponent`` (N/m).
EXPONENT_RANGE = (1e4, 1e8)


def engine_adapter(engine: str) -> EngineAdapter:
    """The adapter object for ``engine`` (imports the engine; ImportError names the extra)."""
    return make_adapter(engine)


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    """max|a - b| / max|b|: how far the engine's gradient is from differences of its own map."""
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def _judge(drop: Drop, state: Any, jacobian: Any) -> Dict[str, Any]:
    """The core's verdict on a drop's x(T) and J against exact: gradient error, sign line."""
    return dict(_core.judge_drop(drop, np.asarray(state, dtype=float), np.asarray(jacobian, dtype=float)))


#: Width of the sign column: its longest state.
_SIGN_WIDTH = max(len(t) for t in SIGN_TEXT.values())


def _fd_jacobian(adapter: Any, drop: Drop, k: float, dt: float, x0: np.ndarray, eps: Optional[float] = None) -> np.ndarray:
    """Central differences of the adapter's own map (probe ``eps``, default the adapter's
    ``fd_eps`` or ``FD_EPS``)."""
    eps = getattr(adapter, "fd_eps", FD_EPS) if eps is None else eps
    cols = []
    for j in range(2):
        e = np.zeros(2)
        e[j] = eps
        cols.append((adapter.state(drop, k, dt, x0 + e) - adapter.state(drop, k, dt, x0 - e)) / (2 * eps))
    return np.stack(cols, axis=1)


@dataclasses.dataclass(frozen=True, repr=False)
class EngineAudit:
    """What :func:`audit_engine` measured on one engine (SI units; J = d[y, v](T)/d[y0, v0]).

    Attributes
    ----------
    engine, version, gradient_route : str
        The engine, its version and how its own gradient was taken.
    law_maps_onto_ours : bool
        Whether the engine's contact law is exactly ours (then ``blame`` is measured).
    drop : Drop
    dt : float
        The engine's step, s.
    k : ndarray (n,)
        Stiffnesses, N/m.
    state : ndarray (n, 2)
        The engine's x(T).
    jacobian, jacobian_fd : ndarray (n, 2, 2)
        The engine's own gradient, and central differences (probe ``fd_eps``) of its own map.
    fd_eps : float
        That probe (``FD_EPS`` = 1e-6 for the float64 engines; the adapter's own for float32 ones).
    autodiff_vs_fd : ndarray (n,)
        max|J - J_fd| / max|J_fd|: is the engine's gradient the derivative of what it simulates?
    exact_jacobian : ndarray (2, 2)
        Our rigid exact answer (``fm.exact(drop).jacobian``).
    dv_dy0, gradient_error : ndarray (n,)
        The engine's dv(T)/dy0 and max|J - J_exact| / max|J_exact| (the core's, as the sweep's).
    sign : ndarray of str (n,)
        The core's sign line of dv(T)/dy0 against exact, as in the lab and ``fm.sweep``:
        ``right``, ``wrong`` or ``right_far_off`` (right sign, gradient error >= 1: by accident).
    right_sign : ndarray of bool (n,)
        Whether the sign agrees with exact (``sign != "wrong"``).
    ours_dv_dy0, ours_gradient_error : ndarray (n,)
        The same from our fixed route at the same k and dt.
    exponent : ExponentFit or None
        Slope of log gradient error on log k over k in [1e4, 1e8] (None: fewer than 3 such k).
    refinement : dict
        ``{"k", "dt", "gradient_error", "ratio"}`` at one k: the engine at dt, dt/10, ...
    blame : dict or None
        ``{"integrator_share", "contact_share"}`` per k against our ``flow`` (None when the law
        does not map; ``notes`` says why).
    receipt : Receipt or None
        ``fm.check_gradient`` of the engine's dv(T)/d(y0, v0) against its own map at one k.
    notes : tuple of str
    """

    engine: str
    version: str
    gradient_route: str
    law_maps_onto_ours: bool
    drop: Drop
    dt: float
    k: np.ndarray
    state: np.ndarray
    jacobian: np.ndarray
    jacobian_fd: np.ndarray
    fd_eps: float
    autodiff_vs_fd: np.ndarray
    exact_jacobian: np.ndarray
    dv_dy0: np.ndarray
    gradient_error: np.ndarray
    sign: np.ndarray
    right_sign: np.ndarray
    ours_dv_dy0: np.ndarray
    ours_gradient_error: np.ndarray
    exponent: Optional[ExponentFit]
    refinement: Dict[str, Any]
    blame: Optional[Dict[str, Any]]
    receipt: Optional[Receipt]
    notes: Tuple[str, ...]

    def to_dict(self) -> Dict[str, Any]:
        """Plain JSON-ready dict (the receipt as its own document)."""
        out: Dict[str, Any] = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, np.ndarray):
                v = v.tolist()
            elif isinstance(v, (Drop, ExponentFit)):
                v = v.to_dict()
            elif isinstance(v, Receipt):
                v = v.to_dict()
            elif isinstance(v, tuple):
                v = list(v)
            out[f.name] = v
        return out

    def table(self) -> str:
        """The sign table, beside our fixed route, with the exponent, refinement and receipt."""
        d = self.drop
        lines = [
            f"ferromotion audit --engine {self.engine} ({self.version}): drop from h = {d.height:g} m, "
            f"v0 = {d.velocity:g} m/s, T = {d.t_final:g} s, zeta = {d.zeta:g}, dt = {self.dt:g} s",
            f"engine gradient: {self.gradient_route}",
            f"exact rigid dv(T)/dy0 = {self.exact_jacobian[1, 0]:.4f}; grad. error = max|J - J_exact| / max|J_exact|; "
            f"autodiff vs FD = max|J - J_fd| / max|J_fd| on the engine's own map (probe {self.fd_eps:g}); "
            "FAR OFF: right sign, gradient error >= 1 (by accident)",
            "",
            f"{'k (N/m)':>9}  {'engine dv/dy0':>13}  {'dv(T)/dy0 sign':<{_SIGN_WIDTH}}  {'grad. error':>11}  "
            f"{'autodiff vs FD':>14}  {'ours dv/dy0':>12}  {'ours error':>10}",
        ]
        for i in range(len(self.k)):
            lines.append(
                f"{self.k[i]:9.2e}  {self.dv_dy0[i]:13.5g}  {SIGN_TEXT[str(self.sign[i])]:<{_SIGN_WIDTH}}  "
                f"{self.gradient_error[i]:11.3e}  {self.autodiff_vs_fd[i]:14.2e}  {self.ours_dv_dy0[i]:12.5g}  "
                f"{self.ours_gradient_error[i]:10.3e}")
        lines.append("")
        if self.exponent is not None:
            # The range the fit used: the table's own stiffnesses inside EXPONENT_RANGE.
            ks = [float(k) for k in self.k if EXPONENT_RANGE[0] * (1 - 1e-9) <= k <= EXPONENT_RANGE[1] * (1 + 1e-9)]
            lines.append(f"divergence exponent: {self.exponent.slope:.3f} (R^2 = {self.exponent.r2:.3f}, "
                         f"{self.exponent.points} points from k = {min(ks):.3g} to {max(ks):.3g} N/m)"
                         .replace("e+0", "e").replace("e+", "e"))
        r = self.refinement
        if r:
            lines.append(f"dt refinement at k = {r['k']:.3g}: grad. error " + ", ".join(
                f"{e:.3e} at dt = {t:g}" for t, e in zip(r["dt"], r["gradient_error"]))
                + ("" if len(r["ratio"]) < 2 else " (ratios " + ", ".join(f"x{x:.3f}" for x in r["ratio"][1:]) + ")"))
        if self.blame is not None:
            b = self.blame
            lines.append("blame against our flow: integrator share " + ", ".join(
                f"{v:.3e}" for v in b["integrator_share"]) + "; contact share " + ", ".join(
                f"{v:.3e}" for v in b["contact_share"]))
        if self.receipt is not None:
            lines.append("receipt: " + self.receipt.summary())
        lines.extend(self.notes)
        return "\n".join(lines)

    def __repr__(self) -> str:
        wrong = int((self.sign == "wrong").sum())
        return (f"EngineAudit({self.engine}, {len(self.k)} stiffnesses, dt = {self.dt:g} s, wrong sign at {wrong}, "
                f"autodiff vs FD <= {float(np.max(self.autodiff_vs_fd)):.1e}"
                + ("" if self.receipt is None else f", check {self.receipt.verdict}") + ")")


def audit_engine(engine: str, stiffness: Any = tuple(np.logspace(3, 7, 9)), dt: float = 1e-4, *,
                 drop: Optional[Drop] = None, check_k: Optional[float] = 1e6,
                 refine: Sequence[int] = (10,), refine_k: float = 1e6,
                 check_options: Optional[Dict[str, Any]] = None, adapter: Any = None,
                 progress: Optional[Callable[[str], None]] = None) -> EngineAudit:
    """Run the stiffness audit on a real engine (see the module docs).

    Parameters
    ----------
    engine : str
        One of :data:`ENGINES`: ``"mujoco"``, ``"mjx"``, ``"jax"``, ``"torch"``, ``"newton"``,
        ``"drake-tamsi"``, ``"drake-sap"``.
    stiffness : sequence of float
        k in N/m (mapped into the engine as its module documents).
    dt : float
        The engine's step, s; must divide ``drop.t_final``.
    drop : Drop, optional
        Default ``fm.Drop()``.
    check_k : float or None
        Stiffness of the ``fm.check_gradient`` receipt (the swept k nearest to it); None: no check.
    refine : sequence of int
        dt divisors of the refinement at ``refine_k`` (1 is always included).
    check_options : dict, optional
        Extra keywords for :func:`ferromotion.check_gradient` (``eps``, ``taylor_h``, ``directions``...).
    adapter : object, optional
        An adapter already built by :func:`engine_adapter` (reuses its compiled functions).
    progress : callable, optional
        Called with one line per stage (each stiffness, the refinement, the check) with the time
        spent so far: an engine at tens of ms per rollout takes minutes (the CLI prints these).

    Returns
    -------
    EngineAudit

    Examples
    --------
    Needs the engine (``.venv-engines``); tests/engines runs this example there.

    >>> import ferromotion as fm
    >>> a = fm.audit_engine("jax", stiffness=[1e4, 1e6], refine=(), check_k=None)
    >>> a.right_sign.tolist(), bool(a.autodiff_vs_fd.max() < 1e-8)
    ([False, False], True)
    >>> f"{a.dv_dy0[1]:.4f} against exact {a.exact_jacobian[1, 0]:.4f}"
    '-160.8576 against exact 3.6147'
    """
    drop = Drop() if drop is None else drop
    ad = engine_adapter(engine) if adapter is None else adapter
    ks = np.asarray(stiffness, dtype=float)
    if ks.ndim != 1 or ks.size == 0 or not np.all(ks > 0):
        raise ValueError(f"stiffness: expected a non-empty 1-D array of positive N/m, got shape {ks.shape}")
    x0 = np.array([drop.height, drop.velocity])
    je = np.asarray(exact(drop).jacobian)
    t0 = time.perf_counter()

    def said(what: str) -> None:
        if progress is not None:
            progress(f"{engine}: {what} ({time.perf_counter() - t0:.0f} s so far)")

    # The engine's gradients: every stiffness of the column and the refinement's k at dt, one batch.
    grad_ks = ks if np.any(ks == refine_k) else np.append(ks, refine_k)
    said(f"{grad_ks.size} gradients at dt = {dt:g} s as one batch ({getattr(ad, 'batch_route', 'one at a time')})")
    all_states, all_jacs = ad.jacobians(drop, grad_ks, dt, np.tile(x0, (grad_ks.size, 1)))
    state, jac = all_states[:ks.size], all_jacs[:ks.size]
    fd_eps = float(getattr(ad, "fd_eps", FD_EPS))
    check_i = None if check_k is None else int(np.argmin(np.abs(np.log(ks / check_k))))
    opts: Dict[str, Any] = {"eps": np.logspace(-2, -9, 8), "directions": 2}
    opts.update(check_options or {})
    # The probes: +-fd_eps per coordinate at every k, and the check's probes at its k, one batch.
    probe_ks, probe_x = _fd_rows(ks, x0, fd_eps)
    check_x = np.zeros((0, 2)) if check_i is None else _check_probes(jac[check_i][1], x0, opts)
    said(f"{probe_x.shape[0]} difference probes and {check_x.shape[0]} check probes as one batch")
    probed = ad.states(drop, np.concatenate([probe_ks, np.full(check_x.shape[0], ks[check_i or 0])]), dt,
                       np.concatenate([probe_x, check_x]))
    fd = probed[:probe_x.shape[0]].reshape(ks.size, 2, 2, 2)  # (k, coordinate, +/-, x(T))
    jfd = np.transpose((fd[:, :, 0, :] - fd[:, :, 1, :]) / (2 * fd_eps), (0, 2, 1))
    judged = [_judge(drop, s, j) for s, j in zip(state, jac)]
    grad_err = np.array([c["gradient_error"] for c in judged])
    sign = np.array([c["sign"] for c in judged])
    ours = [fixed(drop, k, dt) for k in ks]
    in_range = (ks >= EXPONENT_RANGE[0] * (1 - 1e-9)) & (ks <= EXPONENT_RANGE[1] * (1 + 1e-9))
    exponent = ExponentFit(**_core.fit_loglog(ks[in_range].tolist(), grad_err[in_range].tolist())) \
        if in_range.sum() >= 3 else None
    notes: List[str] = []
    refinement = _refinement(ad, drop, dt, refine, refine_k, x0, all_jacs[int(np.argmax(grad_ks == refine_k))],
                             all_states[int(np.argmax(grad_ks == refine_k))], said)
    blame: Optional[Dict[str, Any]] = None
    if ad.law_maps_onto_ours:
        jflow = [np.asarray(flow(drop, k).jacobian) for k in ks]
        blame = {"integrator_share": [float(np.max(np.abs(j - f))) for j, f in zip(jac, jflow)],
                 "contact_share": [float(np.max(np.abs(f - je))) for f in jflow]}
    else:
        notes.append(f"no blame split against our flow: {engine}'s contact law is not ours "
                     f"({getattr(ad, 'law_differs', 'see ferromotion.engines')})")
    receipt = None
    if check_i is not None:
        k = float(ks[check_i])
        known = {tuple(x): float(v[1]) for x, v in zip(check_x, probed[probe_x.shape[0]:])}

        def v_final(x: np.ndarray) -> float:
            hit = known.get(tuple(x))  # a probe the batch ran; any other is run here, alone
            return float(ad.state(drop, k, dt, x)[1]) if hit is None else hit

        said(f"gradient check at k = {k:.3g} N/m")
        receipt = check_gradient(
            v_final, jac[check_i][1], x0, objective=f"v(T) of the drop in {engine}", units="m/s",
            description=f"x = [y0 (m), v0 (m/s)], T = {drop.t_final:g} s, k = {k:g} N/m",
            route=ad.gradient_route, integrator=f"{engine} {ad.version}",
            tolerances={"dt": dt, "k": k}, **opts)
    return EngineAudit(
        engine=engine, version=ad.version, gradient_route=ad.gradient_route,
        law_maps_onto_ours=bool(ad.law_maps_onto_ours), drop=drop, dt=float(dt), k=ks, state=state, jacobian=jac,
        jacobian_fd=jfd, fd_eps=fd_eps, autodiff_vs_fd=np.array([_rel(j, f) for j, f in zip(jac, jfd)]),
        exact_jacobian=je, dv_dy0=jac[:, 1, 0], gradient_error=grad_err, sign=sign, right_sign=sign != "wrong",
        ours_dv_dy0=np.array([r.jacobian[1, 0] for r in ours]),
        ours_gradient_error=np.array([_judge(drop, r.state, r.jacobian)["gradient_error"] for r in ours]),
        exponent=exponent, refinement=refinement, blame=blame, receipt=receipt, notes=tuple(notes))


def _fd_rows(ks: np.ndarray, x0: np.ndarray, eps: float) -> Tuple[np.ndarray, np.ndarray]:
    """The central-difference probes of every k as rows: per k, per coordinate j, x0 + eps e_j
    then x0 - eps e_j (the order :func:`_fd_jacobian` evaluates them in)."""
    xs = [x0 + sgn * eps * e for _ in ks for e in np.eye(2) for sgn in (1.0, -1.0)]
    return np.repeat(ks, 4), np.array(xs)


def _check_probes(grad: np.ndarray, x0: np.ndarray, opts: Dict[str, Any]) -> np.ndarray:
    """The points ``check_gradient`` with ``opts`` may probe, as rows to run in one batch.

    The walk stops once its verdict is resolved, so which probes it asks for depends on the
    values; its whole ladder (``full_sweep``) is the same set of points whatever f is. They are
    recorded on a stand-in linear f (never used for any verdict); the real check then reads each
    probe from the batch, and runs alone any point the stand-in walk did not reach."""
    seen: Dict[Tuple[float, ...], np.ndarray] = {}

    def record(x: np.ndarray) -> float:
        seen.setdefault(tuple(x), np.array(x, dtype=float))
        return float(np.dot(grad, x - x0))

    check_gradient(record, grad, x0, **{**opts, "full_sweep": True})
    return np.array(list(seen.values())).reshape(-1, 2)


def _refinement(ad: Any, drop: Drop, dt: float, refine: Sequence[int], refine_k: float, x0: np.ndarray,
                jac_dt: np.ndarray, state_dt: np.ndarray, said: Callable[[str], None]) -> Dict[str, Any]:
    """dt refinement at ``refine_k`` on the engine itself: the gradient at dt (from the column's
    batch) and at each dt / divisor."""
    divisors = [1] + [int(r) for r in refine if int(r) != 1]
    rdt = [dt / r for r in divisors]
    said(f"dt refinement at k = {refine_k:.3g} N/m, dt / {', '.join(map(str, divisors))}")
    rerr = [_judge(drop, state_dt, jac_dt)["gradient_error"]]
    for h in rdt[1:]:
        s, j = ad.jacobians(drop, [refine_k], h, x0[None, :])
        rerr.append(_judge(drop, s[0], j[0])["gradient_error"])
    return {"k": float(refine_k), "dt": rdt, "gradient_error": rerr, "ratio": [e / rerr[0] for e in rerr]}
