#!/usr/bin/env python3
"""Benchmark: CPU kernels and forward passes against their baselines.

Prints, in one run:
- f32 GEMM (256^3 to 2048^3) GFLOP/s compiled by GradScale, against OpenBLAS
  sgemm on one thread (Debian's libopenblas, the ceiling);
- the forward pass of the PyTorch MLP (batch 16) and ResNet-18 (batch 1)
  exports in evaluation mode, against ONNX Runtime on one thread with its
  default graph optimizations.

Times are medians over --runs calls after a warm-up; GradScale's come from
`gs-run --benchmark`. OpenBLAS misdetects some virtual CPUs and falls back
to generic kernels, so its core type is set from the CPU's flags
(OPENBLAS_CORETYPE: SkylakeX with AVX-512, Haswell with AVX2) unless the
environment sets it.

Run with the build's reference Python (ONNX Runtime, NumPy):
  build/reference-python/bin/python3 bench/cpu_forward.py [--build BUILD]
"""

import argparse
import ctypes
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def cpu_flags():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


def openblas_coretype():
    flags = cpu_flags()
    if "avx512f" in flags:
        return "SkylakeX"
    if "avx2" in flags:
        return "Haswell"
    return None


def median_ms(function, runs):
    function()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def gs_run_ms(build, model, shape, runs):
    """The median time of `gs-run --benchmark` on `model`."""
    command = [os.path.join(build, "bin", "gs-run"), model,
               "--benchmark=%d" % runs]
    if shape:
        command.append("--onnx-shape=" + shape)
    out = subprocess.run(command, check=True, capture_output=True,
                         text=True).stdout
    match = re.search(r"median ([0-9.]+) ms", out)
    if not match:
        sys.exit("bench: unexpected gs-run output: " + out)
    return float(match.group(1))


def openblas_sgemm_ms(n, runs):
    import numpy as np
    blas = ctypes.CDLL("libopenblas.so.0")
    blas.cblas_sgemm.restype = None
    a, b = (np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
            for _ in range(2))
    c = np.zeros((n, n), dtype=np.float32)
    pointer = lambda array: array.ctypes.data_as(ctypes.c_void_p)
    row_major, no_trans = 101, 111
    return median_ms(lambda: blas.cblas_sgemm(
        row_major, no_trans, no_trans, n, n, n, ctypes.c_float(1.0),
        pointer(a), n, pointer(b), n, ctypes.c_float(0.0), pointer(c), n),
        runs)


def ort_ms(model, shape, runs):
    import numpy as np
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model, options,
                                   providers=["CPUExecutionProvider"])
    x = np.zeros(shape, dtype=np.float32)
    name = session.get_inputs()[0].name
    return median_ms(lambda: session.run(None, {name: x}), runs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    # Before OpenBLAS loads: one thread, the right kernels.
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    coretype = os.environ.setdefault("OPENBLAS_CORETYPE",
                                     openblas_coretype() or "")

    with tempfile.TemporaryDirectory() as tmp:
        print("f32 GEMM, one thread     GradScale   OpenBLAS (%s)   ratio" %
              (coretype or "autodetected"))
        for n in (256, 512, 1024, 2048):
            model = os.path.join(tmp, "gemm%d.onnxtext" % n)
            with open(model, "w") as f:
                f.write("<ir_version: 8, opset_import: [\"\" : 17]>\n"
                        "gemm (float[%d,%d] a, float[%d,%d] b) => "
                        "(float[%d,%d] c) {\n  c = MatMul(a, b)\n}\n" %
                        ((n,) * 6))
            flop = 2.0 * n**3
            # 2048^3 takes 0.1 s a call: fewer calls.
            runs = args.runs if n < 2048 else max(args.runs // 4, 3)
            ours = flop / gs_run_ms(args.build, model, None, runs) / 1e6
            blas = flop / openblas_sgemm_ms(n, runs) / 1e6
            print("  %4d^3                %6.1f GFLOP/s  %6.1f GFLOP/s   %.2fx"
                  % (n, ours, blas, ours / blas))

        subprocess.run(["/usr/bin/python3",
                        ROOT / "test/ImportONNX/Inputs/export_torch_models.py",
                        "--eval", tmp, "mlp", "resnet18"], check=True)
        print("forward pass, one thread GradScale   ONNX Runtime    "
              "GradScale / ORT time")
        for name, shape in (("mlp", (16, 1, 28, 28)),
                            ("resnet18", (1, 3, 224, 224))):
            model = os.path.join(tmp, name + "_eval.onnx")
            pinned = "x=" + "x".join(map(str, shape))
            ours = gs_run_ms(args.build, model, pinned, args.runs)
            theirs = ort_ms(model, shape, args.runs)
            print("  %-8s batch %-2d      %8.3f ms  %8.3f ms     %.2fx" %
                  (name, shape[0], ours, theirs, ours / theirs))


if __name__ == "__main__":
    main()
