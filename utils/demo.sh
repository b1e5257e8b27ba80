#!/usr/bin/env bash
# The bundled demo: import the example ONNX model into the gs dialect with a
# pinned batch size and a training configuration, report what it holds, and
# run its forward pass and loss on a bundled batch on the CPU.
set -euo pipefail
build=${1:-build}
example=examples/mlp.onnxtext
options=(--onnx-shape=x=32x8 --onnx-train="optimizer=momentum lr=0.05")

echo "== gs-opt $example ${options[*]}"
"$build/bin/gs-opt" "$example" "${options[@]}"
echo "== operation counts"
"$build/bin/gs-opt" "$example" "${options[@]}" --print-op-stats -o /dev/null

echo "== gs-run: the forward pass and loss on the bundled batch (CPU, JIT)"
"$build/bin/gs-run" "$example" --onnx-shape=x=32x8 \
  -i examples/data/x.npy -i examples/data/labels.npy --print
