"""Inputs for, and checks of, the fused GEMM kernel of gs-gpu-gemm-kernel.

  check_gemm.py inputs DIR --m M --n N --k K --kind KIND --scale S [--bias]
      [--mask] [--trans-a] [--trans-b] [--output f16|f32] [--bias-type f16|f32]
      writes DIR/a.npy, b.npy (transposed where asked, as the kernel reads
      them), scale.npy (bias.npy, mask.npy) and DIR/reference.mlir: the same
      product as gs.gemm, f16 x f16 -> f32, for gs-run's CPU lowering.
  check_gemm.py check DIR [--reference FILE]
      compares DIR/out/output_{0,1,2}.npy (C, the gs.grad_stats fields of C
      and the gs.cast_stats counts of its rounding) with NumPy (float64)
      and, given the f32 product of reference.mlir, with the CPU lowering
      bit for bit.

KIND is `integers` (small integers: every product and sum is exact in f32,
so C and the statistics are exact in any summation order), `normal`
(N(0, 1) values: C within the bound of f32 accumulation, and equal to the
CPU lowering, which accumulates in the same k order) or `special`
(integers with inf and NaN entries and a scale that takes most of C below
the FP16 normal range).
"""

import argparse
import json
import os
import sys

import numpy as np

U32 = 2.0**-24
# Additions on the way from an element to its block partial: the elements
# of a thread (64 in the 128 x 128 blocks), 5 shuffle levels, the warps (8)
# (GemmKernel.cpp).
REDUCTION_DEPTH = 64 + 5 + 8
# The epilogue's ln|x| is CUDA's __logf (lg2.approx times ln 2): within
# 2^-21.41 of ln|x| on [0.5, 2] and 3 ulp elsewhere (the CUDA C++
# Programming Guide's intrinsic functions), here both at once.
LOG_ABSOLUTE_ERROR = 2.0**-21.41
LOG_RELATIVE_ERROR = 6 * U32


DTYPES = {"f16": np.float16, "f32": np.float32}


def make_arrays(m, n, k, kind, bias=False, mask=False, bias_type="f32"):
    """A (m x k), B (k x n) (f16), and the bias (f32 or f16) and mask (f16)
    if asked for."""
    rng = np.random.default_rng(m * 10007 + n * 101 + k)
    if kind == "normal":
        a = rng.standard_normal((m, k))
        b = rng.standard_normal((k, n))
    else:
        a = rng.integers(-8, 9, (m, k)).astype(np.float64)
        b = rng.integers(-8, 9, (k, n)).astype(np.float64)
    if kind == "special":
        a[1 % m, 3 % k] = np.inf
        a[2 % m, 0] = -np.inf
        b[5 % k, 7 % n] = np.nan
    arrays = {"a": a.astype(np.float16), "b": b.astype(np.float16)}
    if bias:
        arrays["bias"] = rng.integers(-4, 5, n).astype(DTYPES[bias_type])
    if mask:
        arrays["mask"] = rng.standard_normal((m, n)).astype(np.float16)
    return arrays


def stored(arrays, trans_a=False, trans_b=False):
    """A and B as the kernel reads them: k x m and n x k where transposed."""
    a, b = arrays["a"], arrays["b"]
    return (np.ascontiguousarray(a.T) if trans_a else a,
            np.ascontiguousarray(b.T) if trans_b else b)


def make_inputs(args):
    arrays = make_arrays(args.m, args.n, args.k, args.kind, args.bias,
                         args.mask, args.bias_type)
    arrays["a"], arrays["b"] = stored(arrays, args.trans_a, args.trans_b)
    os.makedirs(args.dir, exist_ok=True)
    for name, array in arrays.items():
        np.save(os.path.join(args.dir, name + ".npy"), array)
    np.save(os.path.join(args.dir, "scale.npy"), np.array([args.scale], np.float32))
    with open(os.path.join(args.dir, "config.json"), "w") as f:
        json.dump(vars(args), f)
    with open(os.path.join(args.dir, "reference.mlir"), "w") as f:
        m, n = args.m, args.n
        a = "x".join(map(str, arrays["a"].shape))
        b = "x".join(map(str, arrays["b"].shape))
        flags = [f for f, on in (("transA", args.trans_a),
                                 ("transB", args.trans_b)) if on]
        attrs = " {" + ", ".join(flags) + "}" if flags else ""
        f.write(
            f"func.func @product(%a: tensor<{a}xf16>, %b: tensor<{b}xf16>)"
            f" -> tensor<{m}x{n}xf32> {{\n"
            f"  %0 = gs.gemm %a, %b{attrs} : tensor<{a}xf16>, tensor<{b}xf16>"
            f" -> tensor<{m}x{n}xf32>\n"
            f"  return %0 : tensor<{m}x{n}xf32>\n}}\n"
        )


def epilogue(product32, scale, bias=None):
    """The kernel's f32 epilogue on an f32 product, in its operation order,
    before the ReLU mask (the statistics are of these values)."""
    x = product32 * np.float32(scale)
    if bias is not None:
        x = x + bias.astype(np.float32)
    return x.astype(np.float32)


def masked(c, mask):
    """C zeroed where the ReLU mask is not positive."""
    if mask is None:
        return c
    return np.where(mask > 0, c, c.dtype.type(0))


def same(got, want):
    """Equal, NaN equal to NaN."""
    return np.array_equal(got, want, equal_nan=True)


def expected_stats(x, output="f16"):
    """gs.grad_stats of C (x rounded to `output`), gs.cast_stats of x's
    rounding to f16, and the bounds of the kernel's f32 reductions."""
    h = x.astype(np.float16).astype(np.float64)
    hm = np.abs(h)
    cast = np.array([(x != 0).sum(), ((x != 0) & (hm == 0)).sum(),
                     ((hm > 0) & (hm < 2.0**-14)).sum(), (hm == np.inf).sum()])
    x = x.astype(DTYPES[output]).astype(np.float64)
    magnitude = np.abs(x)
    nonzero = magnitude > 0
    logs = np.log(np.where(nonzero, magnitude, 1.0))
    grad = np.array([x.size, x.sum(), (x * x).sum(), magnitude.max(),
                     nonzero.sum(), logs.sum(), (logs * logs).sum()])
    # Bounds of the f32 reductions: per field, depth * u * sum |terms|
    # (+ one rounding of each square, and each approximate log's error).
    with np.errstate(invalid="ignore"):
        log_error = np.where(nonzero, LOG_ABSOLUTE_ERROR +
                             LOG_RELATIVE_ERROR * np.abs(logs), 0.0)
        bounds = np.array([
            0.0,
            REDUCTION_DEPTH * U32 * magnitude.sum(),
            (REDUCTION_DEPTH + 1) * U32 * (x * x).sum(),
            0.0,
            0.0,
            REDUCTION_DEPTH * U32 * np.abs(logs).sum() + log_error.sum(),
            (REDUCTION_DEPTH + 1) * U32 * (logs * logs).sum() +
            (2 * np.abs(logs) * log_error + log_error * log_error).sum(),
        ])
    return grad, cast, bounds


GRAD_FIELDS = ["count", "sum", "sum of squares", "max |x|", "nonzeros",
               "sum of ln|x|", "sum of ln^2|x|"]


def compare_exact(c, grad, cast, x, output="f16", mask=None):
    """Failures of C (exact), the cast counts (exact) and the grad stats
    (within the reduction's bounds) against the f32 epilogue values x
    (before the mask); a kernel without statistics has grad and cast
    None."""
    failures = []
    want_c = masked(x.astype(DTYPES[output]), mask)
    if not same(c, want_c):
        bad = ~((c == want_c) | (np.isnan(c) & np.isnan(want_c)))
        i = tuple(int(v) for v in np.argwhere(bad)[0])
        failures.append(f"C differs at {bad.sum()} elements, first {i}: "
                        f"{c[i]} != {want_c[i]}")
    if grad is None:
        return failures
    want_grad, want_cast, bounds = expected_stats(x, output)
    for name, got, want, bound in zip(GRAD_FIELDS, grad, want_grad, bounds):
        if np.isnan(want) or np.isinf(want):
            ok = same(np.array(got), np.array(want))
        else:
            ok = abs(got - want) <= bound
        if not ok:
            failures.append(f"grad stats {name}: {got!r} vs {want!r} "
                            f"(bound {bound:.3g})")
    if cast.dtype != np.int64 or not np.array_equal(cast, want_cast):
        failures.append(f"cast stats {cast.tolist()} vs {want_cast.tolist()}")
    return failures


def check(args):
    with open(os.path.join(args.dir, "config.json")) as f:
        cfg = json.load(f)
    out = os.path.join(args.dir, "out")
    c = np.load(os.path.join(out, "output_0.npy"))
    grad = np.load(os.path.join(out, "output_1.npy"))
    cast = np.load(os.path.join(out, "output_2.npy"))
    a = np.load(os.path.join(args.dir, "a.npy")).astype(np.float64)
    b = np.load(os.path.join(args.dir, "b.npy")).astype(np.float64)
    a = a.T if cfg["trans_a"] else a
    b = b.T if cfg["trans_b"] else b
    failures = []

    output = cfg["output"]
    if c.dtype != DTYPES[output] or c.shape != (cfg["m"], cfg["n"]):
        sys.exit(f"FAIL: C is {c.dtype}{c.shape}, not {output}"
                 f"({cfg['m']}, {cfg['n']})")
    with np.errstate(invalid="ignore", over="ignore"):
        exact64 = a @ b
    if cfg["kind"] == "normal":
        if not args.reference:
            sys.exit("FAIL: a normal-kind check needs --reference")
        product32 = np.load(args.reference)
        # The CPU lowering against float64: within f32 accumulation.
        bound = cfg["k"] * U32 * (np.abs(a) @ np.abs(b))
        error = np.abs(product32.astype(np.float64) - exact64)
        if not (error <= bound).all():
            failures.append(f"CPU product off float64 by {error.max()}")
    else:
        # Small integers: exact in f32 in any order.
        product32 = exact64.astype(np.float32)
        if args.reference:
            ref = np.load(args.reference)
            if not same(ref, product32):
                failures.append("the CPU product is not exact")
    load = lambda name: (np.load(os.path.join(args.dir, name + ".npy"))
                         if cfg[name] else None)
    x = epilogue(product32, cfg["scale"], load("bias"))
    failures += compare_exact(c, grad, cast, x, output, load("mask"))

    if failures:
        print("FAIL:", *failures, sep="\n  ")
        sys.exit(1)
    print(f"PASS {cfg['m']}x{cfg['n']}x{cfg['k']} {cfg['kind']}: C exact, "
          f"cast counts {cast.tolist()}, grad stats within bounds")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    inputs = sub.add_parser("inputs")
    inputs.add_argument("dir")
    for name in ("m", "n", "k"):
        inputs.add_argument(f"--{name}", type=int, required=True)
    inputs.add_argument("--kind", choices=["integers", "normal", "special"],
                        required=True)
    inputs.add_argument("--scale", type=float, default=1.0)
    inputs.add_argument("--bias", action="store_true")
    inputs.add_argument("--mask", action="store_true")
    inputs.add_argument("--trans-a", action="store_true")
    inputs.add_argument("--trans-b", action="store_true")
    inputs.add_argument("--output", choices=sorted(DTYPES), default="f16")
    inputs.add_argument("--bias-type", choices=sorted(DTYPES), default="f32")
    checks = sub.add_parser("check")
    checks.add_argument("dir")
    checks.add_argument("--reference")
    args = parser.parse_args()
    if args.command == "inputs":
        make_inputs(args)
    else:
        check(args)


if __name__ == "__main__":
    main()
