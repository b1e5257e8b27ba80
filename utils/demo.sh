#!/usr/bin/env bash
# The bundled demo: import the example ONNX model into the gs dialect with a
# pinned batch size and a training configuration, report what it holds, run
# its forward pass and loss on a bundled batch on the CPU, then train it for
# a few steps: in FP32, in mixed precision with dynamic loss scaling, and in
# mixed precision with gradient scaling, whose per-tensor report it prints.
set -euo pipefail
build=${1:-build}
example=examples/mlp.onnxtext
options=(--onnx-shape=x=32x8 --onnx-train="optimizer=momentum lr=0.05")
inputs=(-i examples/data/x.npy -i examples/data/labels.npy)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== gs-opt $example ${options[*]}"
"$build/bin/gs-opt" "$example" "${options[@]}"
echo "== operation counts"
"$build/bin/gs-opt" "$example" "${options[@]}" --print-op-stats -o /dev/null

echo "== gs-run: the forward pass and loss on the bundled batch (CPU, JIT)"
"$build/bin/gs-run" "$example" --onnx-shape=x=32x8 "${inputs[@]}" --print

echo "== 5 training steps in FP32 (gs-autodiff)"
"$build/bin/gs-opt" "$example" "${options[@]}" --gs-autodiff \
  -o "$work/fp32.mlir"
"$build/bin/gs-run" "$work/fp32.mlir" --entry=train_step "${inputs[@]}" \
  --steps=5 --print

echo "== 5 training steps in mixed precision with dynamic loss scaling"
"$build/bin/gs-opt" "$example" "${options[@]}" --gs-train=scaling=dynamic \
  -o "$work/mixed.mlir"
"$build/bin/gs-run" "$work/mixed.mlir" --entry=train_step "${inputs[@]}" \
  --steps=5 --print --dump-params="$work/state"
scale=$(python3 -c "import numpy; print(float(numpy.load(
    '$work/state/step_5/gs.loss_scale.npy')))" 2>/dev/null || echo "?")
skipped=$(python3 -c "import numpy; print(int(numpy.load(
    '$work/state/step_5/gs.skipped_steps.npy')))" 2>/dev/null || echo "?")
echo "loss scale after 5 steps: $scale; skipped steps: $skipped"

echo "== 5 training steps in mixed precision with gradient scaling"
"$build/bin/gs-opt" "$example" "${options[@]}" --gs-train=scaling=gs \
  -o "$work/gs.mlir"
"$build/bin/gs-run" "$work/gs.mlir" --entry=train_step "${inputs[@]}" \
  --steps=5 --print --dump-params="$work/gs-state"
echo "== gradient-scaling report after step 5: per FP32->FP16 rounding of a"
echo "   gradient, its scale, the model's estimated and the measured rates"
python3 utils/scaling_report.py "$work/gs.mlir" "$work/gs-state"
