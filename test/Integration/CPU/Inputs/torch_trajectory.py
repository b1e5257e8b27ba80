#!/usr/bin/env python3
"""Trains a PyTorch model for a few SGD-momentum steps and GradScale's train
step on the same data; compares losses, parameters and gradients per step.

Usage: torch_trajectory.py --gs-run PATH --work DIR
                           [--model mlp|cnn|upsample|clamped|grouped|resnet18]
                           [--batch 16] [--steps 5] [--rtol 1e-5]
                           [--param-rtol 1e-5] [--grad-rtol 1e-4]
                           [--lr 0.01] [--mixed-precision GS_OPT]
                           [--fp64-arbiter] [--judge-steps N]

Run with Debian's Python (torch 1.13). The models are those of
test/ImportONNX/Inputs/export_torch_models.py (the MLP; the CNN with
BatchNorm in training mode, max and global average pooling; grouped and
depthwise convolutions; torchvision's ResNet-18) with CrossEntropyLoss, exported in training mode. The batch is
the first Fashion-MNIST training images scaled to [0, 1] (for ResNet-18
repeated to 3 channels and enlarged 8x to 224 x 224). Torch runs
deterministically on one thread with SGD(lr=--lr, momentum=0.9), which is
ONNX's Momentum with beta = 1, the importer's default for exports (gs-run
gets the learning rate through --onnx-train); both train on the same batch
each step. gs-run dumps its parameters after each step (--dump-params).

Per step the script prints the relative loss difference and, over all
trainable tensors, the largest relative difference of the parameters and of
the momentum buffers (after step 1 the buffer is the gradient, after step t
the momentum-weighted sum of the gradients so far): parameters as
max|ours - torch| / max|torch| per tensor, momentum buffers relative to the
largest buffer element of the whole model, since the exact gradient of some
tensors is zero (a convolution bias before BatchNorm) and both sides then
hold rounding noise. It exits 1 when a loss differs by more than --rtol, a
parameter by more than --param-rtol or a momentum buffer by more than
--grad-rtol. With --fp64-arbiter torch also trains in FP64, and the
bounds apply to the distance from that exact trajectory instead (both FP32
ones are printed): the bound then comes from FP32 arithmetic alone, not
from how close one FP32 implementation happens to land to another. With
--judge-steps N only the first N steps are judged; later ones are printed
as figures ("not judged"), for runs that are only well-conditioned that
long. With --mixed-precision GradScale trains the step
that gs-opt's gs-mixed-precision and gs-autodiff build (FP16 activations
and gradients, FP32 master weights) against torch's FP32 trajectory.

Tracing a training-mode export runs the model once, which updates
BatchNorm's running statistics; the torch model starts from the exported
initializers so that both sides start from the same state.
"""

import argparse
import gzip
import os
import re
import subprocess
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "ImportONNX", "Inputs"))
import export_torch_models  # noqa: E402

FASHION = "/usr/share/datasets/fashion-mnist"


def fashion_batch(n):
    with gzip.open(os.path.join(FASHION, "train-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16)
    with gzip.open(os.path.join(FASHION, "train-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    x = images[:n * 784].reshape(n, 1, 28, 28).astype(np.float32) / 255
    return x, labels[:n].astype(np.int64)


def relative(ours, theirs, floor=0.0):
    scale = max(float(np.abs(theirs).max()), floor)
    return float(np.abs(ours - theirs).max() / scale) if scale > 0 else \
        float(np.abs(ours).max())


def load_initializers(module, path):
    """Copies the ONNX model's initializers into `module`'s state."""
    import onnx
    from onnx import numpy_helper
    values = {i.name: numpy_helper.to_array(i)
              for i in onnx.load(path).graph.initializer}
    state = module.state_dict()
    for name, tensor in state.items():
        if name in values:
            tensor.copy_(torch.from_numpy(values[name].copy()))


def batch_for(model, n):
    x, t = fashion_batch(n)
    if model == "resnet18":
        x = np.repeat(np.kron(x, np.ones((1, 1, 8, 8), np.float32)), 3, axis=1)
    return np.ascontiguousarray(x), t


def train_torch(args, x, t, dtype):
    """torch's trajectory: per step the loss and, per trainable tensor, the
    parameter and momentum buffer (as float64 arrays)."""
    builder = getattr(export_torch_models, args.model)
    torch.manual_seed(0)
    model, _ = builder()
    wrapped = export_torch_models.WithLoss(model).train()
    load_initializers(wrapped, os.path.join(args.work, args.model + ".onnx"))
    wrapped = wrapped.to(dtype)
    optimizer = torch.optim.SGD(wrapped.parameters(), lr=args.lr, momentum=0.9)
    named = dict(wrapped.named_parameters())
    trajectory = []
    for _ in range(args.steps):
        optimizer.zero_grad()
        loss = wrapped(torch.from_numpy(x).to(dtype), torch.from_numpy(t))
        loss.backward()
        optimizer.step()
        trajectory.append((loss.item(), {
            name: (p.detach().double().numpy().copy(),
                   optimizer.state[p]["momentum_buffer"].double().numpy().copy())
            for name, p in named.items()}))
    return trajectory


def differences(loss, tensors, reference):
    """Loss, parameter and gradient differences of one step against
    `reference` (a step of train_torch)."""
    ref_loss, ref_tensors = reference
    largest = max(float(np.abs(b).max()) for _, b in ref_tensors.values())
    param_rel = grad_rel = 0.0
    for name, (param, buffer) in ref_tensors.items():
        ours_param, ours_buffer = tensors[name]
        param_rel = max(param_rel, relative(ours_param, param))
        grad_rel = max(grad_rel, relative(ours_buffer, buffer, largest))
    return abs(loss - ref_loss) / abs(ref_loss), param_rel, grad_rel


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gs-run", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--model", default="mlp",
                        choices=["mlp", "cnn", "upsample", "clamped",
                                 "grouped", "resnet18"])
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--rtol", type=float, default=1e-5)
    parser.add_argument("--param-rtol", type=float, default=1e-5)
    parser.add_argument("--grad-rtol", type=float, default=1e-4)
    parser.add_argument("--lr", type=float, default=0.01,
                        help="SGD-momentum learning rate of both sides")
    parser.add_argument("--judge-steps", type=int, metavar="N",
                        help="judge only the first N steps; print the rest")
    parser.add_argument(
        "--mixed-precision", metavar="GS_OPT",
        help="train GradScale's step after gs-mixed-precision (FP16 "
        "compute, FP32 master weights), built with this gs-opt")
    parser.add_argument(
        "--fp64-arbiter", action="store_true",
        help="apply --param-rtol/--grad-rtol to the distance from torch's "
        "FP64 trajectory (torch's FP32 distance is printed beside ours)")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)

    # The exported model and the one torch trains start from the same
    # weights: export_torch_models seeds before building.
    export_torch_models.export(args.model, getattr(export_torch_models,
                                                   args.model), args.work)
    x, t = batch_for(args.model, args.batch)
    np.save(os.path.join(args.work, "x.npy"), x)
    np.save(os.path.join(args.work, "t.npy"), t)
    reference = train_torch(args, x, t, torch.float32)
    exact = train_torch(args, x, t, torch.float64) if args.fp64_arbiter \
        else None

    dump = os.path.join(args.work, "params")
    shape = "x=%s" % "x".join(str(d) for d in x.shape)
    model = os.path.join(args.work, args.model + ".onnx")
    train = "--onnx-train=optimizer=momentum lr=%r" % args.lr
    if args.mixed_precision:
        step = os.path.join(args.work, "train_step.mlir")
        subprocess.run(
            [args.mixed_precision, model, "--onnx-shape=" + shape, train,
             "--gs-train-step", "--gs-mixed-precision", "--gs-autodiff",
             "--gs-widen-weight-gradients", "-o", step],
            check=True)
        model = step
    out = subprocess.run(
        [args.gs_run, model, "--onnx-shape=" + shape, train,
         "--entry=train_step",
         "-i", os.path.join(args.work, "x.npy"),
         "-i", os.path.join(args.work, "t.npy"),
         "--steps=%d" % args.steps, "--print", "--dump-params=" + dump],
        check=True, capture_output=True, text=True).stdout
    ours = [float(v) for v in re.findall(r"loss float32\[\] = (\S+)", out)]
    if len(ours) != args.steps:
        sys.exit("unexpected gs-run output:\n" + out)
    ok = True
    for step, loss in enumerate(ours, 1):
        stem = os.path.join(dump, "step_%d" % step)
        tensors = {
            name: (np.load(os.path.join(stem, name + ".npy")),
                   np.load(os.path.join(stem, name + ".velocity.npy")))
            for name in reference[step - 1][1]}
        loss_rel, param_rel, grad_rel = differences(loss, tensors,
                                                    reference[step - 1])
        line = ("step %d: loss %.7f, torch %.7f, relative difference %.1e; "
                "parameters %.1e, gradients %.1e over %d tensors" %
                (step, loss, reference[step - 1][0], loss_rel, param_rel,
                 grad_rel, len(tensors)))
        good = loss_rel <= args.rtol
        if exact:
            _, ours_param, ours_grad = differences(loss, tensors,
                                                   exact[step - 1])
            _, torch_param, torch_grad = differences(
                reference[step - 1][0], reference[step - 1][1],
                exact[step - 1])
            good &= (ours_param <= args.param_rtol and
                     ours_grad <= args.grad_rtol)
            line += ("; against torch FP64: parameters %.1e (torch FP32 "
                     "%.1e), gradients %.1e (torch FP32 %.1e)" %
                     (ours_param, torch_param, ours_grad, torch_grad))
        else:
            good &= param_rel <= args.param_rtol and grad_rel <= args.grad_rtol
        if args.judge_steps is not None and step > args.judge_steps:
            print(line + "  (not judged)")
            continue
        ok &= good
        print(line + ("" if good else "  MISMATCH"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
