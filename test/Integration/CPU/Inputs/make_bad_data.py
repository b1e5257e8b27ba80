#!/usr/bin/env python3
"""Writes good and bad data files for the training executables' error tests.

Usage: make_bad_data.py OUTDIR FASHION_LABELS_GZ

For the 8-feature, 3-class example model (examples/mlp.onnxtext): good
inputs and labels, and one file per problem the trainer must name.
"""

import os
import sys

import numpy as np


def main():
    out, fashion_labels = sys.argv[1:3]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 8)).astype(np.float32)
    labels = rng.integers(0, 3, 64).astype(np.int64)

    def save(name, array):
        np.save(os.path.join(out, name), array)

    save("x.npy", x)
    save("labels.npy", labels)
    np.savez(os.path.join(out, "data.npz"), x=x, labels=labels)
    # As --normalize=standard --mean=0.5 --std=2 computes it.
    save("standardized_x.npy",
         ((x.astype(np.float64) - 0.5) / 2).astype(np.float32))
    save("wide_x.npy", rng.standard_normal((64, 7)).astype(np.float32))
    save("float_labels.npy", labels.astype(np.float32))
    save("short_labels.npy", labels[:63])
    out_of_range = labels.copy()
    out_of_range[5] = 3
    save("range_labels.npy", out_of_range)
    negative = labels.copy()
    negative[9] = -1
    save("negative_labels.npy", negative)
    nan_x = x.copy()
    nan_x[10, 2] = np.nan
    save("nan_x.npy", nan_x)
    inf_x = x.copy()
    inf_x[40, 7] = np.inf
    save("inf_x.npy", inf_x)
    with open(os.path.join(out, "x.npy"), "rb") as f:
        whole = f.read()
    with open(os.path.join(out, "truncated_x.npy"), "wb") as f:
        f.write(whole[:len(whole) // 2])
    with open(os.path.join(out, "garbage.bin"), "wb") as f:
        f.write(b"this is not a data file\n" * 4)
    # A checkpoint whose step contradicts its loss history.
    np.savez(os.path.join(out, "corrupt_checkpoint.npz"),
             **{"gs.trainer.step": np.array(-5), "gs.trainer.loss":
                np.zeros(0)})
    with open(fashion_labels, "rb") as f:
        gz = f.read()
    with open(os.path.join(out, "truncated-labels-idx1-ubyte.gz"), "wb") as f:
        f.write(gz[:len(gz) // 2])


if __name__ == "__main__":
    main()
