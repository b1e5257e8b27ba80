"""Checks gs.unscale (x / alpha) bit for bit against NumPy's float32
division, for scales that are powers of two and scales that are not.

Usage: unscale_check.py --gs-run PATH --model unscale.mlir --work DIR
                         [--entry unscale_power_of_two --powers-of-two]
"""

import argparse
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from fp16_semantics import same_bits  # noqa: E402

N = 4096


def gradients():
    """Random magnitudes over float32's whole range, both signs, and the
    edge values: zeros, subnormals, the largest finite, infinities, NaN."""
    rng = np.random.default_rng(7)
    edges = np.array([0.0, -0.0, 1e-45, -1e-45, 1.1754942e-38, 1e-40,
                      3.4028235e38, -3.4028235e38, np.inf, -np.inf, np.nan,
                      1.0, -1.0, 65504.0, 6e-8], np.float32)
    bits = rng.integers(0, 2**32, N - len(edges), dtype=np.uint64)
    random = bits.astype(np.uint32).view(np.float32)
    return np.concatenate([edges, random]).astype(np.float32)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gs-run", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--entry", default="unscale")
    parser.add_argument("--powers-of-two", action="store_true",
                        help="only the scales that are powers of two (no "
                        "smaller than 2^-126), as gs.unscale's "
                        "power_of_two promises")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    x = gradients()
    x_path = os.path.join(args.work, "x.npy")
    np.save(x_path, x)
    scales = [2.0**-20, 2.0**10, 2.0**127, 2.0**-126, -0.5, 1.0]
    if not args.powers_of_two:
        scales += [3.0, 1000.0, 1.5 * 2.0**-130, 2.0**-149]
    for alpha in scales:
        alpha = np.float32(alpha)
        a_path = os.path.join(args.work, "alpha.npy")
        np.save(a_path, np.array(alpha, np.float32))
        out = os.path.join(args.work, "out")
        subprocess.run([args.gs_run, args.model, "--entry=" + args.entry,
                        "-i", x_path, "-i", a_path, "--format=npy",
                        "--output-dir=" + out], check=True)
        ours = np.load(os.path.join(out, "output_0.npy"))
        with np.errstate(all="ignore"):
            ref = x / alpha
        same = same_bits(ours, ref)
        status = "bit-exact" if same.all() else \
            f"MISMATCH at {int((~same).sum())} values"
        print(f"x / {float(alpha):.6g}: {N} values, {status}")


if __name__ == "__main__":
    main()
