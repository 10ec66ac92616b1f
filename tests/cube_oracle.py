"""An independent oracle for the tumbling cube: an event-driven simulation written apart from
the core (unit quaternions instead of rotation matrices, mpmath at 50 digits) and its Jacobian by
central differences with tangent perturbations (R' = Exp(δ)·R at both ends).

The event sequence (which corner strikes, roughly when) is found once by a float64 scan of the
nominal run; every perturbed run then re-locates those strikes by Newton's method at 50 digits,
so a perturbation of 1e-20 moves each strike time as the flow does, to ~30 digits.
"""

from __future__ import annotations

import math
from typing import List, Sequence, Tuple

import mpmath as mp

mp.mp.dps = 50

Quat = Tuple  # (w, x, y, z)


def qmul(a: Quat, b: Quat) -> Quat:
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw)


def qexp(v: Sequence) -> Quat:
    """The unit quaternion of the rotation vector v."""
    th = mp.sqrt(sum(x * x for x in v))
    if th == 0:
        return (mp.mpf(1), mp.mpf(0), mp.mpf(0), mp.mpf(0))
    s = mp.sin(th / 2) / th
    return (mp.cos(th / 2), v[0] * s, v[1] * s, v[2] * s)


def qlog(q: Quat) -> List:
    """The rotation vector of the unit quaternion q (angle in [0, π])."""
    w, x, y, z = q
    if w < 0:
        w, x, y, z = -w, -x, -y, -z
    n = mp.sqrt(x * x + y * y + z * z)
    if n == 0:
        return [mp.mpf(0)] * 3
    th = 2 * mp.atan2(n, w)
    return [x * th / n, y * th / n, z * th / n]


def rotate(q: Quat, r: Sequence) -> List:
    p = qmul(qmul(q, (0, r[0], r[1], r[2])), (q[0], -q[1], -q[2], -q[3]))
    return [p[1], p[2], p[3]]


def cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


class Cube:
    def __init__(self, half_side, mass, restitution, gravity):
        self.a = mp.mpf(half_side)
        self.m = mp.mpf(mass)
        self.e = mp.mpf(restitution)
        self.g = mp.mpf(gravity)
        self.inertia = mp.mpf(2) / 3 * self.m * self.a ** 2

    def corner(self, k):
        return [self.a if (k >> b) & 1 else -self.a for b in range(3)]

    def fly(self, s, t):
        c, q, v, w = s
        return ([c[0] + v[0] * t, c[1] + v[1] * t, c[2] + v[2] * t - self.g * t * t / 2],
                qmul(qexp([x * t for x in w]), q),
                [v[0], v[1], v[2] - self.g * t], list(w))

    def height(self, s, k, t):
        f = self.fly(s, t)
        r = rotate(f[1], self.corner(k))
        return f[0][2] + r[2], f[2][2] + cross(f[3], r)[2]

    def strike(self, s, k):
        c, q, v, w = s
        r = rotate(q, self.corner(k))
        rho = cross(r, [0, 0, 1])
        u = v[2] + sum(wi * ri for wi, ri in zip(w, rho))
        lam = -(1 + self.e) * u / (1 / self.m + sum(x * x for x in rho) / self.inertia)
        return (c, q, [v[0], v[1], v[2] + lam / self.m],
                [wi + lam * ri / self.inertia for wi, ri in zip(w, rho)])


def _state(x0):
    x = [mp.mpf(v) for v in x0]
    return (x[0:3], qexp(x[3:6]), x[6:9], x[9:12])


def _floats(s):
    c, q, v, w = s
    return ([float(x) for x in c], [float(x) for x in q], [float(x) for x in v], [float(x) for x in w])


def _fheight(cube, sf, k, t):
    """A corner's height in float64 (the scan only; the strikes are then located at 50 digits)."""
    c, q, v, w = sf
    th = math.sqrt(sum(x * x for x in w)) * t
    if th == 0:
        dq = (1.0, 0.0, 0.0, 0.0)
    else:
        sn = math.sin(th / 2) / th * t
        dq = (math.cos(th / 2), w[0] * sn, w[1] * sn, w[2] * sn)
    qq = qmul(dq, q)
    a = float(cube.a)
    r = rotate(qq, [a if (k >> b) & 1 else -a for b in range(3)])
    return c[2] + v[2] * t - float(cube.g) * t * t / 2 + r[2]


def strikes(cube: Cube, x0, t_final) -> List[Tuple[float, int]]:
    """(time, corner) of each strike on the nominal run: a float64-grade scan (fine grid, the
    crossing refined by bisection), then used as starting guesses."""
    s, t, out = _state(x0), mp.mpf(0), []
    t_final = mp.mpf(t_final)
    while True:
        best = None
        n = 4000
        sf = _floats(s)
        for k in range(8):
            prev = 0.0
            hp = _fheight(cube, sf, k, 0.0)
            for i in range(1, n + 1):
                tt = float(t_final - t) * i / n
                h = _fheight(cube, sf, k, tt)
                if hp > 1e-12 and h <= 0:
                    lo, hi = prev, tt
                    for _ in range(60):
                        mid = (lo + hi) / 2
                        if _fheight(cube, sf, k, mid) <= 0:
                            hi = mid
                        else:
                            lo = mid
                    if best is None or hi < best[0]:
                        best = (hi, k)
                    break
                prev, hp = tt, h
        if best is None:
            return out
        dt, k = best
        dt = _newton(cube, s, k, mp.mpf(dt))
        s = cube.strike(cube.fly(s, dt), k)
        t += dt
        out.append((float(t), k))


def _newton(cube, s, k, dt):
    for _ in range(60):
        h, dh = cube.height(s, k, dt)
        step = h / dh
        dt -= step
        if abs(step) < mp.mpf(10) ** (-45):
            break
    return dt


def run(cube: Cube, x0, t_final, sequence, perturb=None):
    """x(T) as (c, q, v, w) at 50 digits along the strike `sequence`; `perturb` = 12 tangent
    numbers added to the start (orientation left-multiplied)."""
    s = _state(x0)
    if perturb is not None:
        d = [mp.mpf(p) for p in perturb]
        s = ([a + b for a, b in zip(s[0], d[0:3])], qmul(qexp(d[3:6]), s[1]),
             [a + b for a, b in zip(s[2], d[6:9])], [a + b for a, b in zip(s[3], d[9:12])])
    t = mp.mpf(0)
    for t_guess, k in sequence:
        dt = _newton(cube, s, k, mp.mpf(t_guess) - t)
        s = cube.strike(cube.fly(s, dt), k)
        t += dt
    return cube.fly(s, mp.mpf(t_final) - t)


def jacobian(cube: Cube, x0, t_final, h=mp.mpf(10) ** -20):
    """(x(T) as 12 floats (c, θ, v, ω), J 12×12 in tangent coordinates, the strikes)."""
    seq = strikes(cube, x0, t_final)
    base = run(cube, x0, t_final, seq)
    qinv = (base[1][0], -base[1][1], -base[1][2], -base[1][3])

    def tangent(s):
        dq = qlog(qmul(s[1], qinv))
        return s[0] + dq + s[2] + s[3]

    cols = []
    for j in range(12):
        e = [0] * 12
        e[j] = h
        plus = tangent(run(cube, x0, t_final, seq, e))
        e[j] = -h
        minus = tangent(run(cube, x0, t_final, seq, e))
        cols.append([(p - m) / (2 * h) for p, m in zip(plus, minus)])
    jac = [[float(cols[j][i]) for j in range(12)] for i in range(12)]
    state = [float(v) for v in base[0] + qlog(base[1]) + base[2] + base[3]]
    return state, jac, seq


if __name__ == "__main__":  # pragma: no cover - a manual look
    cube = Cube(0.1, 1.0, 0.5, 9.81)
    x0 = [0, 0, 0.5, 0.5, 0.3, 0.2, 0.2, 0, 0, 2, 1, -1]
    st, jac, seq = jacobian(cube, x0, 0.45)
    print(seq)
    print(st)
    for row in jac:
        print(" ".join(f"{v:10.5f}" for v in row))
