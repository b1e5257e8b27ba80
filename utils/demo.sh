#!/usr/bin/env bash
# The bundled demo: verify and canonicalize the example MLP with gs-opt and
# report what it contains.
set -euo pipefail
build=${1:-build}
example=examples/mlp.mlir

echo "== gs-opt $example --canonicalize"
"$build/bin/gs-opt" "$example" --canonicalize
echo "== operation counts"
"$build/bin/gs-opt" "$example" --canonicalize --print-op-stats -o /dev/null
