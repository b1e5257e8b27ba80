#!/usr/bin/env python3
"""Checks a training report of a model that is not a plain classifier.

Usage: check_task_report.py --schema SCHEMA.json --reference FP32.json
                            --metric NAME [--output NAME ...]
                            [--tolerance T] REPORT.json

The report must validate against the schema, hold a value of every
--output (a scalar train step result besides the loss) at every step,
evaluate with --metric, improve on its first evaluation, and end within
--tolerance of the FP32 reference run: for mean_iou and accuracy at most
T below it, for rmse at most a factor 1 + T above it. Prints one line;
exits 1 on a failure.
"""

import argparse
import json
import math
import sys

import jsonschema


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--schema", required=True)
    parser.add_argument("--reference", required=True)
    parser.add_argument("--metric", required=True)
    parser.add_argument("--output", action="append", default=[])
    parser.add_argument("--tolerance", type=float, default=0.02)
    parser.add_argument("report")
    args = parser.parse_args()
    with open(args.schema) as f:
        schema = json.load(f)
    reports = []
    for path in (args.reference, args.report):
        with open(path) as f:
            report = json.load(f)
        jsonschema.validate(report, schema)
        reports.append(report)
    reference, report = reports
    steps = len(report["loss"]["step"])
    names = [o["name"] for o in report["outputs"]]
    if names != args.output:
        fail(f"outputs {names}, expected {args.output}")
    for output in report["outputs"]:
        values = output["value"]
        if len(values) != steps or not all(
                v is not None and math.isfinite(v) for v in values):
            fail(f"{output['name']} lacks a finite value at some step")
    lower_is_better = args.metric == "rmse"
    values = []
    for r in reports:
        if r["final"]["eval_metric"] != args.metric:
            fail(f"the metric is {r['final']['eval_metric']}")
        values.append([e[args.metric] for e in r["eval"]])
    first, last = values[1][0], values[1][-1]
    improved = last < first if lower_is_better else last > first
    if not improved:
        fail(f"{args.metric} went from {first} to {last}")
    base = values[0][-1]
    ok = last <= base * (1 + args.tolerance) if lower_is_better \
        else last >= base - args.tolerance
    verdict = "ok" if ok else "TOO FAR FROM FP32"
    print(f"{report['model']['scaling']}: {args.metric} {first:.4g} -> "
          f"{last:.4g} (fp32 {base:.4g}), outputs {', '.join(names) or '-'}: "
          f"{verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
