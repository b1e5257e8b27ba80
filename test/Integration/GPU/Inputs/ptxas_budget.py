"""Runs ptxas -v on PTX files and fails when a kernel exceeds its budget.

  ptxas_budget.py --ptxas PTXAS --arch sm_80 --max-registers N
                  --max-shared-bytes N [--max-spill-bytes N]
                  [--exclude TEXT] FILE.ptx...

A kernel passes with at most N registers per thread, N bytes of static
shared memory and N bytes of spill stores and loads (default 0, and then
no stack frame either), and where ptxas did not have to mend the file's
wgmma.mma_async use: serialize the wgmmas (C7515, "Potential Performance
Loss") or add a wait before their registers are read (C7517, "warpgroup.
wait is injected"). Files whose name contains the --exclude text are left
out (kernels of another family a glob also matches). One line per kernel,
PASS or FAIL, with what ptxas reported.
"""

import argparse
import os
import re
import subprocess
import sys


# What ptxas says where it changes a kernel's wgmmas (printed before the
# kernel's report, naming the function).
WGMMA_MENDED = re.compile(r"Potential Performance Loss|warpgroup\.wait is "
                          r"injected")


def kernels(report):
    """Per entry function: registers, spill bytes, stack and smem bytes."""
    found = {}
    current = None
    for line in report.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            current = m.group(1)
            found[current] = {"registers": None, "spills": 0, "stack": 0,
                              "smem": 0}
            continue
        if current is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, "
                      r"(\d+) bytes spill loads", line)
        if m:
            found[current]["stack"] = int(m.group(1))
            found[current]["spills"] = int(m.group(2)) + int(m.group(3))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            found[current]["registers"] = int(m.group(1))
            s = re.search(r"(\d+) bytes smem", line)
            found[current]["smem"] = int(s.group(1)) if s else 0
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ptxas", required=True)
    parser.add_argument("--arch", required=True)
    parser.add_argument("--max-registers", type=int, required=True)
    parser.add_argument("--max-shared-bytes", type=int, required=True)
    parser.add_argument("--max-spill-bytes", type=int, default=0)
    parser.add_argument("--exclude", default=None)
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    failed = False
    for path in args.files:
        if args.exclude and args.exclude in os.path.basename(path):
            continue
        run = subprocess.run([args.ptxas, "-v", "-O3", f"-arch={args.arch}",
                              path, "-o", "/dev/null"],
                             capture_output=True, text=True)
        if run.returncode != 0:
            print(f"FAIL {args.arch} {path}: ptxas exited with "
                  f"{run.returncode}\n{run.stderr}")
            failed = True
            continue
        report = run.stdout + run.stderr
        found = kernels(report)
        mended = [line.split(": ", 1)[-1].strip()
                  for line in report.splitlines() if WGMMA_MENDED.search(line)]
        if not found:
            print(f"FAIL {args.arch} {path}: no entry function in the report")
            failed = True
        for name, k in sorted(found.items()):
            ok = (k["registers"] is not None
                  and k["registers"] <= args.max_registers
                  and k["spills"] <= args.max_spill_bytes
                  and (args.max_spill_bytes > 0 or k["stack"] == 0)
                  and k["smem"] <= args.max_shared_bytes
                  and not mended)
            failed |= not ok
            print(f"{'PASS' if ok else 'FAIL'} {args.arch} "
                  f"{os.path.basename(path)} {name}: "
                  f"{k['registers']} registers (max {args.max_registers}), "
                  f"{k['spills']} spill bytes"
                  + (f" (max {args.max_spill_bytes})"
                     if args.max_spill_bytes else "")
                  + f", {k['stack']} stack bytes, "
                  f"{k['smem']} smem bytes (max {args.max_shared_bytes})"
                  + "".join(f"; ptxas: {line}" for line in mended))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
