#!/usr/bin/env python3
"""Checks training-mode Dropout on the CPU by its defining properties.

Usage: dropout_check.py --gs-run PATH --work DIR

ONNX leaves the random draw to the implementation, so no reference output
exists; instead, for ratio r: every output is 0 (dropped, mask false) or
x / (1 - r) (kept, mask true); the kept fraction is 1 - r within five
standard deviations; the mask does not depend on x; and another seed gives
another mask, agreeing on about r^2 + (1 - r)^2 of the elements.
"""

import argparse
import os
import subprocess
import sys

import numpy as np

SHAPE = (256, 1000)
RATIO = 0.3


def model(seed):
    return ("<ir_version: 8, opset_import: [\"\" : 17]>\n"
            "dropout (float[%d,%d] x) => (float[%d,%d] y, bool[%d,%d] mask) {\n"
            "  r = Constant<value = float {%g}>()\n"
            "  t = Constant<value = bool {1}>()\n"
            "  y, mask = Dropout<seed = %d>(x, r, t)\n}\n" %
            (SHAPE * 3 + (RATIO, seed)))


def run(args, name, seed, x):
    path = os.path.join(args.work, name)
    os.makedirs(path, exist_ok=True)
    with open(path + "/model.onnxtext", "w") as f:
        f.write(model(seed))
    np.save(path + "/x.npy", x)
    subprocess.run([args.gs_run, path + "/model.onnxtext", "-i", path + "/x.npy",
                    "--output-dir=" + path], check=True)
    return np.load(path + "/output_0.npy"), np.load(path + "/output_1.npy")


def check(title, condition):
    print("%s: %s" % (title, "yes" if condition else "NO"))
    return bool(condition)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gs-run", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    x = rng.standard_normal(SHAPE).astype(np.float32)
    y, mask = run(args, "seed1", 1, x)
    ok = check("mask is boolean", mask.dtype == np.bool_)
    kept = x / np.float32(1 - RATIO)
    ok &= check("kept elements are x / (1 - ratio)",
                np.allclose(y[mask], kept[mask], rtol=1e-6, atol=0))
    ok &= check("dropped elements are 0", (y[~mask] == 0).all())
    n = mask.size
    sigma = np.sqrt(n * RATIO * (1 - RATIO))
    kept_count = int(mask.sum())
    ok &= check("kept fraction %.4f is 1 - ratio within 5 sigma" %
                (kept_count / n), abs(kept_count - n * (1 - RATIO)) < 5 * sigma)

    _, same_seed = run(args, "seed1-other-x", 1, rng.standard_normal(SHAPE)
                       .astype(np.float32))
    ok &= check("the mask does not depend on x", (same_seed == mask).all())
    _, other_seed = run(args, "seed2", 2, x)
    agreement = float((other_seed == mask).mean())
    expected = RATIO**2 + (1 - RATIO)**2
    ok &= check("another seed's mask agrees on %.4f (independent: %.2f)" %
                (agreement, expected), abs(agreement - expected) < 0.01)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
