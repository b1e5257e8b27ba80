"""Inputs for, and checks of, convolutions on the fused GEMM kernel
(convert-gs-to-gpu's implicit GEMMs).

  check_conv.py inputs DIR --kind conv|convt --n N --c C --size H[xW...]
                --m M --kernel K[xK...] [--groups G] [--stride S...]
                [--pad P...] [--pad-end P...] [--dilation D...]
                [--output-padding P...] [--split-weight] [--channels-first]
                [--grouped-channels-first] [--weight-channels-first]
                [--operands f16|f32]
                [--bias] [--output f16|f32] [--values integers|normal]
      writes DIR/x.npy, w.npy (f16, or --operands), (bias.npy) and
      DIR/conv.mlir, one function @conv computing the gs.conv (or
      gs.conv_transpose) on them.
      --split-weight: w is M/G x C x K..., every group's filters, each
      group its own input channels of them (the autodiff's split weight
      gradient), which @conv regroups for the gs.conv.
      --channels-first: x is C x N x D..., which @conv transposes for the
      gs.conv (the autodiff's weight-gradient correlation, whose images
      are the forward input's channels); the kernel must read it as it
      lies (`_cfirst` in its name).
      --grouped-channels-first (with --groups G): x is C/G x (G*N) x D...,
      the forward input of a grouped convolution whose weight gradient
      @conv correlates (reshaped to C/G x G x N x D..., transposed with
      [2, 1, 0, ...] and reshaped to N x C x D..., as the autodiff does);
      the kernel must read it as it lies (`_gcfirst`).
      --weight-channels-first: w has its first two dimensions swapped
      (C/G x M x K..., or with --split-weight C x M/G x K...), which @conv
      transposes back (the correlation's filters, the output gradient);
      the kernel must read it as it lies (`_wcfirst`).
  check_conv.py check DIR
      compares DIR/gpu/output_0.npy (the emulated kernel) with
      DIR/cpu/output_0.npy (the CPU lowering) bit for bit, and both with
      NumPy's float64 convolution within the bound of f32 accumulation
      (exact for integer values).
  check_conv.py case DIR --gs-opt PATH --gs-run PATH [--linalg]
                [inputs' options]
      all of it: the inputs, @conv run by gs-run as the CPU lowers it and
      after convert-gs-to-gpu (with --linalg: convert-gs-to-linalg and
      gs-linalg-to-gpu, as a GPU eval step's FP32 convolutions) and
      gs-emulate-gpu, and the check.

The kernel sums each output's products (exact in f32: f16 x f16) in the
order of the CPU lowering, (input channel, kernel offsets), with the
transposed convolution's kernel run backwards as the CPU lowering's
flipped kernel is; both round once. So the two agree exactly, except for
strided transposed convolutions, which the CPU lowers as a GEMM over the
channels and then adds each kernel position's sums (col2im): there both
are held to the bound of f32 accumulation.
"""

import argparse
import itertools
import json
import os
import re
import subprocess
import sys

# NumPy is imported where arrays are made or checked: building the IR
# (conv_mlir, for bench/gpu/prepare_kernels.py) needs none.

U32 = 2.0**-24


def ints(text):
    return [int(v) for v in text.split("x")]


def per_dim(values, rank, default):
    values = values or [default]
    return values * rank if len(values) == 1 else values


def geometry(cfg):
    rank = len(cfg["size"])
    g = {name: per_dim(cfg[name], rank, default) for name, default in
         (("stride", 1), ("pad", 0), ("dilation", 1), ("output_padding", 0))}
    g["pad_end"] = per_dim(cfg["pad_end"], rank, None) if cfg["pad_end"] \
        else g["pad"]
    kernel, size = cfg["kernel"], cfg["size"]
    if cfg["kind"] == "conv":
        g["out"] = [(size[i] + g["pad"][i] + g["pad_end"][i]
                     - g["dilation"][i] * (kernel[i] - 1) - 1)
                    // g["stride"][i] + 1 for i in range(rank)]
    else:
        g["out"] = [g["stride"][i] * (size[i] - 1) + g["output_padding"][i]
                    + g["dilation"][i] * (kernel[i] - 1) + 1 - g["pad"][i]
                    - g["pad_end"][i] for i in range(rank)]
    return g


def shape_text(shape, element):
    return "tensor<" + "x".join(map(str, shape)) + "x" + element + ">"


def shapes(cfg):
    """The input, weight and output shapes."""
    g = geometry(cfg)
    x = [cfg["n"], cfg["c"], *cfg["size"]]
    groups = cfg.get("groups", 1)
    if cfg.get("split_weight"):
        w = [cfg["m"] // groups, cfg["c"], *cfg["kernel"]]
    elif cfg["kind"] == "conv":
        w = [cfg["m"], cfg["c"] // groups, *cfg["kernel"]]
    else:
        w = [cfg["c"], cfg["m"] // groups, *cfg["kernel"]]
    return x, w, [cfg["n"], cfg["m"], *g["out"]]


def dtypes():
    import numpy as np
    return {"f16": np.float16, "f32": np.float32}


def operand_type(cfg):
    """The element type of x and w."""
    return cfg.get("operands", "f16")


def grouped_source_shape(cfg, x_shape):
    """--grouped-channels-first: the shape x lies in, and the split shapes
    @conv reshapes it through (C/G x G x N x D..., N x G x C/G x D...)."""
    n, c, *spatial = x_shape
    groups = cfg["groups"]
    source = [c // groups, groups * n, *spatial]
    return source, [c // groups, groups, n, *spatial], \
        [n, groups, c // groups, *spatial]


def grouped_to_source(cfg, x):
    """x (N x C x D...) as --grouped-channels-first lays it."""
    source, _, split = grouped_source_shape(cfg, list(x.shape))
    perm = [2, 1, 0] + list(range(3, x.ndim + 1))
    return x.reshape(split).transpose(perm).reshape(source)


def grouped_from_source(cfg, source, x_shape):
    """The N x C x D... input of the convolution that `source` (a NumPy
    array or a PyTorch tensor) lays out."""
    _, split, _ = grouped_source_shape(cfg, x_shape)
    perm = [2, 1, 0] + list(range(3, len(x_shape) + 1))
    moved = source.reshape(split)
    moved = moved.permute(*perm) if hasattr(moved, "permute") else \
        moved.transpose(perm)
    return moved.reshape(x_shape)


def make_arrays(cfg):
    """x and w (f16, or cfg's operands), and the bias (of the output type)
    if asked for."""
    import numpy as np
    x_shape, w_shape, _ = shapes(cfg)
    rng = np.random.default_rng(sum(cfg["size"]) * 7919 + cfg["m"])
    if cfg["values"] == "integers":
        x = rng.integers(-4, 5, x_shape)
        w = rng.integers(-4, 5, w_shape)
    else:
        x = rng.standard_normal(x_shape)
        w = rng.standard_normal(w_shape)
    if cfg.get("channels_first"):
        x = np.ascontiguousarray(x.swapaxes(0, 1))
    if cfg.get("grouped_channels_first"):
        x = np.ascontiguousarray(grouped_to_source(cfg, x))
    if cfg.get("weight_channels_first"):
        w = np.ascontiguousarray(w.swapaxes(0, 1))
    element = dtypes()[operand_type(cfg)]
    arrays = {"x": x.astype(element), "w": w.astype(element)}
    if cfg["bias"]:
        arrays["bias"] = rng.integers(-4, 5, cfg["m"]).astype(
            dtypes()[cfg["output"]])
    return arrays


def conv_mlir(cfg, scaled=False):
    """@conv(x, w[, bias]) computing the convolution; `scaled`: also a scale
    argument, the convolution in a gs.scaled_contraction whose statistics
    it returns too."""
    g = geometry(cfg)
    x_shape, w_shape, out_shape = shapes(cfg)
    out = cfg["output"]
    element = operand_type(cfg)
    operands = ["%x", "%w"]
    types = [shape_text(x_shape, element), shape_text(w_shape, element)]
    if cfg["bias"]:
        operands.append("%b")
        types.append(shape_text([cfg["m"]], out))
    arg_types = list(types)
    prologue = ""
    # An operand that lies channels first: the argument so, transposed back.
    for i, key in enumerate(("channels_first", "weight_channels_first")):
        if cfg.get(key):
            first, second, *rest = (x_shape, w_shape)[i]
            arg_types[i] = shape_text([second, first, *rest], element)
            perm = ", ".join(map(str, [1, 0] + list(range(2, 2 + len(rest)))))
            prologue += (f"  {operands[i]}c = gs.transpose {operands[i]}, "
                         f"[{perm}] : {arg_types[i]}\n")
            operands[i] += "c"
    if cfg.get("grouped_channels_first"):
        source, split, moved = (shape_text(s, element) for s in
                                grouped_source_shape(cfg, x_shape))
        arg_types[0] = source
        perm = ", ".join(map(str, [2, 1, 0] +
                             list(range(3, len(x_shape) + 1))))
        prologue += (f"  %xs = gs.reshape %x : {source} -> {split}\n"
                     f"  %xt = gs.transpose %xs, [{perm}] : {split}\n"
                     f"  %xg = gs.reshape %xt : {moved} -> {types[0]}\n")
        operands[0] = "%xg"
    args_text = ", ".join(f"{o}: {t}" for o, t in
                          zip(["%x", "%w", "%b"], arg_types))
    if cfg.get("split_weight"):
        # M/G x C x K -> M/G x G x C/G x K -> G x M/G x C/G x K -> M x C/G x K
        groups, (filters, channels, *kernel) = cfg["groups"], w_shape
        split = [filters, groups, channels // groups, *kernel]
        moved = [groups, filters, channels // groups, *kernel]
        perm = ", ".join(map(str, [1, 0] + list(range(2, len(split)))))
        types[1] = shape_text([groups * filters, channels // groups, *kernel],
                              element)
        prologue += (
            f"  %ws = gs.reshape {operands[1]} : "
            f"{shape_text(w_shape, element)} -> {shape_text(split, element)}\n"
            f"  %wt = gs.transpose %ws, [{perm}] : "
            f"{shape_text(split, element)}\n"
            f"  %wg = gs.reshape %wt : {shape_text(moved, element)} -> "
            f"{types[1]}\n")
        operands[1] = "%wg"
    attrs = [f"strides = array<i64: {', '.join(map(str, g['stride']))}>",
             f"dilations = array<i64: {', '.join(map(str, g['dilation']))}>",
             f"pads = array<i64: {', '.join(map(str, g['pad'] + g['pad_end']))}>"]
    if cfg.get("groups", 1) != 1:
        attrs.append(f"group = {cfg['groups']} : i64")
    if cfg["kind"] == "convt":
        attrs.append("output_padding = array<i64: "
                     f"{', '.join(map(str, g['output_padding']))}>")
    op = "gs.conv" if cfg["kind"] == "conv" else "gs.conv_transpose"
    result = shape_text(out_shape, out)
    conv = (f"{op} {', '.join(operands)} {{{', '.join(attrs)}}} : "
            f"{', '.join(types)}")
    if not scaled:
        return (f"func.func @conv({args_text}) -> {result} {{\n"
                f"{prologue}"
                f"  %y = {conv} -> {result}\n"
                f"  return %y : {result}\n}}\n")
    product = shape_text(out_shape, "f32")
    return (f"func.func @conv({args_text}, %s: f32) -> ({result}, !gs.stats, "
            f"tensor<4xi64>) {{\n"
            f"{prologue}"
            f"  %y, %stats, %counts = gs.scaled_contraction scale %s : "
            f"{result} {{\n"
            f"    %p = {conv} -> {product}\n"
            f"    gs.yield %p : {product}\n  }}\n"
            f"  return %y, %stats, %counts : {result}, !gs.stats, "
            f"tensor<4xi64>\n}}\n")


def make_inputs(args):
    import numpy as np
    cfg = {k: v for k, v in vars(args).items()
           if k not in ("gs_opt", "gs_run", "wgmma")}
    os.makedirs(args.dir, exist_ok=True)
    for name, array in make_arrays(cfg).items():
        np.save(os.path.join(args.dir, name + ".npy"), array)
    with open(os.path.join(args.dir, "conv.mlir"), "w") as f:
        f.write(conv_mlir(cfg))
    with open(os.path.join(args.dir, "config.json"), "w") as f:
        json.dump(cfg, f)


def reference(cfg, x, w, bias):
    """float64 output and the f32 accumulation bound, by the definition."""
    import numpy as np
    g = geometry(cfg)
    rank = len(cfg["size"])
    n, c, m, groups = cfg["n"], cfg["c"], cfg["m"], cfg.get("groups", 1)
    out = np.zeros([n, m, *g["out"]])
    bound = np.zeros_like(out)
    terms = c // groups * int(np.prod(cfg["kernel"]))
    # Group j's output channels [j, j + 1) * m / groups see its input
    # channels [j, j + 1) * c / groups: the others' weights are zero.
    if groups != 1:
        outs = lambda j: slice(j * m // groups, (j + 1) * m // groups)
        ins = lambda j: slice(j * c // groups, (j + 1) * c // groups)
        if cfg.get("split_weight"):
            # Group j's filters: channels ins(j) of the M/G x C weight.
            w = np.concatenate([w[:, ins(j)] for j in range(groups)])
        if cfg["kind"] == "conv":
            full = np.zeros([m, c, *cfg["kernel"]])
            for j in range(groups):
                full[outs(j), ins(j)] = w[outs(j)]
        else:
            full = np.zeros([c, m, *cfg["kernel"]])
            for j in range(groups):
                full[ins(j), outs(j)] = w[ins(j)]
        w = full
    for k in itertools.product(*(range(v) for v in cfg["kernel"])):
        for o in itertools.product(*(range(v) for v in g["out"])):
            if cfg["kind"] == "conv":
                i = [o[d] * g["stride"][d] + k[d] * g["dilation"][d]
                     - g["pad"][d] for d in range(rank)]
                if not all(0 <= i[d] < cfg["size"][d] for d in range(rank)):
                    continue
                xs = x[(slice(None), slice(None), *i)]      # n x c
                ws = w[(slice(None), slice(None), *k)]      # m x c
                out[(slice(None), slice(None), *o)] += xs @ ws.T
                bound[(slice(None), slice(None), *o)] += np.abs(xs) @ np.abs(ws).T
            else:
                t = [o[d] + g["pad"][d] - k[d] * g["dilation"][d]
                     for d in range(rank)]
                if not all(t[d] >= 0 and t[d] % g["stride"][d] == 0 and
                           t[d] // g["stride"][d] < cfg["size"][d]
                           for d in range(rank)):
                    continue
                i = [t[d] // g["stride"][d] for d in range(rank)]
                xs = x[(slice(None), slice(None), *i)]      # n x c
                ws = w[(slice(None), slice(None), *k)]      # c x m
                out[(slice(None), slice(None), *o)] += xs @ ws
                bound[(slice(None), slice(None), *o)] += np.abs(xs) @ np.abs(ws)
    if bias is not None:
        out += bias.astype(np.float64).reshape([1, m] + [1] * rank)
    return out, terms * U32 * bound


def check(args):
    import numpy as np
    with open(os.path.join(args.dir, "config.json")) as f:
        cfg = json.load(f)
    load = lambda *p: np.load(os.path.join(args.dir, *p))
    gpu, cpu = load("gpu", "output_0.npy"), load("cpu", "output_0.npy")
    x, w = load("x.npy").astype(np.float64), load("w.npy").astype(np.float64)
    if cfg.get("channels_first"):
        x = x.swapaxes(0, 1)
    if cfg.get("grouped_channels_first"):
        x = grouped_from_source(cfg, x, shapes(cfg)[0])
    if cfg.get("weight_channels_first"):
        w = w.swapaxes(0, 1)
    bias = load("bias.npy") if cfg["bias"] else None
    failures = []
    if gpu.dtype != cpu.dtype or gpu.shape != cpu.shape:
        sys.exit(f"FAIL: {gpu.dtype}{gpu.shape} vs {cpu.dtype}{cpu.shape}")
    # The CPU lowers a strided transposed convolution as a GEMM over the
    # channels, then adds the kernel positions' sums (col2im), and an FP32
    # convolution as a GEMM of its own: other orders than the kernel's (or
    # than gs-linalg-to-gpu's loops), so only the bound holds for both.
    same_order = not (cfg["kind"] == "convt" and
                      any(s > 1 for s in geometry(cfg)["stride"])) and \
        not cfg.get("linalg")
    if same_order and gpu.tobytes() != cpu.tobytes():
        bad = gpu != cpu
        i = tuple(int(v) for v in np.argwhere(bad)[0])
        failures.append(f"kernel and CPU lowering differ at {bad.sum()} "
                        f"elements, first {i}: {gpu[i]} vs {cpu[i]}")
    exact, bound = reference(cfg, x, w, bias)
    # Rounded once to the output type, from within `bound` of exact.
    ulp = np.spacing(np.abs(exact).astype(gpu.dtype)).astype(np.float64)
    for name, got in (("kernel", gpu), ("CPU lowering", cpu)):
        error = np.abs(got.astype(np.float64) - exact)
        if not (error <= bound + ulp).all():
            i = tuple(int(v) for v in np.argwhere(error > bound + ulp)[0])
            failures.append(f"{name} off the float64 convolution at {i}: "
                            f"{got[i]} vs {exact[i]}")
    if failures:
        print("FAIL:", *failures, sep="\n  ")
        sys.exit(1)
    agreement = ("the kernel equals the CPU lowering bit for bit"
                 if same_order else "kernel and CPU lowering sum in other "
                 "orders")
    print(f"PASS {cfg['kind']} {gpu.shape} {cfg['values']}: {agreement}, "
          "both within f32 accumulation of float64")


def run_both(args):
    """@conv as the CPU lowers it (DIR/cpu) and on the emulated kernel
    (DIR/gpu)."""
    operands = ["x.npy", "w.npy"] + (["bias.npy"] if args.bias else [])
    inputs = [a for name in operands
              for a in ("-i", os.path.join(args.dir, name))]
    source = os.path.join(args.dir, "conv.mlir")
    kernels = os.path.join(args.dir, "kernels.mlir")
    emulated = os.path.join(args.dir, "gpu.mlir")
    wgmma = "true" if args.wgmma else "false"
    lowering = (["--convert-gs-to-linalg", "--gs-linalg-to-gpu"] if args.linalg
                else [f"--convert-gs-to-gpu=wgmma={wgmma}"])
    for command in (
            [args.gs_run, source, "--entry=conv", *inputs,
             "--output-dir=" + os.path.join(args.dir, "cpu")],
            [args.gs_opt, source, *lowering, "-o", kernels],
            [args.gs_opt, kernels,
             "--gs-emulate-gpu=check-races=" +
             ("true" if args.check_races else "false"), "-o", emulated],
            [args.gs_run, emulated, "--entry=conv", *inputs,
             "--output-dir=" + os.path.join(args.dir, "gpu")]):
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            sys.exit(f"FAIL: {' '.join(command)}:\n{result.stderr}")
    with open(kernels) as f:
        text = f.read()
    if args.linalg:
        if not re.search(r"call @gs_reduce_\w+_entry", text):
            sys.exit("FAIL: gs-linalg-to-gpu made no kernel of the "
                     "convolution")
        print("kernel from gs-linalg-to-gpu")
        return
    if "call @gs_conv" not in text:
        sys.exit("FAIL: convert-gs-to-gpu made no kernel of the convolution")
    if args.channels_first and "_cfirst_" not in text:
        sys.exit("FAIL: the kernel reads a transposed copy of the input")
    if args.grouped_channels_first and "_gcfirst_" not in text:
        sys.exit("FAIL: the kernel reads a rearranged copy of the input")
    if args.weight_channels_first and "_wcfirst_" not in text:
        sys.exit("FAIL: the kernel reads a transposed copy of the weight")
    instruction = "wgmma" if "_wgmma_entry" in text else "mma.sync"
    print(f"kernel on {instruction}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    inputs = sub.add_parser("inputs")
    case = sub.add_parser("case")
    case.add_argument("--gs-opt", required=True)
    case.add_argument("--gs-run", required=True)
    case.add_argument("--wgmma", action="store_true",
                      help="the kernel on wgmma where m >= 64 (sm_90a)")
    case.add_argument("--check-races", action="store_true",
                      help="emulated with gs-emulate-gpu's check-races")
    case.add_argument("--linalg", action="store_true",
                      help="the convolution in gs-linalg-to-gpu's kernels "
                      "(a GPU eval step's FP32 convolutions)")
    add_input_options(inputs)
    add_input_options(case)
    checks = sub.add_parser("check")
    checks.add_argument("dir")
    args = parser.parse_args()
    if args.command == "inputs":
        make_inputs(args)
    elif args.command == "case":
        make_inputs(args)
        run_both(args)
        check(args)
    else:
        check(args)


def add_input_options(inputs):
    inputs.add_argument("dir")
    inputs.add_argument("--kind", choices=["conv", "convt"], required=True)
    for name in ("n", "c", "m"):
        inputs.add_argument(f"--{name}", type=int, required=True)
    inputs.add_argument("--size", type=ints, required=True)
    inputs.add_argument("--kernel", type=ints, required=True)
    for name in ("stride", "pad", "pad-end", "dilation", "output-padding"):
        inputs.add_argument(f"--{name}", type=ints)
    inputs.add_argument("--groups", type=int, default=1)
    inputs.add_argument("--split-weight", action="store_true")
    inputs.add_argument("--channels-first", action="store_true")
    inputs.add_argument("--grouped-channels-first", action="store_true")
    inputs.add_argument("--weight-channels-first", action="store_true")
    inputs.add_argument("--bias", action="store_true")
    inputs.add_argument("--operands", choices=["f16", "f32"], default="f16")
    inputs.add_argument("--output", choices=["f16", "f32"], default="f32")
    inputs.add_argument("--values", choices=["integers", "normal"],
                        default="normal")


if __name__ == "__main__":
    main()
