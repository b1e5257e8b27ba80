"""Builds the GPU check's training executables, on a machine with gs-compile.

  prepare_train.py --gs-compile build/bin/gs-compile --out build/gpu-check

Exports the Fashion-MNIST MLP and the BatchNorm CNN with their loss
(test/ImportONNX/Inputs/export_torch_models.py), compiles each for the
GPU (gs-compile --target=cuda, a fatbin for --gpu-arch, sm_90 by default:
its cubin and PTX, which newer GPUs compile) under gradient scaling, FP16
without scaling and FP32, and for the CPU under gradient scaling, and
writes 1280 Fashion-MNIST examples to train on. OUT/train/manifest.json
lists them for train_check.py. Run with Debian's Python (torch 1.13).
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "test", "ImportONNX", "Inputs"))
sys.path.insert(0, os.path.join(ROOT, "test", "Integration", "CPU", "Inputs"))
import export_torch_models  # noqa: E402
import torch_trajectory  # noqa: E402

MODELS = ("mlp", "cnn")
GPU_SCALINGS = ("gs", "none", "fp32")
BATCH = 64
EXAMPLES = 20 * BATCH


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gs-compile", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--gpu-arch", default="sm_90")
    parser.add_argument("--models", default=",".join(MODELS),
                        help="which of " + ", ".join(MODELS))
    parser.add_argument("--emulate-gpu-kernels", action="store_true",
                        help="GPU executables whose kernels run on the CPU "
                        "(for testing this check without a GPU)")
    args = parser.parse_args()
    out = os.path.join(args.out, "train")
    os.makedirs(out, exist_ok=True)

    x, t = torch_trajectory.fashion_batch(EXAMPLES)
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "t.npy"), t)
    manifest = {"batch": BATCH, "examples": EXAMPLES, "gpu_arch": args.gpu_arch,
                "data": {"x": "x.npy", "t": "t.npy"}, "executables": []}
    for model in args.models.split(","):
        if model not in MODELS:
            sys.exit(f"error: --models: unknown model '{model}'")
        builder = getattr(export_torch_models, model)
        export_torch_models.export(model, builder, out)
        onnx = os.path.join(out, model + ".onnx")
        builds = [("cuda", s) for s in GPU_SCALINGS] + [("cpu", "gs")]
        for target, scaling in builds:
            name = f"{model}-{scaling}-{target}"
            command = [args.gs_compile, onnx, f"--onnx-shape=x={BATCH}x1x28x28",
                       f"--scaling={scaling}", f"--target={target}",
                       "-o", os.path.join(out, name)]
            if target == "cuda":
                command.append(f"--gpu-arch={args.gpu_arch}")
                if args.emulate_gpu_kernels:
                    command.append("--emulate-gpu-kernels")
            print("building", name, flush=True)
            subprocess.run(command, check=True)
            manifest["executables"].append(
                {"model": model, "scaling": scaling, "target": target,
                 "path": name})
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"wrote {len(manifest['executables'])} executables to {out}")


if __name__ == "__main__":
    main()
