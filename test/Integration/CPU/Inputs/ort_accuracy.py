#!/usr/bin/env python3
"""Accuracy of an ONNX classifier in ONNX Runtime on IDX data.

Usage: ort_accuracy.py MODEL.onnx IMAGES.gz LABELS.gz REPORT.json

MODEL takes (x: float32 [N, ...], target: int64 [N]) and returns the loss and
the class scores (expose_scores.py). Images are scaled by 1/255 as the
training executables' --normalize=unit does. Prints ONNX Runtime's accuracy
and the report's, and fails if they differ by more than 0.1 point.
"""

import gzip
import json
import sys

import numpy as np
import onnxruntime as ort


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big")
             for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(
        shape)


def main():
    model, images, labels, report = sys.argv[1:5]
    x = read_idx(images).astype(np.float32) / np.float32(255)
    y = read_idx(labels).astype(np.int64)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model, options,
                                   providers=["CPUExecutionProvider"])
    inputs = session.get_inputs()
    shape = [1] + [d for d in inputs[0].shape[1:]]
    correct = 0
    for first in range(0, len(y), 500):
        xb = x[first:first + 500].reshape([-1] + shape[1:])
        yb = y[first:first + 500]
        _, scores = session.run(None, {inputs[0].name: xb,
                                       inputs[1].name: yb})
        correct += int((scores.argmax(axis=1) == yb).sum())
    accuracy = correct / len(y)
    with open(report) as f:
        ours = json.load(f)["final"]["eval_accuracy"]
    verdict = "ok" if abs(accuracy - ours) <= 1e-3 else "MISMATCH"
    print(f"onnxruntime accuracy {accuracy:.4f}, report {ours:.4f}: {verdict}")
    if verdict != "ok":
        sys.exit(1)


if __name__ == "__main__":
    main()
