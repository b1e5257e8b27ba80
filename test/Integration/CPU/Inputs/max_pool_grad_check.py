"""Checks gs.max_pool_grad bit for bit against PyTorch's max pooling
backward (max_pool{1,2,3}d, then backward), over the window geometries its
lowerings tell apart: overlapping windows (padding, ceil mode, strides that
do or do not divide the size, kernels smaller than the stride), windows
that tile the input, and dilated windows.

The gradients are multiples of 1/4 below 64 in magnitude, so every sum of
the few windows that share an element is exact in any order and the
comparison can demand the same bits; the inputs repeat values, so windows
have ties (the first maximum in row-major order wins, as in PyTorch).

Usage: max_pool_grad_check.py --gs-run PATH --work DIR
"""

import argparse
import os
import subprocess

import numpy as np
import torch
import torch.nn.functional as F

# (input shape, kernel, strides, pads (begin..., end...), dilations,
# ceil_mode, element type)
CASES = [
    # ResNet's stem pooling, scaled down: 3x3, stride 2, padding 1.
    ((2, 3, 12, 12), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), False, "f32"),
    # Odd sizes: the last column's classes differ in length.
    ((1, 2, 9, 7), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), False, "f32"),
    ((1, 2, 9, 7), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), True, "f32"),
    ((2, 2, 10, 12), (3, 2), (2, 3), (0, 1, 0, 1), (1, 1), True, "f32"),
    # Overlapping along one dimension, stride 1.
    ((1, 3, 8, 8), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), False, "f32"),
    ((1, 2, 9, 10), (5, 4), (3, 2), (2, 1, 2, 1), (1, 1), False, "f32"),
    # Kernels smaller than the stride: some elements in no window.
    ((1, 2, 11, 10), (2, 1), (3, 2), (0, 0, 0, 0), (1, 1), False, "f32"),
    ((1, 2, 10, 9), (1, 2), (2, 3), (0, 0, 0, 0), (1, 1), False, "f32"),
    ((1, 2, 11, 10), (1, 2), (2, 3), (0, 0, 0, 0), (1, 1), True, "f32"),
    # 144 kernel positions: winners numbered in i16, not i8.
    ((1, 2, 20, 20), (12, 12), (4, 4), (0, 0, 0, 0), (1, 1), False, "f32"),
    # Windows that tile the input.
    ((2, 3, 8, 6), (2, 2), (2, 2), (0, 0, 0, 0), (1, 1), False, "f32"),
    # Dilated windows.
    ((1, 2, 9, 8), (2, 3), (2, 1), (1, 1, 1, 1), (2, 2), False, "f32"),
    # 1-D and 3-D.
    ((2, 3, 17), (3,), (2,), (1, 1), (1,), False, "f32"),
    ((2, 3, 16), (4,), (3,), (2, 2), (1,), True, "f32"),
    ((1, 2, 6, 7, 8), (3, 2, 3), (2, 2, 2), (1, 0, 1, 1, 0, 1), (1, 1, 1),
     False, "f32"),
    # FP16 gradients (the gs step's), summed in FP32 and rounded once.
    ((2, 3, 12, 12), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), False, "f16"),
    ((1, 2, 9, 7), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), True, "f16"),
]

DTYPES = {"f32": np.float32, "f16": np.float16}


def ints(values):
    return ", ".join(str(v) for v in values)


def torch_reference(x, g, kernel, strides, pads, dilations, ceil_mode):
    """x.grad of PyTorch's max pooling with the output gradient g, in f32.
    PyTorch pads symmetrically: an extra end pad is zero-padded input
    that the lowest value must replace, so pad with -inf explicitly."""
    rank = len(kernel)
    begin, end = pads[:rank], pads[rank:]
    xt = torch.tensor(x.astype(np.float32), requires_grad=True)
    pad_spec = []
    for b, e in zip(reversed(begin), reversed(end)):
        pad_spec += [b, e]
    padded = F.pad(xt, pad_spec, value=float("-inf"))
    pool = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[rank]
    y = pool(padded, kernel, strides, 0, dilations, ceil_mode)
    if y.shape != g.shape:
        raise SystemExit(f"shape mismatch: torch {tuple(y.shape)}, "
                         f"gs {g.shape}")
    y.backward(torch.tensor(g.astype(np.float32)))
    return xt.grad.numpy()


def output_shape(shape, kernel, strides, pads, dilations, ceil_mode):
    """ONNX's pooling output shape (the cases keep ceil mode's last window
    off the end padding, where PyTorch would drop it)."""
    rank = len(kernel)
    out = list(shape[:2])
    for i in range(rank):
        span = shape[2 + i] + pads[i] + pads[rank + i] - \
            (dilations[i] * (kernel[i] - 1) + 1)
        count = (-(-span // strides[i]) if ceil_mode else
                 span // strides[i]) + 1
        out.append(count)
    return tuple(out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gs-run", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    rng = np.random.default_rng(3)
    failures = 0
    for shape, kernel, strides, pads, dilations, ceil_mode, dtype in CASES:
        out = output_shape(shape, kernel, strides, pads, dilations,
                           ceil_mode)
        np_type = DTYPES[dtype]
        # Few distinct values: ties in most windows.
        x = rng.integers(-6, 7, size=shape).astype(np_type)
        g = (rng.integers(-255, 256, size=out) / 4).astype(np_type)
        tensor = lambda s: f"tensor<{'x'.join(map(str, s))}x{dtype}>"
        attrs = (f"kernel_shape = array<i64: {ints(kernel)}>, "
                 f"strides = array<i64: {ints(strides)}>, "
                 f"pads = array<i64: {ints(pads)}>, "
                 f"dilations = array<i64: {ints(dilations)}>"
                 + (", ceil_mode" if ceil_mode else ""))
        model = os.path.join(args.work, "model.mlir")
        with open(model, "w") as f:
            f.write(f"func.func @grad(%x: {tensor(shape)}, %g: {tensor(out)})"
                    f" -> {tensor(shape)} {{\n"
                    f"  %0 = gs.max_pool_grad %x, %g <{{{attrs}}}> : "
                    f"{tensor(shape)}, {tensor(out)}\n"
                    f"  return %0 : {tensor(shape)}\n}}\n")
        x_path = os.path.join(args.work, "x.npy")
        g_path = os.path.join(args.work, "g.npy")
        np.save(x_path, x)
        np.save(g_path, g)
        result = os.path.join(args.work, "out")
        subprocess.run([args.gs_run, model, "--entry=grad", "-i", x_path,
                        "-i", g_path, "--format=npy",
                        "--output-dir=" + result], check=True)
        ours = np.load(os.path.join(result, "output_0.npy"))
        ref = torch_reference(x, g, kernel, strides, pads, dilations,
                              ceil_mode).astype(np_type)
        same = ours.view(np.uint16 if dtype == "f16" else np.uint32) == \
            ref.view(np.uint16 if dtype == "f16" else np.uint32)
        name = (f"{dtype} {'x'.join(map(str, shape))} kernel {ints(kernel)}"
                f" strides {ints(strides)} pads {ints(pads)} dilations "
                f"{ints(dilations)}{' ceil' if ceil_mode else ''}")
        if same.all():
            print(f"{name}: bit-exact")
        else:
            failures += 1
            print(f"{name}: MISMATCH at {int((~same).sum())} of "
                  f"{same.size} elements")
    print(f"{len(CASES)} geometries, {failures} mismatched")


if __name__ == "__main__":
    main()
