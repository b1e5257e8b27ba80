#!/usr/bin/env bash
# The bundled demo, GradScale's main job: a Fashion-MNIST classifier
# (PyTorch's 784-128-10 MLP with its cross-entropy loss, exported to ONNX)
# compiled by gs-compile into training executables, trained for one epoch on
# Debian's dataset-fashion-mnist: in mixed precision with gradient scaling,
# its report summarized, then in FP32 and with dynamic loss scaling for
# comparison.
#
# Usage: utils/demo.sh [BUILD [OUTDIR]]   (outputs default to BUILD/demo)
set -euo pipefail
build=${1:-build}
demo=${2:-$build/demo}
data=/usr/share/datasets/fashion-mnist
mkdir -p "$demo"

if [ ! -f "$demo/mlp.onnx" ]; then
  echo "== exporting the Fashion-MNIST MLP from PyTorch to $demo/mlp.onnx"
  /usr/bin/python3 test/ImportONNX/Inputs/export_torch_models.py "$demo" mlp
fi

options=(--onnx-shape=x=64x1x28x28 --onnx-shape=target=64
         --onnx-train="optimizer=momentum lr=0.01")
train=(--train-data="$data/train-images-idx3-ubyte.gz"
       --train-labels="$data/train-labels-idx1-ubyte.gz"
       --eval-data="$data/t10k-images-idx3-ubyte.gz"
       --eval-labels="$data/t10k-labels-idx1-ubyte.gz"
       --epochs=1 --progress=never)

for scaling in gs fp32 dynamic; do
  echo "== gs-compile mlp.onnx --scaling=$scaling -o $demo/train_$scaling"
  start=$(date +%s%N)
  "$build/bin/gs-compile" "$demo/mlp.onnx" "${options[@]}" \
    --scaling="$scaling" -o "$demo/train_$scaling"
  echo "compiled in $(( ($(date +%s%N) - start) / 1000000 )) ms"
done

echo "== one epoch of Fashion-MNIST with gradient scaling"
"$demo/train_gs" "${train[@]}" --report="$demo/gs.json" --csv="$demo/gs.csv" \
  --checkpoint="$demo/gs.npz" --export-onnx="$demo/trained.onnx"

for scaling in fp32 dynamic; do
  echo "== the same epoch with --scaling=$scaling"
  "$demo/train_$scaling" "${train[@]}" --report="$demo/$scaling.json" \
    | grep -E "^(trained|eval accuracy|skipped)"
done

echo "== test accuracy after one epoch"
python3 - "$demo" <<'PY'
import json, sys
demo = sys.argv[1]
for scaling in ("gs", "fp32", "dynamic"):
    r = json.load(open(f"{demo}/{scaling}.json"))
    print(f"{scaling:8s} accuracy {r['final']['eval_accuracy']:.4f}  "
          f"final loss {r['final']['loss']:.4f}  "
          f"{r['run']['steps_per_s']:.0f} steps/s  "
          f"skipped {r['skipped_steps']}")
PY
echo "report: $demo/gs.json (schema docs/report.schema.json), curves: $demo/gs.csv"
echo "trained weights: $demo/trained.onnx, checkpoint: $demo/gs.npz"
echo "plots: python3 utils/plot_report.py $demo/gs.json $demo/fp32.json $demo/dynamic.json -o $demo/plots (needs matplotlib)"
