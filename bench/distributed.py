#!/usr/bin/env python3
"""Benchmark: data-parallel training over MPI against one rank.

Compiles the 784-1024-1024-10 MLP (ReLU, softmax cross-entropy, SGD
momentum 0.9) with gradient scaling at batch 256 per rank and
--distributed=mpi, trains it on Fashion-MNIST with `mpirun -np 1` and
`mpirun -np N` (default 2), one rank per core, each bound to its core
(--bind-to core), and prints, in one run:

- the steps/s of each (the executables' own reports: batch assembly
  included, the first steps too);
- the scaling efficiency: N ranks' examples/s over N times one rank's
  (1.0: perfect; the baseline is the same executable on one rank, whose
  collectives reduce nothing but still copy and call);
- what rank 0's all-reduces cost per step, gradients and scaling
  statistics apart, as a share of the step, and how long they were in
  flight (started where their inputs are made, waited for where their
  results are read: the step computes in between); the trainer's summary
  of the N-rank run and of a
  third run with --time-collectives, where the ranks meet at a barrier
  before each all-reduce so that its time is its own, not the time the
  rank waited for the other to arrive (load imbalance, which the first
  all-reduce of a step would otherwise absorb).

Run with Debian's Python (PyTorch exports the model):
  /usr/bin/python3 bench/distributed.py [--build BUILD] [--ranks N]
      [--steps S]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import warnings

DATA = "/usr/share/datasets/fashion-mnist"
BATCH = 256


def export_mlp(path):
    import torch
    import torch.nn as nn

    class WithLoss(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = nn.Sequential(
                nn.Flatten(), nn.Linear(784, 1024), nn.ReLU(),
                nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))
            self.loss = nn.CrossEntropyLoss()

        def forward(self, x, target):
            return self.loss(self.model(x), target)

    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            WithLoss().train(), (torch.randn(2, 1, 28, 28),
                                 torch.randint(0, 10, (2,))), path,
            opset_version=17, training=torch.onnx.TrainingMode.TRAINING,
            do_constant_folding=False, input_names=["x", "target"],
            output_names=["loss"],
            dynamic_axes={"x": {0: "batch"}, "target": {0: "batch"}})


def train(executable, ranks, steps, work, flags=()):
    report = os.path.join(work, "ranks%d.json" % ranks)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    out = subprocess.run(
        ["mpirun", "-np", str(ranks), "--bind-to", "core", executable,
         "--train-data=%s/train-images-idx3-ubyte.gz" % DATA,
         "--train-labels=%s/train-labels-idx1-ubyte.gz" % DATA,
         "--steps=%d" % steps, "--progress=never", "--report=" + report] +
        list(flags),
        env=env, check=True, capture_output=True, text=True)
    with open(report) as f:
        steps_per_s = json.load(f)["run"]["steps_per_s"]
    costs = {}
    for what in ("gradients and results", "scaling statistics"):
        match = re.search(
            what + r"\s+([\d.]+) calls\s+(\d+) bytes\s+([\d.]+) ms "
            r"\(([\d.]+)%[^,\n]*(?:, ([\d.]+) ms in flight)?", out.stdout)
        if match:
            costs[what] = tuple(float(g or "nan") for g in match.groups())
    return steps_per_s, costs


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    if args.ranks > cores:
        sys.exit("--ranks=%d: this machine lets us run on %d cores, one rank "
                 "each" % (args.ranks, cores))
    with tempfile.TemporaryDirectory() as work:
        model = os.path.join(work, "mlp1024.onnx")
        export_mlp(model)
        executable = os.path.join(work, "train_dp")
        subprocess.run(
            [os.path.join(args.build, "bin", "gs-compile"), model,
             "--onnx-shape=x=%dx1x28x28" % BATCH,
             "--onnx-shape=target=%d" % BATCH,
             "--onnx-train=optimizer=momentum lr=0.01", "--scaling=gs",
             "--distributed=mpi", "--no-cache", "-o", executable],
            check=True)
        one, _ = train(executable, 1, args.steps, work)
        many, overlapped = train(executable, args.ranks, args.steps, work)
        timed, costs = train(executable, args.ranks, args.steps, work,
                             ["--time-collectives"])
    print("784-1024-1024-10 MLP, gs scaling, batch %d per rank, %d steps, "
          "Open MPI, one rank per core (--bind-to core)" %
          (BATCH, args.steps))
    print("  1 rank:   %6.2f steps/s (%6.0f examples/s)" % (one, one * BATCH))
    print("  %d ranks:  %6.2f steps/s (%6.0f examples/s)" %
          (args.ranks, many, many * BATCH * args.ranks))
    print("  scaling efficiency %.2f (target >= 0.8): %d ranks' examples/s "
          "over %d x 1 rank's" % (many / one, args.ranks, args.ranks))
    print("  rank 0's all-reduces per step in the %d-rank run: the time in "
          "their calls (waiting for the other ranks included) against the "
          "time in flight, from each start to the end of its wait (the step "
          "computed the rest):" % args.ranks)
    for what, (_, _, ms, share, in_flight) in overlapped.items():
        print("    %-22s %7.3f ms in calls (%.2f%% of the step), %7.3f ms in "
              "flight" % (what, ms, share, in_flight))
    print("  rank 0's all-reduces per step, timed apart from waiting "
          "(--time-collectives: %.2f steps/s):" % timed)
    for what, (calls, size, ms, share, _) in costs.items():
        print("    %-22s %4.0f calls %9.0f bytes %7.3f ms (%.2f%% of the "
              "step)" % (what, calls, size, ms, share))


if __name__ == "__main__":
    main()
