#!/usr/bin/env python3
"""Checks GradScale's FP16 semantics on the CPU against NumPy's float16.

Usage: fp16_semantics.py --gs-run PATH --work DIR

1. f32 -> f16 casts round to nearest even, with subnormals, overflow to
   infinity and NaN kept: the edge values named below, then 2^20 random
   f32 bit patterns; bit-exact (any NaN for NaN: IEEE leaves the payload
   open).
2. f16 -> f32 casts: all 65536 f16 bit patterns, bit-exact.
3. FP16 MatMul, Gemm (with an f16 bias) and Conv: f16 operands, f32
   accumulation and one rounding of the result. The operands are multiples
   of 1/64 whose products and sums are exact in f32 but need more than
   f16's 11 bits, so the result is the exact value rounded once: NumPy's
   float64 result cast to float16. Accumulating in f16 would differ.

Prints a line per check and exits 1 on a mismatch, listing the values.
"""

import argparse
import os
import subprocess
import sys

import numpy as np

EDGES = [
    ("+0", 0.0), ("-0", -0.0),
    ("2^-25 (tie, to even: 0)", 2.0**-25),
    ("2^-25 + 1ulp (to 2^-24)", np.nextafter(np.float32(2.0**-25), np.float32(1))),
    ("3*2^-25 (tie, to even: 2^-23)", 3 * 2.0**-25),
    ("2^-24 (smallest subnormal)", 2.0**-24),
    ("-2^-24", -(2.0**-24)),
    ("2^-14 - 2^-24 (largest subnormal)", 2.0**-14 - 2.0**-24),
    ("2^-14 (smallest normal)", 2.0**-14),
    ("5*2^-26 (subnormal, rounds down)", 5 * 2.0**-26),
    ("1e-8 (underflows to 0)", 1e-8),
    ("f32 subnormal 1e-45", 1e-45),
    ("1 + 2^-11 (tie, to even: 1)", 1 + 2.0**-11),
    ("1 + 3*2^-11 (tie, to even: 1 + 2^-9)", 1 + 3 * 2.0**-11),
    ("65504 (largest f16)", 65504.0),
    ("65519.996 (rounds to 65504)", np.nextafter(np.float32(65520), np.float32(0))),
    ("65520 (tie, overflows to inf)", 65520.0),
    ("-65520", -65520.0),
    ("3e38", 3e38),
    ("+inf", np.inf), ("-inf", -np.inf),
    ("NaN", np.nan),
]


def run(gs_run, work, name, model_text, inputs):
    """Runs a one-node ONNX text model with gs-run; returns its output."""
    model = os.path.join(work, name + ".onnxtext")
    with open(model, "w") as f:
        f.write(model_text)
    command = [gs_run, model, "--format=npy",
               "--output-dir=" + os.path.join(work, name)]
    for i, value in enumerate(inputs):
        path = os.path.join(work, "%s_in%d.npy" % (name, i))
        np.save(path, value)
        command += ["-i", path]
    subprocess.run(command, check=True)
    return np.load(os.path.join(work, name, "output_0.npy"))


def same_bits(ours, ref):
    """Elementwise: identical bits, or both NaN."""
    width = {2: np.uint16, 4: np.uint32}[ref.dtype.itemsize]
    equal = ours.view(width) == ref.view(width)
    return equal | (np.isnan(ours) & np.isnan(ref))


def report(title, ours, ref, labels=None):
    ok = same_bits(ours, ref)
    print("%s: %d values, %s" % (title, ref.size,
                                 "bit-exact" if ok.all() else
                                 "%d MISMATCHES" % (~ok).sum()))
    width = {2: np.uint16, 4: np.uint32}[ref.dtype.itemsize]
    for i in np.flatnonzero(~ok.ravel())[:10]:
        label = labels[i] if labels else "element %d" % i
        print("  %s: got %r (0x%x), numpy %r (0x%x)" %
              (label, ours.ravel()[i], ours.view(width).ravel()[i],
               ref.ravel()[i], ref.view(width).ravel()[i]))
    return bool(ok.all())


def cast_model(n, source, target, to):
    return ("<ir_version: 8, opset_import: [\"\" : 17]>\n"
            "cast (%s[%d] x) => (%s[%d] y) {\n  y = Cast<to = %d>(x)\n}\n" %
            (source, n, target, n, to))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gs-run", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    rng = np.random.default_rng(0)
    np.seterr(over="ignore")  # Overflow to infinity is under test.
    ok = True

    edges = np.array([v for _, v in EDGES], dtype=np.float32)
    ours = run(args.gs_run, args.work, "edges",
               cast_model(edges.size, "float", "float16", 10), [edges])
    ok &= report("cast f32->f16, edge values", ours, edges.astype(np.float16),
                 [label for label, _ in EDGES])

    bits = rng.integers(0, 2**32, size=2**20, dtype=np.uint64).astype(np.uint32)
    random = bits.view(np.float32)
    ours = run(args.gs_run, args.work, "random",
               cast_model(random.size, "float", "float16", 10), [random])
    ok &= report("cast f32->f16, random bit patterns", ours,
                 random.astype(np.float16))

    halves = np.arange(2**16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    ours = run(args.gs_run, args.work, "widen",
               cast_model(halves.size, "float16", "float", 1), [halves])
    ok &= report("cast f16->f32, all f16 values", ours,
                 halves.astype(np.float32))

    def sixty_fourths(*shape):
        return (rng.integers(-64, 65, size=shape) / 64).astype(np.float16)

    a, b, c = sixty_fourths(16, 64), sixty_fourths(64, 24), sixty_fourths(24)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    header = "<ir_version: 8, opset_import: [\"\" : 17]>\n"
    ours = run(args.gs_run, args.work, "matmul", header +
               "mm (float16[16,64] a, float16[64,24] b) => (float16[16,24] y)"
               " {\n  y = MatMul(a, b)\n}\n", [a, b])
    ok &= report("f16 MatMul, f32 accumulation, one rounding", ours,
                 exact.astype(np.float16))
    ours = run(args.gs_run, args.work, "gemm", header +
               "gemm (float16[16,64] a, float16[64,24] b, float16[24] c) =>"
               " (float16[16,24] y) {\n  y = Gemm(a, b, c)\n}\n", [a, b, c])
    ok &= report("f16 Gemm with bias, one rounding", ours,
                 (exact + c.astype(np.float64)).astype(np.float16))

    x, w = sixty_fourths(2, 8, 6, 6), sixty_fourths(4, 8, 3, 3)
    windows = np.lib.stride_tricks.sliding_window_view(
        x.astype(np.float64), (3, 3), axis=(2, 3))  # N, C, 4, 4, 3, 3
    conv = np.einsum("ncijkl,fckl->nfij", windows, w.astype(np.float64))
    ours = run(args.gs_run, args.work, "conv", header +
               "conv (float16[2,8,6,6] x, float16[4,8,3,3] w) =>"
               " (float16[2,4,4,4] y) {\n  y = Conv(x, w)\n}\n", [x, w])
    ok &= report("f16 Conv, f32 accumulation, one rounding", ours,
                 conv.astype(np.float16))

    # The operands are chosen so that accumulating in f16 would differ.
    f16_accumulated = np.zeros((16, 24), dtype=np.float16)
    for k in range(64):
        f16_accumulated = (f16_accumulated +
                           np.outer(a[:, k], b[k]).astype(np.float16))
    differs = (f16_accumulated != exact.astype(np.float16)).sum()
    print("f16 accumulation would differ in %d of %d MatMul results" %
          (differs, exact.size))
    ok &= differs > 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
