"""The GPU check of whole training runs: the executables prepare_train.py
built, on the GPU against the CPU, and their speed against PyTorch AMP.

  train_check.py --artifacts build/gpu-check [--steps 20] [--timed 300]

For the MLP and the BatchNorm CNN under gradient scaling: the GPU
executable and the CPU executable train the same 20 steps from the same
weights; the losses must agree within 1e-3 relative (the kernels sum in
the CPU's order; libdevice's exp and log and the backend's FMA
contraction may move last bits, which training carries along), every
scale each site chose must be the same, and so must the skipped steps.
The GPU run's steps are CUDA graphs from the second on (the runtime's
default); the same run with every kernel launched one by one
(GS_CUDA_GRAPHS=0) must train bit for bit as it does.
Then PERF lines: steps/s of the GPU executables under gs (and without
graphs), FP16 without scaling and FP32 (`--timed` steps, batch copied from the host each step,
the loss read back each step), gs's cost over FP16 without scaling (the
target: at most 1.05x), and PyTorch's same model with torch.autocast
FP16 + GradScaler (SGD with momentum 0.9, the batch already on the GPU)
on the same GPU. Then, where prepare_train.py built it, the MLP compiled
as a data-parallel replica over NCCL runs as one rank (NCCL from
$GS_LIBNCCL, else the one PyTorch loads; MPI from the machine, else the
libraries prepare_train.py bundled) against the plain GPU executable: a
replica alone must train bit for bit as the plain step does (the
all-reduces of one rank copy, the seed scale is 1/1). Where the GPU is
compute capability 9.0, the MLP compiled for sm_90a (its contractions
of 64 or more rows on the wgmma kernels) is checked against the CPU the same way and timed; on
other GPUs it is skipped. Prints PASS/FAIL/SKIP and PERF lines; exits 1
on a failure.
"""

import argparse
import ctypes
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "ImportONNX",
                                "Inputs"))

LOSS_RTOL = 1e-3


def train(path, data, steps, work, name, calls=None, env=None,
          checkpoint=None):
    """Runs a training executable (in `env`); its report and steps/s.
    `calls`, if given, gets the GPU's driver calls per step; `checkpoint`
    is where it saves its final state, if given."""
    report = os.path.join(work, name + ".json")
    command = [path, "--train-data=" + data["x"],
               "--train-labels=" + data["t"], "--normalize=none",
               f"--steps={steps}", "--no-shuffle", "--progress=never",
               "--report=" + report]
    if checkpoint:
        command.append("--checkpoint=" + checkpoint)
    result = subprocess.run(command, capture_output=True, text=True,
                            timeout=300, env=env)
    if result.returncode != 0:
        raise RuntimeError(f"{name} failed ({result.returncode}): "
                           f"{result.stderr.strip()[-2000:]}")
    rate = re.search(r"\(([0-9.]+) steps/s\)", result.stdout)
    counted = re.search(r"GPU calls per step after the first: (.*)",
                        result.stdout)
    if calls is not None and counted:
        calls.append(counted.group(1))
    with open(report) as f:
        return json.load(f), float(rate.group(1)) if rate else float("nan")


def site_scales(report):
    return {site["name"]: site["scale"] for site in report["sites"]}


def device_capability():
    """The first GPU's compute capability (major, minor) through the driver
    ($GS_LIBCUDA, else libcuda.so.1), or None."""
    try:
        lib = ctypes.CDLL(os.environ.get("GS_LIBCUDA", "libcuda.so.1"))
    except OSError:
        return None
    device, major, minor = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    if (lib.cuInit(0) or lib.cuDeviceGet(ctypes.byref(device), 0)
            or lib.cuDeviceGetAttribute(ctypes.byref(major), 75, device)
            or lib.cuDeviceGetAttribute(ctypes.byref(minor), 76, device)):
        return None
    return major.value, minor.value


def compare(model, cpu, gpu):
    problems = []
    a = np.array(cpu["loss"]["value"], np.float64)
    b = np.array(gpu["loss"]["value"], np.float64)
    worst = float(np.max(np.abs(a - b) / np.maximum(np.abs(a), 1e-30)))
    if a.shape != b.shape or worst > LOSS_RTOL:
        problems.append(f"losses differ by {worst:.2e} relative")
    if site_scales(cpu) != site_scales(gpu):
        problems.append(f"scales {site_scales(gpu)} vs {site_scales(cpu)}")
    if cpu["skipped_steps"] != gpu["skipped_steps"]:
        problems.append(f"skipped steps {gpu['skipped_steps']} vs "
                        f"{cpu['skipped_steps']}")
    print(("PASS" if not problems else "FAIL")
          + f" train {model} gs: {len(a)} steps on the GPU vs the CPU: losses "
          f"within {worst:.1e} relative (bound {LOSS_RTOL:g}), the same "
          f"scales at {len(site_scales(cpu))} sites, "
          f"{gpu['skipped_steps']} skipped steps"
          + "".join(f"\n    {p}" for p in problems))
    return not problems


def nccl_environment(executable, root, manifest):
    """The environment a --distributed=nccl executable runs in here: NCCL
    from $GS_LIBNCCL, else PyTorch's; MPI's libraries from the machine,
    else the bundled ones. Also a line saying which."""
    env = dict(os.environ)
    if not env.get("GS_LIBNCCL"):
        try:
            import torch  # noqa: F401 (its CUDA build maps libnccl)
            with open("/proc/self/maps") as maps:
                paths = [line.split()[-1] for line in maps
                         if "libnccl.so" in line]
            if paths:
                env["GS_LIBNCCL"] = paths[0]
        except ImportError:
            pass
    nccl = env.get("GS_LIBNCCL", "libnccl.so.2 (the loader's)")
    linked = subprocess.run(["ldd", executable], capture_output=True,
                            text=True).stdout
    mpi = "the machine's MPI"
    if re.search(r"libmpi\.so\S* => not found", linked) and \
            manifest.get("mpi_lib"):
        lib = os.path.join(root, manifest["mpi_lib"])
        env["LD_LIBRARY_PATH"] = lib + (
            ":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
        mpi = "the bundled Open MPI"
    return env, f"NCCL {nccl}, {mpi}"


def compare_bitwise(title, what, plain, other, plain_state, other_state,
                    how=None):
    """Two runs of the same steps: bit for bit."""
    problems = []
    if plain["loss"]["value"] != other["loss"]["value"]:
        problems.append("the losses differ")
    if site_scales(plain) != site_scales(other):
        problems.append(f"scales {site_scales(other)} vs "
                        f"{site_scales(plain)}")
    if plain["skipped_steps"] != other["skipped_steps"]:
        problems.append("the skipped steps differ")
    a, b = np.load(plain_state), np.load(other_state)
    names = sorted(n for n in a.files if not n.startswith("gs.trainer."))
    for name in names:
        if name not in b.files or not np.array_equal(a[name], b[name]):
            problems.append(f"{name} differs")
    print(("PASS" if not problems else "FAIL")
          + f" train {title}: {what}, {len(plain['loss']['value'])} steps: "
          f"losses, scales, skipped steps and {len(names)} parameters bit "
          "for bit" + (f" ({how})" if how else "")
          + "".join(f"\n    {p}" for p in problems))
    return not problems


def graph_launches(calls):
    """The CUDA graph launches per step a trainer's calls line counts."""
    found = re.search(r"([0-9.]+) CUDA graph launches", calls[0] if calls
                      else "")
    return float(found.group(1)) if found else 0.0


def torch_amp_rate(model, batch, steps):
    """Steps/s of PyTorch AMP + GradScaler training `model` on the GPU."""
    import torch
    import export_torch_models
    net = getattr(export_torch_models, model)()[0].cuda()
    loss_fn = torch.nn.CrossEntropyLoss()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda")
    x = torch.randn(batch, 1, 28, 28, device="cuda")
    t = torch.randint(0, 10, (batch,), device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = loss_fn(net(x), t)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss

    for _ in range(20):
        step()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        step().item()  # the loss read back each step, as ours is
    torch.cuda.synchronize()
    return steps / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--artifacts", default="build/gpu-check")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--timed", type=int, default=300)
    parser.add_argument("--no-torch", action="store_true",
                        help="no PyTorch AMP baseline (tests without a GPU)")
    args = parser.parse_args()
    root = os.path.join(args.artifacts, "train")
    with open(os.path.join(root, "manifest.json")) as f:
        manifest = json.load(f)
    data = {k: os.path.join(root, v) for k, v in manifest["data"].items()}
    exes = {(e["model"], e["scaling"], e["target"]):
            os.path.join(root, e["path"]) for e in manifest["executables"]
            if "distributed" not in e and "gpu_arch" not in e}
    wgmma = {e["model"]: os.path.join(root, e["path"])
             for e in manifest["executables"]
             if e.get("gpu_arch") == "sm_90a"}
    capability = device_capability()
    replicas = [e for e in manifest["executables"] if "distributed" in e]
    ok = True
    with tempfile.TemporaryDirectory() as work:
        for model in sorted({m for m, _, _ in exes}):
            try:
                cpu, _ = train(exes[(model, "gs", "cpu")], data, args.steps,
                               work, f"{model}-cpu")
                graph_state = os.path.join(work, f"{model}-graphs.npz")
                calls = []
                gpu, _ = train(exes[(model, "gs", "cuda")], data, args.steps,
                               work, f"{model}-gpu", calls,
                               checkpoint=graph_state)
                ok &= compare(model, cpu, gpu)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                print(f"FAIL train {model} gs: {e}")
                ok = False
                continue
            # The same steps with every kernel launched one by one.
            no_graphs = dict(os.environ, GS_CUDA_GRAPHS="0")
            if graph_launches(calls) == 0:
                print(f"SKIP train {model} graphs: its steps ran no CUDA "
                      "graph (kernels emulated on the host)")
            else:
                try:
                    eager_state = os.path.join(work, f"{model}-eager.npz")
                    eager, _ = train(exes[(model, "gs", "cuda")], data,
                                     args.steps, work, f"{model}-eager",
                                     env=no_graphs, checkpoint=eager_state)
                    ok &= compare_bitwise(
                        f"{model} graphs", "its steps as CUDA graphs vs "
                        "their kernels launched one by one (GS_CUDA_GRAPHS=0)",
                        eager, gpu, eager_state, graph_state)
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    print(f"FAIL train {model} graphs: {e}")
                    ok = False
            rates = {}
            for scaling in ("gs", "none", "fp32"):
                calls = []
                try:
                    _, rates[scaling] = train(
                        exes[(model, scaling, "cuda")], data, args.timed, work,
                        f"{model}-{scaling}-timed", calls)
                    if calls:
                        print(f"PERF train {model} {scaling}: {calls[0]} "
                              "(the target: no host synchronization; the "
                              "trainer waits only for a step three behind, "
                              "where the GPU is slower than the host)")
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    print(f"FAIL train {model} {scaling} on the GPU: {e}")
                    ok = False
            if graph_launches(calls) > 0:
                try:
                    _, rates["gs-no-graphs"] = train(
                        exes[(model, "gs", "cuda")], data, args.timed, work,
                        f"{model}-gs-no-graphs-timed", env=no_graphs)
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    print(f"FAIL train {model} gs without graphs: {e}")
                    ok = False
            if model in wgmma and capability != (9, 0):
                which = (f"this GPU is sm_{capability[0]}{capability[1]}"
                         if capability else
                         "the GPU's capability could not be read")
                print(f"SKIP train {model} wgmma: sm_90a runs on compute "
                      f"capability 9.0 only, {which}")
            elif model in wgmma:
                try:
                    on_wgmma, _ = train(wgmma[model], data, args.steps, work,
                                        f"{model}-wgmma")
                    ok &= compare(f"{model} wgmma", cpu, on_wgmma)
                    _, rates["gs-wgmma"] = train(
                        wgmma[model], data, args.timed, work,
                        f"{model}-wgmma-timed")
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    print(f"FAIL train {model} wgmma on the GPU: {e}")
                    ok = False
            try:
                if not args.no_torch:
                    rates["torch"] = torch_amp_rate(model, manifest["batch"],
                                                    args.timed)
            except Exception as e:  # noqa: BLE001 (report, go on)
                print(f"FAIL PyTorch AMP {model}: {e}")
                ok = False
            line = ", ".join(f"{k} {v:.0f} steps/s" for k, v in rates.items())
            print(f"PERF train {model} batch {manifest['batch']}: {line}")
            if "gs" in rates and "none" in rates:
                print(f"PERF train {model}: gs step {rates['none'] / rates['gs']:.2f}x "
                      "the FP16 step without scaling (target <= 1.05x)")
            if "gs" in rates and "gs-no-graphs" in rates:
                print(f"PERF train {model}: CUDA graphs "
                      f"{rates['gs'] / rates['gs-no-graphs']:.2f}x the "
                      "steps/s of kernels launched one by one")
            if "gs" in rates and "torch" in rates:
                print(f"PERF train {model}: gs {rates['gs'] / rates['torch']:.2f}x "
                      "PyTorch AMP + GradScaler's steps/s (target > 1)")
        for entry in replicas:
            model = entry["model"]
            path = os.path.join(root, entry["path"])
            try:
                env, how = nccl_environment(path, root, manifest)
                plain_state = os.path.join(work, f"{model}-plain.npz")
                replica_state = os.path.join(work, f"{model}-replica.npz")
                plain, _ = train(exes[(model, "gs", "cuda")], data,
                                 args.steps, work, f"{model}-plain",
                                 checkpoint=plain_state)
                replica, _ = train(path, data, args.steps, work,
                                   f"{model}-replica", env=env,
                                   checkpoint=replica_state)
                ok &= compare_bitwise(
                    f"{model} nccl", "one rank over NCCL vs the plain GPU "
                    "executable", plain, replica, plain_state, replica_state,
                    how)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                print(f"FAIL train {model} nccl: {e}")
                ok = False
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
