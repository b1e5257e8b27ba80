//===- Passes.h - GradScale conversion passes -------------------*- C++ -*-===//

#ifndef GS_CONVERSION_PASSES_H
#define GS_CONVERSION_PASSES_H

#include "gs/Conversion/GSToGPU/GemmKernel.h"

#include "mlir/Pass/Pass.h"

namespace mlir {
class ModuleOp;
namespace arith {
class ArithDialect;
} // namespace arith
namespace func {
class FuncDialect;
} // namespace func
namespace gpu {
class GPUDialect;
} // namespace gpu
namespace nvgpu {
class NVGPUDialect;
} // namespace nvgpu
namespace scf {
class SCFDialect;
} // namespace scf
namespace vector {
class VectorDialect;
} // namespace vector
namespace bufferization {
class BufferizationDialect;
} // namespace bufferization
namespace linalg {
class LinalgDialect;
} // namespace linalg
namespace math {
class MathDialect;
} // namespace math
namespace memref {
class MemRefDialect;
} // namespace memref
namespace tensor {
class TensorDialect;
} // namespace tensor
} // namespace mlir

namespace mlir::gs {

#define GEN_PASS_DECL
#include "gs/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "gs/Conversion/Passes.h.inc"

} // namespace mlir::gs

#endif // GS_CONVERSION_PASSES_H
