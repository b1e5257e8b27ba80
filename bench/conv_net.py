#!/usr/bin/env python3
"""Benchmark: convolutional training steps against PyTorch on the CPU.

Prints, in one run, on one thread each, both pinned to the same core:
- every distinct convolution of ResNet-18 at batch 8 (224x224 input), and
  the grouped convolutions of ResNeXt-50 (32x4d) and depthwise ones of
  MobileNetV2 of the same sizes, each as a training step of its own:
  forward, weight gradient and input gradient
  (a trainable per-channel bias before the convolution makes the input
  gradient needed; the first layer, as in the network, has none), SGD
  update; GradScale's time (`gs-run --benchmark` of the FP32 train step)
  against PyTorch's, and each one's GFLOP/s (3 passes, 2 for the first
  layer, of the forward's multiply-adds x 2, over the step's time);
- whole networks: ResNet-18 (batch 8, 224x224) and a 4-convolution CNN
  (batch 64, 28x28), FP32 and gradient-scaling steps (SGD momentum 0.9)
  against PyTorch's FP32 step, and the gs step over our FP32 step.

Each case runs in rounds (--rounds, default 3): ours, then each
PyTorch's, in turn; each side's figure is its fastest round's median
(these machines are shared: a neighbour's load slows whole runs of a
process by up to a quarter, and the interleaved rounds give each side the
same chances of a quiet one).

The baseline is Debian's PyTorch (1.13) with its default CPU kernels: the
script prints which ones it has (oneDNN/MKL-DNN convolutions, the BLAS).
With --pytorch-python, a second baseline: the PyTorch of that interpreter
(a current release from pip: `make bench-pytorch` installs one into
build/pytorch-current), which times each case in a process of its own
(this script, --pytorch-worker), pinned to the same core, right after
ours. Ratios are PyTorch's time over ours (above 1: GradScale is faster).

Run with Debian's Python (PyTorch, NumPy):
  /usr/bin/python3 bench/conv_net.py [--build BUILD] [--runs N] [--rounds R]
      [--no-networks] [--layers REGEX]
      [--pytorch-python build/pytorch-current/bin/python3]
"""

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import torch
import torch.nn as nn

ROOT = pathlib.Path(__file__).resolve().parent.parent
# The models and loss wrapper the tests export (WithLoss, torchvision's
# ResNet-18).
sys.path.insert(0, str(ROOT / "test" / "ImportONNX" / "Inputs"))
from export_torch_models import WithLoss, resnet18  # noqa: E402
CORE = min(os.sched_getaffinity(0))

# The convolutions timed at batch 8: (name, in channels, out channels,
# kernel, stride, input size, groups). First ResNet-18's distinct ones.
CONVS = [
    ("conv1 7x7/2", 3, 64, 7, 2, 224, 1),
    ("layer1 3x3", 64, 64, 3, 1, 56, 1),
    ("layer2.0 3x3/2", 64, 128, 3, 2, 56, 1),
    ("layer2 3x3", 128, 128, 3, 1, 28, 1),
    ("layer2 down 1x1/2", 64, 128, 1, 2, 56, 1),
    ("layer3.0 3x3/2", 128, 256, 3, 2, 28, 1),
    ("layer3 3x3", 256, 256, 3, 1, 14, 1),
    ("layer3 down 1x1/2", 128, 256, 1, 2, 28, 1),
    ("layer4.0 3x3/2", 256, 512, 3, 2, 14, 1),
    ("layer4 3x3", 512, 512, 3, 1, 7, 1),
    ("layer4 down 1x1/2", 256, 512, 1, 2, 14, 1),
    # ResNeXt-50 32x4d's grouped 3x3 convolutions: 4, 8 and 16 channels a
    # group.
    ("rx layer1 3x3 g32", 128, 128, 3, 1, 56, 32),
    ("rx layer2.0 3x3/2 g32", 256, 256, 3, 2, 56, 32),
    ("rx layer3 3x3 g32", 512, 512, 3, 1, 14, 32),
    # MobileNetV2's depthwise 3x3 convolutions (a channel a group).
    ("mb dw 3x3 144", 144, 144, 3, 1, 56, 144),
    ("mb dw 3x3/2 144", 144, 144, 3, 2, 56, 144),
    ("mb dw 3x3 960", 960, 960, 3, 1, 7, 960),
]
BATCH = 8


class ConvLayer(nn.Module):
    """A bias on the input (so that its gradient is needed; not on a first
    layer's, whose input is the data), one convolution, and the mean square
    of its output as the loss."""

    def __init__(self, cin, cout, kernel, stride, groups, first):
        super().__init__()
        self.shift = None if first else nn.Parameter(torch.zeros(1, cin, 1, 1))
        self.conv = nn.Conv2d(cin, cout, kernel, stride=stride,
                              padding=kernel // 2, groups=groups, bias=False)

    def forward(self, x):
        if self.shift is not None:
            x = x + self.shift
        return (self.conv(x) ** 2).mean()


def small_cnn():
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(),
        nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(),
        nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 10))


def torch_step_ms(model, inputs, optimizer, runs):
    """Median time of forward, backward and update."""
    times = []
    for i in range(runs + 1):
        start = time.perf_counter()
        optimizer.zero_grad()
        model(*inputs).backward()
        optimizer.step()
        if i:  # the first call warms up
            times.append(time.perf_counter() - start)
    return 1000 * float(np.median(times))


def export(model, inputs, names, path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, inputs, path, opset_version=17,
                          training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False, input_names=names,
                          output_names=["loss"])


def gs_step(build, model, train, scaling, tmp):
    """The train step of `model` as gs-opt writes it (a file)."""
    step = os.path.join(tmp, f"step_{scaling}.mlir")
    gs_opt = os.path.join(build, "bin", "gs-opt")
    subprocess.run([gs_opt, model, f"--onnx-train={train}",
                    f"--gs-train=scaling={scaling}", "-o", step], check=True)
    return step


def gs_step_ms(build, step, inputs, runs):
    """The median time of the train step in `step`, by gs-run."""
    gs_run = os.path.join(build, "bin", "gs-run")
    command = ["taskset", "-c", str(CORE), gs_run, step, "--entry=train_step",
               f"--benchmark={runs}"]
    for path in inputs:
        command += ["-i", path]
    out = subprocess.run(command, check=True, capture_output=True,
                         text=True).stdout
    return float(re.search(r"median ([0-9.]+) ms", out).group(1))


def fastest_rounds(rounds, timers):
    """Calls each timer in turn, `rounds` times; each one's fastest
    result."""
    best = [float("inf")] * len(timers)
    for _ in range(rounds):
        for i, timer in enumerate(timers):
            best[i] = min(best[i], timer())
    return best


def save(tmp, name, value):
    path = os.path.join(tmp, name + ".npy")
    np.save(path, value)
    return path


def layer_case(name):
    """The convolution `name`: its model, input and step FLOPs."""
    _, cin, cout, kernel, stride, size, groups = next(
        case for case in CONVS if case[0] == name)
    torch.manual_seed(0)
    first = name.startswith("conv1")
    model = ConvLayer(cin, cout, kernel, stride, groups, first)
    x = torch.randn(BATCH, cin, size, size)
    out = (size + 2 * (kernel // 2) - kernel) // stride + 1
    passes = 2 if first else 3
    flops = (passes * 2 * BATCH * cout * out * out * (cin // groups) *
             kernel * kernel)
    return model, x, flops


NETWORKS = [("resnet18", (8, 3, 224, 224)), ("cnn", (64, 1, 28, 28))]


def network_case(name):
    """The network `name` with its loss, its input and target."""
    shape = dict(NETWORKS)[name]
    torch.manual_seed(0)
    body = resnet18()[0] if name == "resnet18" else small_cnn()
    model = WithLoss(body).train()
    x = torch.randn(*shape)
    target = torch.randint(0, 10, (shape[0],))
    return model, x, target


def pytorch_case_ms(name, runs):
    """This interpreter's PyTorch's step time on the case `name`."""
    if name in dict(NETWORKS):
        model, x, target = network_case(name)
        return torch_step_ms(
            model, (x, target),
            torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9), runs)
    model, x, _ = layer_case(name)
    return torch_step_ms(model, (x,),
                         torch.optim.SGD(model.parameters(), lr=0.01), runs)


def pytorch_kernels():
    blas = re.search(r"BLAS_INFO=(\w+)", torch.__config__.show())
    return (f"PyTorch {torch.__version__}: oneDNN (mkldnn) convolutions "
            f"{'on' if torch.backends.mkldnn.is_available() else 'off'}, "
            f"BLAS {blas.group(1) if blas else 'unknown'}")


def current_pytorch(args, name=None):
    """The --pytorch-python PyTorch's step time on `name` (its kernels
    without one); None without --pytorch-python."""
    if not args.pytorch_python:
        return None
    command = [args.pytorch_python, __file__, "--pytorch-worker",
               name or "", "--runs", str(args.runs)]
    out = subprocess.run(command, check=True, capture_output=True, text=True,
                         env=dict(os.environ, OMP_NUM_THREADS="1"))
    return json.loads(out.stdout.strip().splitlines()[-1])["result"]


def conv_layers(args):
    print(f"Convolutions (ResNet-18's; rx: ResNeXt-50 32x4d's grouped, mb: "
          f"MobileNetV2's depthwise), batch {BATCH}, train step (forward, "
          f"weight and input gradients, SGD), FP32, one thread")
    current = " " * 5 + "PyTorch 2" + " " * 4 + "GFLOP/s PyTorch2/GS" \
        if args.pytorch_python else ""
    print(f"{'layer':22} {'GradScale':>11} {'GFLOP/s':>8} {'PyTorch':>11} "
          f"{'GFLOP/s':>8} {'PyTorch/GS':>10}{current}")
    for name, *_ in CONVS:
        if not re.search(args.layers, name):
            continue
        model, x, flops = layer_case(name)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "layer.onnx")
            export(model, (x,), ["x"], path)
            step = gs_step(args.build, path, "loss=loss optimizer=sgd lr=0.01",
                           "fp32", tmp)
            inputs = [save(tmp, "x", x.numpy())]
            timers = [lambda: gs_step_ms(args.build, step, inputs, args.runs),
                      lambda: torch_step_ms(model, (x,), optimizer, args.runs)]
            if args.pytorch_python:
                timers.append(lambda: current_pytorch(args, name))
            times = fastest_rounds(args.rounds, timers)
        ours, theirs = times[:2]
        line = (f"{name:22} {ours:8.1f} ms {flops / ours / 1e6:8.1f} "
                f"{theirs:8.1f} ms {flops / theirs / 1e6:8.1f} "
                f"{theirs / ours:9.2f}x")
        if args.pytorch_python:
            latest = times[2]
            line += (f" {latest:8.1f} ms {flops / latest / 1e6:8.1f} "
                     f"{latest / ours:10.2f}x")
        print(line, flush=True)


def networks(args):
    print("\nWhole networks, train step (SGD momentum 0.9), one thread")
    current = "   PyTorch 2 PyTorch2/GS fp32" if args.pytorch_python else ""
    print(f"{'model':10} {'GS fp32':>11} {'GS gs':>11} {'PyTorch':>11} "
          f"{'PyTorch/GS fp32':>15} {'gs/fp32':>8}{current}")
    for name, _ in NETWORKS:
        model, x, target = network_case(name)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, name + ".onnx")
            export(model, (x, target), ["x", "target"], path)
            inputs = [save(tmp, "x", x.numpy()),
                      save(tmp, "target", target.numpy())]
            train = "optimizer=momentum lr=0.01 momentum=0.9"
            steps = [gs_step(args.build, path, train, scaling, tmp)
                     for scaling in ("fp32", "gs")]
            timers = [
                lambda: gs_step_ms(args.build, steps[0], inputs, args.runs),
                lambda: gs_step_ms(args.build, steps[1], inputs, args.runs),
                lambda: torch_step_ms(model, (x, target), optimizer,
                                      args.runs)]
            if args.pytorch_python:
                timers.append(lambda: current_pytorch(args, name))
            times = fastest_rounds(args.rounds, timers)
        fp32, gs, theirs = times[:3]
        line = (f"{name:10} {fp32:8.1f} ms {gs:8.1f} ms {theirs:8.1f} ms "
                f"{theirs / fp32:14.2f}x {gs / fp32:7.2f}x")
        if args.pytorch_python:
            latest = times[3]
            line += f" {latest:8.1f} ms {latest / fp32:15.2f}x"
        print(line, flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--runs", type=int, default=5,
                        help="timed steps per round (after a warm-up)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="interleaved rounds per case; each side's "
                        "fastest round's median counts")
    parser.add_argument("--no-networks", action="store_true",
                        help="only the convolution layers (the networks "
                        "take minutes to compile)")
    parser.add_argument("--layers", default="", metavar="REGEX",
                        help="only the convolutions whose names match")
    parser.add_argument("--pytorch-python",
                        help="a Python whose PyTorch (a current release) is "
                        "a second baseline")
    parser.add_argument("--pytorch-worker", metavar="CASE",
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.runs < 1 or args.rounds < 1:
        parser.error("--runs and --rounds must be at least 1")
    os.sched_setaffinity(0, {CORE})
    torch.set_num_threads(1)
    if args.pytorch_worker is not None:
        # One case (or, with none, the kernels) for the main process.
        result = (pytorch_case_ms(args.pytorch_worker, args.runs)
                  if args.pytorch_worker else pytorch_kernels())
        print(json.dumps({"result": result}))
        return 0
    print(f"{pytorch_kernels()}; both pinned to core {CORE}")
    if args.pytorch_python:
        print(f"and {current_pytorch(args)} ({args.pytorch_python}), pinned "
              f"alike")
    conv_layers(args)
    if not args.no_networks:
        networks(args)


if __name__ == "__main__":
    sys.exit(main())
