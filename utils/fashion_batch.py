#!/usr/bin/env python3
"""Writes one batch of Fashion-MNIST as NumPy files for gs-run: the first N
training images as float32 N x 1 x 28 x 28 in [0, 1] and their labels as
int64, from Debian's dataset-fashion-mnist.

Usage: fashion_batch.py [-n N] [--images x.npy] [--labels t.npy]
"""

import argparse
import gzip
import os
import sys

import numpy as np

DATA = "/usr/share/datasets/fashion-mnist"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=16, help="batch size")
    parser.add_argument("--images", default="x.npy")
    parser.add_argument("--labels", default="t.npy")
    parser.add_argument("--data", default=DATA,
                        help="directory of the IDX files (default %(default)s)")
    args = parser.parse_args()
    if not 1 <= args.n <= 60000:
        sys.exit("fashion_batch.py: error: -n must be in [1, 60000]")
    try:
        with gzip.open(os.path.join(args.data,
                                    "train-images-idx3-ubyte.gz")) as f:
            images = np.frombuffer(f.read(16 + args.n * 784), np.uint8,
                                   offset=16)
        with gzip.open(os.path.join(args.data,
                                    "train-labels-idx1-ubyte.gz")) as f:
            labels = np.frombuffer(f.read(8 + args.n), np.uint8, offset=8)
    except OSError as e:
        sys.exit("fashion_batch.py: error: %s (install dataset-fashion-mnist)"
                 % e)
    np.save(args.images,
            images.reshape(args.n, 1, 28, 28).astype(np.float32) / 255)
    np.save(args.labels, labels.astype(np.int64))
    print("wrote %s and %s: %d Fashion-MNIST training examples" %
          (args.images, args.labels, args.n))


if __name__ == "__main__":
    main()
