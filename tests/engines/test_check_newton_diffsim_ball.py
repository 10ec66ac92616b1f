"""The checker on Newton's own differentiable bouncing ball (newton/examples/diffsim/
example_diffsim_ball.py): its ``wp.Tape`` gradient of the loss with respect to the initial
velocity, run on CPU in float32. Never a mock: the installed Newton computes f and the gradient.

A long float32 rollout's rounding error is correlated over the probe scale, so the noise the
1e-6 stencils measure under-states how far the differences wander at the probes, and f(x)'s own
rounding error, shared by every probe, must not read as a kink at x. The right tape gradient
must read ``verified-within-noise``, and the same gradient scaled by 1.05 and 1.01
``not-verified`` (measured 2026-12-02 on this 2-core machine under load: 159, 145 and 179
evaluations, 25 to 31 s each at 0.15 s per rollout).
"""

from __future__ import annotations

from typing import Any, Callable, Tuple

import numpy as np
import pytest

import ferromotion as fm


@pytest.fixture(scope="module")
def ball() -> Tuple[Callable[[np.ndarray], float], np.ndarray, np.ndarray]:
    pytest.importorskip("newton", reason="Newton is installed only in .venv-engines (scripts/engines_env.sh)")
    import warp as wp
    import newton.viewer
    from newton.examples.diffsim.example_diffsim_ball import Example

    wp.set_device("cpu")

    class Args:
        verbose = False

    ex: Any = Example(newton.viewer.ViewerNull(), Args())
    param = ex.states[0].particle_qd
    x0 = param.numpy().flatten().astype(np.float64)

    def f(v: np.ndarray) -> float:
        param.assign(np.asarray(v, dtype=np.float32).reshape(1, 3))
        return float(ex.forward().numpy()[0])

    param.assign(x0.astype(np.float32).reshape(1, 3))
    tape = wp.Tape()
    with tape:
        loss = ex.forward()
    tape.backward(loss)
    g = param.grad.numpy()[0].astype(np.float64).copy()
    tape.zero()
    return f, g, x0


def test_the_tape_gradient_reads_within_noise_and_scaled_copies_do_not(ball: Any) -> None:
    f, g, x0 = ball
    right = fm.check_gradient(f, g, x0, objective="Newton diffsim_ball loss, d/d initial velocity")
    assert right.verdict == "verified-within-noise", right.why
    for factor in (1.05, 1.01):
        wrong = fm.check_gradient(f, factor * g, x0)
        assert wrong.verdict == "not-verified", (factor, wrong.why)
