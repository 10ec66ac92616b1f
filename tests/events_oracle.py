"""An exact event-driven simulation at 50 digits (Python's decimal), written apart from the core:
the independent oracle of the V-groove, the cylinder and the switched field
(tests/test_systems.py). Flights are closed form; each impact time is a root found in decimal
(a quadratic's for the walls, bisection to 1e-45 s for the circle); the Jacobian comes from
differences of whole simulations at steps of 1e-20."""

from __future__ import annotations

from decimal import Decimal as D, getcontext
from typing import Callable, List, Sequence, Tuple

getcontext().prec = 60
Vec = List[D]


def pi() -> D:
    getcontext().prec += 2
    three, lasts, t, s, n, na, d, da = D(3), 0, D(3), D(3), 1, 0, 0, 24
    while s != lasts:
        lasts = s
        n, na = n + na, na + 8
        d, da = d + da, da + 32
        t = (t * n) / d
        s += t
    getcontext().prec -= 2
    return +s


def cos(x: D) -> D:
    getcontext().prec += 2
    i, lasts, s, fact, num, sign = 0, 0, D(1), 1, D(1), 1
    while s != lasts:
        lasts = s
        i += 2
        fact *= i * (i - 1)
        num *= x * x
        sign *= -1
        s += num / fact * sign
    getcontext().prec -= 2
    return +s


def sin(x: D) -> D:
    return cos(pi() / 2 - x)


def fly(x: Vec, g: D, t: D) -> Vec:
    return [x[0] + x[2] * t, x[1] + x[3] * t - g * t * t / 2, x[2], x[3] - g * t]


def bounce(x: Vec, n: Tuple[D, D], e: D) -> Vec:
    k = (1 + e) * (n[0] * x[2] + n[1] * x[3])
    return [x[0], x[1], x[2] - k * n[0], x[3] - k * n[1]]


def groove(angle: D, e: D, g: D, x0: Sequence[float], t1: D) -> Vec:
    """The ball in the V-groove, impacts one at a time; walls met at the same instant (to 1e-45 s)
    are bounced off in turn, each while the ball still approaches it (only a start on the axis
    meets both, and only a right-angled groove gives one outcome there)."""
    c, s = cos(angle / 2), sin(angle / 2)
    walls = [(c, s), (-c, s)]
    x, t = [D(v) for v in x0], D(0)
    for _ in range(1000):
        roots = []
        for n in walls:
            h = n[0] * x[0] + n[1] * x[1]
            vn = n[0] * x[2] + n[1] * x[3]
            a = -g * n[1]
            root = (vn + (vn * vn - 2 * a * h).sqrt()) / (-a)
            if root > D("1e-40"):
                roots.append((root, n))
        if not roots or t + min(r for r, _ in roots) >= t1:
            return fly(x, g, t1 - t)
        first = min(r for r, _ in roots)
        x = fly(x, g, first)
        for r, n in roots:
            if r - first <= D("1e-45") and n[0] * x[2] + n[1] * x[3] < 0:
                x = bounce(x, n, e)
        t += first
    raise RuntimeError("too many impacts")


def cylinder(r: D, e: D, g: D, x0: Sequence[float], t1: D) -> Vec:
    """The ball outside a circle: the first entering root of |p(s)| - r by a scan of 1e-3 s
    and bisection to 1e-45 s."""
    x, t = [D(v) for v in x0], D(0)

    def dist(y: Vec, s: D) -> D:
        p = fly(y, g, s)
        return (p[0] * p[0] + p[1] * p[1]).sqrt() - r

    for _ in range(100):
        step, s, hit = D("0.001"), D("1e-30"), None
        while t + s < t1:
            if dist(x, s) <= 0:
                hit = s
                break
            s += step
        if hit is None:
            return fly(x, g, t1 - t)
        lo, hi = hit - step if hit > step else D(0), hit
        while hi - lo > D("1e-45"):
            mid = (lo + hi) / 2
            if dist(x, mid) > 0:
                lo = mid
            else:
                hi = mid
        xm = fly(x, g, hi)
        norm = (xm[0] * xm[0] + xm[1] * xm[1]).sqrt()
        x = bounce(xm, (xm[0] / norm, xm[1] / norm), e)
        t += hi
    raise RuntimeError("too many impacts")


def switched(fields: Sequence[Sequence[float]], x0: Sequence[float], t1: D) -> Vec:
    """The switched field: mode bits for the guards crossed, constant field per mode."""
    f = [[D(str(v)) for v in row] for row in fields]
    x, t, mode = [D(str(v)) for v in x0], D(0), 0
    while True:
        times = [(x[i] / -f[mode][i], i) for i in range(2)
                 if not mode & (1 << i) and f[mode][i] < 0 and x[i] >= 0]
        if not times or t + min(times)[0] >= t1:
            rest = t1 - t
            return [x[k] + f[mode][k] * rest for k in range(2)]
        s = min(times)[0]
        crossed = [i for (ti, i) in times if ti == s]
        x = [x[k] + f[mode][k] * s for k in range(2)]
        t += s
        for i in crossed:  # only an unperturbed start crosses both at once
            mode |= 1 << i


def jacobian(sim: Callable[[Sequence[D]], Vec], x0: Sequence[float], h: D = D("1e-20")) -> List[List[float]]:
    """Central differences of `sim` at 50 digits, column by column."""
    n = len(x0)
    cols = []
    for j in range(n):
        plus = [D(v) + (h if k == j else 0) for k, v in enumerate(x0)]
        minus = [D(v) - (h if k == j else 0) for k, v in enumerate(x0)]
        a, b = sim(plus), sim(minus)
        cols.append([(a[i] - b[i]) / (2 * h) for i in range(n)])
    return [[float(cols[j][i]) for j in range(n)] for i in range(n)]


def one_sided(sim: Callable[[Sequence[D]], Vec], x0: Sequence[float], d: Sequence[float],
              h: D = D("1e-25")) -> List[float]:
    """(sim(x0 + h d) - sim(x0)) / h: the directional derivative along d."""
    base = sim([D(v) for v in x0])
    moved = sim([D(v) + h * D(str(w)) for v, w in zip(x0, d)])
    return [float((m - b) / h) for m, b in zip(moved, base)]
