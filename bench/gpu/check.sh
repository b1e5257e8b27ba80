#!/usr/bin/env bash
# The GPU check of the fused GEMM and convolution kernels and the scale
# decisions, for a machine with an NVIDIA GPU.
#
#   bench/gpu/check.sh [ARTIFACTS]      (default: build/gpu-check)
#
# Needs the kernels `make gpu-check-prepare` builds (PTX and a manifest, on
# any machine with the build; carry ARTIFACTS to the GPU machine), the
# NVIDIA driver, and python3 with NumPy and PyTorch for CUDA. Prints
# PASS/FAIL lines: the C++ GPU runtime's self-test (gs-gpu-info), each
# kernel on the device against float64 references
# (the decisions against the CPU's),
# a second run for determinism, compute-sanitizer's memcheck and racecheck
# on small shapes (where installed), and PERF lines against cuBLAS and
# cuDNN; then training executables (gs-compile --target=cuda) on the GPU
# against the CPU, their steps/s against PyTorch AMP, and one rank of a
# data-parallel replica over NCCL against the plain step (train_check.py).
# Exits 0 if all passed, 1 if a check failed, 2 on missing inputs, and 77
# (skipped) where there is no GPU.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
artifacts=${1:-build/gpu-check}
python=${PYTHON:-python3}
start=$(date +%s)

if [ ! -f "$artifacts/manifest.json" ]; then
  echo "error: no kernels in $artifacts: run 'make gpu-check-prepare' where" \
       "the project is built, and carry $artifacts here" >&2
  exit 2
fi
if ! "$python" -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null; then
  echo "SKIP: no NVIDIA driver here (libcuda.so.1 does not load): the GPU" \
       "checks need a GPU"
  exit 77
fi
if ! "$python" -c 'import numpy, torch, sys; sys.exit(not torch.cuda.is_available())' 2>/dev/null; then
  echo "SKIP: $python has no NumPy or no PyTorch that sees a CUDA device"
  exit 77
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || true

status=0
# The C++ runtime GPU executables use (gs-gpu-info, built with the project
# and carried with the kernels): a module, the allocator, a launch, events.
if [ -x "$artifacts/gs-gpu-info" ]; then
  timeout 60 "$artifacts/gs-gpu-info" || status=1
  timeout 60 "$artifacts/gs-gpu-info" --self-test || status=1
else
  echo "FAIL runtime self-test: no gs-gpu-info in $artifacts (make" \
       "gpu-check-prepare puts it there)"
  status=1
fi
timeout 420 "$python" "$here/check_kernels.py" --artifacts "$artifacts" || status=1

sanitizer=$(command -v compute-sanitizer || true)
[ -z "$sanitizer" ] && [ -x /usr/local/cuda/bin/compute-sanitizer ] &&
  sanitizer=/usr/local/cuda/bin/compute-sanitizer
if [ -n "$sanitizer" ]; then
  for tool in memcheck racecheck; do
    log=$(mktemp)
    if timeout 150 "$sanitizer" --tool "$tool" --error-exitcode 1 \
         "$python" "$here/check_kernels.py" --artifacts "$artifacts" \
         --configs ragged,special,guarded,wgmma_ragged,wgmma_ragged_transposed,wgmma_deep_ragged,conv_small_bias,convt_small_scaled,conv_grouped_ragged,conv_grouped_cfirst_ragged,eval_conv_small,gs_scale_exponent_histogram \
         --no-perf > "$log" 2>&1; then
      echo "PASS compute-sanitizer $tool (ragged, special, guarded," \
           "wgmma_ragged, wgmma_ragged_transposed and wgmma_deep_ragged where sm_90a runs," \
           "conv_small_bias, convt_small_scaled, conv_grouped_ragged," \
           "conv_grouped_cfirst_ragged, eval_conv_small," \
           "gs_scale_exponent_histogram)"
    elif grep -q "Device not supported" "$log"; then
      # gVisor machines expose no debugger interface to the sanitizer.
      echo "SKIP compute-sanitizer $tool: it does not support this device" \
           "here (no debugger interface, e.g. under gVisor)"
    else
      echo "FAIL compute-sanitizer $tool:"; tail -40 "$log"; status=1
    fi
    rm -f "$log"
  done
else
  echo "SKIP compute-sanitizer: not installed on this machine"
fi
# Whole training runs: the executables gs-compile --target=cuda built, on
# the GPU against the CPU, and their speed against PyTorch AMP.
if [ -f "$artifacts/train/manifest.json" ]; then
  timeout 240 "$python" "$here/train_check.py" --artifacts "$artifacts" ||
    status=1
else
  echo "FAIL train: no training executables in $artifacts/train (make" \
       "gpu-check-prepare builds them)"
  status=1
fi
echo "$([ $status = 0 ] && echo PASS || echo FAIL) bench/gpu/check.sh in" \
     "$(( $(date +%s) - start )) s"
exit $status
