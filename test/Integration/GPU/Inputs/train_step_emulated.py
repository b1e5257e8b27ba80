"""A whole train step on its GPU kernels, run on the CPU, against the CPU
lowering of the same step.

  train_step_emulated.py --gs-opt PATH --gs-run PATH --work DIR
                         [--model mlp|deep|cnn|grouped] [--scaling gs|dynamic|...]
                         [--steps N] [--batch N] [--whole-step]

Exports the PyTorch model with its loss, builds its train step with
gs-train, and trains it N steps on one Fashion-MNIST batch twice with
gs-run: as the CPU lowers it, and with its FP16 GEMMs and convolutions in
the Tensor Core kernels and its scale decisions in one-thread kernels
(gs-fuse-epilogues, convert-gs-to-gpu), run by gs-emulate-gpu. With
--whole-step, the rest of the step's computation is in kernels too
(gs-lower-to-gpu-kernels: elementwise, reductions, normalization, loss,
statistics and optimizer in gs-linalg-to-gpu's kernels), and no linalg op
may be left to the host.

Both accumulate every product in the same k order and round it once, so
every parameter and optimizer state must be bit-identical after every
step, and so must the scales chosen, the skipped steps and the counts of
every rounding. Only the model's underflow estimate in the telemetry may
differ: the kernels sum the statistics it is computed from in f32 per
thread block (then f64), the CPU lowering in f64, so it is checked within
a relative 1e-5. Without --whole-step, a third run lowers the fused
contractions for the CPU (gs.scaled_contraction without the kernels):
that is the unfused step exactly, estimates included. Prints one line per step and a verdict; exits 1 on a
difference. Run with Debian's Python (torch 1.13).
"""

import argparse
import glob
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "CPU", "Inputs"))
import torch_trajectory  # noqa: E402
import export_torch_models  # noqa: E402  (on the path torch_trajectory sets)

# The record layout of include/gs/Support/Telemetry.h.
ESTIMATE = 2
ESTIMATE_RTOL = 1e-5


def deep():
    """Four ReLU layers: three data gradients through the scaling
    epilogue, each behind a ReLU mask."""
    import torch.nn as nn
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 200), nn.ReLU(),
                         nn.Linear(200, 120), nn.ReLU(), nn.Linear(120, 60),
                         nn.ReLU(), nn.Linear(60, 10)), (1, 28, 28)


MODELS = {"mlp": export_torch_models.mlp, "deep": deep,
          "cnn": export_torch_models.cnn,
          "grouped": export_torch_models.grouped}


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"error: {' '.join(command)} failed ({result.returncode}):\n"
                 f"{result.stderr}")
    return result.stdout


def train(args, step_ir, inputs, name):
    dump = os.path.join(args.work, name)
    out = run([args.gs_run, step_ir, "--entry=train_step", *inputs,
               f"--steps={args.steps}", f"--dump-params={dump}", "--print"])
    losses = [float(v) for v in re.findall(r"= (\S+)$", out, re.M)]
    states = []
    for step in range(1, args.steps + 1):
        files = glob.glob(os.path.join(dump, f"step_{step}", "*.npy"))
        states.append({os.path.basename(f)[:-4]: np.load(f) for f in files})
    return losses, states


def compare(cpu, gpu, estimate_rtol=ESTIMATE_RTOL):
    """Differences between two parameter dumps of one step."""
    problems = []
    if sorted(cpu) != sorted(gpu):
        return [f"parameters {sorted(cpu)} vs {sorted(gpu)}"]
    for name in sorted(cpu):
        a, b = cpu[name], gpu[name]
        if name.startswith("gs.scaling.cast"):
            # Everything but the estimate exactly; the estimate within
            # the bound of the statistics' summation order.
            rest = [i for i in range(a.size) if i != ESTIMATE]
            if a[rest].tobytes() != b[rest].tobytes():
                problems.append(f"{name}: {a.tolist()} vs {b.tolist()}")
            elif not np.isclose(a[ESTIMATE], b[ESTIMATE], rtol=estimate_rtol,
                                atol=0, equal_nan=True):
                problems.append(f"{name} estimate: {a[ESTIMATE]!r} vs "
                                f"{b[ESTIMATE]!r}")
        elif a.dtype != b.dtype or a.tobytes() != b.tobytes():
            problems.append(f"{name}: max difference "
                            f"{np.abs(a.astype(np.float64) - b).max()}")
    return problems


def fused_step_matches(args, step_ir, inputs, cpu, cpu_losses):
    """gs.scaled_contraction's CPU lowering rebuilds what was fused: the
    same step, estimates included. Prints the verdict."""
    fused_ir = os.path.join(args.work, "train_step_fused.mlir")
    run([args.gs_opt, step_ir, "--gs-fuse-epilogues", "-o", fused_ir])
    fused_losses, fused_cpu = train(args, fused_ir, inputs, "cpu-fused")
    problems = [p for step in range(args.steps)
                for p in compare(cpu[step], fused_cpu[step], estimate_rtol=0)]
    if fused_losses != cpu_losses:
        problems.append(f"losses {fused_losses} vs {cpu_losses}")
    print("fused epilogues lowered for the CPU: "
          + ("the same step, bit for bit" if not problems else "DIFFERENT")
          + "".join(f"\n    {p}" for p in problems[:5]))
    return not problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gs-opt", required=True)
    parser.add_argument("--gs-run", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--model", choices=sorted(MODELS), default="mlp")
    parser.add_argument("--scaling", default="gs")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--whole-step", action="store_true")
    parser.add_argument("--wgmma", action="store_true",
                        help="the matrix GEMMs' kernels on wgmma (sm_90a)")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)

    export_torch_models.export(args.model, MODELS[args.model], args.work)
    x, t = torch_trajectory.fashion_batch(args.batch)
    inputs = []
    for name, array in (("x", x), ("t", t)):
        path = os.path.join(args.work, name + ".npy")
        np.save(path, array)
        inputs += ["-i", path]

    step_ir = os.path.join(args.work, "train_step.mlir")
    run([args.gs_opt, os.path.join(args.work, args.model + ".onnx"),
         f"--onnx-shape=x={args.batch}x1x28x28",
         f"--gs-train=scaling={args.scaling}", "-o", step_ir])
    kernels_ir = os.path.join(args.work, "train_step_gpu.mlir")
    wgmma = "true" if args.wgmma else "false"
    if args.whole_step:
        run([args.gs_opt, step_ir, f"--gs-lower-to-gpu-kernels=wgmma={wgmma}",
             "-o", kernels_ir])
    else:
        run([args.gs_opt, step_ir, "--gs-inline-backward",
             "--gs-fuse-epilogues", f"--convert-gs-to-gpu=wgmma={wgmma}", "-o",
             kernels_ir])
    with open(kernels_ir) as f:
        ir = f.read()
    kernel = r"gs_(?:gemm|conv|convt)_\w+"
    calls = len(re.findall(r"call @" + kernel + r"_entry\(", ir))
    fused = len(re.findall(r"call @" + kernel + r"_entry\(.*-> \(tensor<[^>]*>, "
                           r"tensor<7xf64>", ir))
    masked = len(re.findall(r"call @" + kernel + r"_relu(?:_wgmma)?_entry\(",
                            ir))
    on_wgmma = len(re.findall(r"call @" + kernel + r"_wgmma_entry\(", ir))
    convolutions = len(re.findall(r"call @gs_convt?_\w+_entry\(", ir))
    kernels = len(set(re.findall(r"func\.func private @(" + kernel +
                                 r")_entry", ir)))
    decisions = len(re.findall(r"call @gs_(?:scale|unify_scales)_\w+_entry\(",
                               ir))
    on_host = len(re.findall(r"gs\.(?:compute_scale|unify_scales) ", ir))
    emulated_ir = os.path.join(args.work, "train_step_emulated.mlir")
    run([args.gs_opt, kernels_ir, "--gs-emulate-gpu", "-o", emulated_ir])
    print(f"{args.model} {args.scaling}: {calls} contractions "
          f"({convolutions} convolutions) on {kernels} kernels, {fused} with "
          f"the scaling epilogue fused ({masked} with the ReLU mask), "
          f"{on_wgmma} on wgmma; "
          f"{decisions} scale decisions on the device, {on_host} on the host")
    if args.whole_step:
        rest = re.findall(r"call @(gs_(?:map|reduce)_\w+)_entry\(", ir)
        reductions = sum(name.startswith("gs_reduce_") for name in rest)
        host_linalg = len(re.findall(r"\blinalg\.\w+", ir))
        # The step's host code: its reads of tensor data (on a GPU, each
        # waits for the device) and its branches.
        step = re.search(r"func\.func @train_step\(.*?\n  }\n", ir, re.S)
        host = step.group(0) if step else ""
        reads = len(re.findall(r"= tensor\.extract ", host))
        branches = len(re.findall(r"\bscf\.if\b", host))
        print(f"{args.model} {args.scaling} the rest: {len(rest)} linalg ops "
              f"on {len(set(rest))} kernels ({reductions} with reductions), "
              f"{host_linalg} left to the host; the host code reads "
              f"{reads} values from tensors and branches {branches} times")

    cpu_losses, cpu = train(args, step_ir, inputs, "cpu")
    gpu_losses, gpu = train(args, emulated_ir, inputs, "gpu")
    failed = False

    # The same model's run without --whole-step checks the fused step.
    if not args.whole_step:
        failed |= not fused_step_matches(args, step_ir, inputs, cpu,
                                         cpu_losses)

    for step in range(args.steps):
        problems = compare(cpu[step], gpu[step])
        failed |= bool(problems)
        print(f"step {step + 1}: "
              + ("parameters, optimizer state and telemetry identical"
                 if not problems else "DIFFERENT")
              + "".join(f"\n    {p}" for p in problems[:5]))
    if cpu_losses != gpu_losses:
        failed = True
        print(f"DIFFERENT losses: {cpu_losses} vs {gpu_losses}")
    else:
        print(f"losses identical: {cpu_losses[-1]:.6f} after "
              f"{args.steps} steps")
    print("FAIL" if failed else "PASS",
          f"{args.model} {args.scaling}: the emulated GPU step equals the CPU "
          "step")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
