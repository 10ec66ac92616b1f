"""Coverage of fm.fit's 95% intervals on synthetic data with known parameters (``make bench-fit``).

For each design (a model, its sample times and channels, the route that is right for it, the fitted
parameters, the noise σ and the starting guesses) the truth's predictions by the route itself plus seeded
Gaussian noise of the stated σ are fitted ``--replicates`` times (default 2000); the table gives, per
parameter, the fraction of replicates whose 95% interval contains the truth, with its binomial standard
error, and the probability that an exactly binomial count at that coverage reaches 190 of 200 (the
issue's test).

Beside the counts, each row says where misses could come from: fits that did not converge, interval
sides found by the Wald fallback instead of the profile, replicates whose χ² is inconsistent with the
stated noise (a wrong local minimum), and with ``--diagnose`` the replicates whose interval disagrees with
the likelihood-ratio test at the truth, computed independently: W = 2·(min Φ with the parameter held at
its true value − min Φ), the other parameters re-fitted from the fit's estimate by a separate call. A
profile interval contains the truth exactly when W is below its threshold, so a disagreement is a bound
located wrongly; the mean of W (1 for a χ² with one degree of freedom) and the fraction above 3.8415
measure the likelihood ratio's own calibration, apart from how the bounds are found.

Run: ``.venv/bin/python benches/fit_coverage.py [--replicates N] [--designs a,b] [--rules before,after]
[--diagnose]``. ``--rules`` lists the interval rules to measure side by side on the same replicates:
``after`` is fm.fit as it is (``sigma_scale="either"``, steps of a log parameter bounded by a factor e),
``stated`` and ``residual`` the two rules ``either`` takes the larger of (docs/fit.md), ``before`` the fit
before the calibration, the step bound and the continuation (``sigma_scale="stated"``, ``max_step=1e300``,
``continuation=False``), ``direct`` fm.fit without the continuation over the horizon that retries a fit whose χ²
is inconsistent with the noise.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

import ferromotion as fm

CHI2_1_95 = 3.841458820694124


@dataclasses.dataclass(frozen=True)
class Design:
    name: str
    route: str
    params: Tuple[str, ...]
    #: Truth: Drop fields plus "k" and "restitution".
    truth: Dict[str, float]
    t: np.ndarray
    channels: Tuple[str, ...]  # "y", "v"
    sigma_y: float = 1e-3
    sigma_v: float = 1e-2
    #: "fixed": the test's guess (below); "far": each parameter 30-50% off the truth, seeded.
    start: str = "fixed"
    fixed_start: Optional[Dict[str, float]] = None
    dt: float = 1e-4


ONE = np.round(np.arange(1, 17) * 0.05, 10)  # 16 samples over one bounce, T = 0.8 s
THREE = np.round(np.arange(1, 31) * 0.05, 10)  # 30 samples, T = 1.5 s (three bounces of the rigid model)
ONE_MS = np.round(np.arange(1, 17) * 0.05, 10)
PEN = {"height": 1.0, "velocity": 0.0, "zeta": 0.2, "gravity": 9.81, "mass": 1.0, "k": 1e4}
RIGID = {"height": 1.0, "velocity": 0.0, "gravity": 9.81, "mass": 1.0, "restitution": 0.7}
FLOW_START = {"zeta": 0.12, "k": 1.5e4}
EXACT_START = {"restitution": 0.5, "height": 0.9}

DESIGNS: List[Design] = [
    Design("flow-1b-y", "flow", ("zeta", "k"), PEN, ONE, ("y",), fixed_start=FLOW_START),
    Design("flow-1b-y-far", "flow", ("zeta", "k"), PEN, ONE, ("y",), start="far"),
    Design("flow-1b-y-s1e-2", "flow", ("zeta", "k"), PEN, ONE, ("y",), sigma_y=1e-2, fixed_start=FLOW_START),
    Design("flow-3b-y", "flow", ("zeta", "k"), PEN, THREE, ("y",), start="far"),
    Design("flow-1b-yv", "flow", ("zeta", "k"), PEN, ONE, ("y", "v"), start="far"),
    Design("flow-1b-y-zeta", "flow", ("zeta",), PEN, ONE, ("y",), start="far"),
    Design("flow-1b-y-zeta-mass", "flow", ("zeta", "mass"), {**PEN, "mass": 1.0}, ONE, ("y",), start="far"),
    Design("flow-1b-y-gravity-height", "flow", ("gravity", "height"), PEN, ONE, ("y",), start="far"),
    Design("flow-1b-y-zeta-k-height", "flow", ("zeta", "k", "height"), PEN, ONE, ("y",), start="far"),
    Design("tolerance-1b-y", "tolerance", ("zeta", "k"), PEN, ONE, ("y",), start="far"),
    Design("corrected-1b-y", "corrected", ("zeta", "k"), PEN, ONE, ("y",), start="far", dt=1e-3),
    Design("exact-1b-y", "exact", ("restitution", "height"), RIGID, ONE, ("y",), fixed_start=EXACT_START),
    Design("exact-1b-y-far", "exact", ("restitution", "height"), RIGID, ONE, ("y",), start="far"),
    Design("exact-1b-y-s1e-2", "exact", ("restitution", "height"), RIGID, ONE, ("y",), sigma_y=1e-2,
           fixed_start=EXACT_START),
    Design("exact-3b-y", "exact", ("restitution", "height"), RIGID, THREE, ("y",), start="far"),
    Design("exact-1b-yv-height-velocity", "exact", ("height", "velocity"), {**RIGID, "velocity": 1.0}, ONE,
           ("y", "v"), start="far"),
    Design("exact-3b-yv-e-h-v", "exact", ("restitution", "height", "velocity"), {**RIGID, "velocity": 1.0}, THREE,
           ("y", "v"), start="far"),
    Design("exact-1b-y-gravity", "exact", ("gravity",), RIGID, ONE, ("y",), start="far"),
]

#: The interval rules, as fm.fit options.
RULES: Dict[str, Dict[str, object]] = {
    "after": {},
    "stated": {"sigma_scale": "stated"},
    "residual": {"sigma_scale": "residual"},
    "before": {"sigma_scale": "stated", "max_step": 1e300, "continuation": False},
    "direct": {"continuation": False},
}

DROP_FIELDS = ("height", "velocity", "zeta", "gravity", "mass")


def _model(values: Dict[str, float]) -> Tuple[fm.Drop, Optional[float], Optional[float]]:
    """(drop, k, restitution) from a dict of parameter values."""
    drop = fm.Drop(**{f: values[f] for f in DROP_FIELDS if f in values})
    return drop, values.get("k"), values.get("restitution")


def _predict(d: Design, values: Dict[str, float]) -> Dict[str, np.ndarray]:
    drop, k, e = _model(values)
    kw = {"restitution": e} if d.route == "exact" else {}
    return fm.fit_predict(drop, d.t, route=d.route, k=k if k is not None else 1e6, dt=d.dt, **kw)


def _start(d: Design, rng: np.random.Generator) -> Dict[str, float]:
    if d.start == "fixed":
        assert d.fixed_start is not None
        return dict(d.fixed_start)
    out = {}
    for p in d.params:
        u = rng.uniform(0.3, 0.5) * rng.choice([-1.0, 1.0])
        v = d.truth[p] * (1.0 + u)
        if p == "restitution":
            v = min(v, 0.99)
        if p == "zeta":
            v = min(v, 0.9)
        out[p] = v
    return out


def _fit(d: Design, values: Dict[str, float], data: Dict[str, np.ndarray], params: Sequence[str],
         **options) -> fm.FitResult:
    drop, k, e = _model(values)
    kw: Dict[str, object] = dict(options)
    if d.route == "exact" and e is not None:
        kw["restitution"] = e
    return fm.fit(drop, d.t, y=data.get("y"), v=data.get("v"),
                  sigma_y=d.sigma_y if "y" in data else None, sigma_v=d.sigma_v if "v" in data else None,
                  params=list(params), route=d.route, k=k if k is not None else 1e6, dt=d.dt, check=False, **kw)


@dataclasses.dataclass
class Tally:
    hits: Dict[str, int]
    joint: int = 0
    n: int = 0
    errors: int = 0
    not_converged: int = 0
    wald_sides: int = 0
    unbounded_sides: int = 0
    inconsistent: int = 0
    disagree: int = 0
    w_sum: Dict[str, float] = dataclasses.field(default_factory=dict)
    w_over: Dict[str, int] = dataclasses.field(default_factory=dict)
    chi2_sum: float = 0.0
    redrawn: int = 0
    wall: float = 0.0


def run(d: Design, index: int, replicates: int, scales: Sequence[str], diagnose: bool, seed0: int,
        extra: Dict[str, float]) -> Dict:
    truth_pred = _predict(d, d.truth)
    tallies = {s: Tally(hits={p: 0 for p in d.params}, w_sum={p: 0.0 for p in d.params},
                        w_over={p: 0 for p in d.params}) for s in scales}
    redrawn = 0
    for rep in range(replicates):
        seed = seed0 + rep
        rng = np.random.default_rng([seed, index])
        data = {}
        for ch in d.channels:
            sig = d.sigma_y if ch == "y" else d.sigma_v
            data[ch] = truth_pred[ch] + sig * rng.standard_normal(d.t.shape[0])
        start = {**d.truth, **_start(d, rng)}
        for _ in range(100):  # a start the model refuses (the rigid ball at rest before T) is redrawn
            try:
                _predict(d, start)
                break
            except fm.FerroError:
                redrawn += 1
                start = {**d.truth, **_start(d, rng)}
        for s in scales:
            tl = tallies[s]
            tl.n += 1
            opts = {**extra, **RULES[s]}
            t0 = time.perf_counter()
            try:
                r = _fit(d, start, data, d.params, **opts)
            except fm.FerroError as e:  # counted as a miss of every parameter
                tl.errors += 1
                print(f"  {d.name} seed {seed}: {type(e).__name__}: {e}", file=sys.stderr)
                continue
            tl.wall += time.perf_counter() - t0
            ok = r.contains(d.truth)
            for p in d.params:
                tl.hits[p] += ok[p]
                tl.wald_sides += sum(m == "wald" for m in r.interval_method[p])
                tl.unbounded_sides += sum(m == "profile-unbounded" for m in r.interval_method[p])
            tl.joint += all(ok.values())
            tl.not_converged += r.status != "converged"
            tl.inconsistent += not r.consistent
            tl.chi2_sum += r.chi2
            if diagnose and r.status == "converged":
                for p in d.params:
                    w = _lr_at_truth(d, r, data, p)
                    tl.w_sum[p] += w
                    tl.w_over[p] += w > CHI2_1_95
                    thr = r.receipt["intervals"]["delta_chi2"]
                    if ok[p] != (w <= thr) and all(m == "profile" for m in r.interval_method[p]):
                        tl.disagree += 1
                        print(f"  {d.name} seed {seed} {p}: interval {r.interval[p]} contains={ok[p]} "
                              f"but W = {w:.6f} (threshold {thr:.4f})", file=sys.stderr)
    for tl in tallies.values():
        tl.redrawn = redrawn
    return tallies


def _lr_at_truth(d: Design, r: fm.FitResult, data: Dict[str, np.ndarray], p: str) -> float:
    """2·(min Φ with p held at its true value − r's Φ), the others re-fitted from r's estimate."""
    others = [q for q in d.params if q != p]
    values = {**d.truth, **r.estimate, p: d.truth[p]}
    if not others:
        drop, k, e = _model(values)
        phi = fm.FitObjective(drop, d.t, y=data.get("y"), v=data.get("v"),
                              sigma_y=d.sigma_y if "y" in data else None,
                              sigma_v=d.sigma_v if "v" in data else None, params=[p], route=d.route,
                              k=k if k is not None else 1e6, dt=d.dt,
                              **({"restitution": e} if d.route == "exact" else {}))
        return 2.0 * (phi(phi.coordinates({p: d.truth[p]})) - r.cost)
    c = _fit(d, values, data, others, interval="wald")
    return 2.0 * (c.cost - r.cost)


def p_at_least(k: int, n: int, p: float) -> float:
    """P(Binomial(n, p) >= k)."""
    return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k, n + 1))


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replicates", type=int, default=2000)
    ap.add_argument("--designs", default="", help="comma-separated design names (default: all)")
    ap.add_argument("--rules", default="after", help=f"comma-separated, of {', '.join(RULES)} (default: after)")
    ap.add_argument("--diagnose", action="store_true", help="check every interval against W at the truth")
    ap.add_argument("--seed", type=int, default=100000, help="first seed")
    ap.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                    help="another fm.fit option for every fit (a number), e.g. max_step=1e300")
    args = ap.parse_args(argv)
    names = [n for n in args.designs.split(",") if n]
    designs = [d for d in DESIGNS if not names or d.name in names]
    scales: List[str] = [s for s in args.rules.split(",") if s]
    unknown = [s for s in scales if s not in RULES]
    if unknown:
        ap.error(f"unknown rules {unknown}: expected {list(RULES)}")
    extra = {k: float(v) for k, v in (o.split("=", 1) for o in args.option)}
    print(f"fm.fit 95% interval coverage{' with ' + str(extra) if extra else ''}, {args.replicates} replicates per design, seeds [s, i] for s in {args.seed}.."
          f"{args.seed + args.replicates - 1}, i the design's index")
    head = (f"{'design':<30} {'route':<10} {'rule':<8} {'params':<26} {'coverage per parameter (± s.e.)':<52} "
            f"{'joint':>6} {'P190':>12}  notes")
    print(head)
    print("-" * len(head))
    for d in designs:
        tallies = run(d, DESIGNS.index(d), args.replicates, scales, args.diagnose, args.seed, extra)
        for s, tl in tallies.items():
            cov = {p: h / tl.n for p, h in tl.hits.items()}
            se = {p: math.sqrt(c * (1 - c) / tl.n) for p, c in cov.items()}
            cells = "  ".join(f"{p} {100 * cov[p]:.1f}±{100 * se[p]:.1f}" for p in d.params)
            p190 = "/".join(f"{p_at_least(190, 200, cov[p]):.2f}" for p in d.params)
            notes = []
            for label, count in (("starts redrawn", tl.redrawn), ("errors", tl.errors), ("not converged", tl.not_converged),
                                 ("wald sides", tl.wald_sides), ("unbounded sides", tl.unbounded_sides),
                                 ("chi2 inconsistent", tl.inconsistent)):
                if count:
                    notes.append(f"{label} {count}")
            fitted = tl.n - tl.errors
            notes.append(f"mean chi2 {tl.chi2_sum / max(fitted, 1):.2f} (dof "
                         f"{sum(len(d.t) for _ in d.channels) - len(d.params)})")
            if args.diagnose:
                notes.append(f"interval≠LR test {tl.disagree}")
                notes.append("W mean/over " + " ".join(
                    f"{tl.w_sum[p] / max(fitted, 1):.3f}/{100 * tl.w_over[p] / max(fitted, 1):.2f}%" for p in d.params))
            notes.append(f"{1e3 * tl.wall / max(fitted, 1):.1f} ms/fit")
            print(f"{d.name:<30} {d.route:<10} {s:<8} {','.join(d.params):<26} {cells:<52} "
                  f"{100 * tl.joint / tl.n:>5.1f}% {p190:>12}  {'; '.join(notes)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
