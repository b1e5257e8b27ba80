"""Checks register-blocks-emulated.test's outputs: the emulated kernels'
bit for bit the CPU lowering's, and both within the bound of an FP32 sum
of k products (k * 2^-24 * the sum of the products' magnitudes, over the
float64 sum) of NumPy's float64 results."""

import sys

import numpy as np

out = sys.argv[1]
load = np.load
EPS = 2.0**-24


def same_bits(name, i):
    cpu = load(f"{out}/cpu-{name}/output_{i}.npy")
    gpu = load(f"{out}/gpu-{name}/output_{i}.npy")
    if cpu.dtype != gpu.dtype or cpu.shape != gpu.shape or \
            not np.array_equal(cpu.view(np.uint32), gpu.view(np.uint32)):
        sys.exit(f"FAIL {name} output {i}: differs from the CPU's in "
                 f"{np.count_nonzero(cpu != gpu)} elements")
    return gpu.astype(np.float64)


def within(name, got, exact, magnitude, terms):
    bound = terms * EPS * magnitude + 1e-30
    worst = np.max(np.abs(got - exact) / bound)
    if worst > 1:
        sys.exit(f"FAIL {name}: {worst:.3g} times the FP32 summation bound "
                 "from float64")


x = load(f"{out}/x.npy").astype(np.float64)
w = load(f"{out}/w.npy").astype(np.float64)
conv = same_bits("conv", 0)
windows = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))
exact = np.einsum("ncyxij,fcij->nfyx", windows, w)
magnitude = np.einsum("ncyxij,fcij->nfyx", np.abs(windows), np.abs(w))
within("conv", conv, exact, magnitude, 8 * 9)
print(f"conv: {conv.size} outputs bit for bit the CPU's, within bounds of "
      "float64")

a = load(f"{out}/a.npy").astype(np.float64)
b = load(f"{out}/b.npy").astype(np.float64)
init = load(f"{out}/init.npy").astype(np.float64)
sums = same_bits("gemm", 0)
maxima = same_bits("gemm", 1)
within("gemm", sums, init + a @ b, np.abs(init) + np.abs(a) @ np.abs(b), 41)
products = np.abs(a[:, :, None] * b[None, :, :])
largest = products.max(axis=1)
# Each product rounds once to FP32 before its magnitude is compared.
if np.any(np.abs(maxima - largest) > EPS * largest):
    sys.exit("FAIL gemm: a maximum is not the largest product's magnitude")
print(f"gemm: {sums.size} sums and {maxima.size} maxima bit for bit the "
      "CPU's, within bounds of float64")
