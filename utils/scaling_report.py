#!/usr/bin/env python3
"""Prints the gradient-scaling telemetry of a run of gs-run --dump-params.

Usage: scaling_report.py TRAIN_STEP.mlir DUMP_DIR [--step N]

TRAIN_STEP.mlir is the train step gs-run ran (the `gs.site` attribute of
each `gs.scaling.cast<i>` state parameter says which rounding it is);
DUMP_DIR is the --dump-params directory. For step N (default: the last),
one line per FP32->FP16 rounding of a gradient: the tensor's scale, the
model's estimated underflow rate, and the measured fractions of its nonzero
values that the cast flushed to 0 or left subnormal, and the count that
became inf. The record layout is include/gs/Support/Telemetry.h.
"""

import argparse
import os
import re
import sys

import numpy as np

SCALE, SITE_SCALE, ESTIMATE, NONZERO, FLUSHED, SUBNORMAL, OVERFLOW = range(7)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("train_step")
    parser.add_argument("dump")
    parser.add_argument("--step", type=int)
    args = parser.parse_args()
    try:
        with open(args.train_step) as f:
            ir = f.read()
        steps = sorted(int(d[len("step_"):]) for d in os.listdir(args.dump)
                       if re.fullmatch(r"step_\d+", d))
    except OSError as e:
        sys.exit("scaling_report.py: %s" % e)
    if not steps:
        sys.exit("scaling_report.py: %s holds no step_N directory" % args.dump)
    step = args.step or steps[-1]
    directory = os.path.join(args.dump, "step_%d" % step)
    if not os.path.isdir(directory):
        sys.exit("scaling_report.py: no step %d in %s" % (step, args.dump))
    sites = re.findall(
        r'gs\.param state @"?(gs\.scaling\.cast\d+)"?.*gs\.site = "([^"]*)"',
        ir)
    print("step %d" % step)
    print("%-18s %10s %10s %10s %10s %8s  %s" % (
        "rounding", "scale", "estimate", "flushed", "subnormal", "inf",
        "where"))
    for name, site in sites:
        path = os.path.join(directory, name + ".npy")
        if not os.path.exists(path):
            sys.exit("scaling_report.py: %s is missing" % path)
        r = np.load(path)
        nonzero = r[NONZERO] if r[NONZERO] > 0 else 1.0
        print("%-18s %10.4g %10.3g %10.3g %10.3g %8d  %s" % (
            name, r[SCALE], r[ESTIMATE], r[FLUSHED] / nonzero,
            r[SUBNORMAL] / nonzero, int(r[OVERFLOW]), site))
    skipped = os.path.join(directory, "gs.skipped_steps.npy")
    if os.path.exists(skipped):
        print("skipped steps: %d" % int(np.load(skipped)))


if __name__ == "__main__":
    main()
