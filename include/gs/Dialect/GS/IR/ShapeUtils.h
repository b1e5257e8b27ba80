//===- ShapeUtils.h - Shape arithmetic of gs ops ----------------*- C++ -*-===//
//
// Pure shape arithmetic shared by the verifiers, the importer and the
// lowering: broadcasting and the output sizes of windowed ops.
//
//===----------------------------------------------------------------------===//

#ifndef GS_DIALECT_GS_IR_SHAPEUTILS_H
#define GS_DIALECT_GS_IR_SHAPEUTILS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace mlir::gs {

/// NumPy (multidirectional) broadcast of two shapes, or nullopt when some
/// aligned pair of dimensions differs and neither is 1.
std::optional<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// True if `from` broadcasts to exactly `to` (unidirectional broadcasting).
bool isBroadcastableTo(llvm::ArrayRef<int64_t> from,
                       llvm::ArrayRef<int64_t> to);

/// Extent a kernel of size `kernel` with `dilation` covers (INT64_MAX when
/// it does not fit in int64).
int64_t dilatedKernelSize(int64_t kernel, int64_t dilation);

/// Output size of a convolution or pooling window along one dimension:
/// floor (or, with `ceilMode`, ceil) of (in + padBegin + padEnd -
/// dilatedKernel) / stride, + 1, as ONNX (opset <= 17) defines it. Returns a
/// value < 1 when the window does not fit or the size overflows int64.
int64_t windowOutputSize(int64_t in, int64_t kernel, int64_t stride,
                         int64_t padBegin, int64_t padEnd, int64_t dilation,
                         bool ceilMode = false);

/// Output size of a transposed convolution along one dimension; a value
/// < 1 when there is none or it overflows int64.
int64_t transposedWindowOutputSize(int64_t in, int64_t kernel, int64_t stride,
                                   int64_t padBegin, int64_t padEnd,
                                   int64_t dilation, int64_t outputPadding);

/// Number of elements of a strided slice with already clamped bounds.
int64_t sliceSize(int64_t start, int64_t end, int64_t step);

/// Product of all dimensions; INT64_MAX when it overflows.
int64_t numElements(llvm::ArrayRef<int64_t> shape);

/// The most elements a tensor may have: its byte size (at most 8 bytes an
/// element) and every offset into it then fit in int64.
constexpr int64_t kMaxNumElements = INT64_MAX / 8;

/// Product of all dimensions; nullopt when one is negative (dynamic) or
/// the product overflows int64.
std::optional<int64_t> checkedNumElements(llvm::ArrayRef<int64_t> shape);

} // namespace mlir::gs

#endif // GS_DIALECT_GS_IR_SHAPEUTILS_H
