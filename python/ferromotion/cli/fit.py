"""``ferromotion fit DATA.csv`` (and ``--demo``): fit the drop's parameters to measurements."""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import ferromotion as fm

from ._args import DEFAULTS, _positive_float, _positive_int


#: `fit`: the data cannot identify some parameter combination (named on stderr).
EXIT_UNIDENTIFIABLE = 3
#: `fit`: the fit converged, but χ² is beyond its 99.9% limit (a misfit).
EXIT_MISFIT = 4
#: `fit`: the fit stalled or hit its iteration cap.
EXIT_NOT_CONVERGED = 5


def add_parser(sub: Any) -> None:
    """Register ``ferromotion fit``."""
    fit_defaults = DEFAULTS["fit"]
    drop = DEFAULTS["drop"]
    p = sub.add_parser(
        "fit",
        help="fit the drop's parameters to measured heights/velocities, with identifiability and gradient checks",
        description=(
            "Fit parameters of the drop (zeta or restitution, k, height, velocity, gravity, mass) to a CSV of "
            "measurements: a header row naming the columns t (s) and y (heights, m) and/or v (velocities, m/s); "
            "optional columns sigma_y and sigma_v (one value, repeated) give the standard deviations, or pass "
            "--sigma-y/--sigma-v. An empty cell is a missing sample (masked). Levenberg-Marquardt on the whitened "
            "residuals with the Jacobian of --route; prints the estimates with 95%% intervals, the singular values "
            "and condition number of the sensitivities, any weak direction, and the checker's verdict on the "
            "objective's gradient at the start and at the solution."
        ),
        epilog=(
            f"exit status: 0 fitted and identifiable; 1 when the data or options are refused (missing columns, "
            f"times not increasing, NaN, sigma <= 0, too few samples; the message names the field); 2 on bad "
            f"arguments; {EXIT_UNIDENTIFIABLE} when the data cannot identify some parameter combination (named); "
            f"{EXIT_MISFIT} when it converged to a misfit (chi2 beyond its 99.9%% limit); "
            f"{EXIT_NOT_CONVERGED} when the fit stalled or hit its iteration cap."
        ),
    )
    p.add_argument("data", nargs="?", type=Path, metavar="DATA.csv", help="the measurements (see above)")
    p.add_argument("--demo", action="store_true",
                   help="run the experiment instead: synthetic bounces fitted by every route's Jacobian and by "
                        "CMA-ES and Nelder-Mead (needs the cma and scipy packages), the table of notebook 07")
    p.add_argument("--params", default=",".join(fit_defaults["params"]), metavar="A,B",
                   help="parameters to fit, comma-separated (default: %(default)s)")
    p.add_argument("--route", choices=("fixed", "corrected", "tolerance", "flow", "exact"),
                   default=fit_defaults["route"], help="whose Jacobian steps (default: %(default)s)")
    p.add_argument("--k", type=_positive_float, default=fit_defaults["k"], metavar="N/m",
                   help="penalty stiffness; the start when k is fitted (default: %(default)g)")
    p.add_argument("--dt", type=_positive_float, default=fit_defaults["dt"], metavar="S",
                   help="step of the fixed and corrected routes; sample times must be multiples (default: %(default)g)")
    for name, unit in (("height", "m"), ("velocity", "m/s"), ("zeta", ""), ("gravity", "m/s^2"), ("mass", "kg")):
        p.add_argument(f"--{name}", type=float, default=drop[name], metavar=unit or "Z",
                       help=f"start (or held value) of the {name} (default: %(default)g)")
    p.add_argument("--sigma-y", type=float, default=None, metavar="M", help="standard deviation of a height, m")
    p.add_argument("--sigma-v", type=float, default=None, metavar="M/S", help="standard deviation of a velocity, m/s")
    p.add_argument("--sigma-scale", choices=("stated", "residual", "either"), default=fit_defaults["sigma_scale"],
                   help="what the 95%% intervals take sigma for: the noise's standard deviation (stated), weights whose "
                        "scale the residuals estimate (residual, Student's t), or the wider of the two (either; "
                        "default: %(default)s)")
    p.add_argument("--no-check", action="store_true", help="skip the gradient checks (faster)")
    p.add_argument("--json", action="store_true", help="print the whole report as JSON")
    p.add_argument("--starts", type=_positive_int, default=5, metavar="N", help="with --demo: starts per method")
    p.set_defaults(func=_fit, subparser=p)


def _read_fit_csv(path: Path) -> Dict[str, Any]:
    """Columns t, y, v, sigma_y, sigma_v from a CSV, and ``missing_<col>``: which cells were empty
    (masked; a written NaN is not missing: the core refuses it)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise fm.InvalidParameter(f"invalid parameter `data`: cannot read {path}: {e.strerror or e}") from None
    rows = list(csv.reader(line for line in text.splitlines() if line.strip()))
    if not rows:
        raise fm.InvalidParameter(f"invalid parameter `data`: {path} is empty (expected a header row: t,y and/or v)")
    header = [h.strip().lower() for h in rows[0]]
    if "t" not in header or not ({"y", "v"} & set(header)):
        raise fm.InvalidParameter(f"invalid parameter `data`: {path} needs a column `t` and a column `y` (heights) "
                                  f"and/or `v` (velocities); its header is {','.join(rows[0])}")
    cols: Dict[str, List[Any]] = {h: [] for h in header}
    cols.update({f"missing_{h}": [] for h in header})
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise fm.InvalidParameter(f"invalid parameter `data`: {path} line {line} has {len(row)} cells, "
                                      f"the header {len(header)}")
        for h, cell in zip(header, row):
            cell = cell.strip()
            cols[f"missing_{h}"].append(cell == "")
            if cell == "":
                if h == "t":
                    raise fm.InvalidParameter(f"invalid parameter `t`: {path} line {line} has no time")
                cols[h].append(math.nan)
                continue
            try:
                cols[h].append(float(cell))
            except ValueError:
                raise fm.InvalidParameter(f"invalid parameter `{h}`: {path} line {line}: expected a number, "
                                          f"got {cell!r}") from None
    return cols


def _fit(args: argparse.Namespace) -> int:
    if args.demo:
        return _fit_demo(args)
    if args.data is None:
        args.subparser.error("name a DATA.csv, or pass --demo")  # exits with status 2
    cols = _read_fit_csv(args.data)
    sigma: Dict[str, Optional[float]] = {"y": args.sigma_y, "v": args.sigma_v}
    for ch in ("y", "v"):
        column = cols.get(f"sigma_{ch}")
        if sigma[ch] is None and column is not None:
            values = {x for x in column if not math.isnan(x)}
            if len(values) != 1:
                raise fm.InvalidParameter(f"invalid parameter `sigma_{ch}`: the column must hold one value "
                                          f"(repeated), got {sorted(values)[:4]}")
            sigma[ch] = values.pop()
    for ch, unit in (("y", "m"), ("v", "m/s")):
        if ch in cols and sigma[ch] is None:
            raise fm.InvalidParameter(f"invalid parameter `--sigma-{ch}`: the `{ch}` column needs its standard "
                                      f"deviation: pass --sigma-{ch} ({unit}, > 0) or add a `sigma_{ch}` column")
    masks = {ch: [not m for m in cols[f"missing_{ch}"]] if ch in cols else None for ch in ("y", "v")}
    guess = fm.Drop(height=args.height, velocity=args.velocity, zeta=args.zeta, gravity=args.gravity,
                    mass=args.mass, t_final=max(cols["t"]) if cols["t"] else DEFAULTS["drop"]["t_final"])
    r = fm.fit(guess, cols["t"], cols.get("y"), v=cols.get("v"), sigma_y=sigma["y"], sigma_v=sigma["v"],
               mask_y=masks["y"], mask_v=masks["v"], params=args.params, route=args.route, k=args.k, dt=args.dt,
               check=not args.no_check, sigma_scale=args.sigma_scale)
    if args.json:
        print(r.to_json(indent=2))
    else:
        print(r.summary())
    if not r.identifiable:
        names = "; ".join(f"{w.label} ({w.kind})" for w in r.weak_directions)
        print(f"ferromotion: the data cannot identify: {names}; fix one of these parameters, or add samples "
              "that see it (e.g. during contact)", file=sys.stderr)
        return EXIT_UNIDENTIFIABLE
    if r.status != "converged":
        print(f"ferromotion: the fit did not converge ({r.status}) with the {args.route} route's Jacobian",
              file=sys.stderr)
        return EXIT_NOT_CONVERGED
    if not r.consistent:
        print(f"ferromotion: misfit: chi2 = {r.chi2:.4g} exceeds its 99.9% limit {r.chi2_limit:.4g} for "
              f"{r.document['dof']} degrees of freedom (wrong model, wrong sigma, or a Jacobian that stopped the "
              "optimiser short)", file=sys.stderr)
        return EXIT_MISFIT
    return 0


def _fit_demo(args: argparse.Namespace) -> int:
    from ..fit import _import_cma, demo_table, fit_demo
    try:
        _import_cma()
        import scipy  # noqa: F401
        baselines = True
    except ImportError as e:
        print(f"ferromotion: {e.name} is not installed: the derivative-free baselines are left out "
              "(pip install cma scipy)", file=sys.stderr)
        baselines = False
    demo = fit_demo(starts=args.starts, baselines=baselines,
                    progress=None if args.json else (lambda s: print(s, file=sys.stderr, flush=True)))
    if args.json:
        doc = {"rows": demo["rows"], "robustness": demo["robustness"],
               "scenarios": [{"horizon": s["horizon"], "samples": s["samples"], "dv_dy0": s["dv_dy0"],
                              "target_cost": s["target_cost"], "truth": s["truth"], "best": s["best"].document}
                             for s in demo["scenarios"]]}
        print(json.dumps(fm._common.json_ready(doc), indent=2, ensure_ascii=False))
    else:
        print(demo_table(demo))
    return 0

