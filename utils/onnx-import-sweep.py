#!/usr/bin/env python3
"""Imports every ONNX backend test model under the given directories.

Each `model.onnx` is run through `gs-opt` (import and verification only).
A model either imports, or fails with a clear error (exit status 1 and an
`error:` line on stderr); anything else (a crash, a hang, an error without
a message) is a failure of the importer. Prints per-outcome counts, the
reasons of clean failures grouped, and exits non-zero on any crash or when
a model of `--require` does not import.
"""

import argparse
import collections
import concurrent.futures
import os
import pathlib
import re
import subprocess
import sys


def parameter_inputs(model):
    """Options binding the model's integer, boolean and scalar inputs (axes,
    shapes, ratios, learning rates) to the test's first data set: ONNX
    backend tests feed such operands as inputs, GradScale needs them
    constant."""
    import onnx  # Debian's python3-onnx
    proto = onnx.load(str(model), load_external_data=False)
    initializers = {t.name for t in proto.graph.initializer}
    inputs = [i for i in proto.graph.input if i.name not in initializers]
    data = model.parent / "test_data_set_0"
    options = []
    for k, value in enumerate(inputs):
        tensor = value.type.tensor_type
        integer = tensor.elem_type in (onnx.TensorProto.INT64,
                                       onnx.TensorProto.INT32,
                                       onnx.TensorProto.BOOL)
        scalar = tensor.HasField("shape") and len(tensor.shape.dim) == 0
        path = data / f"input_{k}.pb"
        if (integer or scalar) and path.exists():
            options.append(f"--onnx-constant-input={value.name}={path}")
    return options


def run(gs_opt, model, timeout, bind):
    extra = parameter_inputs(model) if bind else []
    try:
        proc = subprocess.run([gs_opt, str(model), "-o", os.devnull, *extra],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "crash", "timed out"
    if proc.returncode == 0:
        return "imported", ""
    errors = [l for l in proc.stderr.splitlines() if "error:" in l]
    if proc.returncode == 1 and errors:
        return "rejected", errors[0].split("error:", 1)[1].strip()
    return "crash", f"exit status {proc.returncode}: {proc.stderr[-300:]}"


def reason_key(message):
    """Groups messages that differ only in names and numbers."""
    message = re.sub(r"'[^']*'", "'…'", message)
    return re.sub(r"\d+", "N", message)[:110]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gs-opt", required=True)
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--require", action="append", default=[],
                        help="regex of test names that must import")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--bind-parameter-inputs", action="store_true",
                        help="bind integer, boolean and scalar inputs to "
                             "the test's data (needs the onnx package)")
    parser.add_argument("roots", nargs="+", type=pathlib.Path)
    args = parser.parse_args()

    models = sorted(m for root in args.roots for m in root.glob("*/model.onnx"))
    outcomes = collections.Counter()
    reasons = collections.Counter()
    crashes, missing = [], []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(run, args.gs_opt, m, args.timeout,
                               args.bind_parameter_inputs): m
                   for m in models}
        for future in concurrent.futures.as_completed(futures):
            model = futures[future]
            name = model.parent.name
            outcome, message = future.result()
            outcomes[outcome] += 1
            if outcome == "rejected":
                reasons[reason_key(message)] += 1
                if args.verbose:
                    print(f"rejected {name}: {message}")
            if outcome == "crash":
                crashes.append(f"{name}: {message}")
            if outcome != "imported" and any(
                    re.fullmatch(r, name) for r in args.require):
                missing.append(f"{name}: {message}")

    print(f"imported {outcomes['imported']} of {len(models)} models; "
          f"{outcomes['rejected']} rejected with a clear error, "
          f"{len(crashes)} crashed")
    for reason, count in reasons.most_common():
        print(f"  {count:4d}  {reason}")
    for line in sorted(crashes):
        print(f"CRASH {line}")
    for line in sorted(missing):
        print(f"REQUIRED BUT NOT IMPORTED {line}")
    return 1 if crashes or missing else 0


if __name__ == "__main__":
    sys.exit(main())
