"""The gradients the scale-decision checks run on, in plain Python (the
GPU check's preparation has no NumPy).

cases() yields (name, arrays): per case the data gradient `dy` (64 x 10,
FP16 values), its weight `w` (10 x 128, FP16) and an FP32 gradient `g`
(64 x 10), as nested lists of floats, and the incoming scale `alpha`.
Together they reach every branch of a decision: typical magnitudes, so
small that the maximum scale binds, so large that the overflow cap binds,
all zeros, a zero gradient through a nonzero weight, inf and NaN entries,
and an incoming scale large enough for the cumulative bound to bind.
"""

import math
import random

SHAPES = {"dy": (64, 10), "w": (10, 128), "g": (64, 10)}
DTYPES = {"dy": "f16", "w": "f16", "g": "f32", "alpha": "f32"}


def cases():
    rng = random.Random(2026)

    def normal(name, sigma):
        rows, cols = SHAPES[name]
        return [[rng.gauss(0.0, sigma) for _ in range(cols)]
                for _ in range(rows)]

    def lognormal(mu, s):
        rows, cols = SHAPES["g"]
        return [[math.exp(rng.gauss(mu, s)) * rng.choice((-1.0, 1.0))
                 for _ in range(cols)] for _ in range(rows)]

    def zeros(name):
        rows, cols = SHAPES[name]
        return [[0.0] * cols for _ in range(rows)]

    def case(dy, w, g, alpha=1.0):
        return {"dy": dy, "w": w, "g": g, "alpha": alpha}

    yield "typical", case(normal("dy", 1e-4), normal("w", 0.05),
                          lognormal(-12, 3))
    yield "tiny", case(normal("dy", 1e-6), normal("w", 0.01),
                       lognormal(-30, 1))
    yield "huge", case(normal("dy", 1e3), normal("w", 1.0), lognormal(10, 1))
    yield "zeros", case(zeros("dy"), zeros("w"), zeros("g"))
    # A zero gradient through a nonzero weight: nothing to underflow (the
    # half-normal model must read the gradient's nonzeros, not the
    # weight's).
    yield "zero_gradient", case(zeros("dy"), normal("w", 0.05),
                                lognormal(-12, 3))
    g = lognormal(-12, 3)
    g[3][4], g[5][6] = math.inf, math.nan
    dy = normal("dy", 1e-4)
    dy[0][0] = math.inf
    yield "nonfinite", case(dy, normal("w", 0.05), g)
    yield "accum", case(normal("dy", 1e-4), normal("w", 0.05),
                        lognormal(-20, 1), alpha=2.0**18)
