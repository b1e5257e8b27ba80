"""Checks split-sums.mlir's results: the CPU's and the emulated GPU's
bit for bit, and each against NumPy's float64 sums within the bound of a
sum of `depth` terms: depth * u * (sum of |terms|), u the accumulator's unit
roundoff (a lane adds its points in order, then a sequential sum adds the
lanes: depth is the larger of the two plus one)."""
import os
import sys

import numpy as np

x_path, cpu, gpu = sys.argv[1:]
x = np.load(x_path).astype(np.float64)
channel = (0, 2, 3)
lanes = 28 * 28
expected = [
    (x.sum(axis=channel), np.abs(x).sum(axis=channel), np.float64, 64),
    ((x * x).sum(axis=channel), (x * x).sum(axis=channel), np.float64, 64),
    (np.abs(x).sum(), np.abs(x).sum(), np.float32, 64 * 8),
]
for i, (exact, magnitude, dtype, lane_points) in enumerate(expected):
    name = f"output_{i}"
    ours = np.load(os.path.join(cpu, name + ".npy"))
    theirs = np.load(os.path.join(gpu, name + ".npy"))
    assert ours.dtype == dtype and ours.tobytes() == theirs.tobytes(), name
    depth = max(lane_points, lanes) + 1
    bound = depth * np.finfo(dtype).eps / 2 * magnitude
    error = np.abs(ours.astype(np.float64) - exact)
    assert np.all(error <= bound), (name, error.max(), bound)
    print(f"{name}: CPU and GPU bit for bit, NumPy within bound")
ours = np.load(os.path.join(cpu, "output_3.npy"))
theirs = np.load(os.path.join(gpu, "output_3.npy"))
assert ours.tobytes() == theirs.tobytes()
assert ours == np.float32(np.abs(x).max())
print("output_3: CPU and GPU bit for bit, NumPy exactly")
