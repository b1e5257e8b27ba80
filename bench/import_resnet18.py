#!/usr/bin/env python3
"""Benchmark: importing torchvision's ResNet-18 (training export, opset 17).

Exports the model once (with Debian's python3-torch), then runs
gs-import-bench and prints the import time and the memory the import needs,
against the model file's size: the importer moves tensor data into the IR
instead of copying it, so the memory beyond the process's baseline should
stay near one model size.

Usage: import_resnet18.py [--build BUILD] [--batch N] [--repetitions N]
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--repetitions", type=int, default=5)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["/usr/bin/python3",
                        ROOT / "test/ImportONNX/Inputs/export_torch_models.py",
                        tmp, "resnet18"], check=True)
        model = os.path.join(tmp, "resnet18.onnx")
        out = subprocess.run(
            [os.path.join(args.build, "bin", "gs-import-bench"), model,
             f"--onnx-shape=x={args.batch}x3x224x224",
             f"--repetitions={args.repetitions}"],
            check=True, capture_output=True, text=True).stdout
    r = json.loads(out)
    mib = 1024 * 1024
    size = r["file_bytes"] / mib
    used = (r["peak_rss_kib"] - r["baseline_rss_kib"]) / 1024
    print(f"ResNet-18 training export, batch {args.batch}")
    print(f"  model file           {size:8.1f} MiB")
    print(f"  import time (median) {r['median_seconds']:8.3f} s "
          f"(min {r['min_seconds']:.3f} s, {args.repetitions} runs)")
    print(f"  peak RSS             {r['peak_rss_kib'] / 1024:8.1f} MiB "
          f"(baseline {r['baseline_rss_kib'] / 1024:.1f} MiB)")
    print(f"  import memory        {used:8.1f} MiB = {used / size:.2f}x the "
          f"model file")
    return 0


if __name__ == "__main__":
    sys.exit(main())
