"""Writes a tampered copy of a training checkpoint, for the resume checks of
train-executable-errors.test. Usage: tamper_checkpoint.py IN OUT HOW, with
HOW one of: extra (an array the model lacks), nan (a NaN in the first
weight), negative-skipped (gs.skipped_steps = -1), step-mismatch
(gs.step one more than the trainer's step allows).
"""

import sys

import numpy as np


def main():
    source, target, how = sys.argv[1:4]
    with np.load(source) as archive:
        arrays = {name: archive[name].copy() for name in archive.files}
    if how == "extra":
        arrays["other.weight"] = np.zeros(3, np.float32)
    elif how == "nan":
        name = next(n for n in arrays if not n.startswith("gs.") and
                    arrays[n].dtype == np.float32)
        arrays[name].flat[0] = np.nan
    elif how == "negative-skipped":
        arrays["gs.skipped_steps"] = np.array(-1, np.int64)
    elif how == "step-mismatch":
        arrays["gs.step"] = arrays["gs.step"] + 1
    else:
        sys.exit("unknown tampering '%s'" % how)
    np.savez(target, **arrays)


if __name__ == "__main__":
    main()
