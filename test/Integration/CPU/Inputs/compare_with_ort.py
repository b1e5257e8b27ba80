#!/usr/bin/env python3
"""Runs an ONNX model with gs-run and with ONNX Runtime; compares outputs.

Usage: compare_with_ort.py --gs-run PATH --work DIR [--rtol R] [--seed S]
                           MODEL.onnx NAME=SHAPE[:int:HIGH] ...

Each NAME=SHAPE gives an input's shape (e.g. x=16x1x28x28); float inputs
are standard normal, ':int:HIGH' makes an int64 input uniform in
[0, HIGH), and ':DTYPE:LOW:HIGH' an input of a NumPy integer type
(uint8, int16, ...) uniform in [LOW, HIGH). Both runtimes get the same
.npy files. ONNX Runtime runs on one
thread with graph optimizations off, so that it computes the graph as
written. Outputs match when |ours - ort| <= rtol * (|ort| + max|ort|),
elementwise: relative to the element, with a floor relative to the
tensor's scale for elements near zero; integer and boolean outputs match
exactly. Prints one line per output; exits
1 on a mismatch.
"""

import argparse
import os
import subprocess
import sys

import numpy as np
import onnxruntime as ort


def parse_input(spec, rng):
    name, _, rest = spec.partition("=")
    shape_text, _, kind = rest.partition(":")
    shape = [int(d) for d in shape_text.split("x")]
    if kind.startswith("int:"):
        return name, rng.integers(0, int(kind[4:]), size=shape, dtype=np.int64)
    if kind:
        dtype, low, high = kind.split(":")
        return name, rng.integers(int(low), int(high), size=shape,
                                  dtype=np.dtype(dtype))
    return name, rng.standard_normal(shape).astype(np.float32)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gs-run", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("model")
    parser.add_argument("inputs", nargs="+")
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    inputs = dict(parse_input(spec, rng) for spec in args.inputs)
    os.makedirs(args.work, exist_ok=True)
    command = [args.gs_run, args.model, "--format=npy",
               "--output-dir=" + args.work]
    for name, value in inputs.items():
        path = os.path.join(args.work, name + ".npy")
        np.save(path, value)
        command += ["--onnx-shape=%s=%s" % (name, "x".join(map(str, value.shape))),
                    "-i", path]
    subprocess.run(command, check=True)

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(args.model, options,
                                   providers=["CPUExecutionProvider"])
    expected = session.run(None, inputs)

    failed = False
    for i, (info, ref) in enumerate(zip(session.get_outputs(), expected)):
        ours = np.load(os.path.join(args.work, "output_%d.npy" % i))
        if ours.shape != ref.shape or ours.dtype != ref.dtype:
            print("%s: got %s %s, ONNX Runtime gives %s %s" %
                  (info.name, ours.dtype, ours.shape, ref.dtype, ref.shape))
            failed = True
            continue
        scale = float(np.abs(ref).max()) if ref.size else 0.0
        error = np.abs(ours.astype(np.float64) - ref.astype(np.float64))
        bound = args.rtol * (np.abs(ref.astype(np.float64)) + scale)
        worst = float((error / np.maximum(bound, 1e-300)).max()) if ref.size else 0.0
        if np.issubdtype(ref.dtype, np.floating):
            ok = bool((error <= bound).all())
        else:
            ok = bool(np.array_equal(ours, ref))
        failed |= not ok
        print("%s: %s %s, max |diff| %.3g (max |ref| %.3g), %s" %
              (info.name, ref.dtype, list(ref.shape), float(error.max()),
               scale, "match" if ok else
               "MISMATCH (%.3gx the tolerance)" % worst))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
