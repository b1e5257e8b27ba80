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

int64_t mlir::gs::windowOutputSize(int64_t in, int64_t kernel, int64_t stride,
                                   int64_t padBegin, int64_t padEnd,
                                   int64_t dilation, bool ceilMode) {
  int64_t span = in + padBegin + padEnd - dilatedKernelSize(kernel, dilation);
  if (span < 0)
    return 0;
  return (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
}

int64_t mlir::gs::transposedWindowOutputSize(int64_t in, int64_t kernel,
                                             int64_t stride, int64_t padBegin,
                                             int64_t padEnd, int64_t dilation,
                                             int64_t outputPadding) {
  return stride * (in - 1) + outputPadding +
         dilatedKernelSize(kernel, dilation) - padBegin - padEnd;
}

int64_t mlir::gs::sliceSize(int64_t start, int64_t end, int64_t step) {
  if (step > 0)
    return end > start ? (end - start + step - 1) / step : 0;
  return start > end ? (start - end - step - 1) / -step : 0;
}

int64_t mlir::gs::numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}
