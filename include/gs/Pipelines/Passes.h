//===- Passes.h - Passes of the GradScale pipelines -------------*- C++ -*-===//

#ifndef GS_PIPELINES_PASSES_H
#define GS_PIPELINES_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace arith {
class ArithDialect;
} // namespace arith
namespace scf {
class SCFDialect;
} // namespace scf
namespace tensor {
class TensorDialect;
} // namespace tensor
namespace transform {
class TransformDialect;
} // namespace transform
namespace vector {
class VectorDialect;
} // namespace vector
namespace func {
class FuncDialect;
class FuncOp;
} // namespace func
namespace LLVM {
class LLVMDialect;
class LLVMFuncOp;
} // namespace LLVM
namespace linalg {
class LinalgDialect;
} // namespace linalg
namespace memref {
class MemRefDialect;
} // namespace memref
} // namespace mlir

namespace mlir::gs {

#define GEN_PASS_DECL
#include "gs/Pipelines/Passes.h.inc"

/// The unit attribute gs-outline-kernels puts on a kernel whose buffers
/// are distinct allocations, for gs-mark-distinct-buffers-noalias.
constexpr llvm::StringLiteral kDistinctBuffersAttrName = "gs.distinct_buffers";

#define GEN_PASS_REGISTRATION
#include "gs/Pipelines/Passes.h.inc"

} // namespace mlir::gs

#endif // GS_PIPELINES_PASSES_H
