#!/usr/bin/env python3
"""Benchmark: training steps of gs-compile executables against PyTorch.

Prints, in one run:
- the training throughput (steps/s) of PyTorch's Fashion-MNIST MLP
  (784-128-10, batch 64, SGD momentum 0.9) compiled by gs-compile into
  training executables, in fp32 and gs modes, against Debian's PyTorch on
  one thread (same model, batch and optimizer, the same data in memory).
  Debian's python3-torch calls whichever libblas.so.3 the alternatives
  select: the reference BLAS (libblas3), or OpenBLAS once libopenblas is
  installed (as utils/install-deps.sh does). Both are timed;
- the GEMMs of that step (forward, and the backward's weight and input
  gradients) compiled by GradScale, against OpenBLAS sgemm on one thread,
  in GFLOP/s (OpenBLAS's core type from the CPU flags, as cpu_forward.py);
- gs mode's step time over fp32's, and gs mode's with FP16 weight copies
  (--fp16-weight-copies, the GPU's default: the update writes each
  weight's FP16 rounding, which the forward pass reads) over gs mode's
  (the CPU's default: the GEMMs round the FP32 weights as they pack
  them); the executables run alternately, best of two each;
- gs-compile's time for the MLP and, with --resnet18, ResNet-18 (batch 8):
  compiling anew (--no-cache), and again unchanged (from the cache).

The executables' figure is their own report's (steps/s over the run,
batch assembly included); PyTorch's is timed the same way over its loop.

Run with Debian's Python (PyTorch, NumPy):
  /usr/bin/python3 bench/train_step.py [--build BUILD] [--steps N] [--resnet18]
"""

import argparse
import ctypes
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
from cpu_forward import gs_run_ms, median_ms, openblas_coretype  # noqa: E402

DATA = "/usr/share/datasets/fashion-mnist"
BATCH = 64
# The step's GEMMs (m, k, n): forward of both layers, then the backward's
# weight gradient of layer 2, input gradient of layer 2, weight gradient of
# layer 1 (the data needs no gradient).
GEMMS = [(64, 784, 128), (64, 128, 10), (10, 64, 128), (64, 10, 128),
         (128, 64, 784)]


# The executables timed: name -> gs-compile flags.
MODES = {"fp32": ["--scaling=fp32"], "gs": ["--scaling=gs"],
         "gs, weight copies": ["--scaling=gs", "--fp16-weight-copies"]}


def compile_model(build, model, scaling, output, shape, cache=None,
                  flags=()):
    """gs-compile's wall time: compiling anew (cache None), or with the
    cache directory `cache`."""
    start = time.perf_counter()
    subprocess.run(
        [os.path.join(build, "bin", "gs-compile"), model,
         "--onnx-shape=x=%s" % shape, "--onnx-shape=target=%s" %
         shape.split("x")[0], "--onnx-train=optimizer=momentum lr=0.01",
         "--scaling=" + scaling, *flags, "-o", output] +
        (["--cache-dir=" + cache] if cache else ["--no-cache"]), check=True)
    return time.perf_counter() - start


def recompile_s(build, model, scaling, output, shape, work):
    """gs-compile's wall time for a model it compiled before (the second
    of two compilations with a fresh cache)."""
    cache = os.path.join(work, "cache-" + os.path.basename(output))
    compile_model(build, model, scaling, output, shape, cache)
    return compile_model(build, model, scaling, output, shape, cache)


def executable_steps_per_s(executable, steps, work):
    report = os.path.join(work, os.path.basename(executable) + ".json")
    subprocess.run(
        [executable, "--train-data=%s/train-images-idx3-ubyte.gz" % DATA,
         "--train-labels=%s/train-labels-idx1-ubyte.gz" % DATA,
         "--steps=%d" % steps, "--progress=never", "--report=" + report],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(report) as f:
        return json.load(f)["run"]["steps_per_s"]


def read_idx(path):
    import gzip
    import numpy as np
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big")
             for i in range(dims)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)


def pytorch_steps_per_s(steps):
    import torch
    import torch.nn as nn
    torch.set_num_threads(1)
    torch.manual_seed(0)
    images = torch.from_numpy(
        read_idx(DATA + "/train-images-idx3-ubyte.gz").astype("float32") /
        255).reshape(-1, 1, 28, 28)
    labels = torch.from_numpy(
        read_idx(DATA + "/train-labels-idx1-ubyte.gz").astype("int64"))
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(),
                          nn.Linear(128, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    order = torch.randperm(len(labels))
    per_epoch = len(labels) // BATCH

    def step(i):
        index = order[(i % per_epoch) * BATCH:(i % per_epoch + 1) * BATCH]
        optimizer.zero_grad()
        loss = loss_fn(model(images[index]), labels[index])
        loss.backward()
        optimizer.step()

    for i in range(20):
        step(i)
    start = time.perf_counter()
    for i in range(steps):
        step(i)
    return steps / (time.perf_counter() - start)


REFERENCE_BLAS = "/usr/lib/x86_64-linux-gnu/blas"


def pytorch_in_subprocess(steps, reference_blas):
    """PyTorch's steps/s in a fresh process, on the reference BLAS (first in
    the library path) or on the libblas.so.3 the alternatives select."""
    env = dict(os.environ)
    if reference_blas:
        env["LD_LIBRARY_PATH"] = REFERENCE_BLAS + (
            ":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    out = subprocess.run(
        ["/usr/bin/python3", __file__, "--pytorch-only", "--steps",
         str(steps)], env=env, check=True, capture_output=True, text=True)
    return float(out.stdout.split()[0]), out.stdout.split(None, 1)[1].strip()


def blas_in_use():
    """The libblas.so.3 this process has loaded (PyTorch's BLAS)."""
    with open("/proc/self/maps") as f:
        libraries = {line.split()[-1] for line in f if ".so" in line}
    for library in sorted(libraries):
        if "/libblas.so" in library:
            return os.path.realpath(library)
    return "unknown"


def gemm_gflops(build, work, runs):
    """The step's GEMMs: GradScale's (one model holding all five) and
    OpenBLAS's, in GFLOP/s."""
    import numpy as np
    flop = sum(2.0 * m * k * n for m, k, n in GEMMS)
    model = os.path.join(work, "step_gemms.onnxtext")
    inputs = ", ".join("float[%d,%d] a%d, float[%d,%d] b%d" % (m, k, i, k, n, i)
                       for i, (m, k, n) in enumerate(GEMMS))
    outputs = ", ".join("float[%d,%d] c%d" % (m, n, i)
                        for i, (m, k, n) in enumerate(GEMMS))
    body = "\n".join("  c%d = MatMul(a%d, b%d)" % (i, i, i)
                     for i in range(len(GEMMS)))
    with open(model, "w") as f:
        f.write('<ir_version: 8, opset_import: ["" : 17]>\n'
                "step_gemms (%s) => (%s) {\n%s\n}\n" % (inputs, outputs, body))
    ours = flop / gs_run_ms(build, model, None, runs) / 1e6

    blas = ctypes.CDLL("libopenblas.so.0")
    blas.cblas_sgemm.restype = None
    rng = np.random.default_rng(0)
    operands = [(rng.standard_normal((m, k), dtype=np.float32),
                 rng.standard_normal((k, n), dtype=np.float32),
                 np.zeros((m, n), dtype=np.float32)) for m, k, n in GEMMS]
    pointer = lambda array: array.ctypes.data_as(ctypes.c_void_p)

    def all_gemms():
        for (m, k, n), (a, b, c) in zip(GEMMS, operands):
            blas.cblas_sgemm(101, 111, 111, m, n, k, ctypes.c_float(1.0),
                             pointer(a), k, pointer(b), n, ctypes.c_float(0.0),
                             pointer(c), n)

    theirs = flop / median_ms(all_gemms, runs) / 1e6
    return ours, theirs


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=str(ROOT.parent / "build"))
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--resnet18", action="store_true",
                        help="also time gs-compile on ResNet-18 (minutes)")
    parser.add_argument("--pytorch-only", action="store_true",
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.pytorch_only:
        rate = pytorch_steps_per_s(args.steps)
        print(rate, blas_in_use())
        return
    # Before OpenBLAS loads: one thread, the right kernels.
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    coretype = os.environ.setdefault("OPENBLAS_CORETYPE",
                                     openblas_coretype() or "")

    with tempfile.TemporaryDirectory() as work:
        models = ["mlp"] + (["resnet18"] if args.resnet18 else [])
        subprocess.run(["/usr/bin/python3",
                        ROOT.parent / "test/ImportONNX/Inputs/export_torch_models.py",
                        work, *models], check=True)
        mlp = os.path.join(work, "mlp.onnx")
        compile_s = {}
        executables = {}
        for mode, flags in MODES.items():
            executables[mode] = os.path.join(
                work, "mlp_%d" % len(executables))
            compile_s[mode] = compile_model(
                args.build, mlp, flags[0].split("=")[1], executables[mode],
                "%dx1x28x28" % BATCH, flags=flags[1:])
        ours = {mode: 0.0 for mode in MODES}
        for _ in range(2):
            for mode in MODES:
                ours[mode] = max(ours[mode], executable_steps_per_s(
                    executables[mode], args.steps, work))
        torch_rates = {}
        if os.path.exists(os.path.join(REFERENCE_BLAS, "libblas.so.3")):
            torch_rates["reference BLAS"] = pytorch_in_subprocess(
                args.steps, True)
        torch_rates["libblas.so.3"] = pytorch_in_subprocess(args.steps, False)

        print("training step, Fashion-MNIST MLP 784-128-10, batch %d, "
              "SGD momentum, one thread" % BATCH)
        for name, (rate, library) in torch_rates.items():
            print("  %-34s %9.1f steps/s  %7.3f ms/step  (%s)" %
                  ("PyTorch 1.13 (Debian), " + name, rate, 1e3 / rate,
                   library))
        for mode, flags in MODES.items():
            ratios = ", ".join(
                "%.2fx PyTorch on %s" % (ours[mode] / rate, name)
                for name, (rate, _) in torch_rates.items())
            print("  %-34s %9.1f steps/s  %7.3f ms/step  %s" %
                  ("gs-compile " + " ".join(flags), ours[mode],
                   1e3 / ours[mode], ratios))
        print("  gs step time / fp32 step time: %.2fx" %
              (ours["fp32"] / ours["gs"]))
        print("  gs with FP16 weight copies / gs (the CPU's default): %.2fx"
              % (ours["gs"] / ours["gs, weight copies"]))

        ours_gemm, blas_gemm = gemm_gflops(args.build, work, args.runs)
        print("the step's GEMMs (%s), f32, one thread" %
              ", ".join("%dx%dx%d" % g for g in GEMMS))
        print("  GradScale %.1f GFLOP/s, OpenBLAS (%s) %.1f GFLOP/s: %.2fx" %
              (ours_gemm, coretype or "autodetected", blas_gemm,
               ours_gemm / blas_gemm))

        print("gs-compile time (to a training executable)")
        for scaling in ("fp32", "gs"):
            print("  MLP, --scaling=%-5s          %7.1f s" %
                  (scaling, compile_s[scaling]))
        print("  MLP, --scaling=gs, unchanged  %7.2f s (from the cache)" %
              recompile_s(args.build, mlp, "gs",
                          os.path.join(work, "mlp_recompiled"),
                          "%dx1x28x28" % BATCH, work))
        if args.resnet18:
            resnet = os.path.join(work, "resnet18.onnx")
            seconds = compile_model(args.build, resnet, "gs",
                                    os.path.join(work, "resnet18_gs"),
                                    "8x3x224x224")
            print("  ResNet-18 batch 8, --scaling=gs %6.1f s" % seconds)
            print("  ResNet-18, unchanged          %7.2f s (from the cache)" %
                  recompile_s(args.build, resnet, "gs",
                              os.path.join(work, "resnet18_recompiled"),
                              "8x3x224x224", work))


if __name__ == "__main__":
    main()
