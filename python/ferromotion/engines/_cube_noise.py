"""Where MuJoCo Warp's noise through a corner strike comes from: the tumbling cube's map, stepped
through corner 1's strike by MuJoCo (C, float64) and MuJoCo Warp (CPU, float32) under one model
setting at a time, each applied to both engines' model (``scripts/cube_engines.py --noise``,
docs/engines.md "MuJoCo Warp's noise through a strike, located").

**What is measured.** From the exact flight's state 0.25 s in (corner 1 strikes 13.2 ms later, at
0.2632 s), at the driver's step dt = 2e-4 s: ω(T) of six starts 1e-4 rad/s apart along ω_x, at
T = 12 ms (in flight) and 30 ms (through the strike); the noise is the largest second difference of
ω(T) (MuJoCo's float64 map's are ~1e-9). And, through the strike, plain central differences at the
driver's float32 probe eps = 8.1e-4 (its per-coordinate sizes): the gap max|J(eps) − J(eps/2)| /
max(1, max|J(eps)|) (the check the driver makes on its event-located map, here on the fixed-step
map), and MuJoCo Warp's J(eps) against MuJoCo's, relative alike.

Each engine runs as the black-box driver steps it: the state set from x before every step and the
solver's warm start cleared (``MuJoCoModelStep.step``, ``MuJoCoWarpStep.step_rows``). Beside it,
MuJoCo with its qpos and qvel rounded to float32 on the way in and out of every step, as MuJoCo Warp
takes and gives them (the float32 state alone, in MuJoCo's float64 collision and solver: the floor of
any float32 state), and MuJoCo Warp's own warm-started loop (``_cube.warp_rollouts``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from . import _cube

#: From the fixture's exact flight state at this time ...
START = 0.25
#: ... to these horizons: in flight (corner 1 strikes at 13.2 ms) and through the strike.
FLIGHT, STRIKE = 0.012, 0.03
#: The driver's step and the contact's time constant (docs/engines.md, the cube's driver rows).
DT, TIMECONST = 2e-4, 0.01
#: Second differences: six starts this far apart along ω_x (rad/s).
SPACING = 1e-4
#: The float32 probe the driver uses (eps·(2^-24/2^-53)^(1/3), eps = 1e-6).
EPS32 = 1e-6 * (2.0 ** 29) ** (1.0 / 3.0)


@dataclasses.dataclass(frozen=True)
class Setting:
    """One change from the cube's model, applied to both engines. ``tolerance`` is set on the loaded
    models (MuJoCo Warp's ``put_model`` raises the MJCF's to at least 1e-6; here it is what is asked);
    ``incremental=False`` switches off MuJoCo Warp's incremental Hessian updates (a diagnostic: its
    ``solver._use_incremental``; MuJoCo has no such path)."""

    name: str
    option: Tuple[Tuple[str, str], ...] = ()
    flag: Tuple[Tuple[str, str], ...] = ()
    impedance: float = _cube.IMPEDANCE
    tolerance: Optional[float] = None
    incremental: bool = True

    def mjcf(self, cube: Any, timeconst: float = TIMECONST) -> str:
        return _cube.cube_mjcf(cube, timeconst, DT, impedance=self.impedance, option=dict(self.option),
                               flag=dict(self.flag))


#: The rows of the table: the cube's model as MuJoCo and MJX run it (MuJoCo's default pyramidal cone), then
#: one change each.
SETTINGS = (
    Setting("the cube's model (pyramidal cone)"),
    Setting("tolerance 1e-6 on both (MuJoCo Warp's floor)", tolerance=1e-6),
    Setting("tolerance 0: 100 iterations, no early exit", tolerance=0.0),
    Setting("tolerance 0, iterations 10", option=(("iterations", "10"),), tolerance=0.0),
    Setting("ls_tolerance 1e-6 (default 0.01)", option=(("ls_tolerance", "1e-6"),)),
    Setting("warm start disabled", flag=(("warmstart", "disable"),)),
    Setting("CG solver", option=(("solver", "CG"),)),
    Setting("implicitfast integrator", option=(("integrator", "implicitfast"),)),
    Setting("impedance 0.99", impedance=0.99),
    Setting("impedance 0.9", impedance=0.9),
    Setting("MuJoCo Warp's incremental Hessian off (diagnostic)", incremental=False),
    Setting("elliptic cone", option=tuple(_cube.WARP_OPTION.items())),
)


@contextlib.contextmanager
def _incremental(on: bool) -> Iterator[None]:
    """MuJoCo Warp's Newton solver with (default) or without its incremental Hessian updates."""
    if on:
        yield
        return
    from mujoco_warp._src import solver  # type: ignore[import-not-found]

    saved = solver._use_incremental
    solver._use_incremental = lambda m: False
    try:
        yield
    finally:
        solver._use_incremental = saved


def line_starts(x0: Any) -> np.ndarray:
    """(6, 12): the cube's x0 and five more starts, SPACING apart along ω_x (world frame)."""
    x0 = np.asarray(x0, dtype=float)
    return np.array([x0 + k * SPACING * np.eye(12)[9] for k in range(6)])


def starts(box: Any, x0: Any, probes: bool = True) -> Tuple[np.ndarray, np.ndarray]:
    """The runs' starts in MuJoCo's chart at x0 (``box.qpos_ref`` is set to x0's configuration):
    (56, 12) rows, the six :func:`line_starts`, then x0 ± size_j e_j at EPS32 and at EPS32/2 (size_j
    = eps·max(1, |x_j|), the driver's probes; not with ``probes=False``); and the sizes at EPS32 (12,)."""
    qpos, qvel = _cube.to_mujoco(x0)
    box.state_of(qpos, qvel)
    rows = []
    for x in line_starts(x0):
        q, v = _cube.to_mujoco(x)
        rows.append(np.concatenate([box.dq(q), v]))
    base = rows[0]
    sizes = EPS32 * np.maximum(1.0, np.abs(base))
    for scale in (1.0, 0.5) if probes else ():
        for j in range(12):
            for sign in (1.0, -1.0):
                rows.append(base + sign * scale * sizes[j] * np.eye(12)[j])
    return np.array(rows), sizes


def _chain(step_rows: Any, X: np.ndarray, horizons: Sequence[float]) -> Dict[float, np.ndarray]:
    """Each row of X (MuJoCo's chart) at each horizon by the driver's step ``step_rows``."""
    out, n = {}, 0
    for t_final in sorted(horizons):
        while n < round(t_final / DT):
            X = step_rows(X, DT)
            n += 1
        out[t_final] = X
    return out


def _second(omega: np.ndarray) -> float:
    """The largest second difference of ω(T) over the six line starts (rad/s)."""
    return float(np.max(np.abs(np.diff(omega[:6], 2, axis=0))))


def _measures(box: Any, ends: Dict[float, np.ndarray], sizes: np.ndarray) -> Dict[str, float]:
    """Second-difference noise of world ω(T) in flight and through the strike, and the gap of J(eps)
    and J(eps/2) (central differences in MuJoCo's chart) through the strike."""
    out: Dict[str, Any] = {}
    for name, t in (("flight", FLIGHT), ("strike", STRIKE)):
        out[name] = _second(np.array([_cube.from_mujoco(box.qpos(r), r[6:12])[9:12] for r in ends[t][:6]]))
    e = ends[STRIKE]
    if len(e) == 6:
        return out
    jac = [np.stack([(e[6 + 24 * k + 2 * j] - e[7 + 24 * k + 2 * j]) / (2 * sizes[j] * (1.0 - 0.5 * k))
                     for j in range(12)], axis=1) for k in (0, 1)]
    out["gap"] = float(np.max(np.abs(jac[0] - jac[1])) / max(1.0, np.max(np.abs(jac[0]))))
    out["jacobian"] = jac[0]
    return out


def _float32_state(c: Any) -> Any:
    """MuJoCo's step (``MuJoCoModelStep`` ``c``) with its qpos and qvel rounded to float32 on the way in
    and out, as MuJoCo Warp's step takes and gives them (``MuJoCoWarpStep.step_rows``): float32's
    state in MuJoCo's float64 collision and solver."""
    import mujoco

    f32 = np.float32

    def step_rows(X: np.ndarray, dt: float) -> np.ndarray:
        out = []
        c.model.opt.timestep = float(dt)
        for x in X:
            d = c._set(x)
            d.qpos[:] = c.qpos(x).astype(f32)
            d.qvel[:] = x[6:12].astype(f32)
            mujoco.mj_step(c.model, d)
            out.append(np.concatenate([c.dq(d.qpos.astype(f32).astype(float)), d.qvel.astype(f32)]))
        return np.array(out)

    return step_rows


def noise_row(cube: Any, x0: Any, setting: Setting, gap: bool = True, timeconst: float = TIMECONST) -> Dict[str, Any]:
    """One setting's row: per engine route, the noise in flight and through the strike, and (``gap``)
    the J(eps)/J(eps/2) gap; the contact's time constant ``timeconst``."""
    import mujoco

    from ._mujoco_model import MuJoCoModelStep
    from ._mujoco_warp import MuJoCoWarpStep

    xml = setting.mjcf(cube, timeconst)
    horizons = (FLIGHT, STRIKE)
    row: Dict[str, Any] = {"setting": setting.name}
    start = time.perf_counter()
    c = MuJoCoModelStep(xml)
    if setting.tolerance is not None:
        c.model.opt.tolerance = setting.tolerance
    X, sizes = starts(c, x0, gap)
    row["mujoco"] = _measures(c, _chain(c.step_rows, X, horizons), sizes)
    row["mujoco_f32_state"] = _measures(c, _chain(_float32_state(c), X, horizons), sizes)
    with _incremental(setting.incremental):
        w = MuJoCoWarpStep(xml, qpos_ref=list(c.qpos_ref))
        w._wmodel.opt.warn_overflow = 0  # the iteration-limit warning at tolerance 0 (a compile-time switch)
        if setting.tolerance is not None:
            w._wmodel.opt.tolerance.fill_(setting.tolerance)
        row["warp"] = _measures(w, _chain(w.step_rows, X, horizons), sizes)
        own = _cube.warp_rollouts(w, line_starts(x0), horizons)
        row["warp_own_loop"] = {name: _second(own[t][:, 9:12]) for name, t in (("flight", FLIGHT), ("strike", STRIKE))}
    row["gap"] = gap
    if gap:  # MuJoCo Warp's J at eps against MuJoCo's, relative to max|J|
        jw, jc = row["warp"].pop("jacobian"), row["mujoco"].pop("jacobian")
        row["mujoco_f32_state"].pop("jacobian")
        row["warp_vs_mujoco"] = float(np.max(np.abs(jw - jc)) / max(1.0, np.max(np.abs(jc))))
    row["contacts"] = _contact_counts(mujoco, c, w, x0)
    row["wall_s"] = time.perf_counter() - start
    return row


def _contact_counts(mujoco: Any, c: Any, w: Any, x0: Any) -> Tuple[int, int]:
    """The most contacts either engine's collision makes along the nominal run through the strike
    (MuJoCo's, MuJoCo Warp's): the box-plane collider's count near a corner."""
    q, v = _cube.to_mujoco(x0)
    x = c.state_of(q, v)
    most = [0, 0]
    for _ in range(round(STRIKE / DT)):
        d = c._set(x)
        mujoco.mj_forward(c.model, d)
        most[0] = max(most[0], int(d.ncon))
        most[1] = max(most[1], len(w.contacts(x[None, :])[0]))
        x = c.step(x, DT)
    return most[0], most[1]


def noise_rows(cube: Any, x0: Any, settings: Sequence[Setting] = SETTINGS, progress: bool = True,
               timeconst: float = TIMECONST) -> List[Dict[str, Any]]:
    """:func:`noise_row` for each setting (the first run of a setting compiles MuJoCo Warp's kernels
    it changes: seconds to a minute each)."""
    out = []
    for s in settings:
        row = noise_row(cube, x0, s, timeconst=timeconst)
        out.append(row)
        if progress:
            print(format_row(row), flush=True)
    return out


HEADER = ("| setting | MuJoCo (f64): flight / strike | MuJoCo, its state rounded to f32 as Warp's | MuJoCo Warp, the "
          "driver's step | MuJoCo Warp, its own loop | J(eps) vs J(eps/2), strike: MuJoCo / Warp | Warp's J(eps) vs "
          "MuJoCo's | contacts (MuJoCo / Warp) | wall (s) |\n|---|---|---|---|---|---|---|---|---|")


def _gaps(row: Dict[str, Any]) -> str:
    if not row["gap"]:
        return "— | —"
    return f"{row['mujoco']['gap']:.1e} / {row['warp']['gap']:.1e} | {row['warp_vs_mujoco']:.1e}"


def format_row(row: Dict[str, Any]) -> str:
    """A row of the docs' table (second differences of ω(T), rad/s; the gap relative)."""
    pair = lambda m: f"{m['flight']:.1e} / {m['strike']:.1e}"  # noqa: E731
    return (f"| {row['setting']} | {pair(row['mujoco'])} | {pair(row['mujoco_f32_state'])} | {pair(row['warp'])} | "
            f"{pair(row['warp_own_loop'])} | {_gaps(row)} | "
            f"{row['contacts'][0]} / {row['contacts'][1]} | {row['wall_s']:.0f} |")
