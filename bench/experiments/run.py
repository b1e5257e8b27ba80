#!/usr/bin/env python3
"""Reproduces the paper's comparison on public models: `make experiments`.

Usage: run.py [--build BUILD] [--work DIR] [--results DIR] [--quick]
              [--jobs N] [--models NAME,...] [--summarize]

For each model of models.py, compiles a training executable per gradient
precision mode (gs-compile), trains it on Fashion-MNIST-derived data, and
writes RESULTS.md and plots (plots.py) to --results (default
bench/experiments/results; with --quick, WORK/results). Per model and mode:
the test metric (mean and spread over 3 data-order seeds for fp32, dynamic
and gs), the last tenth's training loss, gradient fidelity against FP32 at
the same weights, the measured underflow of every FP32->FP16 rounding of a
gradient, skipped steps and the step time. bench/experiments/README.md
says how each number is measured.

--summarize writes RESULTS.md and the plots again from the runs a finished
run.py left in --work. --quick (what `make check` runs): 4 modes, one seed,
60 steps per model (300 for the MLPs); its numbers only show that the
pipeline works.

Run with Debian's Python (PyTorch for the models, NumPy, matplotlib).
"""

import argparse
import concurrent.futures
import json
import math
import pathlib
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
import plots  # noqa: E402
import results  # noqa: E402

# Each mode's gs-compile flags.
MODES = {
    "fp32": ["--scaling=fp32"],
    "none": ["--scaling=none"],
    "fixed-8": ["--scaling=fixed=8"],
    "fixed-128": ["--scaling=fixed=128"],
    "fixed-2048": ["--scaling=fixed=2048"],
    "fixed-32768": ["--scaling=fixed=32768"],
    "dynamic": ["--scaling=dynamic"],
    "gs": ["--scaling=gs"],
    "gs-i10": ["--scaling=gs", "--interval=10"],
    "gs-i100": ["--scaling=gs", "--interval=100"],
    "gs-hist": ["--scaling=gs", "--cast-model=exponent_histogram"],
    "gs-hist-all": ["--scaling=gs", "--cast-model=exponent_histogram",
                    "--gemm-model=exponent_histogram"],
}
QUICK_MODES = ["fp32", "none", "dynamic", "gs"]
# Modes trained with three data-order seeds (the run-to-run noise).
SEEDED = ["fp32", "dynamic", "gs"]
SEEDS = [0, 1, 2]
ADAM_BETA1 = 0.9  # gs-compile's default


def fail(message):
    sys.exit(f"run.py: error: {message}")


def run(command, log):
    """Runs `command`, its output to `log`; fails naming the log."""
    with open(log, "w") as f:
        status = subprocess.run(command, stdout=f, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL).returncode
    if status != 0:
        tail = pathlib.Path(log).read_text(errors="replace")[-2000:]
        fail(f"{command[0]} exited with {status} (log {log}):\n{tail}")


class Experiment:
    def __init__(self, args, name, spec):
        self.args = args
        self.name = name
        self.spec = spec
        self.dir = args.work / name
        self.dir.mkdir(parents=True, exist_ok=True)

    def executable(self, mode):
        return self.dir / f"train-{mode}"

    def compile(self, mode):
        batch = self.spec["batch"]
        shapes = [f"--onnx-shape={name}=" + "x".join(
                  str(d) for d in [batch] + dims)
                  for name, dims in self.spec["shapes"].items()]
        command = [str(self.args.build / "bin" / "gs-compile"),
                   str(self.args.work / "data" / f"{self.name}.onnx"),
                   *shapes,
                   f"--onnx-train=loss=loss {self.spec['optimizer']}",
                   *MODES[mode], "-o", str(self.executable(mode))]
        started = time.monotonic()
        run(command, self.dir / f"compile-{mode}.log")
        return time.monotonic() - started

    def data_flags(self, split):
        flag = "--data" if split == "train" else "--eval-input"
        path = self.args.work / "data" / f"{self.name}_{split}.npz"
        return [f"{flag}={name}={path}:{name}" for name in self.spec["shapes"]]

    def train(self, mode, seed):
        tag = f"{mode}-s{seed}"
        command = [str(self.executable(mode)), *self.data_flags("train"),
                   *self.data_flags("eval"),
                   f"--metric={self.spec['metric']}",
                   f"--steps={self.spec['steps']}", f"--seed={seed}",
                   "--progress=never",
                   f"--report={self.dir / (tag + '.json')}",
                   f"--checkpoint={self.dir / (tag + '.npz')}"]
        run(command, self.dir / f"train-{tag}.log")

    def gradient(self, mode, weights):
        """The weight gradients of `mode` at `weights` (FP32's final ones),
        on the batch after the last step, with the scaling state the mode
        ended its run with: its final checkpoint with the weights replaced
        and the momentum buffers zeroed, resumed for one step, after which
        each buffer is the gradient (v = 0.9 * 0 + g). With Adam, the first
        moment after one step from zero is (1 - beta1) g."""
        final = np.load(self.dir / f"{mode}-s0.npz")
        state = {}
        for key in final.files:
            if key.endswith((".velocity", ".moment1", ".moment2")):
                state[key] = np.zeros_like(final[key])
            elif key in weights:
                state[key] = weights[key]
            else:
                state[key] = final[key]
        start = self.dir / f"gradient-{mode}-start.npz"
        end = self.dir / f"gradient-{mode}-end.npz"
        np.savez(start, **state)
        command = [str(self.executable(mode)), *self.data_flags("train"),
                   f"--steps={self.spec['steps'] + 1}", "--seed=0",
                   "--progress=never", f"--resume={start}",
                   f"--checkpoint={end}",
                   f"--report={self.dir / f'gradient-{mode}.json'}"]
        run(command, self.dir / f"gradient-{mode}.log")
        with np.load(end) as z:
            skipped = int(z["gs.skipped_steps"]) if "gs.skipped_steps" in \
                z.files else 0
            before = int(final["gs.skipped_steps"]) if "gs.skipped_steps" in \
                final.files else 0
            gradients = {}
            for key in z.files:
                if key.endswith(".velocity"):
                    gradients[key[:-len(".velocity")]] = \
                        z[key].astype(np.float64)
                elif key.endswith(".moment1"):
                    gradients[key[:-len(".moment1")]] = \
                        z[key].astype(np.float64) / (1 - ADAM_BETA1)
            if not gradients:
                fail(f"no optimizer state in '{end}' to read gradients from")
            return gradients, skipped > before


def fidelity(gradient, reference):
    """Relative L2 errors against the FP32 gradients: of all parameters
    together, and the worst single one (by name)."""
    total = sum(float(np.sum((gradient[k] - reference[k]) ** 2))
                for k in reference)
    norm = sum(float(np.sum(reference[k] ** 2)) for k in reference)
    worst, worst_name = 0.0, ""
    for k in reference:
        scale = float(np.linalg.norm(reference[k]))
        if scale == 0:
            continue
        error = float(np.linalg.norm(gradient[k] - reference[k])) / scale
        if error > worst:
            worst, worst_name = error, k
    return {"error": (total / norm) ** 0.5 if norm else 0.0,
            "worst": worst, "worst_parameter": worst_name}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", type=pathlib.Path, default=ROOT / "build")
    parser.add_argument("--work", type=pathlib.Path)
    parser.add_argument("--results", type=pathlib.Path)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--models")
    parser.add_argument("--summarize", action="store_true",
                        help="write RESULTS.md and the plots again from the "
                        "runs in --work")
    args = parser.parse_args()
    args.build = args.build.resolve()
    if not (args.build / "bin" / "gs-compile").exists():
        fail(f"no gs-compile in '{args.build}/bin': build first (make)")
    if args.jobs < 1:
        fail("--jobs: expected at least 1")
    if args.work is None:
        args.work = args.build / ("experiments-quick" if args.quick
                                  else "experiments")
    if args.results is None:
        args.results = args.work / "results" if args.quick else \
            HERE / "results"
    args.work = args.work.resolve()
    return args


def main():
    args = parse_args()
    started = time.monotonic()
    data = args.work / "data"
    if not args.summarize:
        if data.exists():
            shutil.rmtree(data)
        subprocess.run([sys.executable, str(HERE / "models.py"), str(data)] +
                       (["--quick"] if args.quick else []), check=True)
    elif not (args.work / "measured.json").exists():
        fail(f"--summarize: no finished run in '{args.work}'")
    table = json.loads((data / "models.json").read_text())
    # The longest first, so that the jobs end together.
    names = sorted(table, key=lambda n: -table[n]["steps"] *
                   table[n].get("step_cost", 1))
    if args.models:
        names = args.models.split(",")
        unknown = [n for n in names if n not in table]
        if unknown:
            fail(f"--models: unknown model '{unknown[0]}' (one of "
                 f"{', '.join(table)})")
    modes = QUICK_MODES if args.quick else list(MODES)
    seeds = [0] if args.quick else SEEDS
    if args.summarize:
        measured = json.loads((args.work / "measured.json").read_text())
        summarize(args, names, table, modes, seeds,
                  {(n, m): s for n, m, s in measured["compile_seconds"]},
                  {(n, m): f for n, m, f in measured["fidelities"]},
                  measured.get("minutes"))
        return
    experiments = {n: Experiment(args, n, table[n]) for n in names}

    def pipeline(name, mode):
        experiment = experiments[name]
        seconds = experiment.compile(mode)
        for seed in (seeds if mode in SEEDED else [0]):
            experiment.train(mode, seed)
        print(f"  {name:10s} {mode:12s} compiled in {seconds:5.1f} s, "
              "trained", flush=True)
        return seconds

    print(f"Training {len(names)} models in {len(modes)} modes "
          f"({args.jobs} at a time) in {args.work}", flush=True)
    compile_seconds = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(pipeline, n, m): (n, m)
                   for n in names for m in modes}
        for future in concurrent.futures.as_completed(futures):
            compile_seconds[futures[future]] = future.result()

    # Gradient fidelity at FP32's final weights.
    gradients = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for name in names:
            with np.load(experiments[name].dir / "fp32-s0.npz") as z:
                weights = {k: z[k] for k in z.files
                           if not k.startswith("gs.") and not k.endswith(
                               (".velocity", ".moment1", ".moment2"))}
            if not all(np.all(np.isfinite(w)) for w in weights.values()):
                print(f"  {name}: FP32's weights are not finite at the end: "
                      "no gradient fidelity", flush=True)
                continue
            for mode in modes:
                gradients[name, mode] = pool.submit(
                    experiments[name].gradient, mode, weights)
    fidelities = {}
    for name in names:
        if (name, "fp32") not in gradients:
            fidelities.update({(name, mode): None for mode in modes})
            continue
        reference, _ = gradients[name, "fp32"].result()
        for mode in modes:
            gradient, skipped = gradients[name, mode].result()
            fidelities[name, mode] = dict(fidelity(gradient, reference),
                                          skipped=skipped)

    measured = {"compile_seconds": [[n, m, s] for (n, m), s in
                                    compile_seconds.items()],
                "fidelities": [[n, m, f] for (n, m), f in
                               fidelities.items()],
                "minutes": (time.monotonic() - started) / 60}
    (args.work / "measured.json").write_text(json.dumps(measured))
    summarize(args, names, table, modes, seeds, compile_seconds, fidelities,
              measured["minutes"])


def summarize(args, names, table, modes, seeds, compile_seconds,
              fidelities, minutes):
    """RESULTS.md, results.json and the plots from the runs in --work;
    `minutes`: how long the runs took (None if not known)."""
    collected = results.collect(args.work, names, table, modes, seeds,
                                SEEDED, fidelities, compile_seconds)
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "results.json").write_text(
        json.dumps(collected, indent=1))
    plots.draw(args.work, collected, args.results)
    results.write_markdown(collected, args.results / "RESULTS.md",
                           quick=args.quick, minutes=minutes)
    print(f"Wrote {args.results / 'RESULTS.md'} and its plots"
          + (f" after {minutes:.1f} min of training" if minutes else ""))
    problems = sanity(args, collected)
    for problem in problems:
        print(f"run.py: sanity: {problem}")
    if problems:
        sys.exit(1)


def sanity(args, collected):
    """What every run, however short, must show: FP32 learned (its loss
    fell), every mode's gradients were read, every FP16 mode recorded its
    roundings, and every plot was drawn. Nothing about the modes' ranking
    is asserted."""
    problems = []
    for name, model in collected["models"].items():
        with open(args.work / name / "fp32-s0.json") as f:
            losses = json.load(f)["loss"]["value"]
        tenth = max(1, len(losses) // 10)
        early = results.mean(losses[:tenth])
        late = results.mean(losses[-tenth:])
        if not late < early:
            problems.append(f"{name}: FP32's loss did not fall (first tenth "
                            f"{early:.4g}, last tenth {late:.4g})")
        for mode, entry in model["modes"].items():
            fidelity = entry["fidelity"]
            if fidelity is None or not math.isfinite(fidelity["error"]):
                problems.append(f"{name}: no gradient fidelity for {mode}")
            if mode != "fp32" and not entry["sites"]:
                problems.append(f"{name}: {mode} recorded no rounding")
        for plot in plots.NAMES:
            path = args.results / plot.format(name)
            if not path.exists() or path.stat().st_size == 0:
                problems.append(f"{name}: {path} was not drawn")
    return problems


if __name__ == "__main__":
    main()
