#!/usr/bin/env python3
"""Runs GradScale over every ONNX backend test under the given directories.

`--mode import` runs each `model.onnx` through `gs-opt` (import and
verification only); `--mode compile` imports it and runs the passes that
`--gs-opt-arg` names (a lowering: `--gs-opt-arg=--gs-lower-to-cuda`);
`--mode run` compiles and runs each test with `gs-run --check` (and each
`--gs-run-arg`: `--gs-run-arg=--target=cuda`), comparing its outputs with
the test's expected ones.

A test either succeeds, or fails with a clear error (exit status 1 and an
`error:`/`gs-run:` line on stderr) naming what is unsupported; in run mode a
compiled model whose outputs differ (exit status 2) is a wrong answer, and a
model that imports but does not compile (and, in run mode, run) is
unlowered. Anything else
(a crash, a hang, a failure without a message) is a bug.
Tests whose expected outputs cannot be reproduced by any conforming
implementation (random draws, a reference made with other attributes than
its model's) are named with `--skip REGEX=REASON`; each is listed with its
reason, never dropped silently.

Prints per-outcome counts and the reasons of clean failures grouped; exits
non-zero on any crash or wrong answer, or when a test of `--require` does
not succeed.
"""

import argparse
import collections
import concurrent.futures
import os
import pathlib
import re
import subprocess
import sys


def error_line(stderr):
    for line in stderr.splitlines():
        for marker in ("error:", "gs-run:"):
            if marker in line:
                return line.split(marker, 1)[1].strip()
    return None


def import_command(args, test):
    data = test / "test_data_set_0"
    return [args.gs_opt, str(test / "model.onnx"), "-o", os.devnull,
            f"--onnx-bind-parameter-inputs={data}"]


def run(args, test):
    if args.mode == "import":
        command = import_command(args, test)
    elif args.mode == "compile":
        command = import_command(args, test) + args.gs_opt_arg
    else:
        command = [args.gs_run, "--check", str(test)] + args.gs_run_arg
    try:
        proc = subprocess.run(command, capture_output=True, text=True,
                              timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return "crash", "timed out"
    if proc.returncode == 0:
        return "passed", ""
    message = error_line(proc.stderr)
    if proc.returncode == 2 and args.mode == "run":
        return "wrong", proc.stderr.strip().splitlines()[-1]
    if proc.returncode != 1 or not message:
        return "crash", f"exit status {proc.returncode}: {proc.stderr[-300:]}"
    # A model that imports must also compile (and run).
    if args.mode != "import" and subprocess.run(
            import_command(args, test), capture_output=True,
            timeout=args.timeout).returncode == 0:
        return "unlowered", message
    return "rejected", message


def reason_key(message):
    """Groups messages that differ only in names and numbers."""
    message = re.sub(r"'[^']*'", "'…'", message)
    message = re.sub(r"/\S*", "…", message)
    return re.sub(r"\d+", "N", message)[:110]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mode", choices=["import", "compile", "run"],
                        required=True)
    parser.add_argument("--gs-opt", default="gs-opt")
    parser.add_argument("--gs-run", default="gs-run")
    parser.add_argument("--gs-opt-arg", action="append", default=[],
                        help="--mode compile: a flag for gs-opt after the "
                        "import's (a pass or pipeline)")
    parser.add_argument("--gs-run-arg", action="append", default=[],
                        help="--mode run: a flag for gs-run --check")
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--require", action="append", default=[],
                        help="regex of test names that must succeed")
    parser.add_argument("--skip", action="append", default=[],
                        metavar="REGEX=REASON",
                        help="tests not to run, with the reason")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("roots", nargs="+", type=pathlib.Path)
    args = parser.parse_args()
    if args.gs_opt_arg and args.mode != "compile":
        parser.error("--gs-opt-arg is for --mode compile")
    if args.mode == "compile" and not args.gs_opt_arg:
        parser.error("--mode compile needs the passes to run (--gs-opt-arg)")
    if args.gs_run_arg and args.mode != "run":
        parser.error("--gs-run-arg is for --mode run")

    skips = []
    for spec in args.skip:
        pattern, sep, reason = spec.partition("=")
        if not sep or not reason:
            parser.error(f"--skip needs REGEX=REASON, got '{spec}'")
        skips.append((re.compile(pattern), reason))
    tests, skipped = [], []
    for model in sorted(m for root in args.roots
                        for m in root.glob("*/model.onnx")):
        reason = next((r for p, r in skips if p.fullmatch(model.parent.name)),
                      None)
        if reason:
            skipped.append(f"{model.parent.name}: {reason}")
        else:
            tests.append(model.parent)
    outcomes = collections.Counter()
    reasons = collections.Counter()
    bugs, missing = [], []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(run, args, t): t for t in tests}
        for future in concurrent.futures.as_completed(futures):
            name = futures[future].name
            outcome, message = future.result()
            outcomes[outcome] += 1
            if outcome == "rejected":
                reasons[reason_key(message)] += 1
            if args.verbose and outcome != "passed":
                print(f"{outcome} {name}: {message}")
            if outcome in ("crash", "wrong", "unlowered"):
                bugs.append(f"{outcome.upper()} {name}: {message}")
            if outcome != "passed" and any(
                    re.fullmatch(r, name) for r in args.require):
                missing.append(f"{name}: {message}")

    verb = {"import": "imported", "compile": "compiled",
            "run": "passed"}[args.mode]
    print(f"{verb} {outcomes['passed']} of {len(tests)} tests; "
          f"{outcomes['rejected']} rejected with a clear error, "
          f"{outcomes['wrong']} wrong, {outcomes['unlowered']} unlowered, "
          f"{outcomes['crash']} crashed; "
          f"{len(skipped)} skipped")
    for reason, count in reasons.most_common():
        print(f"  {count:4d}  {reason}")
    for line in skipped:
        print(f"SKIPPED {line}")
    for line in sorted(bugs):
        print(line)
    for line in sorted(missing):
        print(f"REQUIRED BUT NOT {verb.upper()} {line}")
    return 1 if bugs or missing else 0


if __name__ == "__main__":
    sys.exit(main())
