#!/usr/bin/env python3
"""Trains the same models under each gradient-precision method of the
gs-train pipeline and compares them (docs/GradientScaling.md).

Usage: gradient_scaling_check.py --gs-opt PATH --gs-run PATH --work DIR
                                 [--part mlp|cnn|deep-tanh|all]

mlp: the PyTorch Fashion-MNIST MLP (784-128-10), first trained in torch
  until it is confident, then exported. From those weights, on one batch of
  64 images, every method (fp32, none, fixed, dynamic, gs, gs-histogram)
  trains STEPS steps. Checked at the first step (same weights, same batch):
  at every FP32->FP16 rounding of a gradient, the measured underflow rate
  of gs and gs-histogram is at most none's; at the softmax cast (fT)
  gs-histogram's is at most 1e-3, and gs's (the paper's log-normal model)
  is reported beside its estimate. Over the run: the loss of their weights
  stays within 1e-2 of fp32's (all evaluated by torch in FP32).

cnn: the PyTorch BatchNorm CNN export (conv data gradients through
  conv_transpose, batch-norm backward in FP32 cast to FP16), from its
  initial weights for 5 steps: at every rounding gs and gs-histogram flush
  at most what none does, and their losses stay within 1e-2 of fp32's.

deep-tanh: a 7-layer tanh MLP whose backward gain per layer is ~0.08, so
  that its first-layer gradients lie near 1e-9, far below FP16's 2^-24.
  Checked: each method's weight gradients (the momentum buffer after one
  step: v = g) against torch's FP32 gradients at the same weights and
  batch, as the relative L2 error. none loses the first layer's gradient
  (error >= 0.9, most of its data gradient measured flushed); gs and
  gs-histogram keep every gradient within 1e-2; fixed and dynamic are
  reported beside them. FP32 and gs make progress (the loss falls), gs
  within 1e-2 of fp32.

Prints one table per part and VIOLATION lines; exits 1 on a violation. Run
with Debian's Python (torch 1.13).
"""

import argparse
import copy
import glob
import os
import re
import subprocess
import sys

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
import torch_trajectory  # noqa: E402
import export_torch_models  # noqa: E402  (on the path torch_trajectory sets)

# Each method's gs-train options. gs is the paper's method; gs-histogram
# replaces its log-normal model at FP32->FP16 casts by the exponent
# histogram (no distribution assumed).
PIPELINES = {
    "fp32": "scaling=fp32",
    "none": "scaling=none",
    "fixed": "scaling=fixed",
    "dynamic": "scaling=dynamic",
    "gs": "scaling=gs",
    "gs-histogram": "scaling=gs cast-model=exponent_histogram",
}
METHODS = list(PIPELINES)
BATCH = 64
# The record layout of include/gs/Support/Telemetry.h.
SCALE, SITE_SCALE, ESTIMATE, NONZERO, FLUSHED, SUBNORMAL, OVERFLOW = range(7)

violations = []


def check(condition, message):
    if not condition:
        violations.append(message)
        print("VIOLATION: " + message)


def fashion(offset, n):
    x, t = torch_trajectory.fashion_batch(offset + n)
    return np.ascontiguousarray(x[offset:]), np.ascontiguousarray(t[offset:])


def export_model(model, name, work):
    """Exports `model` (its current weights) with its loss."""
    export_torch_models.export(name, lambda: (model, (1, 28, 28)), work)
    return os.path.join(work, name + ".onnx")


def run_method(args, onnx_path, method, x, t, steps, tag):
    """Trains `steps` steps with gs-train{scaling=method}; returns the IR
    and per step a {name: array} of every parameter."""
    work = os.path.join(args.work, tag, method)
    os.makedirs(work, exist_ok=True)
    np.save(os.path.join(work, "x.npy"), x)
    np.save(os.path.join(work, "t.npy"), t)
    step_ir = os.path.join(work, "train_step.mlir")
    subprocess.run([args.gs_opt, onnx_path,
                    "--onnx-shape=x=%dx1x28x28" % len(x),
                    "--gs-train=" + PIPELINES[method], "-o", step_ir],
                   check=True)
    dump = os.path.join(work, "params")
    run = subprocess.run([args.gs_run, step_ir, "--entry=train_step",
                          "-i", os.path.join(work, "x.npy"),
                          "-i", os.path.join(work, "t.npy"),
                          "--steps=%d" % steps, "--dump-params=" + dump],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit("gs-run failed (%d) on %s:\n%s" % (run.returncode, step_ir,
                                                     run.stderr))
    states = []
    for s in range(1, steps + 1):
        directory = os.path.join(dump, "step_%d" % s)
        states.append({os.path.basename(f)[:-4]: np.load(f) for f in
                       glob.glob(os.path.join(directory, "*.npy"))})
    with open(step_ir) as f:
        ir = f.read()
    return ir, states


def sites_of(ir):
    """The telemetry records' names and what each rounding is."""
    return dict(re.findall(
        r'gs\.param state @"?(gs\.scaling\.cast\d+)"?.*gs\.site = "([^"]*)"',
        ir))


def rate(record, field):
    nonzero = record[NONZERO]
    return record[field] / nonzero if nonzero > 0 else 0.0


def torch_loss(model, params, x, t):
    """The FP32 loss of `model` with the trained tensors of `params` (a
    copy: `model` keeps its weights)."""
    wrapped = export_torch_models.WithLoss(copy.deepcopy(model))
    state = wrapped.state_dict()
    with torch.no_grad():
        for name in state:
            if name in params:
                state[name].copy_(torch.from_numpy(params[name]))
        return float(wrapped(torch.from_numpy(x), torch.from_numpy(t)))


def torch_gradients(model, x, t):
    wrapped = export_torch_models.WithLoss(model)
    wrapped.zero_grad()
    wrapped(torch.from_numpy(x), torch.from_numpy(t)).backward()
    return {name: p.grad.double().numpy().copy()
            for name, p in wrapped.named_parameters()}


def gradient_errors(state, reference):
    """Relative L2 error of each weight gradient (the momentum buffer after
    the first step) against `reference`."""
    errors = {}
    for name, g in reference.items():
        ours = state[name + ".velocity"].astype(np.float64)
        errors[name] = float(np.linalg.norm(ours - g) / np.linalg.norm(g))
    return errors


def print_sites(runs, sites, step):
    print("  %-12s %-55s %10s %10s %10s %10s %9s" %
          ("method", "rounding", "scale", "estimate", "flushed",
           "subnormal", "overflow"))
    for name in sorted(sites, key=site_index):
        for method in METHODS[1:]:
            record = runs[method][1][step][name]
            print("  %-12s %-55s %10.4g %10.3g %10.3g %10.3g %9d" %
                  (method, name + " " + sites[name][:38], record[SCALE],
                   record[ESTIMATE], rate(record, FLUSHED),
                   rate(record, SUBNORMAL), int(record[OVERFLOW])))


def skipped(states):
    return int(states[-1].get("gs.skipped_steps", np.array(0)))


SCALED = ["gs", "gs-histogram"]


def site_index(name):
    return int(name[len("gs.scaling.cast"):])


def check_flushed_at_most_none(runs, sites):
    """At every rounding at the first step, each gs variant flushes at
    most what none does."""
    for name, what in sites.items():
        none_rate = rate(runs["none"][1][0][name], FLUSHED)
        for method in SCALED:
            ours = rate(runs[method][1][0][name], FLUSHED)
            check(ours <= none_rate, "%s (%s): %s flushes %.3g > none %.3g" %
                  (name, what, method, ours, none_rate))


def trajectory_losses(model, runs, x, t):
    """The torch FP32 loss of each method's weights after each step,
    printed with the skipped steps; gs's within 1e-2 of fp32's."""
    losses = {m: [torch_loss(model, s, x, t) for s in runs[m][1]]
              for m in METHODS}
    print("Loss of each method's weights after each step (torch, FP32):")
    for m in METHODS:
        print("  %-12s %s   skipped steps: %d" % (
            m, " ".join("%.6f" % v for v in losses[m]), skipped(runs[m][1])))
    for method in SCALED:
        for step, (ours, theirs) in enumerate(zip(losses[method],
                                                  losses["fp32"])):
            check(abs(ours - theirs) <= 1e-2 * abs(theirs),
                  "step %d: %s loss %.6g vs fp32 %.6g" % (step + 1, method,
                                                         ours, theirs))
    return losses


def part_mlp(args):
    print("== Fashion-MNIST MLP (PyTorch export), batch %d ==" % BATCH)
    torch.manual_seed(0)
    model, _ = export_torch_models.mlp()
    # Trained in torch until confident, so that softmax gradients get tiny.
    x_train, t_train = fashion(0, 2048)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(args.epochs):
        for i in range(0, 2048, 64):
            optimizer.zero_grad()
            loss_fn(model(torch.from_numpy(x_train[i:i + 64])),
                    torch.from_numpy(t_train[i:i + 64])).backward()
            optimizer.step()
    path = export_model(model, "mlp_trained", args.work)
    x, t = fashion(0, BATCH)
    runs = {m: run_method(args, path, m, x, t, args.steps, "mlp")
            for m in METHODS}
    sites = sites_of(runs["gs"][0])
    check(sites and sites == sites_of(runs["none"][0]),
          "gs and none number the same roundings")
    print("At the first step (same weights, same batch):")
    print_sites(runs, sites, 0)
    check_flushed_at_most_none(runs, sites)
    for name, what in sites.items():
        if not what.startswith("fT"):
            continue
        for method in SCALED:
            record = runs[method][1][0][name]
            print("  %s at the softmax cast: estimated %.3g, measured %.3g" %
                  (method, record[ESTIMATE], rate(record, FLUSHED)))
        none_rate = rate(runs["none"][1][0][name], FLUSHED)
        check(none_rate > 0, "%s: the softmax cast flushes nothing without "
              "scaling, so the test shows nothing" % name)
        # The paper's log-normal model underestimates this tail (a finding,
        # reported above); the histogram meets the threshold.
        ours = rate(runs["gs-histogram"][1][0][name], FLUSHED)
        check(ours <= 1e-3, "%s: gs-histogram flushes %.3g of the softmax "
              "gradient (> 1e-3)" % (name, ours))
    losses = trajectory_losses(model, runs, x, t)
    reference = torch_gradients(model, x, t)
    errors = {m: gradient_errors(runs[m][1][0], reference) for m in METHODS}
    print("Relative L2 error of each weight gradient vs torch FP32:")
    for m in METHODS:
        print("  %-12s %s" % (m, "  ".join("%s %.2e" % (n, e) for n, e in
                                           errors[m].items())))
    check(max(errors["fp32"].values()) < 1e-5, "fp32 gradients match torch")
    print("| method | final loss | underflow (flushed) per rounding, step 1 "
          "| skipped steps |")
    for m in METHODS:
        rates = ", ".join("%s %.2e" % (n[len("gs.scaling."):],
                                       rate(runs[m][1][0][n], FLUSHED))
                          for n in sorted(sites)) if m != "fp32" else "-"
        print("| %s | %.6f | %s | %d |" % (m, losses[m][-1], rates,
                                           skipped(runs[m][1])))


def part_cnn(args):
    print("== BatchNorm CNN (PyTorch export), batch %d ==" % BATCH)
    torch.manual_seed(0)
    model, _ = export_torch_models.cnn()
    path = export_model(model, "cnn", args.work)
    x, t = fashion(0, BATCH)
    runs = {m: run_method(args, path, m, x, t, 5, "cnn") for m in METHODS}
    sites = sites_of(runs["gs"][0])
    check(any(w.startswith("fG: FP16 result of gs.conv_transpose")
              for w in sites.values()), "a conv's data gradient is scaled")
    check(any("BatchNormalization" in w for w in sites.values()),
          "a batch norm's FP32 backward is cast (fT)")
    print("At the first step (same weights, same batch):")
    print_sites(runs, sites, 0)
    check_flushed_at_most_none(runs, sites)
    losses = trajectory_losses(model, runs, x, t)


def deep_tanh():
    """A tanh MLP whose biases keep activations O(1) while small weights
    shrink the backward pass ~12x per layer."""
    layers = [nn.Flatten(), nn.Linear(784, 64), nn.Tanh()]
    for _ in range(5):
        layers += [nn.Linear(64, 64), nn.Tanh()]
    layers.append(nn.Linear(64, 10))
    model = nn.Sequential(*layers)
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for module in model:
            if isinstance(module, nn.Linear):
                module.weight.normal_(0.0, 0.02, generator=generator)
                module.bias.normal_(0.0, 1.5, generator=generator)
    return model


def part_deep_tanh(args):
    print("== deep tanh MLP, Fashion-MNIST, batch %d ==" % BATCH)
    model = deep_tanh()
    path = export_model(model, "deep_tanh", args.work)
    x, t = fashion(0, BATCH)
    runs = {m: run_method(args, path, m, x, t, args.steps, "deep_tanh")
            for m in METHODS}
    reference = torch_gradients(model, x, t)
    first = "model.1.weight"
    print("torch FP32 |grad| rms per weight: " + "  ".join(
        "%s %.2e" % (n, np.sqrt(np.mean(g ** 2)))
        for n, g in reference.items() if n.endswith("weight")))
    errors = {m: gradient_errors(runs[m][1][0], reference) for m in METHODS}
    print("Relative L2 error of each weight gradient vs torch FP32 "
          "(same weights, same batch):")
    names = [n for n in reference if n.endswith("weight")]
    print("  %-12s %s" % ("method", " ".join("%14s" % n for n in names)))
    for m in METHODS:
        print("  %-12s %s" % (m, " ".join("%14.2e" % errors[m][n]
                                         for n in names)))
    sites = sites_of(runs["gs"][0])
    print_sites(runs, sites, 0)
    check(max(errors["fp32"].values()) < 1e-4, "fp32 gradients match torch")
    check(errors["none"][first] >= 0.9,
          "none keeps the first layer's gradient (error %.3g), so the model "
          "does not break FP16" % errors["none"][first])
    # The last fG rounding is the first layer's data gradient.
    last = max(sites, key=site_index)
    flushed = rate(runs["none"][1][0][last], FLUSHED)
    check(flushed >= 0.5, "none flushes only %.3g of %s" % (flushed, last))
    for method in SCALED:
        worst = max(errors[method].values())
        check(worst <= 1e-2, "%s gradient error %.3g > 1e-2" % (method,
                                                                 worst))
    losses = trajectory_losses(model, runs, x, t)
    initial = torch_loss(model, {}, x, t)
    for m in ["fp32"] + SCALED:
        check(losses[m][-1] < initial,
              "%s makes no progress: %.5f -> %.5f" % (m, initial,
                                                     losses[m][-1]))
    print("| method | final loss | first-layer gradient error | flushed at "
          "%s | skipped steps |" % last)
    for m in METHODS:
        where = rate(runs[m][1][0][last], FLUSHED) if m != "fp32" else 0.0
        print("| %s | %.5f | %.2e | %.3g | %d |" % (
            m, losses[m][-1], errors[m][first], where, skipped(runs[m][1])))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gs-opt", required=True)
    parser.add_argument("--gs-run", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--part", default="all",
                        choices=["mlp", "cnn", "deep-tanh", "all"])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    torch.set_num_threads(1)
    if args.part in ("mlp", "all"):
        part_mlp(args)
    if args.part in ("cnn", "all"):
        part_cnn(args)
    if args.part in ("deep-tanh", "all"):
        part_deep_tanh(args)
    print("violations: %d" % len(violations))
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
