//===- ShapeUtils.cpp - Shape arithmetic of gs ops -------------*- C++ -*-===//

#include "gs/Dialect/GS/IR/ShapeUtils.h"

#include <algorithm>

using namespace llvm;

std::optional<SmallVector<int64_t>>
mlir::gs::broadcastShapes(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < lhs.size() ? lhs[lhs.size() - 1 - i] : 1;
    int64_t r = i < rhs.size() ? rhs[rhs.size() - 1 - i] : 1;
    if (l != r && l != 1 && r != 1)
      return std::nullopt;
    result[rank - 1 - i] = l == 1 ? r : l;
  }
  return result;
}

bool mlir::gs::isBroadcastableTo(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  std::optional<SmallVector<int64_t>> shape = broadcastShapes(from, to);
  return shape && ArrayRef<int64_t>(*shape) == to;
}

// Window sizes are computed in 128 bits: every term is an int64, so no
// intermediate overflows, and a result beyond int64 reads as "no output".
using Wide = __int128;

static int64_t narrowOrZero(Wide value) {
  return value > INT64_MAX || value < INT64_MIN ? 0
                                                : static_cast<int64_t>(value);
}

int64_t mlir::gs::dilatedKernelSize(int64_t kernel, int64_t dilation) {
  Wide extent = Wide(dilation) * (Wide(kernel) - 1) + 1;
  return extent > INT64_MAX ? INT64_MAX : static_cast<int64_t>(extent);
}

int64_t mlir::gs::windowOutputSize(int64_t in, int64_t kernel, int64_t stride,
                                   int64_t padBegin, int64_t padEnd,
                                   int64_t dilation, bool ceilMode) {
  if (stride < 1)
    return 0;
  Wide span =
      Wide(in) + padBegin + padEnd - (Wide(dilation) * (Wide(kernel) - 1) + 1);
  if (span < 0)
    return 0;
  return narrowOrZero(
      (ceilMode ? (span + stride - 1) / stride : span / stride) + 1);
}

int64_t mlir::gs::transposedWindowOutputSize(int64_t in, int64_t kernel,
                                             int64_t stride, int64_t padBegin,
                                             int64_t padEnd, int64_t dilation,
                                             int64_t outputPadding) {
  return narrowOrZero(Wide(stride) * (Wide(in) - 1) + outputPadding +
                      (Wide(dilation) * (Wide(kernel) - 1) + 1) - padBegin -
                      padEnd);
}

int64_t mlir::gs::sliceSize(int64_t start, int64_t end, int64_t step) {
  if (step > 0)
    return end > start
               ? 1 + static_cast<int64_t>(
                         (uint64_t(end) - uint64_t(start) - 1) / uint64_t(step))
               : 0;
  // |step| as unsigned, also for INT64_MIN.
  uint64_t magnitude = 0 - uint64_t(step);
  return start > end
             ? 1 + static_cast<int64_t>((uint64_t(start) - uint64_t(end) - 1) /
                                        magnitude)
             : 0;
}

std::optional<int64_t> mlir::gs::checkedNumElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n))
      return std::nullopt;
  return n;
}

int64_t mlir::gs::numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n))
      return INT64_MAX;
  return n;
}
