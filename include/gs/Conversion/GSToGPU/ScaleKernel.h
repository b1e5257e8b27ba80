//===- ScaleKernel.h - The scale decisions as device kernels ----*- C++ -*-===//
//
// gs.compute_scale and gs.unify_scales as kernels of one thread that read
// the statistics where the GEMM epilogues left them, in device memory, and
// write the scale where the next kernel reads it: a step's scale decisions
// need no host round trip. The arithmetic is ScaleDecision.h's, the CPU
// lowering's, so host and device choose the same scales.
//
//===----------------------------------------------------------------------===//

#ifndef GS_CONVERSION_GSTOGPU_SCALEKERNEL_H
#define GS_CONVERSION_GSTOGPU_SCALEKERNEL_H

#include "gs/Dialect/GS/IR/GSOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::gs {

/// Builds, at `builder`'s insertion point,
///   @name(%grad_stats: memref<7xf64>, [%weight_stats: memref<7xf64>],
///         [%histogram: memref<256xi64>], [%alpha: memref<1xf32>],
///         %scale: memref<1xf32>, %underflow_estimate: memref<1xf64>)
/// (the optional operands where `op` has them) around one gpu.launch of one
/// thread computing `op`'s decision.
func::FuncOp buildComputeScaleKernel(OpBuilder &builder, Location loc,
                                     ComputeScaleOp op, StringRef name);

/// Builds @name(%alpha_0 .. %alpha_{n-1}: memref<1xf32>, %stats_0 ..
/// %stats_{n-1}: memref<7xf64>, %scale: memref<1xf32>) computing
/// gs.unify_scales of `numParts` parts in one thread.
func::FuncOp buildUnifyScalesKernel(OpBuilder &builder, Location loc,
                                    unsigned numParts, StringRef name);

} // namespace mlir::gs

#endif // GS_CONVERSION_GSTOGPU_SCALEKERNEL_H
