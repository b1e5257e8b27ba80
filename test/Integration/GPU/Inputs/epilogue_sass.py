"""Counts the SASS instructions the statistics add to a GEMM kernel.

  epilogue_sass.py --ptxas PTXAS --cuobjdump CUOBJDUMP --arch sm_90a
                   --elements N --max M WITH.ptx WITHOUT.ptx

Assembles both PTX files with ptxas (-O3), disassembles each kernel's
cubin with cuobjdump -sass, and divides the difference in instructions by
N, the output elements each thread of the kernel holds (its epilogue is
unrolled over them). Passes where that is at most M: a static measure of
the statistics' cost in the epilogue, which the GPU check times where a
GPU is lent. One PASS or FAIL line.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

# One SASS instruction per line of cuobjdump's listing:
#   /*0a40*/   MEMBAR.ALL.CTA ;   /* 0x... */
INSTRUCTION = re.compile(r"^\s+/\*[0-9a-f]+\*/\s+\S")


def instructions(ptxas, cuobjdump, arch, ptx, directory):
    cubin = os.path.join(directory, os.path.basename(ptx) + ".cubin")
    subprocess.run([ptxas, "-O3", f"-arch={arch}", ptx, "-o", cubin],
                   check=True)
    listing = subprocess.run([cuobjdump, "-sass", cubin], check=True,
                             capture_output=True, text=True).stdout
    count = sum(1 for line in listing.splitlines() if INSTRUCTION.match(line))
    if count == 0:
        sys.exit(f"epilogue_sass.py: no SASS instructions in {cubin}")
    return count


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ptxas", required=True)
    parser.add_argument("--cuobjdump", required=True)
    parser.add_argument("--arch", required=True)
    parser.add_argument("--elements", type=int, required=True)
    parser.add_argument("--max", type=float, required=True)
    parser.add_argument("with_statistics")
    parser.add_argument("without_statistics")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        with_count, without_count = (
            instructions(args.ptxas, args.cuobjdump, args.arch, ptx, directory)
            for ptx in (args.with_statistics, args.without_statistics))
    per_element = (with_count - without_count) / args.elements
    verdict = "PASS" if per_element <= args.max else "FAIL"
    print(f"{verdict} {args.arch}: {per_element:.1f} SASS instructions an "
          f"element for the statistics ({with_count} - {without_count} over "
          f"{args.elements}; max {args.max:g})")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
