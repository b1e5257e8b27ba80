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

/// The unit attribute gs-linalg-to-gpu puts on a gpu.launch (which
/// gs-outline-gpu-kernels moves onto its gpu.func) whose threads each store
/// only the output elements of their own point, no other thread's:
/// gs-device-params-in-place may then let the kernel overwrite a buffer it
/// reads where it reads each element at the indices it stores it.
constexpr llvm::StringLiteral kPerThreadOutputsAttrName =
    "gs.per_thread_outputs";

#define GEN_PASS_REGISTRATION
#include "gs/Conversion/Passes.h.inc"

} // namespace mlir::gs

#endif // GS_CONVERSION_PASSES_H
