"""Builds the GPU check's kernels: PTX and a manifest, on a machine with gs-opt.

  prepare_kernels.py --gs-opt build/bin/gs-opt --out build/gpu-check

For each configuration below, gs-gpu-gemm-kernel builds the fused GEMM,
gpu-kernel-outlining splits off its kernels, and the NVVM pipeline lowers
them to PTX for sm_80 and sm_90 (the driver compiles PTX for the GPU it
runs on, so no CUDA toolkit is needed there). manifest.json records, per
configuration, the kernel function's arguments and, per launch, the PTX
files, the grid, the block and which arguments it takes: what
check_kernels.py needs to launch them through the CUDA driver API.
"""

import argparse
import json
import os
import re
import subprocess
import sys

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
]
CHIPS = ["sm_80", "sm_90"]


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
    signature = re.search(r"func\.func @" + re.escape(name) + r"\((.*?)\)\s*\{",
                          ir)
    if not signature:
        sys.exit(f"error: no function @{name} in the outlined IR")
    arguments = []
    for part in re.findall(r"%arg\d+: memref<[^>]*>", signature.group(1)):
        arguments.append(memref_type(part.split(": ", 1)[1]))
    constants = {m.group(1): int(m.group(2)) for m in re.finditer(
        r"%(\w+) = arith\.constant (\d+) : index", ir)}
    launches = []
    pattern = (r"gpu\.launch_func\s+@(\w+)::@(\w+)\s+blocks in \(([^)]*)\)\s+"
               r"threads in \(([^)]*)\)\s+args\(([^)]*)\)")
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
        args = []
        for arg in m.group(5).split(","):
            ref = re.match(r"\s*%arg(\d+) : ", arg)
            if not ref:
                sys.exit(f"error: kernel argument '{arg.strip()}' is not one "
                         f"of @{name}'s arguments")
            args.append(int(ref.group(1)))
        launches.append({"module": m.group(1), "function": m.group(2),
                         "grid": dims[0], "block": dims[1], "args": args})
    if not launches:
        sys.exit("error: no gpu.launch_func in the outlined IR")
    return arguments, launches


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gs-opt", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--only", help="comma-separated configuration names")
    args = parser.parse_args()
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
             "--gpu-kernel-outlining", "-o", outlined])
        with open(outlined) as f:
            arguments, launches = parse_outlined(f.read(), "gemm")
        for chip in CHIPS:
            out = os.path.join(directory, chip)
            os.makedirs(out, exist_ok=True)
            run([args.gs_opt, outlined,
                 "--gpu-lower-to-nvvm-pipeline=cubin-chip=" + chip +
                 " cubin-features=+ptx80 cubin-format=isa opt-level=3",
                 f"--gs-dump-gpu-binaries=output-dir={out}", "-o", os.devnull])
        for launch in launches:
            launch["ptx"] = {
                chip: os.path.join(name, chip, f"{launch['module']}.{chip}.ptx")
                for chip in CHIPS}
            for path in launch["ptx"].values():
                if not os.path.exists(os.path.join(args.out, path)):
                    sys.exit(f"error: {path} was not written")
        flags = dict(o.split("=", 1) for o in options.split())
        manifest.append({
            "name": name, "m": m, "n": n, "k": k, "kind": kind,
            "scale": scale, "bias": bias, "mask": mask,
            "trans_a": flags.get("trans-a") == "true",
            "trans_b": flags.get("trans-b") == "true",
            "output": flags.get("output", "f16"),
            "bias_type": flags.get("bias-type", "f32"),
            "statistics": flags.get("statistics") != "false", "timed": timed,
            "arguments": [{"shape": s, "dtype": t} for s, t in arguments],
            "launches": launches})
        print(f"prepared {name}: {len(launches)} kernel(s)")
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()
