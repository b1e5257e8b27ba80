#!/usr/bin/env python3
"""kill -9 a training executable while it checkpoints; the checkpoint must
stay loadable.

Usage: kill_during_checkpoint.py --work DIR EXE [TRAINING FLAGS...]

Trains with a checkpoint after every step (so that most of the time goes to
writing checkpoints), kills the process with SIGKILL at a random moment,
then loads the checkpoint with NumPy and resumes from it with the
executable, whose own checkpoint removes the killed write's temporary
file. Repeats until a kill hit a write in progress (a temporary file
left beside the checkpoint) at least 3 times. Fails if any checkpoint is
torn or cannot be resumed, if a temporary file outlives the next write,
or if no kill landed during a write.
"""

import argparse
import glob
import os
import random
import signal
import subprocess
import sys
import time

import numpy as np


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", required=True)
    parser.add_argument("exe")
    parser.add_argument("flags", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    checkpoint = os.path.join(args.work, "killed.npz")
    random.seed(0)
    kills = during_write = 0
    while during_write < 3 and kills < 40:
        for stale in glob.glob(checkpoint + "*"):
            os.remove(stale)
        process = subprocess.Popen(
            [args.exe, *args.flags, "--steps=100000000",
             f"--checkpoint={checkpoint}", "--checkpoint-every=1",
             "--progress=never"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 60
        while not os.path.exists(checkpoint):
            if process.poll() is not None or time.time() > deadline:
                sys.exit("FAIL: the executable wrote no checkpoint")
            time.sleep(0.001)
        time.sleep(random.uniform(0.005, 0.05))
        process.send_signal(signal.SIGKILL)
        process.wait()
        kills += 1
        leftovers = glob.glob(checkpoint + ".tmp.*")
        during_write += bool(leftovers)
        try:
            with np.load(checkpoint) as archive:
                step = int(archive["gs.trainer.step"])
                arrays = {name: archive[name] for name in archive.files}
        except Exception as e:  # noqa: BLE001 - any failure is a torn file
            sys.exit(f"FAIL: kill {kills} left a torn checkpoint: {e}")
        # The resumed run checkpoints too, and its write removes the killed
        # process's temporary file.
        resumed = subprocess.run(
            [args.exe, *args.flags, f"--resume={checkpoint}",
             f"--steps={step + 1}", f"--checkpoint={checkpoint}",
             "--progress=never"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if resumed.returncode != 0:
            sys.exit(f"FAIL: resuming after kill {kills} (step {step}) "
                     f"failed: {resumed.stderr.strip()}")
        if glob.glob(checkpoint + ".tmp.*"):
            sys.exit(f"FAIL: after kill {kills} the next checkpoint left "
                     f"{glob.glob(checkpoint + '.tmp.*')}")
        if len(arrays) < 5:
            sys.exit(f"FAIL: checkpoint after kill {kills} holds only "
                     f"{sorted(arrays)}")
    if during_write == 0:
        sys.exit(f"FAIL: none of {kills} kills landed during a checkpoint "
                 "write")
    print(f"{kills} kills, {during_write} during a checkpoint write: every "
          "checkpoint loaded and resumed")


if __name__ == "__main__":
    main()
