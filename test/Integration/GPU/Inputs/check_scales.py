"""The scale-decision kernels of convert-gs-to-gpu, run on the CPU by
gs-emulate-gpu, against the CPU lowering of the same decisions.

  check_scales.py --gs-opt PATH --gs-run PATH --input scale-decisions.mlir
                  --work DIR

Runs @decide of the input (every model and rule: half_normal behind a ReLU,
log_normal with and without bounds and rounding, exponent_histogram, the
cumulative-scale bound, unify_scales) on the gradients of scale_cases.py,
which reach every branch of the decision. Both builds run the same scalar f64 operations, so
every scale and estimate must be bit-identical (their outputs are in
DIR/cpu/<case> and DIR/gpu/<case>). Also checks what the
definition (docs/GradientScaling.md) says of each case. Prints one line per
case and exits 1 on a difference.
"""

import argparse
import os
import re
import subprocess
import sys

import numpy as np

import scale_cases

DTYPES = {"f16": np.float16, "f32": np.float32}
HALF_MAX = 65504.0
# The scales @decide returns, in order, and its rules' bounds.
SCALES = ["half_normal", "log_normal", "log_normal_bounded", "histogram",
          "log_normal_accum", "log_normal_unrounded", "unified"]
MIN_SCALE = {"log_normal_bounded": 0.25}
MAX_SCALE = 65536.0
MAX_ACCUM = 2.0**20


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"error: {' '.join(command)} failed ({result.returncode}):\n"
                 f"{result.stderr}")
    return result.stdout


def decide(args, ir, inputs, out):
    run([args.gs_run, ir, "--entry=decide", *inputs, "--format=npy",
         f"--output-dir={out}"])
    return [np.load(os.path.join(out, f"output_{i}.npy")) for i in range(6)]


def expected(name, arrays, scales, estimates):
    """What the definition says of this case, as (description, holds)."""
    s = dict(zip(SCALES, scales.astype(np.float64)))
    g = arrays["g"].astype(np.float64)
    if name == "nonfinite":
        # An inf caps the scale at 0 (65504 / inf) and the branch rule's
        # bound with it; the step is skipped (gs.all_finite).
        return [("inf caps the scale at 0", s["half_normal"] == 0)]
    powers = all(np.frexp(v)[0] == 0.5
                 for k, v in s.items() if k != "log_normal_unrounded")
    checks = [("powers of two", powers)]
    if name == "zeros":
        checks.append(("minimum scales, no underflow",
                       all(v == MIN_SCALE.get(k, 1.0) for k, v in s.items())
                       and not estimates.any()))
    if name == "zero_gradient":
        checks.append(("no underflow behind a zero gradient",
                       s["half_normal"] == 1.0 and estimates[0] == 0))
    if name == "tiny":
        checks.append(("the maximum scale binds",
                       s["log_normal_bounded"] == MAX_SCALE))
    if name == "huge":
        cap = HALF_MAX / np.abs(g).max()
        checks.append(("the overflow cap binds",
                       s["log_normal"] <= cap < 1 and s["histogram"] <= cap))
    if name == "accum":
        bound = MAX_ACCUM / float(arrays["alpha"])
        checks.append(("the cumulative bound binds",
                       s["log_normal_accum"] == bound < s["log_normal"]))
    return checks


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag in ("--gs-opt", "--gs-run", "--input", "--work"):
        parser.add_argument(flag, required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    emulated = os.path.join(args.work, "decide-emulated.mlir")
    run([args.gs_opt, args.input, "--convert-gs-to-gpu", "--gs-emulate-gpu",
         "-o", emulated])
    with open(emulated) as f:
        ir = f.read()
    left = len(re.findall(r"gs\.(compute_scale|unify_scales)", ir))
    kernels = sorted(set(re.findall(r"func\.func private @(gs_(?:scale|unify)"
                                    r"\w*?)(?:_entry)?\(", ir)))
    print(f"{len(kernels)} decision kernels, {left} decisions left on the "
          "host")
    failed = left != 0
    for name, lists in scale_cases.cases():
        arrays = {key: np.array(value, dtype=DTYPES[scale_cases.DTYPES[key]])
                  for key, value in lists.items()}
        work = os.path.join(args.work, name)
        os.makedirs(work, exist_ok=True)
        inputs = []
        for key, array in arrays.items():
            path = os.path.join(work, key + ".npy")
            np.save(path, array)
            inputs += ["-i", path]
        host = decide(args, args.input, inputs,
                      os.path.join(args.work, "cpu", name))
        device = decide(args, emulated, inputs,
                        os.path.join(args.work, "gpu", name))
        same = all(a.dtype == b.dtype and a.tobytes() == b.tobytes()
                   for a, b in zip(host, device))
        checks = expected(name, arrays, *host[:2])
        failed |= not same or not all(holds for _, holds in checks)
        scales = " ".join(f"{v:g}" for v in host[0])
        print(f"{name}: scales {scales}: "
              + ("identical" if same else f"DIFFERENT {device[0].tolist()} "
                 f"{device[1].tolist()} vs {host[1].tolist()}")
              + "".join(f"; {d}" + ("" if ok else " NOT") for d, ok in checks))
    print("FAIL" if failed else "PASS",
          "the decision kernels choose the CPU's scales")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
