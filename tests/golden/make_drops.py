"""Write tests/golden/drops.json: the inputs of the golden parity test (native vs WebAssembly).

    python tests/golden/make_drops.py          # rewrites drops.json; deterministic (fixed seed)

The file is a JSON array in the core's `Scenario` format, one scenario per line:
  - 5 named drops first: the spec's default drop at k = 1e2, 1e4, 1e6, 1e8 N/m with
    dt = 1e-4 s, then k = 1e6 N/m with dt = 1e-5 s;
  - then N_RANDOM seeded random drops: height 0.2..3 m, velocity -2..2 m/s, zeta 0..0.5,
    k log-uniform on 1e2..1e8 N/m, dt one of 1e-4, 2e-4, 5e-5 s, and t_final a multiple of
    1 ms (so every dt divides it) placed after the first impact and before the second.

Every random number is rounded to 6 significant digits. That keeps each one exactly
representable by a short decimal, which every JSON reader (serde_json's fast path,
JavaScript, Python) parses to the same f64, however the text is re-spelled on the way
(JSON.stringify writes 1e-5 as 0.00001). Standard library only.
"""

import json
import math
import random
from pathlib import Path

SEED = 20250601
N_RANDOM = 1000
GRAVITY = 9.81
DEFAULT_DROP = {"height": 1.0, "velocity": 0.0, "t_final": 0.8, "gravity": 9.81, "mass": 1.0, "zeta": 0.1606}
# Smallest stiff-limit restitution for zeta <= 0.5 (the core's limit_restitution(0.5) = 0.2985):
# the rebound flight lasts at least 2 * E_MIN * speed / g, so t_final below that bound is
# reached before the second rigid impact whatever zeta is drawn.
E_MIN = 0.298


def sig6(x: float) -> float:
    return float(f"{x:.6g}")


def random_drop(rng: random.Random) -> dict:
    height = sig6(rng.uniform(0.2, 3.0))
    velocity = sig6(rng.uniform(-2.0, 2.0))
    zeta = sig6(rng.uniform(0.0, 0.5))
    k = sig6(10.0 ** rng.uniform(2.0, 8.0))
    dt = rng.choice([1e-4, 2e-4, 5e-5])
    speed = math.sqrt(velocity**2 + 2.0 * GRAVITY * height)
    t_impact = (velocity + speed) / GRAVITY
    rebound = 2.0 * E_MIN * speed / GRAVITY
    t_final = math.ceil((t_impact + rng.uniform(0.05, 0.95) * rebound) * 1000.0) / 1000.0
    assert t_impact < t_final < t_impact + rebound
    drop = {"height": height, "velocity": velocity, "t_final": t_final, "gravity": GRAVITY, "mass": 1.0, "zeta": zeta}
    return {"drop": drop, "k": k, "dt": dt}


def main() -> None:
    named = [{"drop": DEFAULT_DROP, "k": k, "dt": 1e-4} for k in (1e2, 1e4, 1e6, 1e8)]
    named.append({"drop": DEFAULT_DROP, "k": 1e6, "dt": 1e-5})
    rng = random.Random(SEED)
    drops = named + [random_drop(rng) for _ in range(N_RANDOM)]
    out = Path(__file__).with_name("drops.json")
    out.write_text("[\n" + ",\n".join(json.dumps(d) for d in drops) + "\n]\n")
    print(f"wrote {out} ({len(drops)} drops)")


if __name__ == "__main__":
    main()
