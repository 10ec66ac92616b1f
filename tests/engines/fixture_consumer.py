"""A consumer of ferromotion's fixture files that does not import ferromotion: numpy and json only.

Usage: python fixture_consumer.py DIR  (DIR as written by `ferromotion fixtures export DIR`).

For each fixture it reads the contact law, parameters, initial state, horizon and suggested
stiffness and step, runs its own engine (the push-only spring-damper on semi-implicit Euler, with
a forward-mode tangent: what an autodiff framework returns), and judges x(T) and J against the
file's exact answer with the file's tolerances and verdict rules. It prints one JSON line per
(fixture, k): {"fixture", "k", "state", "jacobian", "state_error", "gradient_error", "verdict"}.
"""

import json
import math
import sys
from pathlib import Path

import numpy as np


def run(doc, k, dt):
    """x(T) and J of the point against the fixture's plane (n = (-sin a, cos a)), in the
    fixture's own coordinates (the drop's (y, v), the slope's (p_x, p_z, v_x, v_z))."""
    p = doc["parameters"]
    m, g, a = p["mass"], p["gravity"], p["angle"]
    c = 2.0 * p["zeta"] * math.sqrt(k * m)
    nrm = np.array([-math.sin(a), math.cos(a)])
    if doc["name"] == "drop":
        x = np.array([0.0, doc["initial_state"][0], 0.0, doc["initial_state"][1]])
        pick = [1, 3]
    else:
        x = np.array(doc["initial_state"], dtype=float)
        pick = [0, 1, 2, 3]
    t = np.eye(4)  # dx/dx0 for (p_x, p_z, v_x, v_z)
    for _ in range(round(doc["t_final"] / dt)):
        pos, vel = x[:2], x[2:]
        d, vn = nrm @ pos, nrm @ vel
        acc = np.array([0.0, -g])
        da = np.zeros((2, 4))
        f = -k * d - c * vn
        if d < 0.0 and f > 0.0:
            acc = acc + f / m * nrm
            # d f / d x = (-k n, -c n)
            da = np.outer(nrm, np.concatenate([-k * nrm, -c * nrm])) / m
        step = np.eye(4)
        step[2:, :] += dt * da
        step[:2, :] += dt * step[2:, :]
        vel = vel + dt * acc
        pos = pos + dt * vel
        x = np.concatenate([pos, vel])
        t = step @ t
    return x[pick], t[np.ix_(pick, pick)]


def judge(doc, state, jac):
    ex = doc["exact"]
    xs, js = np.array(ex["state"]), np.array(ex["jacobian"])
    se = float(np.max(np.abs(state - xs)) / np.max(np.abs(xs)))
    ge = float(np.max(np.abs(jac - js)) / np.max(np.abs(js)))
    r, c = doc["key_entry"]
    tol = doc["tolerances"]
    if np.sign(jac[r, c]) != np.sign(js[r, c]) or math.isnan(jac[r, c]):
        verdict = "wrong"
    elif ge >= tol["far_off"]:
        verdict = "right_far_off"
    elif ge <= tol["jacobian_rtol"] and se <= tol["state_rtol"]:
        verdict = "conforms"
    else:
        verdict = "right"
    assert verdict in doc["verdicts"]
    return se, ge, verdict


def main(directory):
    for path in sorted(Path(directory).glob("*.json")):
        doc = json.loads(path.read_text())
        if doc.get("schema") != "ferromotion.fixture/1":
            continue  # the JSON Schema itself
        for k in (1e4, 1e6):
            state, jac = run(doc, k, doc["suggested"]["dt"][0])
            se, ge, verdict = judge(doc, state, jac)
            print(json.dumps({"fixture": doc["name"], "k": k, "state": state.tolist(), "jacobian": jac.tolist(),
                              "state_error": se, "gradient_error": ge, "verdict": verdict}))


if __name__ == "__main__":
    main(sys.argv[1])
