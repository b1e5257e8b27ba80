#!/usr/bin/env python3
"""Trains PyTorch's MLP for a few SGD-momentum steps and GradScale's train
step on the same data; compares the per-step losses.

Usage: torch_trajectory.py --gs-run PATH --work DIR [--steps 5]

Run with Debian's Python (torch 1.13). The model is the MLP of
test/ImportONNX/Inputs/export_torch_models.py (Flatten, Linear 784-128,
ReLU, Linear 128-10) with CrossEntropyLoss, exported in training mode; the
batch is the first 16 Fashion-MNIST training images scaled to [0, 1]. Torch
runs deterministically on one thread with SGD(lr=0.01, momentum=0.9), which
is ONNX's Momentum with beta = 1, the importer's default for exports. Both
train on the same batch each step. Prints each step's losses and relative
difference; exits 1 when one exceeds --rtol.
"""

import argparse
import gzip
import os
import re
import subprocess
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "ImportONNX", "Inputs"))
import export_torch_models  # noqa: E402

FASHION = "/usr/share/datasets/fashion-mnist"


def fashion_batch(n):
    with gzip.open(os.path.join(FASHION, "train-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16)
    with gzip.open(os.path.join(FASHION, "train-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    x = images[:n * 784].reshape(n, 1, 28, 28).astype(np.float32) / 255
    return x, labels[:n].astype(np.int64)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gs-run", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--rtol", type=float, default=1e-5)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)

    # The exported model and the one torch trains start from the same
    # weights: export_torch_models seeds before building.
    export_torch_models.export("mlp", export_torch_models.mlp, args.work)
    torch.manual_seed(0)
    model, _ = export_torch_models.mlp()
    wrapped = export_torch_models.WithLoss(model).train()

    x, t = fashion_batch(16)
    np.save(os.path.join(args.work, "x.npy"), x)
    np.save(os.path.join(args.work, "t.npy"), t)
    optimizer = torch.optim.SGD(wrapped.parameters(), lr=0.01, momentum=0.9)
    reference = []
    for _ in range(args.steps):
        optimizer.zero_grad()
        loss = wrapped(torch.from_numpy(x), torch.from_numpy(t))
        loss.backward()
        optimizer.step()
        reference.append(loss.item())

    out = subprocess.run(
        [args.gs_run, os.path.join(args.work, "mlp.onnx"),
         "--onnx-shape=x=16x1x28x28", "--entry=train_step",
         "-i", os.path.join(args.work, "x.npy"),
         "-i", os.path.join(args.work, "t.npy"),
         "--steps=%d" % args.steps, "--print"],
        check=True, capture_output=True, text=True).stdout
    ours = [float(v) for v in re.findall(r"loss float32\[\] = (\S+)", out)]
    if len(ours) != args.steps:
        sys.exit("unexpected gs-run output:\n" + out)
    ok = True
    for step, (a, b) in enumerate(zip(ours, reference), 1):
        rel = abs(a - b) / abs(b)
        ok &= rel <= args.rtol
        print("step %d: loss %.7f, torch %.7f, relative difference %.1e%s" %
              (step, a, b, rel, "" if rel <= args.rtol else "  MISMATCH"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
