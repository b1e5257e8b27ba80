#!/usr/bin/env python3
"""Checks training reports of gs-compile executables (reference Python).

Usage: check_training_reports.py --schema SCHEMA --reference FP32.json
           [--max-accuracy-drop POINTS] REPORT.json [--csv REPORT.csv] ...

Validates every report against the JSON schema (docs/report.schema.json)
with jsonschema, checks that its curves are consistent (one loss per step,
telemetry steps within the run, measured rates = flushed / nonzero), that
a CSV written beside it holds the same losses, and that each report's eval
accuracy is within the given number of points of the reference's. Prints
one line per report; exits non-zero on any failure.
"""

import argparse
import csv
import json
import math
import sys

import jsonschema


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def check_report(path, report):
    run = report["run"]
    steps = report["loss"]["step"]
    if steps != list(range(1, run["steps"] + 1)):
        fail(f"{path}: losses are not one per step 1..{run['steps']}")
    if len(report["loss"]["value"]) != len(steps):
        fail(f"{path}: loss steps and values differ in length")
    for site in report["sites"]:
        n = len(site["step"])
        for key in ("scale", "site_scale", "estimated_underflow",
                    "measured_underflow", "nonzero", "flushed", "subnormal",
                    "overflow"):
            if len(site[key]) != n:
                fail(f"{path}: {site['name']}.{key} has {len(site[key])} "
                     f"values for {n} steps")
        for nonzero, flushed, measured in zip(site["nonzero"], site["flushed"],
                                              site["measured_underflow"]):
            expected = flushed / nonzero if nonzero else None
            if (expected is None) != (measured is None) or (
                    expected is not None and
                    not math.isclose(expected, measured, rel_tol=1e-6)):
                fail(f"{path}: {site['name']} measured rate {measured} is "
                     f"not flushed/nonzero = {expected}")
    if report["eval"] and report["final"]["eval_accuracy"] != \
            report["eval"][-1]["accuracy"]:
        fail(f"{path}: final eval accuracy is not the last evaluation's")


def check_csv(path, report):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    if len(rows) != len(report["loss"]["step"]):
        fail(f"{path}: {len(rows)} rows for {len(report['loss']['step'])} "
             "steps")
    for row, step, loss in zip(rows, report["loss"]["step"],
                               report["loss"]["value"]):
        if int(row["step"]) != step or not math.isclose(
                float(row["loss"]), loss, rel_tol=1e-6):
            fail(f"{path}: row {row['step']} disagrees with the report")
    for site in report["sites"]:
        if f"{site['name']}.scale" not in rows[0]:
            fail(f"{path}: no column for {site['name']}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--schema", required=True)
    parser.add_argument("--reference", required=True)
    parser.add_argument("--max-accuracy-drop", type=float, default=0.5)
    parser.add_argument("reports", nargs="+")
    parser.add_argument("--csv", action="append", default=[])
    args = parser.parse_args()
    with open(args.schema) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)

    def load(path):
        with open(path) as f:
            report = json.load(f)
        errors = sorted(validator.iter_errors(report), key=str)
        if errors:
            fail(f"{path} does not validate: {errors[0].message} at "
                 f"{'/'.join(map(str, errors[0].absolute_path))}")
        check_report(path, report)
        return report

    reference = load(args.reference)
    base = reference["final"]["eval_accuracy"]
    print(f"{reference['model']['scaling']}: valid, eval accuracy {base:.4f}")
    for path in args.reports:
        report = load(path)
        accuracy = report["final"]["eval_accuracy"]
        drop = 100 * (base - accuracy)
        verdict = "ok" if drop <= args.max_accuracy_drop else "TOO LOW"
        print(f"{report['model']['scaling']}: valid, eval accuracy "
              f"{accuracy:.4f}, {drop:+.2f} points below "
              f"{reference['model']['scaling']}: {verdict}")
        if verdict != "ok":
            sys.exit(1)
    for path in args.csv:
        report_path = path[:-4] + ".json"
        with open(report_path) as f:
            check_csv(path, json.load(f))
        print(f"{path}: matches {report_path}")


if __name__ == "__main__":
    main()
