"""A GPU training executable's CUDA graphs under memory pressure.

  graph_memory_check.py EXECUTABLE [TRAINER FLAGS...]

On the stand-in driver (GS_LIBCUDA, GS_FAKE_CUDA_ANY_KERNEL=1 in the
environment), finds by bisection the least device memory
(GS_FAKE_CUDA_MEMORY) in which the executable trains with its kernels
launched one by one (GS_CUDA_GRAPHS=0), then trains it there with CUDA
graphs (the default), which hold buffers of their own: it must train too,
its graphs giving their buffers back when memory runs out. Prints PASS or
FAIL and the runtime's notes; exits 1 on a failure.
"""

import os
import subprocess
import sys

GRAIN = 64 * 1024


def trains(command, memory, graphs):
    env = dict(os.environ, GS_FAKE_CUDA_MEMORY=str(memory))
    if not graphs:
        env["GS_CUDA_GRAPHS"] = "0"
    result = subprocess.run(command, env=env, capture_output=True, text=True,
                            timeout=120)
    return result.returncode == 0, result.stderr


def main():
    command = sys.argv[1:]
    low, high = 0, 1 << 30
    if not trains(command, high, graphs=False)[0]:
        print(f"FAIL: {command[0]} does not train in {high} bytes")
        return 1
    # The least multiple of GRAIN it trains in: (low, high].
    while high - low > GRAIN:
        middle = (low + high) // 2 // GRAIN * GRAIN
        if trains(command, middle, graphs=False)[0]:
            high = middle
        else:
            low = middle
    ok, stderr = trains(command, high, graphs=True)
    notes = [line for line in stderr.splitlines() if "note:" in line]
    print(("PASS" if ok else "FAIL") + f": in {high} bytes, the least its "
          "kernels launched one by one train in, it trains with CUDA graphs "
          + ("too" if ok else "not"))
    for line in notes if ok else stderr.splitlines()[-5:]:
        print("  " + line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
