#!/usr/bin/env python3
"""Runs the PyTorch MLP export's train step under gs-loss-scaling and checks
the baselines' semantics on the dumped parameters and state.

Usage: loss_scaling_check.py --gs-opt PATH --gs-run PATH --work DIR

- fixed (FP32 step, S = 1024): scaling by a power of two and unscaling is
  exact, so every parameter after every step is bit-identical to the
  unscaled step's.
- dynamic (mixed-precision step, initial S = 2^24, far above what FP16
  gradients allow): while the scaled gradients overflow, a step changes no
  parameter, optimizer state or step counter, counts one skipped step and
  halves S; once they fit, steps train with S constant.

Run with Debian's Python (torch 1.13, for the export). Prints one line per
step and exits 1 on a violation.
"""

import argparse
import glob
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__)))
import torch_trajectory  # noqa: E402
import export_torch_models  # noqa: E402  (on the path torch_trajectory sets)


def run(args, scaling, name, steps, mixed=False):
    work = os.path.join(args.work, name)
    os.makedirs(work, exist_ok=True)
    model = os.path.join(args.work, "mlp.onnx")
    step = os.path.join(work, "train_step.mlir")
    precision = ["--gs-mixed-precision"] if mixed else []
    widen = ["--gs-widen-weight-gradients"] if mixed else []
    passes = (["--gs-train-step"] + precision + ["--gs-autodiff"] + widen +
              scaling)
    subprocess.run([args.gs_opt, model, "--onnx-shape=x=16x1x28x28"] +
                   passes + ["-o", step], check=True)
    dump = os.path.join(work, "params")
    subprocess.run([args.gs_run, step, "--entry=train_step",
                    "-i", os.path.join(args.work, "x.npy"),
                    "-i", os.path.join(args.work, "t.npy"),
                    "--steps=%d" % steps, "--dump-params=" + dump],
                   check=True, capture_output=True)
    states = []
    for s in range(1, steps + 1):
        directory = os.path.join(dump, "step_%d" % s)
        states.append({os.path.basename(f)[:-4]: np.load(f) for f in
                       glob.glob(os.path.join(directory, "*.npy"))})
    return states


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gs-opt", required=True)
    parser.add_argument("--gs-run", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    export_torch_models.export("mlp", export_torch_models.mlp, args.work)
    x, t = torch_trajectory.fashion_batch(16)
    np.save(os.path.join(args.work, "x.npy"), x)
    np.save(os.path.join(args.work, "t.npy"), t)
    ok = True

    plain = run(args, [], "none", 3)
    fixed = run(args, ["--gs-loss-scaling=mode=fixed scale=1024"], "fixed", 3)
    for step, (a, b) in enumerate(zip(plain, fixed), 1):
        same = all(np.array_equal(a[k], b[k]) for k in a)
        ok &= same
        print("fixed step %d: %s" % (step, "bit-identical to unscaled"
                                     if same else "DIFFERENT"))

    steps = 10
    dynamic = run(args, ["--gs-loss-scaling=mode=dynamic init-scale=16777216"],
                  "dynamic", steps, mixed=True)
    trained = [k for k in dynamic[0] if not k.startswith("gs.")]
    previous = None
    skips = cleans = 0
    for step, state in enumerate(dynamic, 1):
        scale = float(state["gs.loss_scale"])
        skipped = int(state["gs.skipped_steps"])
        if previous is None:
            before_scale, before_skipped = 2.0 ** 24, 0
            changed = True
        else:
            before_scale = float(previous["gs.loss_scale"])
            before_skipped = int(previous["gs.skipped_steps"])
            changed = any(not np.array_equal(state[k], previous[k])
                          for k in trained)
        if skipped == before_skipped + 1:
            skips += 1
            good = (scale == before_scale / 2 and
                    (previous is None or (not changed and int(
                        state["gs.step"]) == int(previous["gs.step"]))))
            what = "skipped, scale %g -> %g" % (before_scale, scale)
        else:
            cleans += 1
            good = skipped == before_skipped and scale == before_scale and \
                changed
            what = "trained at scale %g" % scale
        if previous is None and skipped == 1:
            # Nothing to compare with but the initial parameters.
            good &= int(state["gs.step"]) == 0
        ok &= good
        print("dynamic step %d: %s%s" % (step, what, "" if good else
                                          "  VIOLATION"))
        previous = state
    print("dynamic: %d skipped, %d trained" % (skips, cleans))
    ok &= skips > 0 and cleans > 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
