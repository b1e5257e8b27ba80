#!/usr/bin/env python3
"""Compares a data-parallel run with one process on the same global batches.

  data_parallel_check.py --precision fp32|fp16 single.json single.npz
      ranks.json... ranks.npz

single: the model compiled for batch R*B, trained by one process.
ranks: the model compiled for batch B with --distributed, trained by R
ranks (one report per rank, rank 0's first; the checkpoint rank 0's).

Checks, and prints one line each:
- every rank's report has the same scale decisions, estimates, cast counts
  and skipped steps, exactly (the statistics they decide from are summed
  over the ranks, so no rank may decide otherwise);
- rank 0 decides the single process's scales at every step, and at the
  first step (same weights, the same values cast, per example) measures
  its cast counts exactly;
- the loss curves and final weights (every parameter but gs.* state) agree
  within the arithmetic's tolerance. Step s's gradient is the single's
  summed in another order: a relative difference of about log2(batch)
  FP32 ulps, which s steps accumulate. With --precision fp32 that is the
  bound: steps * log2(batch) * 2^-24, relative (loss; L2 of each
  parameter). With fp16 (mixed precision) those differences also flip
  FP16 roundings of activations and gradients, 2^-11 relative each, which
  training carries on: the loss within 2^-10, the weights within 2^-8.
"""

import argparse
import json
import math
import sys

import numpy as np

SITE_FIELDS = ["scale", "site_scale", "estimated_underflow", "nonzero",
               "flushed", "subnormal", "overflow"]
DECISIONS = ["scale", "site_scale"]
COUNTS = ["nonzero", "flushed", "subnormal", "overflow"]


def load(path):
    with open(path) as f:
        return json.load(f)


def sites(report, fields):
    return [(s["name"], {f: s[f] for f in fields}) for s in report["sites"]]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--precision", choices=["fp32", "fp16"],
                        required=True)
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    single_report, single_npz = load(args.files[0]), np.load(args.files[1])
    rank_reports = [load(p) for p in args.files[2:-1]]
    ranks_npz = np.load(args.files[-1])
    failures = []

    leader = rank_reports[0]
    if leader["run"]["ranks"] != len(rank_reports):
        failures.append("rank 0's report says %d ranks, %d reports given" %
                        (leader["run"]["ranks"], len(rank_reports)))
    for r, report in enumerate(rank_reports[1:], 1):
        if sites(report, SITE_FIELDS) != sites(leader, SITE_FIELDS):
            failures.append("rank %d's scaling telemetry differs from rank 0's"
                            % r)
        if report["skipped_steps"] != leader["skipped_steps"]:
            failures.append("rank %d skipped %d steps, rank 0 %d" %
                            (r, report["skipped_steps"],
                             leader["skipped_steps"]))
    print("ranks: %d reports with the same scales, estimates, cast counts and "
          "%d skipped steps" % (len(rank_reports), leader["skipped_steps"]))

    batch = single_report["model"]["batch_size"]
    if leader["model"]["batch_size"] != batch:
        failures.append("global batch %d, single %d" %
                        (leader["model"]["batch_size"], batch))
    if sites(leader, DECISIONS) != sites(single_report, DECISIONS):
        failures.append("rank 0's scales differ from the single process's")
    if leader["skipped_steps"] != single_report["skipped_steps"]:
        failures.append("skipped steps differ from the single process's")
    first = [(s["name"], [s[f][0] for f in COUNTS]) for s in leader["sites"]]
    if first != [(s["name"], [s[f][0] for f in COUNTS])
                 for s in single_report["sites"]]:
        failures.append("rank 0's first-step cast counts differ from the "
                        "single process's")
    scales = sorted({v for s in leader["sites"] for v in s["scale"]})
    print("single: the same scales (%s) at %d sites, the same first-step "
          "cast counts" % (", ".join("2^%g" % np.log2(v) for v in scales),
                           len(leader["sites"])))

    steps = len(single_report["loss"]["value"])
    if args.precision == "fp32":
        loss_tolerance = weight_tolerance = steps * math.log2(batch) * 2**-24
    else:
        loss_tolerance, weight_tolerance = 2**-10, 2**-8
    a = np.array(leader["loss"]["value"])
    b = np.array(single_report["loss"]["value"])
    loss_error = float(np.max(np.abs(a - b) / np.abs(b))) if a.shape == \
        b.shape else math.inf
    if not loss_error <= loss_tolerance:
        failures.append("loss curves differ: max relative error %g > %g" %
                        (loss_error, loss_tolerance))
    print("loss: %d steps, max relative difference within %s tolerance" %
          (len(a), args.precision))
    print("  (%.2e, tolerance %.2e)" % (loss_error, loss_tolerance),
          file=sys.stderr)

    worst = 0.0
    for name in single_npz.files:
        if name.startswith("gs."):
            continue
        x = ranks_npz[name].astype(np.float64)
        y = single_npz[name].astype(np.float64)
        error = np.linalg.norm(x - y) / max(np.linalg.norm(y), 1e-30)
        worst = max(worst, error)
        if not error <= weight_tolerance:
            failures.append("%s: relative L2 error %g > %g" %
                            (name, error, weight_tolerance))
    print("weights: relative L2 difference within %s tolerance" %
          args.precision)
    print("  (%.2e, tolerance %.2e)" % (worst, weight_tolerance),
          file=sys.stderr)

    for failure in failures:
        print("FAIL: " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
