"""Skipped steps on the GPU executable, its host side on the stand-in
driver, against the CPU executable.

  skipped_steps_check.py --cpu EXE --gpu EXE --fake-libcuda PATH
                         --work DIR --x X.npy --t T.npy [--steps N]

Builds a training set of two batches from one, the second with one pixel
of 1e30 (finite in FP32, infinite once cast to FP16): every step on it has
non-finite gradients and is skipped, the others train. Both executables
train N steps in file order; their checkpoints must agree bit for bit, and
some steps must have been skipped and some taken. A GPU step that kept a
skipped update's FP16 weight copies (gs-fp16-weight-copies, which only the
GPU executable has) would read them in the next forward pass and drift
from the CPU. Run with Debian's Python.
"""

import argparse
import os
import subprocess
import sys

import numpy as np


def train(executable, args, name, env=None):
    checkpoint = os.path.join(args.work, name + ".npz")
    command = [executable, "--train-data=" + args.data,
               "--train-labels=" + args.labels, "--normalize=none",
               "--no-shuffle", f"--steps={args.steps}",
               "--checkpoint=" + checkpoint, "--progress=never"]
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"error: {' '.join(command)} failed ({result.returncode}):"
                 f"\n{result.stderr}")
    with np.load(checkpoint) as archive:
        return {name: archive[name] for name in archive.files}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag in ("--cpu", "--gpu", "--fake-libcuda", "--work", "--x", "--t"):
        parser.add_argument(flag, required=True)
    parser.add_argument("--steps", type=int, default=6)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)

    x, t = np.load(args.x), np.load(args.t)
    bad = x.copy()
    bad.flat[0] = 1e30
    args.data = os.path.join(args.work, "x2.npy")
    args.labels = os.path.join(args.work, "t2.npy")
    np.save(args.data, np.concatenate([x, bad]))
    np.save(args.labels, np.concatenate([t, t]))

    cpu = train(args.cpu, args, "cpu")
    gpu = train(args.gpu, args, "gpu",
                dict(os.environ, GS_LIBCUDA=args.fake_libcuda))
    skipped = int(cpu["gs.skipped_steps"])
    taken = int(cpu["gs.step"])
    different = sorted(name for name in cpu
                       if name not in gpu or
                       cpu[name].tobytes() != gpu[name].tobytes())
    different += sorted(set(gpu) - set(cpu))
    print(f"{args.steps} steps, {skipped} skipped, {taken} taken: "
          + ("checkpoints identical" if not different else
             "checkpoints DIFFERENT: " + ", ".join(different)))
    sys.exit(0 if not different and skipped and taken else 1)


if __name__ == "__main__":
    main()
