"""The 2-D contact fixtures (V-groove, cylinder) as geometry every engine adapter can build.

The fixtures' state is a point (p_x, p_y, v_x, v_y) with gravity along -y (``fm.systems.VGroove``,
``fm.systems.Cylinder``). In an engine the point is the centre of a ball of radius ``RADIUS`` in the
world's x-z plane (y -> z), and each surface is moved back by the ball's radius so that the
centre's free space is exactly the fixture's:

* V-groove of opening angle a: y >= |x| cot(a/2) is the intersection of two half-planes, n_i . p >= 0
  with unit normals n = (-+cos(a/2), sin(a/2)); each wall is an infinite plane through -RADIUS*n
  (exact: the intersection of the two half-spaces is the groove, no edge is ever involved).
* Cylinder of radius R (free space |p| >= R, the axis along the world's y): a capsule of radius
  R - RADIUS around that axis (a capsule's side is a cylinder; its caps are never reached), or a
  cylinder where the engine collides spheres with cylinders.

Contact law: the rigid fixture's restitution e is mapped onto the engine's soft contact through the
push-only spring-damper's stiff limit, zeta such that ``fm.limit_restitution`` gives e (the core's
formula, inverted by bisection here), at mass ``MASS``; each engine maps (k, zeta) as it does for
the drop (see its module). Every quantity here is geometry or conversion; the verdicts are the core's.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Dict, List, Tuple

import numpy as np

#: The ball's radius (m) and mass (kg) in every engine: the fixtures' point mass has neither.
RADIUS = 0.1
MASS = 1.0

#: The fixtures these adapters can express, by system kind.
KINDS = ("v_groove", "cylinder")


@functools.lru_cache(maxsize=32)
def zeta_for(restitution: float) -> float:
    """The damping ratio whose push-only spring-damper has stiff-limit restitution ``restitution``
    (``fm.limit_restitution`` inverted by bisection; it falls from 1 at zeta = 0)."""
    from .. import Drop, limit_restitution

    if not 0.0 < restitution <= 1.0:
        raise ValueError(f"restitution = {restitution}: a push-only spring-damper maps e in (0, 1]")
    if restitution == 1.0:
        return 0.0
    lo, hi = 0.0, 0.999
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if limit_restitution(Drop(zeta=mid)) > restitution:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def system(doc: Dict[str, Any]) -> Tuple[str, Dict[str, float]]:
    """(kind, scalar parameters) of a v2 fixture document."""
    sys = doc.get("system") or {}
    return str(sys.get("kind")), {k: float(v[0]) for k, v in sys.get("parameters", {}).items()}


def walls(doc: Dict[str, Any]) -> List[Tuple[float, float]]:
    """The V-groove's two unit normals (x, y) pointing into the free space."""
    _, p = system(doc)
    half = 0.5 * p["angle"]
    return [(-math.cos(half), math.sin(half)), (math.cos(half), math.sin(half))]


def law(doc: Dict[str, Any]) -> Dict[str, float]:
    """gravity (m/s^2), mass (kg), restitution and its zeta for the fixture's contact."""
    _, p = system(doc)
    e = p["restitution"]
    return {"gravity": p.get("gravity", 9.81), "mass": MASS, "restitution": e, "zeta": zeta_for(e)}


def kind(doc: Dict[str, Any]) -> str:
    """The fixture's system kind, refused when no planar adapter expresses it."""
    k, _ = system(doc)
    if k not in KINDS:
        raise ValueError(f"fixture {doc.get('name')!r} ({k}): the planar adapters express {', '.join(KINDS)}")
    return k


def steps(doc: Dict[str, Any], dt: float) -> int:
    """The number of steps of dt in the fixture's horizon (dt must divide it)."""
    t = float(doc["t_final"])
    n = round(t / dt)
    if n < 1 or abs(n * dt - t) > 1e-9 * t:
        raise ValueError(f"dt = {dt:g} s must divide T = {t:g} s")
    return n


def first_speed(doc: Dict[str, Any]) -> float:
    """The speed at the first touch (m/s) of a drop from rest (energy: sqrt(v0^2 + 2 g h)), h the
    fall to the surface along y: for the Hunt-Crossley mapping of engines that damp with depth."""
    k, p = system(doc)
    x = np.asarray(doc["initial_state"], dtype=float)
    g = p.get("gravity", 9.81)
    if k == "v_groove":
        surface = abs(x[0]) / math.tan(0.5 * p["angle"])
    else:
        surface = math.sqrt(max(p["radius"] ** 2 - x[0] ** 2, 0.0))
    return math.sqrt(x[2] ** 2 + x[3] ** 2 + 2.0 * g * max(x[1] - surface, 0.0))


_MJCF = """
<mujoco model="ferromotion {name}">
  <option timestep="{dt!r}" integrator="Euler" gravity="0 0 {minus_g!r}"/>
  <default><geom condim="1" solref="{solref}" solimp="{solimp}"/></default>
  <worldbody>
{surfaces}
    <body name="ball">
      <joint name="x" type="slide" axis="1 0 0"/>
      <joint name="z" type="slide" axis="0 0 1"/>
      <geom name="ball" type="sphere" size="{radius!r}" mass="{mass!r}"/>
    </body>
  </worldbody>
</mujoco>
"""


def mjcf(doc: Dict[str, Any], dt: float, solref: Tuple[float, float], solimp: Tuple[float, ...]) -> str:
    """The fixture's MJCF (MuJoCo and MJX): the ball on two slide joints (x, z) at its centre, the
    groove's walls as two planes or the cylinder as a capsule along y (MJX collides spheres with
    capsules, not with cylinders)."""
    k = kind(doc)
    if k == "v_groove":
        surfaces = "\n".join(
            f'    <geom name="wall{i}" type="plane" size="20 20 0.1" pos="{-RADIUS * nx!r} 0 {-RADIUS * ny!r}" '
            f'zaxis="{nx!r} 0 {ny!r}"/>' for i, (nx, ny) in enumerate(walls(doc)))
    else:
        radius = system(doc)[1]["radius"] - RADIUS
        surfaces = f'    <geom name="cylinder" type="capsule" size="{radius!r} 5" zaxis="0 1 0"/>'
    lw = law(doc)
    return _MJCF.format(name=doc["name"], dt=float(dt), minus_g=-lw["gravity"], surfaces=surfaces, radius=RADIUS,
                        mass=MASS, solref=" ".join(repr(float(v)) for v in solref),
                        solimp=" ".join(repr(float(v)) for v in solimp))
