"""A training executable for the GPU, its host side run on a stand-in
driver, against the executable for the CPU.

  cuda_executable_check.py --gs-compile PATH --fake-libcuda PATH --work DIR
                           [--model mlp|deep|cnn] [--steps N]

Compiles the exported PyTorch model twice with gs-compile: for the CPU,
and with --target=cuda --emulate-gpu-kernels, which builds the GPU
executable's host side as for a GPU (parameters kept in device memory
and passed to every step, buffers and copies through the GPU runtime and
its caching allocator, the runtime's copies of parameters back for
checkpoints and telemetry) but runs the kernels on the CPU. With
GS_LIBCUDA naming the stand-in driver (device memory in host memory),
both train N steps on one Fashion-MNIST batch; the checkpoints must agree
as train_step_emulated.py's dumps do (parameters, optimizer state, scales,
skipped steps and counts bit for bit, the underflow estimates within a
relative 1e-5), and so must the losses. Then each executable resumes the
other's checkpoint and trains N more steps: the same weights as the CPU
executable's own 2N steps, bit for bit. Run with Debian's Python.
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from train_step_emulated import (MODELS, compare, export_torch_models,  # noqa
                                 torch_trajectory, run)


def checkpoint_params(path):
    """The parameters a checkpoint holds (not its metadata)."""
    with np.load(path) as archive:
        return {name: archive[name] for name in archive.files
                if not name.startswith("gs.trainer.")}


def train(executable, args, name, steps, resume=None, env=None):
    """Trains `steps` steps (in all); returns the losses and the
    checkpoint's parameters."""
    checkpoint = os.path.join(args.work, name + ".npz")
    report = os.path.join(args.work, name + ".json")
    command = [executable, "--train-data=" + args.x,
               "--train-labels=" + args.t, "--normalize=none",
               f"--steps={steps}", "--checkpoint=" + checkpoint,
               "--report=" + report, "--progress=never"]
    if resume:
        command.append("--resume=" + resume)
    result = subprocess.run(command, capture_output=True, text=True,
                            env=env)
    if result.returncode != 0:
        sys.exit(f"error: {' '.join(command)} failed ({result.returncode}):"
                 f"\n{result.stderr}")
    with open(report) as f:
        losses = json.load(f)["loss"]["value"]
    return losses, checkpoint, checkpoint_params(checkpoint)


def verdict(what, problems):
    print(f"{what}: " + ("identical" if not problems else "DIFFERENT")
          + "".join(f"\n    {p}" for p in problems[:5]))
    return not problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gs-compile", required=True)
    parser.add_argument("--fake-libcuda", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--model", choices=sorted(MODELS), default="mlp")
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)

    export_torch_models.export(args.model, MODELS[args.model], args.work)
    x, t = torch_trajectory.fashion_batch(64)
    args.x = os.path.join(args.work, "x.npy")
    args.t = os.path.join(args.work, "t.npy")
    np.save(args.x, x)
    np.save(args.t, t)
    onnx = os.path.join(args.work, args.model + ".onnx")
    cpu_exe = os.path.join(args.work, "train-cpu")
    gpu_exe = os.path.join(args.work, "train-cuda-emulated")
    shape = "--onnx-shape=x=64x1x28x28"
    run([args.gs_compile, onnx, shape, "-o", cpu_exe])
    run([args.gs_compile, onnx, shape, "--target=cuda",
         "--emulate-gpu-kernels", "-o", gpu_exe])
    fake = dict(os.environ, GS_LIBCUDA=args.fake_libcuda)

    n = args.steps
    cpu_losses, cpu_half, cpu = train(cpu_exe, args, "cpu", n)
    gpu_losses, gpu_half, gpu = train(gpu_exe, args, "gpu", n, env=fake)
    ok = verdict(f"{args.model}: {n} steps, GPU executable (emulated "
                 "kernels) vs CPU executable: parameters, optimizer state "
                 "and telemetry", compare(cpu, gpu))
    ok &= verdict(f"{args.model}: losses", [] if cpu_losses == gpu_losses
                  else [f"{gpu_losses} vs {cpu_losses}"])

    _, _, cpu_whole = train(cpu_exe, args, "cpu-whole", 2 * n)
    _, _, cpu_resumed = train(cpu_exe, args, "cpu-resumed", 2 * n,
                              resume=gpu_half)
    ok &= verdict(f"{args.model}: the GPU executable's checkpoint resumed "
                  f"on the CPU to step {2 * n}",
                  compare(cpu_whole, cpu_resumed, estimate_rtol=0))
    _, _, gpu_resumed = train(gpu_exe, args, "gpu-resumed", 2 * n,
                              resume=cpu_half, env=fake)
    ok &= verdict(f"{args.model}: the CPU executable's checkpoint resumed "
                  f"on the GPU to step {2 * n}",
                  compare(cpu_whole, gpu_resumed))
    print(("PASS" if ok else "FAIL") + f" {args.model}: the GPU executable "
          "trains as the CPU executable")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
