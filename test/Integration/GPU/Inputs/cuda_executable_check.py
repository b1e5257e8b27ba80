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
both train N steps on one Fashion-MNIST batch and evaluate the next 200
examples (four eval batches, the last padded) after step N; the
checkpoints must agree as train_step_emulated.py's dumps do (parameters,
optimizer state, scales, skipped steps and counts bit for bit, the
underflow estimates within a relative 1e-5), and so must the losses,
every step's telemetry and the evaluation in the reports (the eval loss
within EVAL_RTOL: the eval step's FP32 GEMMs and convolutions sum in
another order on the GPU). The GPU executable runs ahead of its steps' results there: the
stand-in driver reports no work done until the host waits for it
(GS_FAKE_CUDA_PENDING_EVENTS), so the trainer waits for its oldest step
whenever all the steps it queues ahead are queued. Then each executable
resumes the other's checkpoint and trains N more steps (the GPU's work done
at once now): the same weights as the CPU executable's own 2N steps, bit
for bit. Run with Debian's Python.
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from train_step_emulated import (ESTIMATE_RTOL, MODELS, compare,  # noqa
                                 export_torch_models, torch_trajectory, run)


def checkpoint_params(path):
    """The parameters a checkpoint holds (not its metadata)."""
    with np.load(path) as archive:
        return {name: archive[name] for name in archive.files
                if not name.startswith("gs.trainer.")}


def train(executable, args, name, steps, resume=None, env=None):
    """Trains `steps` steps (in all); returns the report, the checkpoint
    and its parameters."""
    checkpoint = os.path.join(args.work, name + ".npz")
    report = os.path.join(args.work, name + ".json")
    command = [executable, "--train-data=" + args.x,
               "--train-labels=" + args.t, "--normalize=none",
               f"--steps={steps}", "--checkpoint=" + checkpoint,
               "--eval-data=" + args.eval_x, "--eval-labels=" + args.eval_t,
               f"--eval-every={args.steps}",
               "--report=" + report, "--progress=never"]
    if resume:
        command.append("--resume=" + resume)
    result = subprocess.run(command, capture_output=True, text=True,
                            env=env)
    if result.returncode != 0:
        sys.exit(f"error: {' '.join(command)} failed ({result.returncode}):"
                 f"\n{result.stderr}")
    with open(report) as f:
        return json.load(f), checkpoint, checkpoint_params(checkpoint)


# Summing K = 784 FP32 products in another order moves a sum by up to
# K * 2^-24 = 4.7e-5 of the sum of their magnitudes.
EVAL_RTOL = 1e-4


def compare_evaluations(cpu, gpu):
    """Differences between two reports' evaluations: the metric exactly,
    the loss within EVAL_RTOL."""
    if len(cpu) != len(gpu):
        return [f"{len(gpu)} evaluations vs {len(cpu)}"]
    problems = []
    for a, b in zip(cpu, gpu):
        loss_close = np.isclose(a["loss"], b["loss"], rtol=EVAL_RTOL, atol=0)
        if {**a, "loss": 0} != {**b, "loss": 0} or not loss_close:
            problems.append(f"evaluation {b} vs {a}")
    return problems


def compare_reports(cpu, gpu):
    """Differences between two reports' evaluations and per-step
    telemetry: every record exactly but the underflow estimates, within
    ESTIMATE_RTOL."""
    problems = compare_evaluations(cpu["eval"], gpu["eval"])
    for key in ("skipped_steps", "loss_scale", "unifications",
                "overflow_total"):
        if cpu[key] != gpu[key]:
            problems.append(f"{key}: {gpu[key]} vs {cpu[key]}")
    if [s["name"] for s in cpu["sites"]] != [s["name"] for s in gpu["sites"]]:
        return problems + ["the sites differ"]
    for a, b in zip(cpu["sites"], gpu["sites"]):
        for field in a:
            x, y = a[field], b[field]
            if field == "estimated_underflow":
                same = np.allclose(np.array(x, dtype=float),
                                   np.array(y, dtype=float),
                                   rtol=ESTIMATE_RTOL, atol=0, equal_nan=True)
            else:
                same = x == y
            if not same:
                problems.append(f"{a['name']} {field}: {y} vs {x}")
    return problems


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
    x, t = torch_trajectory.fashion_batch(64 + 200)
    args.x = os.path.join(args.work, "x.npy")
    args.t = os.path.join(args.work, "t.npy")
    args.eval_x = os.path.join(args.work, "eval-x.npy")
    args.eval_t = os.path.join(args.work, "eval-t.npy")
    np.save(args.x, x[:64])
    np.save(args.t, t[:64])
    np.save(args.eval_x, x[64:])
    np.save(args.eval_t, t[64:])
    onnx = os.path.join(args.work, args.model + ".onnx")
    cpu_exe = os.path.join(args.work, "train-cpu")
    gpu_exe = os.path.join(args.work, "train-cuda-emulated")
    shape = "--onnx-shape=x=64x1x28x28"
    run([args.gs_compile, onnx, shape, "-o", cpu_exe])
    run([args.gs_compile, onnx, shape, "--target=cuda",
         "--emulate-gpu-kernels", "-o", gpu_exe])
    fake = dict(os.environ, GS_LIBCUDA=args.fake_libcuda)
    behind = dict(fake, GS_FAKE_CUDA_PENDING_EVENTS="1")

    n = args.steps
    cpu_report, cpu_half, cpu = train(cpu_exe, args, "cpu", n)
    gpu_report, gpu_half, gpu = train(gpu_exe, args, "gpu", n, env=behind)
    ok = verdict(f"{args.model}: {n} steps, GPU executable (emulated "
                 "kernels) vs CPU executable: parameters, optimizer state "
                 "and telemetry", compare(cpu, gpu))
    cpu_losses = cpu_report["loss"]["value"]
    gpu_losses = gpu_report["loss"]["value"]
    ok &= verdict(f"{args.model}: losses", [] if cpu_losses == gpu_losses
                  else [f"{gpu_losses} vs {cpu_losses}"])
    ok &= verdict(f"{args.model}: the reports' telemetry of every step, "
                  "and their evaluation (the loss within EVAL_RTOL)",
                  compare_reports(cpu_report, gpu_report))

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
