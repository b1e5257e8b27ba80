//===- ConvolutionToGemm.cpp - 2-D convolutions as GEMMs -------*- C++ -*-===//
//
// out[n, f, oh, ow] += sum_{c, kh, kw} in[n, c, oh*sh + kh*dh, ow*sw + kw*dw]
//                                     * w[f, c, kh, kw]
// is a GEMM of the filter (F x CK, CK = C*KH*KW) with the input's windows
// laid out as columns (im2col), in one of two orientations:
// - per image: col[n, ck, o] (O = OH*OW), out[n] = w * col[n]: N GEMMs of
//   F x CK x O, which suits forward and input-gradient convolutions;
// - images batched: col[ck, (n, o)], out^T = w * col: one GEMM of
//   F x CK x N*O between two transposes of the (small) output, which suits
//   outputs of a few positions: weight gradients (N = input channels, O =
//   the kernel's positions) and the last layers of deep networks.
// The window copy reads the input through an affine map, so strides and
// dilations cost nothing; FP16 inputs are widened to the accumulator's type
// as they are copied. Many images are taken a group at a time, so that the
// columns stay in blocks malloc reuses.
//
//===----------------------------------------------------------------------===//

#include "ConvolutionToGemm.h"
#include "gs/Conversion/GSToLinalg/GSToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"

using namespace mlir;

/// The most bytes of columns built at once; more images are taken a group
/// at a time. Blocks above glibc's largest mmap threshold (32 MiB) are
/// mapped afresh, and page-faulted, at every step.
static constexpr int64_t kMaxColumnBytes = 16 << 20;

/// `value` converted to the float type `type` (a no-op when it has it).
static Value widen(OpBuilder &b, Location loc, Value value, Type type) {
  if (value.getType() == type)
    return value;
  return arith::ExtFOp::create(b, loc, type, value);
}

/// `value` (of a static shape) with dimensions grouped as `groups` says.
static Value collapse(OpBuilder &b, Location loc, Value value,
                      ArrayRef<ReassociationIndices> groups) {
  return tensor::CollapseShapeOp::create(b, loc, value, groups);
}

namespace {
/// The convolution's operands and sizes, as the GEMMs see them.
struct ConvShape {
  Operation *conv;
  Value input, filter, init;
  RankedTensorType outType;
  int64_t n, f, c, kh, kw, oh, ow;
  SmallVector<int64_t> strides, dilations;
};

/// The loops of the window copy: images, channels, kernel positions,
/// output positions.
enum WindowLoop { N, C, KH, KW, OH, OW };
} // namespace

/// The rows of the columns matrix are padded to an odd number of cache
/// lines: the GEMM reads a panel of B as 256 rows at the row stride, and a
/// stride of an even number of lines (3136 floats at 56x56) maps those rows
/// onto a fraction of the L1 cache's sets, which then evict each other.
static int64_t paddedRowLength(int64_t length, Type element) {
  int64_t bytes = element.getIntOrFloatBitWidth() / 8;
  int64_t perLine = std::max<int64_t>(1, 64 / bytes);
  int64_t lines = llvm::divideCeil(length, perLine);
  return (lines % 2 ? lines : lines + 1) * perLine;
}

/// The input's windows as the GEMM's operand: the copy's loops in `order`
/// (a permutation of n, c, kh, kw, oh, ow), grouped into the operand's
/// dimensions by `groups`, in rows padded as paddedRowLength says; of
/// element type `element`.
static Value copyWindows(RewriterBase &rewriter, const ConvShape &s,
                         ArrayRef<WindowLoop> order,
                         ArrayRef<ReassociationIndices> groups, Type element) {
  MLIRContext *ctx = rewriter.getContext();
  Location loc = s.conv->getLoc();
  int64_t sizes[] = {s.n, s.c, s.kh, s.kw, s.oh, s.ow};
  SmallVector<int64_t> shape;
  SmallVector<AffineExpr> dims(6);
  for (auto [position, loop] : llvm::enumerate(order)) {
    shape.push_back(sizes[loop]);
    dims[loop] = getAffineDimExpr(position, ctx);
  }
  SmallVector<int64_t> matrixShape;
  for (const ReassociationIndices &group : groups) {
    int64_t size = 1;
    for (int64_t d : group)
      size *= shape[d];
    matrixShape.push_back(size);
  }
  SmallVector<int64_t> paddedShape(matrixShape);
  paddedShape.back() = paddedRowLength(matrixShape.back(), element);
  Value padded = tensor::EmptyOp::create(rewriter, loc, paddedShape, element);
  int64_t rank = matrixShape.size();
  Value matrix = tensor::ExtractSliceOp::create(
      rewriter, loc, RankedTensorType::get(matrixShape, element), padded,
      ValueRange(), ValueRange(), ValueRange(), SmallVector<int64_t>(rank, 0),
      matrixShape, SmallVector<int64_t>(rank, 1));
  Value target = tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get(shape, element), matrix, groups);
  AffineMap windows = AffineMap::get(
      6, 0,
      {dims[N], dims[C], dims[OH] * s.strides[0] + dims[KH] * s.dilations[0],
       dims[OW] * s.strides[1] + dims[KW] * s.dilations[1]},
      ctx);
  Value copied =
      linalg::GenericOp::create(
          rewriter, loc, target.getType(), s.input, target,
          ArrayRef<AffineMap>{windows, rewriter.getMultiDimIdentityMap(6)},
          SmallVector<utils::IteratorType>(6, utils::IteratorType::parallel),
          [&](OpBuilder &b, Location l, ValueRange args) {
            linalg::YieldOp::create(b, l, widen(b, l, args[0], element));
          })
          .getResult(0);
  return collapse(rewriter, loc, copied, groups);
}

/// Per image: (n, f, o, k) += w[f, k] * columns[n, k, o].
static linalg::LinalgOp gemmPerImage(RewriterBase &rewriter, const ConvShape &s,
                                     Value filterMatrix, Value columns) {
  MLIRContext *ctx = rewriter.getContext();
  Location loc = s.conv->getLoc();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  auto par = utils::IteratorType::parallel;
  Value acc = collapse(rewriter, loc, s.init, {{0}, {1}, {2, 3}});
  auto gemm = linalg::GenericOp::create(
      rewriter, loc, acc.getType(), ValueRange{filterMatrix, columns}, acc,
      ArrayRef<AffineMap>{AffineMap::get(4, 0, {d(1), d(3)}, ctx),
                          AffineMap::get(4, 0, {d(0), d(3), d(2)}, ctx),
                          AffineMap::get(4, 0, {d(0), d(1), d(2)}, ctx)},
      {par, par, par, utils::IteratorType::reduction},
      gs::buildMultiplyAddBody);
  Value result = tensor::ExpandShapeOp::create(
      rewriter, loc, s.outType, gemm.getResult(0),
      ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
  rewriter.replaceOp(s.conv, result);
  return cast<linalg::LinalgOp>(gemm.getOperation());
}

/// Images batched: out^T[f, (n, o)] += w[f, k] * columns[k, (n, o)].
static linalg::LinalgOp gemmImagesBatched(RewriterBase &rewriter,
                                          const ConvShape &s,
                                          Value filterMatrix, Value columns) {
  MLIRContext *ctx = rewriter.getContext();
  Location loc = s.conv->getLoc();
  Type accType = s.outType.getElementType();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  auto par = utils::IteratorType::parallel;
  auto swapImagesAndFilters = [&](Value value, ArrayRef<int64_t> shape) {
    Value empty = tensor::EmptyOp::create(rewriter, loc, shape, accType);
    return linalg::TransposeOp::create(rewriter, loc, value, empty,
                                       ArrayRef<int64_t>{1, 0, 2, 3})
        ->getResult(0);
  };
  Value accT = collapse(rewriter, loc,
                        swapImagesAndFilters(s.init, {s.f, s.n, s.oh, s.ow}),
                        {{0}, {1, 2, 3}});
  auto gemm = linalg::GenericOp::create(
      rewriter, loc, accT.getType(), ValueRange{filterMatrix, columns}, accT,
      ArrayRef<AffineMap>{AffineMap::get(3, 0, {d(0), d(2)}, ctx),
                          AffineMap::get(3, 0, {d(2), d(1)}, ctx),
                          AffineMap::get(3, 0, {d(0), d(1)}, ctx)},
      {par, par, utils::IteratorType::reduction}, gs::buildMultiplyAddBody);
  Value resultT = tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get({s.f, s.n, s.oh, s.ow}, accType),
      gemm.getResult(0), ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}});
  rewriter.replaceOp(s.conv,
                     swapImagesAndFilters(resultT, {s.n, s.f, s.oh, s.ow}));
  return cast<linalg::LinalgOp>(gemm.getOperation());
}

FailureOr<linalg::LinalgOp>
mlir::gs::rewriteConvolutionAsGemm(RewriterBase &rewriter,
                                   linalg::Conv2DNchwFchwOp conv) {
  ConvShape s;
  s.conv = conv;
  s.input = conv.getInputs()[0];
  s.filter = conv.getInputs()[1];
  s.init = conv.getOutputs()[0];
  auto inType = dyn_cast<RankedTensorType>(s.input.getType());
  auto filterType = dyn_cast<RankedTensorType>(s.filter.getType());
  auto outType = dyn_cast<RankedTensorType>(s.init.getType());
  if (!inType || !filterType || !outType || !inType.hasStaticShape() ||
      !filterType.hasStaticShape() || !outType.hasStaticShape() ||
      inType.getNumElements() == 0 || filterType.getNumElements() == 0 ||
      outType.getNumElements() == 0)
    return rewriter.notifyMatchFailure(conv, "needs static, non-empty shapes");
  Type accType = outType.getElementType();
  // Float inputs no wider than the accumulator.
  auto widensTo = [&](Type type) {
    return isa<FloatType>(type) && isa<FloatType>(accType) &&
           type.getIntOrFloatBitWidth() <= accType.getIntOrFloatBitWidth();
  };
  if (!widensTo(inType.getElementType()) ||
      !widensTo(filterType.getElementType()))
    return rewriter.notifyMatchFailure(
        conv, "needs floats widening to the accumulator's type");
  s.outType = outType;
  s.n = outType.getDimSize(0);
  s.f = outType.getDimSize(1);
  s.oh = outType.getDimSize(2);
  s.ow = outType.getDimSize(3);
  s.c = filterType.getDimSize(1);
  s.kh = filterType.getDimSize(2);
  s.kw = filterType.getDimSize(3);
  auto strides = conv.getStrides().getValues<int64_t>();
  auto dilations = conv.getDilations().getValues<int64_t>();
  s.strides.assign(strides.begin(), strides.end());
  s.dilations.assign(dilations.begin(), dilations.end());

  // Columns of many images are built and multiplied a group at a time.
  bool batchImages = s.n > 1 && s.oh * s.ow < gs::kConvBatchImagesBelow;
  int64_t imageBytes = s.c * s.kh * s.kw * s.oh * s.ow *
                       (accType.getIntOrFloatBitWidth() / 8);
  int64_t group = batchImages ? s.n : 1;
  // A batched group spans at least 4 register panels (128 columns).
  int64_t fewestImages = llvm::divideCeil(128, s.oh * s.ow);
  while (group > fewestImages &&
         (s.n % group || group * imageBytes > kMaxColumnBytes))
    --group;
  while (s.n % group)
    ++group;
  if (group < s.n) {
    scf::SCFTilingOptions options;
    SmallVector<int64_t> sizes(conv.getNumLoops(), 0);
    sizes[0] = group; // the images
    options.setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), sizes));
    rewriter.setInsertionPoint(conv);
    FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
        rewriter, cast<TilingInterface>(conv.getOperation()), options);
    if (failed(tiled))
      return rewriter.notifyMatchFailure(conv, "could not tile the images");
    rewriter.replaceOp(conv, tiled->replacements);
    auto inner = cast<linalg::Conv2DNchwFchwOp>(tiled->tiledOps.front());
    return rewriteConvolutionAsGemm(rewriter, inner);
  }

  Location loc = conv.getLoc();
  rewriter.setInsertionPoint(conv);
  Value filterMatrix = collapse(rewriter, loc, s.filter, {{0}, {1, 2, 3}});
  if (batchImages) {
    Value columns = copyWindows(rewriter, s, {C, KH, KW, N, OH, OW},
                                {{0, 1, 2}, {3, 4, 5}}, accType);
    return gemmImagesBatched(rewriter, s, filterMatrix, columns);
  }
  // A 1x1 kernel at stride 1 reads each image as it is.
  if (s.kh == 1 && s.kw == 1 && s.strides[0] == 1 && s.strides[1] == 1 &&
      inType.getElementType() == accType)
    return gemmPerImage(rewriter, s, filterMatrix,
                        collapse(rewriter, loc, s.input, {{0}, {1}, {2, 3}}));
  Value columns = copyWindows(rewriter, s, {N, C, KH, KW, OH, OW},
                              {{0}, {1, 2, 3}, {4, 5}}, accType);
  return gemmPerImage(rewriter, s, filterMatrix, columns);
}
