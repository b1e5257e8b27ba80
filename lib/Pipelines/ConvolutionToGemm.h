//===- ConvolutionToGemm.h - 2-D convolutions as GEMMs ---------*- C++ -*-===//
//
// The CPU kernel schedule's im2col: a 2-D convolution of any strides and
// dilations becomes a copy of its input windows and one GEMM-like op; a
// grouped one, a loop of such convolutions, one a group.
//
//===----------------------------------------------------------------------===//

#ifndef GS_LIB_PIPELINES_CONVOLUTIONTOGEMM_H
#define GS_LIB_PIPELINES_CONVOLUTIONTOGEMM_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::gs {

/// Rewrites `conv` (N x C x H x W input, F x C x KH x KW filter, N x F x OH
/// x OW output) as an im2col copy of the input's windows and one GEMM of
/// the F x (C*KH*KW) filter with it, replacing the convolution. Images with
/// many output positions each get their own GEMM (a batched product over
/// N); small outputs, as in weight gradients (whose "images" are input
/// channels and whose outputs are the kernel's positions), are batched
/// into the GEMM's columns instead, so that its panels stay full. Many
/// images are taken a group at a time (a loop over image tiles), so that
/// the columns stay small. Returns the GEMM-like op (inside that loop), or
/// failure (leaving `conv` as it is) for empty tensors, dynamic shapes or
/// non-float types.
FailureOr<linalg::LinalgOp>
rewriteConvolutionAsGemm(RewriterBase &rewriter, linalg::Conv2DNchwFchwOp conv);

/// Whether a group of `conv` (G x F x C x KH x KW filter) has enough
/// filters and reduction steps (C x KH x KW) to fill a GEMM's register
/// blocks: splitGroupedConvolution takes it. Depthwise convolutions, and
/// their weight gradients, do not.
bool fillsGroupGemm(linalg::Conv2DNgchwGfchwOp conv);

/// Rewrites a grouped convolution `conv` (N x G x C x H x W input, G x F x
/// C x KH x KW filter, N x G x F x OH x OW output) as a loop over its groups,
/// each group's an ungrouped convolution of its slices, which
/// rewriteConvolutionAsGemm takes next; returns that convolution. Fails,
/// leaving `conv` as it is, for dynamic or empty shapes and for groups
/// that do not fill a GEMM (fillsGroupGemm).
FailureOr<linalg::Conv2DNchwFchwOp>
splitGroupedConvolution(RewriterBase &rewriter,
                        linalg::Conv2DNgchwGfchwOp conv);

} // namespace mlir::gs

#endif // GS_LIB_PIPELINES_CONVOLUTIONTOGEMM_H
