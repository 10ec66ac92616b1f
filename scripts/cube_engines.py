"""The tumbling cube's engines table (docs/engines.md, "The tumbling cube in the engines"):
per strike (horizons after the first and after both), each engine's x(T) and J judged against the
exact ones by the core. Run in .venv-engines: `make cube-engines` (minutes: MuJoCo Warp steps
4,500 times per horizon at ~25 ms a step on a loaded 2-core machine, and its driver rows take
minutes each).

`--noise` prints instead where MuJoCo Warp's noise through a corner strike comes from: per model setting
(each applied to both engines' model), second differences of ω(T) in flight and through corner 1's strike
and the J(eps)/J(eps/2) gap, MuJoCo beside MuJoCo Warp (ferromotion.engines._cube_noise; ~3 min warm, and
Warp compiles the kernels each setting changes on its first run).

Newton and Drake (``--engines newton,drake``; ``drake`` is drake-tamsi and drake-sap) run at the
settings ``FORCE_SETTINGS`` (k N/m, dt s), their damping bisected on their own first rebound
(``engines/_cube_force.py``), the black-box driver on their same step where ``FORCE_DRIVER`` says.

    .venv-engines/bin/python scripts/cube_engines.py [--engines mujoco,mujoco_warp,mjx,newton,drake]
        [--no-driver] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import ferromotion as fm
from ferromotion.engines import _cube, _cube_force

X0 = [0.0, 0.0, 0.5, 0.5, 0.3, 0.2, 0.2, 0.0, 0.0, 2.0, 1.0, -1.0]
#: (timeconst s, dt s): soft to stiff; MuJoCo needs timeconst >= 2 dt.
STIFFNESS = ((0.01, 1e-4), (0.002, 1e-4), (0.0005, 1e-4))
#: The black-box driver's step through mj_step and MuJoCo Warp's step (a guard pair per corner).
DRIVER_DT = 2e-4
#: Newton's and Drake's (contact stiffness k N/m, step dt s): at k = 1e7 a step of 1e-4 s leaves Newton's
#: explicit damping no setting with e = 0.5 at the first strike (it overshoots), so the step shrinks.
FORCE_SETTINGS = ((1e5, 1e-4), (1e6, 1e-4), (1e7, 2.5e-5))
#: (engine, k) whose black-box driver rows are run (on the engine's own step, at its dt).
FORCE_DRIVER = {("newton", 1e5), ("newton", 1e6), ("drake-tamsi", 1e5), ("drake-sap", 1e5), ("drake-sap", 1e6)}


def _log(message: str) -> None:
    print(f"  .. {message}", flush=True)


def force_rows(engine: str, driver: bool) -> list:
    cube = fm.systems.TumblingCube(half_side=0.1, mass=1.0, restitution=0.5)
    out = []
    for k, dt in FORCE_SETTINGS:
        got = _cube_force.force_rows(engine, cube, X0, k, dt, progress=_log,
                                     driver=driver and (engine, k) in FORCE_DRIVER)
        print(_cube.table(got), flush=True)
        out.extend(got)
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--engines", default="mujoco,mujoco_warp,mjx,newton,drake")
    p.add_argument("--json", help="write the rows as JSON here")
    p.add_argument("--noise", action="store_true", help="MuJoCo Warp's noise through a strike, by model setting")
    p.add_argument("--driver", action="store_true",
                   help="only the driver rows (a guard pair per corner), both horizons, both cones")
    p.add_argument("--timeconst", type=float, default=0.01,
                   help="with --driver or --noise: the contact's time constant (s)")
    p.add_argument("--settings",
                   help="with --noise: only these rows (their numbers in the table, from 1, comma-separated)")
    p.add_argument("--no-driver", action="store_true", help="Newton and Drake: their own gradients only")
    args = p.parse_args()
    cube = fm.systems.TumblingCube(half_side=0.1, mass=1.0, restitution=0.5)
    if args.noise:
        return noise(cube, args.json, args.timeconst, args.settings)
    if args.driver:
        return driver(cube, args.engines.split(","), args.json, args.timeconst)
    rows = []
    start = time.perf_counter()
    engines = [e for name in args.engines.split(",")
               for e in (("drake-tamsi", "drake-sap") if name == "drake" else (name,))]
    for engine in engines:
        if engine in _cube_force.ENGINES:
            engine_start = time.perf_counter()
            rows.extend(force_rows(engine, not args.no_driver))
            print(f"{engine}: {time.perf_counter() - engine_start:.0f} s", flush=True)
            continue
        for tc, dt in STIFFNESS:
            if engine == "mujoco":
                got = _cube.mujoco_rows(cube, X0, tc, dt, driver_dt=DRIVER_DT if tc >= 0.002 else None)
                got += _cube.mujoco_rows(cube, X0, tc, dt, h=1e-3)  # MuJoCo Warp's probe, for comparison
            elif engine == "mujoco_warp":
                got = _cube.warp_rows(cube, X0, tc, dt, driver_dt=DRIVER_DT if tc >= 0.002 else None)
            elif engine == "mjx":
                got = _cube.mjx_rows(cube, X0, tc, dt)
            else:
                raise SystemExit(f"unknown engine {engine!r}: mujoco, mujoco_warp, mjx, newton, drake-tamsi, drake-sap "
                                 "or drake")
            rows.extend(got)
            print(_cube.table(got), flush=True)
    print(f"\n{_cube.table(rows)}\n\nwhole table: {time.perf_counter() - start:.0f} s")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump([r.to_dict() for r in rows], f, indent=2)
    return 0


def driver(cube: fm.systems.TumblingCube, engines: list[str], out: str | None, timeconst: float = 0.01) -> int:
    """The driver's rows on the cube (DRIVER_DT), after one strike and after both,
    MuJoCo's and MuJoCo Warp's, on the cube's MJCF (the default pyramidal cone) and on the elliptic cone
    (_cube.WARP_OPTION; docs/engines.md, "MuJoCo Warp through the driver")."""
    rows = []
    start = time.perf_counter()
    for t_final in _cube.HORIZONS:
        doc = _cube.horizon_fixture(cube, X0, t_final)
        for engine in engines:
            if engine not in ("mujoco", "mujoco_warp"):
                continue  # MJX has no step for the driver here
            for option in (None, _cube.WARP_OPTION):
                rows.append(_cube.driver_row(cube, X0, timeconst, DRIVER_DT, doc, engine, option=option))
                print(_cube.table(rows[-1:]), flush=True)
    print(f"\n{_cube.table(rows)}\n\nwhole table: {time.perf_counter() - start:.0f} s")
    if out:
        with open(out, "w", encoding="utf-8") as f:
            json.dump([r.to_dict() for r in rows], f, indent=2)
    return 0


def noise(cube: fm.systems.TumblingCube, out: str | None, timeconst: float = 0.01, only: str | None = None) -> int:
    """The noise table (docs/engines.md, "MuJoCo Warp's noise through a strike, located")."""
    from ferromotion.engines import _cube_noise

    x0 = cube.solve(X0, _cube_noise.START).state
    settings = _cube_noise.SETTINGS
    if only:
        settings = tuple(settings[int(i) - 1] for i in only.split(","))
    print(f"from the exact flight's state at {_cube_noise.START} s; timeconst {timeconst} s, dt "
          f"{_cube_noise.DT} s; flight: {_cube_noise.FLIGHT} s, strike: {_cube_noise.STRIKE} s; second differences "
          f"of omega(T) (rad/s) over starts {_cube_noise.SPACING} rad/s apart; gap at eps {_cube_noise.EPS32:.2g}")
    print(_cube_noise.HEADER, flush=True)
    start = time.perf_counter()
    rows = _cube_noise.noise_rows(cube, x0, settings, timeconst=timeconst)
    print(f"\n{_cube_noise.HEADER}\n" + "\n".join(_cube_noise.format_row(r) for r in rows))
    print(f"\nwhole table: {time.perf_counter() - start:.0f} s")
    if out:
        with open(out, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
