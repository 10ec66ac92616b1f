"""``ferromotion quadruped``: the quadruped's two-axis table."""

from __future__ import annotations

import argparse
from typing import Any

import ferromotion as fm

from ._args import DEFAULTS, _positive_float


def add_parser(sub: Any) -> None:
    """Register ``ferromotion quadruped``."""
    quad = sub.add_parser(
        "quadruped",
        help="the quadruped's two-axis table: rigid against penalty contact over stiffness",
        description=(
            "A planar quadruped (floating trunk, four hip-knee legs, point feet with Coulomb friction) trots "
            "for one gait period under two contact laws that share everything but the contact impulse: the "
            "velocity-level LCP (rigid, Lemke) and a one-sided spring-damper (penalty) at each stiffness. "
            "Prints, per law, forward fidelity (penetration, creep of sticking feet, contact work, energy "
            "change, distance to its own dt/100 run, distance to the rigid run for information) and gradient "
            "accuracy (the one-period tangent against probe-stable central differences), then the "
            "contact-mode changes."
        ),
    )
    quad.add_argument("--stiffness", type=_positive_float, nargs="+", default=DEFAULTS["quadruped"]["stiffness"], metavar="N/m",
                      help="penalty stiffnesses per foot (default: %(default)s)")
    quad.add_argument("--dt", type=_positive_float, default=DEFAULTS["quadruped"]["dt"], metavar="S",
                      help="fixed step in s (default: %(default)g)")
    quad.add_argument("--converged", action="store_true",
                      help="also measure the gradients against the dt/100 scheme (about a minute)")
    quad.add_argument("--json", action="store_true", help="print the report (without trajectories) as JSON")
    quad.set_defaults(func=_quadruped)


def _quadruped(args: argparse.Namespace) -> int:
    q = fm.quadruped(stiffness=args.stiffness, dt=args.dt, converged_gradient=args.converged)
    if args.json:
        print(q.to_json(indent=2))
        return 0
    c, robot = q.config, q.config["robot"]
    print(
        f"ferromotion quadruped: {robot['friction']:g} friction, trot period {robot['period']:g} s, one period at "
        f"dt = {c['dt']:g} s, converged runs at dt/{c['refinement']}; penalty damping ratio {c['damping_ratio']:g} "
        f"of {c['reference_mass']:g} kg; a landing from {c['clearance']:g} m at {c['speed']:g} m/s.",
        "forward fidelity: pen = largest penetration, creep = largest slip of a sticking foot, Wc = contact work, "
        "dE = energy change, conv = largest trunk distance to the same law at dt/refinement, d_rigid = distance to "
        "the rigid run (information only), modes = contact-mode changes.",
        "gradient accuracy (one-period Jacobian of the trunk's final state in z0, xdot0, kp): tan err = tangent "
        "against probe-stable central differences, 1e-4 err = differences at a 1e-4 probe against the same, conv "
        "err = against the law converged in dt (--converged: central differences at dt/refinement, of an "
        "event-located run for the penalty law, so they carry the force's jump at touchdown), spread = that "
        "reference against dt/(2 refinement), loc err = the event-located run's own tangent against it, ref err = "
        "the fixed-step tangent at dt/refinement against it, cert / ccert = probe-stable reference columns at dt / "
        "converged; a reference that is not certified says why below the table.",
        "",
        q.format_table(),
        "",
        "contact-mode changes per period (touchdown + lift-off + stick->slide + slide->stick + reversal):",
        sep="\n",
    )
    for law in q.laws:
        if law.modes is None:
            print(f"  {law.label:<16} failed: {law.failure}")
            continue
        m = law.modes
        print(f"  {law.label:<16} {m['total']:>5} = {m['touchdowns']} + {m['liftoffs']} + {m['stick_to_slide']} + "
              f"{m['slide_to_stick']} + {m['slide_reversals']}   per foot {m['per_foot']}")
    v = q.verdict
    if v["incomparable"] is not None:
        print(f"verdict: nothing to compare ({v['incomparable']})")
        return 0
    print(f"verdict (the core's): forward fidelity, the rigid law {'wins' if v['forward']['rigid_wins'] else 'does not win'};",
          "gradient accuracy, " + ", ".join(f"{m['key']} {m['outcome']}" for m in v["gradient"]) + ";",
          f"both axes at once: {'yes' if v['both'] else 'no'}.")
    return 0

