//===- RegisterBlockLoops.h - The step loops of register blocks -*- C++ -*-===//

#ifndef GS_LIB_PIPELINES_REGISTERBLOCKLOOPS_H
#define GS_LIB_PIPELINES_REGISTERBLOCKLOOPS_H

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::gs {
/// The accumulator registers of a register block worth unrolling and
/// prefetching for: the full blocks of the kernel schedule (16 with
/// AVX-512, 12 with AVX2), not its narrow edge blocks.
constexpr int64_t kMinBlockAccumulators = 8;

/// Whether `loop` is the reduction loop of a register block, as the kernel
/// schedule and loop-invariant-subset-hoisting leave it: innermost,
/// multiplying-adding (`vector.fma`) into at least kMinBlockAccumulators
/// vectors that it carries from step to step.
bool isRegisterBlockSteps(scf::ForOp loop);

/// The attribute by which an scf.for carries its LLVM loop metadata through
/// scf-to-cf and cf-to-llvm, to gs-loop-annotations-to-llvm.
constexpr llvm::StringLiteral kLoopAnnotationAttrName = "llvm.loop_annotation";
} // namespace mlir::gs

#endif // GS_LIB_PIPELINES_REGISTERBLOCKLOOPS_H
