#!/usr/bin/env python3
"""Writes the data-file fixtures of DataFilesTest.cpp with NumPy (the
reference for the formats): .npz archives as np.savez and
np.savez_compressed write them, a plain int16 IDX file, and reference
values of Debian's Fashion-MNIST test set read with Python's gzip.

Usage: make_data_files.py OUTDIR  (run with /usr/bin/python3)
"""

import gzip
import os
import sys

import numpy as np

FASHION = "/usr/share/datasets/fashion-mnist"


def main():
    out = sys.argv[1]
    arrays = {"weights": np.arange(12, dtype=np.float32).reshape(3, 4) / 8,
              "labels": np.array([1, -2, 3], dtype=np.int64)}
    np.savez(os.path.join(out, "arrays.npz"), **arrays)
    np.savez_compressed(os.path.join(out, "arrays_compressed.npz"), **arrays)
    values = np.array([[-1, 2, -300], [4, 5, 32767]], dtype=">i2")
    with open(os.path.join(out, "int16.idx"), "wb") as f:
        f.write(bytes([0, 0, 0x0B, 2]))
        f.write(np.array(values.shape, dtype=">u4").tobytes())
        f.write(values.tobytes())
    with gzip.open(os.path.join(FASHION, "t10k-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    with gzip.open(os.path.join(FASHION, "t10k-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 784)
    np.savez(os.path.join(out, "fashion_reference.npz"),
             first_labels=labels[:16].astype(np.int64),
             label_sum=np.array(int(labels.astype(np.int64).sum())),
             pixel_sums=images.astype(np.int64).sum(axis=1)[[0, 1, 9999]])


if __name__ == "__main__":
    main()
