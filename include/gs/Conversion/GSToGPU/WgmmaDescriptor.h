//===- WgmmaDescriptor.h - What a wgmma descriptor reads -------*- C++ -*-===//
//-*-===//
//
// The CPU side of wgmma.mma_async's matrix descriptors, written from the PTX
// ISA's "Matrix Descriptor Format" and "Canonical Layouts" independently of
// the GEMM kernel that encodes them: gs-emulate-gpu reads a wgmma's operands
// through it.
//
//===----------------------------------------------------------------------===//

#ifndef GS_CONVERSION_GSTOGPU_WGMMADESCRIPTOR_H
#define GS_CONVERSION_GSTOGPU_WGMMADESCRIPTOR_H

#include "mlir/IR/Builders.h"

namespace mlir::gs {

/// Builds the index, in the f16 view of shared memory, of element (mn, k)
/// of the operand the i64 matrix descriptor `descriptor` describes, stored
/// K-major or MN-major. The matrix base offset (bits 49-51) is taken as 0:
/// the swizzle patterns start on their own boundaries, as the kernels lay
/// them out.
Value buildWgmmaOperandIndex(OpBuilder &b, Location l, Value descriptor,
                             Value mnIndex, Value kIndex, bool kMajor);

} // namespace mlir::gs

#endif // GS_CONVERSION_GSTOGPU_WGMMADESCRIPTOR_H
