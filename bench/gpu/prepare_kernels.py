"""Builds the GPU check's kernels: PTX and a manifest, on a machine with gs-opt.

  prepare_kernels.py --gs-opt build/bin/gs-opt --out build/gpu-check

For each GEMM configuration below, gs-gpu-gemm-kernel builds the fused
GEMM; for each convolution, convert-gs-to-gpu builds its implicit GEMM
from a function computing it (check_conv.py's), and for each FP32 one
(an eval step's) convert-gs-to-linalg and gs-linalg-to-gpu build its
kernel; the scale decisions are
convert-gs-to-gpu's kernels for test/Integration/GPU/Inputs/
scale-decisions.mlir, with the statistics of scale_cases.py's gradients
and the scales the CPU lowering decides from them (gs-run), which the
device must reproduce. gs-outline-gpu-kernels
splits off the kernels, and the NVVM pipeline lowers them to PTX for sm_80
and sm_90, the wgmma kernels for sm_90a only (the driver compiles PTX for
the GPU it runs on, so no CUDA toolkit is needed there). manifest.json records, per configuration, the
kernel function's arguments and, per launch, the PTX files, the grid, the
block and which arguments it takes: what check_kernels.py needs to launch
them through the CUDA driver API.
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "Integration", "GPU",
                                "Inputs"))
import check_conv  # noqa: E402  (the convolutions the CPU tests run)
import scale_cases  # noqa: E402  (the gradients the decision tests run on)

DECISIONS_MLIR = os.path.join(HERE, "..", "..", "test", "Integration", "GPU",
                              "Inputs", "scale-decisions.mlir")
# @decide's results, in order; the check feeds them to the kernels.
DECIDE_OUTPUTS = ["scales", "estimates", "sdy", "sw", "sg", "hist"]
# The decision kernels of scale-decisions.mlir: the kernel, its inputs
# (@decide's results, the case's alpha, or scale<i>: @decide's scale i),
# which of @decide's scales and estimates it must reproduce, and whether
# its scale is rounded to a power of two (then it must be the CPU's
# exactly; an unrounded one may differ in its last bit, as the device's
# exp and log may from the host's).
DECISIONS = [
    ("gs_scale_half_normal_k10_relu", ["sdy", "sw"], 0, 0, True),
    ("gs_scale_log_normal", ["sg"], 1, 1, True),
    ("gs_scale_log_normal_1", ["sg"], 2, 2, True),
    ("gs_scale_exponent_histogram", ["sg", "hist"], 3, 3, True),
    ("gs_scale_log_normal_accum", ["sg", "alpha"], 4, 4, True),
    ("gs_scale_log_normal_2", ["sg"], 5, 5, False),
    ("gs_unify_scales_2", ["scale0", "scale1", "sdy", "sg"], 6, None, True),
]

# name, m, n, k, kind (check_gemm.py's), scale, bias, mask, options, timed
CONFIGS = [
    ("tile64_bias_mask", 512, 512, 512, "integers", 0.25, True, True, "", False),
    ("ragged", 70, 50, 40, "integers", 0.5, True, True, "", False),
    ("guarded", 300, 20, 100, "integers", 0.5, False, False, "", False),
    ("special", 33, 24, 64, "special", 2.0**-26, False, False, "", False),
    ("normal", 130, 72, 45, "normal", 1.0, False, False, "", False),
    ("tile128_ragged", 1100, 1030, 200, "integers", 0.25, False, False, "", False),
    ("gemm4096", 4096, 4096, 4096, "integers", 2.0**-10, False, False, "", True),
    ("gemm4096_normal", 4096, 4096, 4096, "normal", 1.0, False, False, "", False),
    ("gemm4096_nostats", 4096, 4096, 4096, "integers", 2.0**-10, False, False,
     "statistics=false", True),
    # Two resident blocks per multiprocessor (the 128 x 128 tiles' default)
    # against one, where ptxas fits 128 registers without spilling (4096^3
    # on sm_90) and where it spills (a ragged k, a transposed A).
    ("gemm4096_one_block", 4096, 4096, 4096, "integers", 2.0**-10, False,
     False, "min-blocks-per-sm=1", True),
    ("gemm2048x1024x1000", 2048, 1024, 1000, "normal", 1.0, False, False, "",
     True),
    ("gemm2048x1024x1000_one_block", 2048, 1024, 1000, "normal", 1.0, False,
     False, "min-blocks-per-sm=1", True),
    ("gemm4096_trans_a", 4096, 4096, 4096, "integers", 2.0**-10, False, False,
     "trans-a=true", True),
    ("gemm4096_trans_a_one_block", 4096, 4096, 4096, "integers", 2.0**-10,
     False, False, "trans-a=true min-blocks-per-sm=1", True),
    # The MNIST MLP (784-128-10) at batch 128, as gs-to-gpu lays it out:
    # the first layer forward (X W1^T + b1, f16 bias), its weight gradient
    # (dY1^T X into f32), the 10-class layer forward (n = 10: guarded
    # copies) and its data gradient (k = 10, into the ReLU mask).
    ("mlp_fc1_forward", 128, 128, 784, "normal", 1.0, True, False,
     "trans-b=true bias-type=f16", True),
    ("mlp_fc1_weight_grad", 128, 784, 128, "normal", 1.0, False, False,
     "trans-a=true output=f32", True),
    ("mlp_fc2_forward", 128, 10, 128, "normal", 1.0, True, False,
     "trans-b=true bias-type=f16", True),
    ("mlp_fc2_data_grad", 128, 128, 10, "normal", 1.0, False, True, "", True),
    # Transposed operands on ragged tiles (guarded copies of B^T: k = 40
    # is aligned, m = 70 is not).
    ("ragged_transposed", 70, 50, 40, "integers", 0.5, False, False,
     "trans-a=true trans-b=true", False),
    # Hopper's wgmma (sm_90a PTX, run on compute capability 9.0 only): the
    # same shapes and orientations as above, on warpgroups reading swizzled
    # shared memory through descriptors.
    ("wgmma_ragged", 70, 50, 40, "integers", 0.5, True, True, "wgmma=true",
     False),
    ("wgmma_ragged_transposed", 70, 50, 40, "integers", 0.5, False, False,
     "wgmma=true trans-a=true trans-b=true", False),
    ("wgmma_tile128_ragged", 1100, 1030, 200, "integers", 0.25, False, False,
     "wgmma=true", False),
    ("wgmma4096", 4096, 4096, 4096, "integers", 2.0**-10, False, False,
     "wgmma=true", True),
    ("wgmma4096_normal", 4096, 4096, 4096, "normal", 1.0, False, False,
     "wgmma=true", False),
    ("wgmma4096_nostats", 4096, 4096, 4096, "integers", 2.0**-10, False,
     False, "wgmma=true statistics=false", True),
    ("wgmma4096_one_block", 4096, 4096, 4096, "integers", 2.0**-10, False,
     False, "wgmma=true min-blocks-per-sm=1", True),
    # Deeper pipelines in dynamic shared memory: four 128 x 128 x 32
    # stages (65 KiB, two blocks per multiprocessor), and 128 x 128 x 64
    # ones (128-byte K-major rows) three and four deep (97 and 129 KiB, one
    # block).
    ("wgmma4096_4_stages", 4096, 4096, 4096, "integers", 2.0**-10, False,
     False, "wgmma=true stages=4", True),
    ("wgmma4096_k64_3_stages", 4096, 4096, 4096, "integers", 2.0**-10, False,
     False, "wgmma=true block-k=64 stages=3 min-blocks-per-sm=1", True),
    ("wgmma4096_k64_4_stages", 4096, 4096, 4096, "integers", 2.0**-10, False,
     False, "wgmma=true block-k=64 stages=4 min-blocks-per-sm=1", True),
    ("wgmma_deep_ragged", 130, 140, 200, "normal", 1.0, False, False,
     "wgmma=true block-m=128 block-n=128 warps-m=8 warps-n=1 stages=4",
     False),
    # One group of wgmmas left running while the next tile's are issued
    # (wgmma.wait_group 1; the copies two tiles ahead in three stages,
    # 49 KiB), against the same pipelines waiting for each tile's.
    ("wgmma4096_in_flight", 4096, 4096, 4096, "integers", 2.0**-10, False,
     False, "wgmma=true stages=3 wgmma-in-flight=1", True),
    ("wgmma4096_3_stages", 4096, 4096, 4096, "integers", 2.0**-10, False,
     False, "wgmma=true stages=3", True),
    ("wgmma4096_4_stages_in_flight", 4096, 4096, 4096, "integers", 2.0**-10,
     False, False, "wgmma=true stages=4 wgmma-in-flight=1", True),
    ("wgmma4096_k64_4_stages_in_flight", 4096, 4096, 4096, "integers",
     2.0**-10, False, False,
     "wgmma=true block-k=64 stages=4 min-blocks-per-sm=1 wgmma-in-flight=1",
     True),
    ("wgmma_in_flight_ragged", 1100, 1030, 200, "integers", 0.25, False,
     False, "wgmma=true wgmma-in-flight=1", False),
    ("wgmma4096_trans_a", 4096, 4096, 4096, "integers", 2.0**-10, False,
     False, "wgmma=true trans-a=true output=f32", True),
    ("wgmma4096_trans_b", 4096, 4096, 4096, "integers", 2.0**-10, False,
     False, "wgmma=true trans-b=true", True),
    ("wgmma_mlp_fc1_forward", 128, 128, 784, "normal", 1.0, True, False,
     "wgmma=true trans-b=true bias-type=f16", True),
]
CHIPS = ["sm_80", "sm_90"]
# wgmma exists only in the architecture-specific sm_90a.
WGMMA_CHIPS = ["sm_90a"]


def conv(kind, n, c, size, m, kernel, values="normal", output="f32", **rest):
    """A check_conv.py configuration."""
    cfg = {"kind": kind, "n": n, "c": c, "size": size, "m": m,
           "kernel": kernel, "values": values, "output": output,
           "bias": False, "stride": None, "pad": None, "pad_end": None,
           "dilation": None, "output_padding": None}
    cfg.update(rest)
    return cfg


# Convolutions: name, configuration, the scale of a gs.scaled_contraction
# (its statistics checked too) or None for a plain convolution, timed.
CONV_CONFIGS = [
    ("conv_small_bias", conv("conv", 2, 3, [9, 9], 8, [3, 3], "integers",
                             "f16", pad=[1], bias=True), None, False),
    ("convt_small_scaled", conv("convt", 2, 8, [5, 5], 3, [3, 3], "integers",
                                "f16", stride=[2], pad=[1]), 0.25, False),
    ("conv_1d", conv("conv", 2, 3, [20], 5, [4], stride=[3], pad=[2]), None,
     False),
    ("conv_3d_dilated", conv("conv", 1, 2, [5, 6, 7], 3, [2, 3, 2],
                             dilation=[2], pad=[1]), None, False),
    # ResNet-18 at batch 8: a 64-channel 3x3 convolution, its data gradient
    # (scaled, as gs-fuse-epilogues leaves it) and weight gradient (the
    # input correlated with the output gradient: from transposed copies,
    # and as the autodiff builds it, reading the input and the output
    # gradient as they lie, channels first), and the strided 3x3 into 128
    # channels.
    ("resnet_conv3x3", conv("conv", 8, 64, [56, 56], 64, [3, 3], "normal",
                            "f16", pad=[1]), None, True),
    ("resnet_conv3x3_data_grad", conv("convt", 8, 64, [56, 56], 64, [3, 3],
                                      "normal", "f16", pad=[1]), 1.0, True),
    ("resnet_conv3x3_weight_grad", conv("conv", 64, 8, [56, 56], 64,
                                        [56, 56], pad=[1]), None, True),
    ("resnet_conv3x3_weight_grad_cfirst",
     conv("conv", 64, 8, [56, 56], 64, [56, 56], pad=[1],
          channels_first=True, weight_channels_first=True), None, True),
    ("resnet_conv3x3_strided", conv("conv", 8, 64, [56, 56], 128, [3, 3],
                                    "normal", "f16", stride=[2], pad=[1]),
     None, True),
    # The BatchNorm CNN's first convolution at batch 64 (one input channel,
    # eight 3x3 filters: k = 9, every element gathered).
    ("cnn_conv1", conv("conv", 64, 1, [28, 28], 8, [3, 3], "normal", "f16",
                       pad=[1], bias=True), None, True),
    # Grouped: one GEMM a group. A small ragged one (4 strided groups of
    # 12 filters); ResNeXt-101 32x8d's first-stage 3x3 at batch 8 (32
    # groups of 8) and its scaled data gradient; the CNN's first weight
    # gradient with its 64 images split into 16 groups of 4 (16 blocks,
    # each a sixteenth of the depth).
    ("conv_grouped_ragged", conv("conv", 3, 8, [11, 9], 48, [3, 3],
                                 "integers", "f16", stride=[2], pad=[1],
                                 bias=True, groups=4), None, False),
    # A small ragged one reading its input channels first (C x N x D) and
    # its weight too (C x M x K).
    ("conv_cfirst_ragged", conv("conv", 3, 5, [7, 6], 16, [3, 3],
                                "integers", "f16", stride=[2], pad=[1],
                                channels_first=True,
                                weight_channels_first=True), None, False),
    ("resnext_conv3x3_grouped", conv("conv", 8, 256, [56, 56], 256, [3, 3],
                                     "normal", "f16", pad=[1], groups=32),
     None, True),
    ("resnext_conv3x3_grouped_data_grad",
     conv("convt", 8, 256, [56, 56], 256, [3, 3], "normal", "f16", pad=[1],
          groups=32), 1.0, True),
    # Its weight gradient: the forward input's 32 groups of 8 channels
    # correlated with the output gradient (both channels first), from a
    # rearranged copy of the input and reading it as it lies; and a small
    # ragged one (3 groups, 5 images of 4 channels).
    ("resnext_conv3x3_grouped_weight_grad",
     conv("conv", 8, 256, [56, 56], 256, [56, 56], pad=[1], groups=32,
          weight_channels_first=True), None, True),
    ("resnext_conv3x3_grouped_weight_grad_gcfirst",
     conv("conv", 8, 256, [56, 56], 256, [56, 56], pad=[1], groups=32,
          grouped_channels_first=True, weight_channels_first=True), None,
     True),
    ("conv_grouped_cfirst_ragged",
     conv("conv", 5, 12, [11, 9], 24, [9, 7], "integers", pad=[1],
          groups=3, grouped_channels_first=True,
          weight_channels_first=True), None, False),
    ("cnn_conv1_weight_grad_split16", conv("conv", 1, 64, [28, 28], 128,
                                           [28, 28], pad=[1], groups=16),
     None, True),
]
# FP32 convolutions as a GPU eval step computes them (gs-linalg-to-gpu:
# a thread per register block of outputs, or per output): name,
# configuration (unpadded: a padded one's border is a gather kernel of its
# own), register blocks, timed. ResNet-18's 3x3 at batch 32 (4 images x 4
# filters a thread) against the same kernel with an output a thread, and a
# small one (2 images a thread).
EVAL_CONV_CONFIGS = [
    ("eval_resnet_conv3x3", conv("conv", 32, 64, [58, 58], 64, [3, 3],
                                 operands="f32"), True, True),
    ("eval_resnet_conv3x3_unblocked", conv("conv", 32, 64, [58, 58], 64,
                                           [3, 3], operands="f32"), False,
     True),
    ("eval_conv_small", conv("conv", 8, 8, [34, 34], 16, [3, 3],
                             operands="f32"), True, False),
]
# Convolutions on the wgmma kernels (convert-gs-to-gpu wgmma=true, sm_90a):
# ResNet-18's 3x3 forward and scaled data gradient, and a small ragged one.
WGMMA_CONV_CONFIGS = [
    ("wgmma_conv_ragged", conv("conv", 2, 5, [11, 9], 70, [3, 3], "integers",
                               "f16", stride=[2], pad=[1], bias=True), None,
     False),
    ("wgmma_resnet_conv3x3", conv("conv", 8, 64, [56, 56], 64, [3, 3],
                                  "normal", "f16", pad=[1]), None, True),
    ("wgmma_resnet_conv3x3_data_grad", conv("convt", 8, 64, [56, 56], 64,
                                            [3, 3], "normal", "f16", pad=[1]),
     1.0, True),
]


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"error: {' '.join(command)} failed:\n{result.stderr}")
    return result.stdout


def memref_type(text):
    """'memref<70x40xf16>' -> ([70, 40], 'f16')"""
    m = re.fullmatch(r"memref<((?:\d+x)*)(\w+)>", text.strip())
    if not m:
        sys.exit(f"error: unsupported kernel argument type {text}")
    shape = [int(d) for d in m.group(1).split("x") if d]
    return shape, m.group(2)


def parse_outlined(ir, name):
    """The kernel function's arguments and its launches, in order."""
    signature = re.search(r"func\.func (?:private )?@" + re.escape(name) +
                          r"\((.*?)\)\s*\{", ir)
    if not signature:
        sys.exit(f"error: no function @{name} in the outlined IR")
    arguments = []
    for part in re.findall(r"%arg\d+: memref<[^>]*>", signature.group(1)):
        arguments.append(memref_type(part.split(": ", 1)[1]))
    # The function's body: up to the brace closing it (at its indentation).
    indent = ir[ir.rfind("\n", 0, signature.start()) + 1:signature.start()]
    end = ir.find("\n" + indent + "}", signature.end())
    ir = ir[signature.end():end if end >= 0 else len(ir)]
    constants = {m.group(1): int(m.group(2)) for m in re.finditer(
        r"%(\w+) = arith\.constant (\d+) : (?:index|i32)", ir)}
    launches = []
    pattern = (r"gpu\.launch_func\s+@(\w+)::@(\w+)\s+blocks in \(([^)]*)\)\s+"
               r"threads in \(([^)]*)\)\s+"
               r"(?:dynamic_shared_memory_size %(\w+)\s+)?args\(([^)]*)\)")
    for m in re.finditer(pattern, ir):
        dims = []
        for group in (m.group(3), m.group(4)):
            values = []
            for v in group.split(","):
                key = v.strip().lstrip("%")
                if key not in constants:
                    sys.exit(f"error: launch size {v} is not a constant")
                values.append(constants[key])
            dims.append(values)
        shared_bytes = 0
        if m.group(5):
            if m.group(5) not in constants:
                sys.exit(f"error: dynamic shared memory size %{m.group(5)} "
                         "is not a constant")
            shared_bytes = constants[m.group(5)]
        args = []
        for arg in m.group(6).split(","):
            ref = re.match(r"\s*%arg(\d+) : ", arg)
            if not ref:
                sys.exit(f"error: kernel argument '{arg.strip()}' is not one "
                         f"of @{name}'s arguments")
            args.append(int(ref.group(1)))
        launches.append({"module": m.group(1), "function": m.group(2),
                         "grid": dims[0], "block": dims[1], "args": args,
                         "shared_bytes": shared_bytes})
    if not launches:
        sys.exit("error: no gpu.launch_func in the outlined IR")
    return arguments, launches


def lower(args, directory, outlined, name, chips=CHIPS):
    """PTX for each chip of the kernels in `outlined`; the arguments and
    launches of its function @name."""
    with open(outlined) as f:
        arguments, launches = parse_outlined(f.read(), name)
    for chip in chips:
        out = os.path.join(directory, chip)
        os.makedirs(out, exist_ok=True)
        run([args.gs_opt, outlined,
             "--gpu-lower-to-nvvm-pipeline=cubin-chip=" + chip +
             " cubin-features=+ptx80 cubin-format=isa opt-level=3",
             f"--gs-dump-gpu-binaries=output-dir={out}", "-o", os.devnull])
    relative = os.path.relpath(directory, args.out)
    for launch in launches:
        launch["ptx"] = {
            chip: os.path.join(relative, chip,
                               f"{launch['module']}.{chip}.ptx")
            for chip in chips}
        for path in launch["ptx"].values():
            if not os.path.exists(os.path.join(args.out, path)):
                sys.exit(f"error: {path} was not written")
    return [{"shape": s, "dtype": t} for s, t in arguments], launches


def prepare_conv(args, name, cfg, scale, wgmma=False):
    """The kernel convert-gs-to-gpu builds for the convolution (on wgmma,
    for sm_90a only, with `wgmma`)."""
    directory = os.path.join(args.out, name)
    os.makedirs(directory, exist_ok=True)
    source = os.path.join(directory, "conv.mlir")
    with open(source, "w") as f:
        f.write(check_conv.conv_mlir(cfg, scaled=scale is not None))
    outlined = os.path.join(directory, "outlined.mlir")
    run([args.gs_opt, source,
         f"--convert-gs-to-gpu=wgmma={str(wgmma).lower()}",
         "--gs-outline-gpu-kernels", "-o", outlined])
    with open(outlined) as f:
        kernels = re.findall(r"func\.func private @(gs_convt?_\w+)\(", f.read())
    kernel = [k for k in kernels if not k.endswith("_entry")]
    if len(kernel) != 1:
        sys.exit(f"error: {name}: expected one convolution kernel, got "
                 f"{kernels}")
    return lower(args, directory, outlined, kernel[0],
                 WGMMA_CHIPS if wgmma else CHIPS)


def prepare_eval_conv(args, name, cfg, register_blocks):
    """The kernel gs-linalg-to-gpu builds for an FP32 convolution."""
    directory = os.path.join(args.out, name)
    os.makedirs(directory, exist_ok=True)
    source = os.path.join(directory, "conv.mlir")
    with open(source, "w") as f:
        f.write(check_conv.conv_mlir(cfg))
    outlined = os.path.join(directory, "outlined.mlir")
    blocks = str(register_blocks).lower()
    run([args.gs_opt, source, "--convert-gs-to-linalg",
         f"--gs-linalg-to-gpu=register-blocks={blocks}",
         "--gs-outline-gpu-kernels", "-o", outlined])
    with open(outlined) as f:
        kernels = re.findall(r"func\.func private @(gs_\w+)\(", f.read())
    kernel = [k for k in kernels if not k.endswith("_entry")]
    if len(kernel) != 1 or not kernel[0].startswith("gs_reduce_"):
        sys.exit(f"error: {name}: expected one gs_reduce kernel, got "
                 f"{kernels}")
    return lower(args, directory, outlined, kernel[0])


def conv_entry(name, cfg, entry_type, arguments, launches, scale, timed):
    """A convolution's manifest entry."""
    x_shape, _, out_shape = check_conv.shapes(cfg)
    return {
        "name": name, "type": entry_type, "conv": cfg, "kind": cfg["values"],
        "m": out_shape[1], "n": out_shape[0] * math.prod(out_shape[2:]),
        "k": x_shape[1] // cfg.get("groups", 1) * math.prod(cfg["kernel"]),
        "scale": 1.0 if scale is None else scale, "bias": cfg["bias"],
        "mask": False, "output": cfg["output"],
        "statistics": scale is not None, "timed": timed,
        "arguments": arguments, "launches": launches}


def mlir_float(value, dtype):
    """A float as an MLIR dense element: inf and NaN as their bits."""
    if math.isfinite(value):
        return repr(float(value))
    bits = {("f16", True): "0x7C00", ("f16", False): "0xFC00",
            ("f32", True): "0x7F800000", ("f32", False): "0xFF800000"}
    if math.isnan(value):
        return "0x7E00" if dtype == "f16" else "0x7FC00000"
    return bits[(dtype, value > 0)]


def case_function(name, arrays):
    """@case_<name>(): @decide on the case's gradients as constants."""
    lines = [f"func.func @case_{name}() -> (tensor<7xf32>, tensor<6xf64>, "
             "tensor<7xf64>, tensor<7xf64>, tensor<7xf64>, tensor<256xi64>) {"]
    operands, types = [], []
    for key in ("dy", "w", "g"):
        dtype = scale_cases.DTYPES[key]
        rows = ", ".join("[" + ", ".join(mlir_float(v, dtype) for v in row) +
                         "]" for row in arrays[key])
        shape = "x".join(str(d) for d in scale_cases.SHAPES[key])
        types.append(f"tensor<{shape}x{dtype}>")
        lines.append(f"  %{key} = arith.constant dense<[{rows}]> : "
                     f"{types[-1]}")
        operands.append(f"%{key}")
    lines.append(f"  %alpha = arith.constant dense<{arrays['alpha']!r}> : "
                 "tensor<f32>")
    operands.append("%alpha")
    types.append("tensor<f32>")
    results = "tensor<7xf32>, tensor<6xf64>, tensor<7xf64>, tensor<7xf64>, " \
              "tensor<7xf64>, tensor<256xi64>"
    lines.append(f"  %r:6 = func.call @decide({', '.join(operands)}) : "
                 f"({', '.join(types)}) -> ({results})")
    lines.append(f"  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5 : {results}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def prepare_decisions(args, only):
    """Manifest entries of the decision kernels, and per case the CPU's
    decisions and the statistics they came from."""
    directory = os.path.join(args.out, "decisions")
    os.makedirs(directory, exist_ok=True)
    outlined = os.path.join(directory, "outlined.mlir")
    run([args.gs_opt, DECISIONS_MLIR, "--convert-gs-to-gpu",
         "--gs-outline-gpu-kernels", "-o", outlined])
    with open(DECISIONS_MLIR) as f:
        module = f.read()
    cases = []
    for name, arrays in scale_cases.cases():
        module += case_function(name, arrays)
        cases.append({"name": name, "alpha": arrays["alpha"],
                      "outputs": os.path.join("decisions", name)})
    source = os.path.join(directory, "cases.mlir")
    with open(source, "w") as f:
        f.write(module)
    for case in cases:
        run([args.gs_run, source, f"--entry=case_{case['name']}",
             "--format=npy", "--output-dir=" +
             os.path.join(args.out, case["outputs"])])
    entries = []
    for kernel, inputs, scale, estimate, rounded in DECISIONS:
        if only and kernel not in only:
            continue
        arguments, launches = lower(args, directory, outlined, kernel)
        entries.append({
            "name": kernel, "type": "decision", "inputs": inputs,
            "scale": scale, "estimate": estimate, "rounded": rounded,
            "outputs": DECIDE_OUTPUTS,
            "cases": cases, "timed": False, "arguments": arguments,
            "launches": launches})
        print(f"prepared {kernel}: {len(launches)} kernel(s), "
              f"{len(cases)} cases")
    return entries


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gs-opt", required=True)
    parser.add_argument("--gs-run",
                        help="gs-run (default: the one beside gs-opt)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--only", help="comma-separated configuration names")
    args = parser.parse_args()
    if not args.gs_run:
        args.gs_run = os.path.join(os.path.dirname(args.gs_opt), "gs-run")
        if not os.path.dirname(args.gs_opt):
            args.gs_run = "gs-run"  # gs-opt from the PATH: gs-run too
    os.makedirs(args.out, exist_ok=True)
    only = set(args.only.split(",")) if args.only else None
    empty = os.path.join(args.out, "empty.mlir")
    with open(empty, "w") as f:
        f.write("\n")
    manifest = []
    for (name, m, n, k, kind, scale, bias, mask, options,
         timed) in CONFIGS:
        if only and name not in only:
            continue
        directory = os.path.join(args.out, name)
        os.makedirs(directory, exist_ok=True)
        kernel = (f"m={m} n={n} k={k} bias={str(bias).lower()} "
                  f"relu-mask={str(mask).lower()} {options}").strip()
        outlined = os.path.join(directory, "outlined.mlir")
        run([args.gs_opt, empty, f"--gs-gpu-gemm-kernel={kernel}",
             "--gs-outline-gpu-kernels", "-o", outlined])
        flags = dict(o.split("=", 1) for o in options.split())
        wgmma = flags.get("wgmma") == "true"
        arguments, launches = lower(args, directory, outlined, "gemm",
                                    WGMMA_CHIPS if wgmma else CHIPS)
        manifest.append({
            "name": name, "m": m, "n": n, "k": k, "kind": kind,
            "scale": scale, "bias": bias, "mask": mask,
            "trans_a": flags.get("trans-a") == "true",
            "trans_b": flags.get("trans-b") == "true",
            "output": flags.get("output", "f16"),
            "bias_type": flags.get("bias-type", "f32"),
            "statistics": flags.get("statistics") != "false", "timed": timed,
            "options": options, "arguments": arguments, "launches": launches})
        print(f"prepared {name}: {len(launches)} kernel(s)")
    convs = [(c, False) for c in CONV_CONFIGS] + \
        [(c, True) for c in WGMMA_CONV_CONFIGS]
    for (name, cfg, scale, timed), wgmma in convs:
        if only and name not in only:
            continue
        arguments, launches = prepare_conv(args, name, cfg, scale, wgmma)
        manifest.append(conv_entry(name, cfg, "conv", arguments, launches,
                                   scale, timed))
        print(f"prepared {name}: {len(launches)} kernel(s)")
    for name, cfg, register_blocks, timed in EVAL_CONV_CONFIGS:
        if only and name not in only:
            continue
        arguments, launches = prepare_eval_conv(args, name, cfg,
                                                register_blocks)
        manifest.append(conv_entry(name, cfg, "eval_conv", arguments,
                                   launches, None, timed))
        print(f"prepared {name}: {len(launches)} kernel(s), "
              f"{launches[0]['grid'][0]} blocks")
    manifest += prepare_decisions(args, only)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()
