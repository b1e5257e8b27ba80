#!/usr/bin/env bash
# Installs the Debian packages GradScale builds and tests with (see
# docs/Toolchain.md). Installs only what is missing; uses sudo when not root.
set -euo pipefail

packages=(
  # Build tools.
  cmake ninja-build ccache lld g++ python3
  # LLVM/MLIR 22: libMLIR.so, libLLVM.so, mlir-tblgen, lit, FileCheck.
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
  # Compressed data sets (gzip IDX, deflated .npz).
  zlib1g-dev
  # ONNX import: libonnx with its protobuf.
  libonnx-dev libprotobuf-dev protobuf-compiler
  # Tests: gtest; ONNX backend test data; Debian's Python onnx, PyTorch and
  # torchvision generate test models (they belong to /usr/bin/python3).
  libgtest-dev libonnx-testdata python3-onnx python3-numpy python3-torch
  python3-torchvision
  # The plots (utils/plot_report.py, bench/experiments) with Debian's Python.
  python3-matplotlib
  # The fuzz targets: clang with libFuzzer and the sanitizer runtimes.
  clang libclang-rt-14-dev
  # The reference Python environment (ONNX Runtime from pip, see
  # utils/requirements-reference.txt) and the GEMM benchmark's baseline.
  python3-venv python3-pip libopenblas-dev
  # The Python package's extension (python-bindings/) for Debian's Python.
  python3-dev
  # Training data for the PyTorch trajectory tests.
  dataset-fashion-mnist
  # Data-parallel training (gs-compile --distributed=mpi): Open MPI.
  openmpi-bin libopenmpi-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
