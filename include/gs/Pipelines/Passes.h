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
class FuncOp;
} // namespace func
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

#define GEN_PASS_REGISTRATION
#include "gs/Pipelines/Passes.h.inc"

} // namespace mlir::gs

#endif // GS_PIPELINES_PASSES_H
