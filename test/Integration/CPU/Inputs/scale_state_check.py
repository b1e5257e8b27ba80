#!/usr/bin/env python3
"""Checks the scale state that gs-gradient-scaling keeps across steps, by
running the bundled example (examples/mlp.onnxtext) with gs-run.

Usage: scale_state_check.py --gs-opt PATH --gs-run PATH --src DIR --work DIR

- interval=3: the scales (and the model's estimates) of every site are
  recomputed on steps 0, 3, ... and reused in between, so the records of
  steps 1-3 agree and step 4's differs (the weights moved); with interval=1
  every step recomputes.
- a batch with a NaN: every step's gradients are non-finite, so no step
  updates a weight or its optimizer state or counts as a step;
  gs.skipped_steps counts each one and the recompute flag is set.

Prints one line per check and exits 1 on a violation.
"""

import argparse
import glob
import os
import subprocess
import sys

import numpy as np

ESTIMATE = 2
failures = 0


def check(ok, message):
    global failures
    print(("ok: " if ok else "VIOLATION: ") + message)
    failures += 0 if ok else 1


def train(args, options, x, steps, name):
    work = os.path.join(args.work, name)
    os.makedirs(work, exist_ok=True)
    example = os.path.join(args.src, "examples", "mlp.onnxtext")
    step = os.path.join(work, "train_step.mlir")
    subprocess.run([args.gs_opt, example, "--onnx-shape=x=32x8",
                    "--onnx-train=optimizer=momentum lr=0.05",
                    "--gs-train=" + options, "-o", step], check=True)
    np.save(os.path.join(work, "x.npy"), x)
    dump = os.path.join(work, "params")
    labels = os.path.join(args.src, "examples", "data", "labels.npy")
    subprocess.run([args.gs_run, step, "--entry=train_step",
                    "-i", os.path.join(work, "x.npy"), "-i", labels,
                    "--steps=%d" % steps, "--dump-params=" + dump],
                   check=True, capture_output=True)
    return [{os.path.basename(f)[:-4]: np.load(f) for f in
             glob.glob(os.path.join(dump, "step_%d" % s, "*.npy"))}
            for s in range(1, steps + 1)]


def main():
    parser = argparse.ArgumentParser()
    for flag in ["--gs-opt", "--gs-run", "--src", "--work"]:
        parser.add_argument(flag, required=True)
    args = parser.parse_args()
    x = np.load(os.path.join(args.src, "examples", "data", "x.npy"))

    cached = train(args, "scaling=gs interval=3", x, 6, "interval3")
    fresh = train(args, "scaling=gs", x, 6, "interval1")
    sites = sorted(k for k in cached[0] if k.startswith("gs.scaling.cast"))
    check(len(sites) == 2, "two sites: %s" % ", ".join(sites))
    for site in sites:
        e = [s[site][ESTIMATE] for s in cached]
        check(e[0] == e[1] == e[2] and e[3] == e[4] == e[5] and e[2] != e[3],
              "%s with interval=3: estimates %s reused within steps 1-3 "
              "and 4-6" % (site, " ".join("%.6g" % v for v in e)))
        f = [s[site][ESTIMATE] for s in fresh]
        check(all(a != b for a, b in zip(f, f[1:])),
              "%s with interval=1: every step recomputes (%s)" %
              (site, " ".join("%.6g" % v for v in f)))
    check(all(int(s["gs.scaling.recompute"]) == 0 for s in cached),
          "clean steps leave the recompute flag clear")

    poisoned = x.copy()
    poisoned[3, 5] = np.nan
    skipped = train(args, "scaling=gs interval=3", poisoned, 3, "nan")
    weights = [k for k in skipped[0] if not k.startswith("gs.")]
    for step, state in enumerate(skipped, 1):
        check(int(state["gs.skipped_steps"]) == step,
              "NaN batch, step %d: %d skipped steps" %
              (step, int(state["gs.skipped_steps"])))
        check(int(state["gs.step"]) == 0 and
              int(state["gs.scaling.recompute"]) == 1,
              "NaN batch, step %d: step counter 0, recompute flag set" % step)
        check(all(np.array_equal(state[k], skipped[0][k]) for k in weights) and
              all(not np.any(state[k]) for k in weights
                  if k.endswith(".velocity")),
              "NaN batch, step %d: no weight or velocity changed" % step)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
