#!/usr/bin/env python3
"""Checks a training report of a model that is not a plain classifier.

Usage: check_task_report.py --schema SCHEMA.json --reference FP32.json
                            --metric NAME [--output NAME ...]
                            [--tolerance T] [--unifications N] REPORT.json

The report must validate against the schema, hold a value of every
--output (a scalar train step result besides the loss) at every step,
evaluate with --metric, improve on its first evaluation, and end within
--tolerance of the FP32 reference run: for mean_iou and accuracy at most
T below it, for rmse at most a factor 1 + T above it. With --unifications
N, the report holds N branch unifications (the reference none), each
recorded at every telemetry step: the unified scale a power of two no
larger than the largest part's, which one part arrived with unless every
part was lowered, and each part's factor its scale over the part's.
Prints one line (and one per unification); exits 1 on a failure.
"""

import argparse
import json
import math
import struct
import sys

import jsonschema


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def single(x):
    """x as the f32 it was recorded from (reports print 9 digits, which
    round-trip an f32, not the f64 of a power of two like 2^-13)."""
    return None if x is None else struct.unpack("f", struct.pack("f", x))[0]


def power_of_two(x):
    return x is not None and x > 0 and math.frexp(x)[0] == 0.5


def check_unifications(reference, report, expected):
    if reference["unifications"]:
        fail("the reference records unifications")
    unifications = report["unifications"]
    if len(unifications) != expected:
        fail(f"{len(unifications)} unifications, expected {expected}")
    steps = report["sites"][0]["step"] if report["sites"] else []
    for u in unifications:
        if u["step"] != steps:
            fail(f"{u['name']} is not recorded at every telemetry step")
        rescaled = [0] * len(u["parts"])
        for i, scale in enumerate(map(single, u["scale"])):
            parts = [single(p["scale"][i]) for p in u["parts"]]
            if not power_of_two(scale) or not all(map(power_of_two, parts)):
                fail(f"{u['name']} step {u['step'][i]}: scales {scale}, "
                     f"{parts} are not powers of two")
            if scale > max(parts) or (scale not in parts and
                                      scale >= min(parts)):
                fail(f"{u['name']} step {u['step'][i]}: unified scale "
                     f"{scale} from parts {parts}")
            for j, p in enumerate(u["parts"]):
                if single(p["factor"][i]) != scale / parts[j]:
                    fail(f"{u['name']} step {u['step'][i]}: part {j}'s "
                         f"factor {p['factor'][i]}, expected "
                         f"{scale / parts[j]}")
                rescaled[j] += p["factor"][i] != 1
        print(f"{u['name']}: {len(u['parts'])} parts, rescaled on "
              f"{'/'.join(map(str, rescaled))} of {len(u['step'])} steps "
              f"({u['site']})")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--schema", required=True)
    parser.add_argument("--reference", required=True)
    parser.add_argument("--metric", required=True)
    parser.add_argument("--output", action="append", default=[])
    parser.add_argument("--tolerance", type=float, default=0.02)
    parser.add_argument("--unifications", type=int)
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
    if args.unifications is not None:
        check_unifications(reference, report, args.unifications)
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
