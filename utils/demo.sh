#!/usr/bin/env bash
# The bundled demo: import the example ONNX model into the gs dialect with a
# pinned batch size and a training configuration, and report what it holds.
set -euo pipefail
build=${1:-build}
example=examples/mlp.onnxtext
options=(--onnx-shape=x=32x8 --onnx-train="optimizer=momentum lr=0.05")

echo "== gs-opt $example ${options[*]}"
"$build/bin/gs-opt" "$example" "${options[@]}"
echo "== operation counts"
"$build/bin/gs-opt" "$example" "${options[@]}" --print-op-stats -o /dev/null
