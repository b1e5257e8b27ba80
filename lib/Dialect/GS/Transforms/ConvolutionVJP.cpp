//===- ConvolutionVJP.cpp - Gradients of convolutions and pooling -*- C++ -*-=//
//
// A convolution's data gradient is the transposed convolution with the same
// geometry (and the other way round); its weight gradient is a convolution
// that correlates the input with the output gradient, batch and channels
// swapped. Both stay gs.conv / gs.conv_transpose: the backward GEMM-like ops
// the gradient-scaling pass instruments. Pooling gradients are their own ops.
//
//===----------------------------------------------------------------------===//

#include "VJPUtils.h"

#include "gs/Dialect/GS/IR/GSOps.h"
#include "gs/Dialect/GS/IR/ShapeUtils.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::vjp;

/// The leading `shape` of `value` (every dimension no larger), by a slice
/// from the origin; `value` itself when it already has that shape.
static Value sliceTo(OpBuilder &b, Location loc, Value value,
                     ArrayRef<int64_t> shape) {
  if (typeOf(value).getShape() == shape)
    return value;
  SmallVector<int64_t> starts(shape.size(), 0), steps(shape.size(), 1);
  return SliceOp::create(b, loc, value, starts, SmallVector<int64_t>(shape),
                         steps);
}

/// `a0, ..., a(n-1), b0, ..., b(n-1)` as the ONNX pads attribute.
static DenseI64ArrayAttr padsAttr(OpBuilder &b, ArrayRef<int64_t> begin,
                                  ArrayRef<int64_t> end) {
  SmallVector<int64_t> pads(begin);
  llvm::append_range(pads, end);
  return b.getDenseI64ArrayAttr(pads);
}

/// A weight gradient with at most this many elements whose sums are deep
/// is split over its images (imageSplits).
static constexpr int64_t kMaxSplitWeightElements = 4096;
/// The fewest products a part of a split weight gradient sums, and the
/// most parts.
static constexpr int64_t kMinSplitDepth = 1024, kMaxSplits = 32;

/// The parts a weight gradient's sum over `images` images of `positions`
/// output positions each is split into: where its `elements` are few and
/// each sums many products, one GEMM would be a tile or two of outputs and
/// tens of thousands deep (a 3x3 layer's at batch 64 on 28x28 images: 72
/// outputs, 50176 products each), which a GPU computes on one or two
/// multiprocessors one product after another. Split into S groups of
/// images, each part is a GEMM of its own (a group of a grouped
/// convolution: thread blocks side by side on a GPU), and the S partial
/// sums are added in order after. S is the largest divisor of `images`,
/// at most kMaxSplits, that leaves a part at least kMinSplitDepth
/// products; 1 where no split pays.
static int64_t imageSplits(int64_t elements, int64_t images,
                           int64_t positions) {
  if (elements > kMaxSplitWeightElements ||
      images * positions < 2 * kMinSplitDepth)
    return 1;
  for (int64_t splits = std::min(kMaxSplits, images); splits > 1; --splits)
    if (images % splits == 0 && images / splits * positions >= kMinSplitDepth)
      return splits;
  return 1;
}

/// The weight gradient of a windowed correlation
///   out[n, co, o] += in[n, g(co) * cin/G + ci, o*s + k*d - pb] * w[co, ci, k]
/// given `in` (N x Cin x D...) and the gradient `outGrad` of `out`
/// (N x Cout x O...):
///   dw[co, ci, k] = sum_{n, o} in[n, ..., o*s + k*d - pb] * outGrad[n, co, o]
/// which is a grouped convolution over "images" ci with "channels"
/// (group, n), kernel outGrad[co, n, o], stride d and dilation s. Where
/// imageSplits says so (one group), the images n are split into S parts,
/// the convolution's groups: its output is S partial gradients, summed.
static Value correlationWeightGradient(OpBuilder &b, Location loc, Value in,
                                       Value outGrad, ArrayRef<int64_t> kernel,
                                       const WindowGeometry &g, int64_t group) {
  RankedTensorType gradType = typeOf(outGrad);
  int64_t rank = kernel.size();
  // How far into the padded input the kernel's last offset reaches.
  SmallVector<int64_t> reach;
  for (int64_t i = 0; i < rank; ++i)
    reach.push_back((kernel[i] - 1) * g.dilations[i] +
                    (gradType.getDimSize(2 + i) - 1) * g.strides[i] + 1);
  // Input rows past that reach (where the stride does not divide the
  // input) would only make weight-gradient offsets that the slice below
  // drops: a 1x1 stride-2 convolution of a 14x14 input would correlate a
  // 2x2 weight, four times the work. They are cut first.
  SmallVector<int64_t> used(typeOf(in).getShape());
  for (int64_t i = 0; i < rank; ++i)
    used[2 + i] =
        std::clamp<int64_t>(reach[i] - g.padsBegin[i], 1, used[2 + i]);
  in = sliceTo(b, loc, in, used);
  RankedTensorType inType = typeOf(in);
  int64_t n = inType.getDimSize(0), cin = inType.getDimSize(1);
  int64_t cout = gradType.getDimSize(1);
  ArrayRef<int64_t> spatial = inType.getShape().drop_front(2);

  // in: N x G x Cin/G x D -> Cin/G x G x N x D -> Cin/G x (G*N) x D; with
  // one group N x Cin x D -> Cin x N x D, which the GPU's kernel reads as
  // it lies.
  SmallVector<int64_t> swap = {1, 0};
  for (int64_t i = 0; i < rank; ++i)
    swap.push_back(2 + i);
  Value images;
  if (group == 1) {
    images = TransposeOp::create(b, loc, in, swap);
  } else {
    SmallVector<int64_t> grouped = {n, group, cin / group};
    llvm::append_range(grouped, spatial);
    images = reshape(b, loc, in, inType.clone(grouped));
    SmallVector<int64_t> permutation = {2, 1, 0};
    for (int64_t i = 0; i < rank; ++i)
      permutation.push_back(3 + i);
    images = TransposeOp::create(b, loc, images, permutation);
    SmallVector<int64_t> imageShape = {cin / group, group * n};
    llvm::append_range(imageShape, spatial);
    images = reshape(b, loc, images, inType.clone(imageShape));
  }

  // outGrad: N x Cout x O -> Cout x N x O; split (one group), -> Cout x S
  // x N/S x O -> S x Cout x N/S x O -> (S*Cout) x N/S x O, the filters of
  // group s the images of part s (a view of Cout x N x O that the GPU's
  // kernel takes as it is).
  Value filters = TransposeOp::create(b, loc, outGrad, swap);
  ArrayRef<int64_t> outSpatial = gradType.getShape().drop_front(2);
  int64_t weightElements = cout * cin * numElements(kernel);
  int64_t positions = numElements(outSpatial);
  int64_t splits = group == 1 ? imageSplits(weightElements, n, positions) : 1;
  if (splits != 1) {
    SmallVector<int64_t> parts = {cout, splits, n / splits};
    llvm::append_range(parts, outSpatial);
    Value split = reshape(b, loc, filters, gradType.clone(parts));
    SmallVector<int64_t> partsFirst = {1, 0};
    for (int64_t i = 0; i < rank + 1; ++i)
      partsFirst.push_back(2 + i);
    split = TransposeOp::create(b, loc, split, partsFirst);
    SmallVector<int64_t> filterShape = {splits * cout, n / splits};
    llvm::append_range(filterShape, outSpatial);
    filters = reshape(b, loc, split, gradType.clone(filterShape));
  }

  // Only as much end padding as the kernel's last offset needs.
  SmallVector<int64_t> padsEnd;
  for (int64_t i = 0; i < rank; ++i)
    padsEnd.push_back(
        std::max<int64_t>(0, reach[i] - spatial[i] - g.padsBegin[i]));
  Value correlated = ConvOp::create(
      b, loc, images, filters, /*bias=*/Value(),
      b.getDenseI64ArrayAttr(g.dilations), padsAttr(b, g.padsBegin, padsEnd),
      b.getDenseI64ArrayAttr(g.strides), group * splits);
  if (splits != 1) {
    // Cin x (S*Cout) x K -> Cin x S x Cout x K -> S x Cout x Cin x K,
    // summed over the parts in order.
    RankedTensorType partsType = typeOf(correlated);
    SmallVector<int64_t> parts = {cin, splits, cout};
    llvm::append_range(parts, partsType.getShape().drop_front(2));
    Value partial = reshape(b, loc, correlated, partsType.clone(parts));
    SmallVector<int64_t> partsFirst = {1, 2, 0};
    for (int64_t i = 0; i < rank; ++i)
      partsFirst.push_back(3 + i);
    partial = TransposeOp::create(b, loc, partial, partsFirst);
    Value summed =
        ReduceSumOp::create(b, loc, partial, b.getDenseI64ArrayAttr({0}),
                            /*keepdims=*/nullptr);
    SmallVector<int64_t> wanted = {cout, cin};
    llvm::append_range(wanted, kernel);
    return sliceTo(b, loc, summed, wanted);
  }
  SmallVector<int64_t> wanted = {cin / group, cout};
  llvm::append_range(wanted, kernel);
  Value weights = sliceTo(b, loc, correlated, wanted);
  return TransposeOp::create(b, loc, weights, swap);
}

/// The bias gradient: the output gradient summed, in the bias's type (an
/// FP16 gradient's sum over N x spatial elements could overflow FP16), over
/// all but the channels.
static Value biasGradient(OpBuilder &b, Location loc, Value grad, Value bias) {
  Value wide = castLike(b, loc, grad, typeOf(bias));
  return ReduceSumOp::create(
      b, loc, wide,
      b.getDenseI64ArrayAttr(nonChannelAxes(typeOf(grad).getRank())),
      /*keepdims=*/nullptr);
}

namespace {
/// Y = conv(X, W) + B:
///   dX = conv_transpose(dY, W) with the same geometry, the output padding
///        restoring the rows the forward stride skipped;
///   dW = correlation of X with dY; dB = dY summed per channel.
struct ConvVJP : DifferentiableOpInterface::ExternalModel<ConvVJP, ConvOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    auto conv = cast<ConvOp>(op);
    Location loc = op->getLoc();
    WindowGeometry g = conv.getGeometry();
    Value x = conv.getInput(), w = conv.getWeight();
    RankedTensorType xType = typeOf(x), wType = typeOf(w);
    Value dy = castLike(b, loc, gradients[0], xType);
    ArrayRef<int64_t> kernel = wType.getShape().drop_front(2);
    int64_t rank = kernel.size();

    SmallVector<int64_t> outputPadding;
    for (int64_t i = 0; i < rank; ++i) {
      int64_t covered = xType.getDimSize(2 + i) + g.padsBegin[i] +
                        g.padsEnd[i] - (kernel[i] - 1) * g.dilations[i] - 1;
      outputPadding.push_back(covered % g.strides[i]);
    }
    bool anyPadding = llvm::any_of(outputPadding, [](int64_t p) { return p; });
    Value dx = ConvTransposeOp::create(
        b, loc, dy, castLike(b, loc, w, xType), /*bias=*/Value(),
        conv.getStridesAttr(), conv.getPadsAttr(), conv.getDilationsAttr(),
        anyPadding ? b.getDenseI64ArrayAttr(outputPadding)
                   : DenseI64ArrayAttr(),
        conv.getGroup());
    operandGradients.push_back(castLike(b, loc, dx, xType));

    Value input = castLike(b, loc, x, wType);
    Value outputGradient = castLike(b, loc, gradients[0], wType);
    Value dw = correlationWeightGradient(b, loc, input, outputGradient, kernel,
                                         g, conv.getGroup());
    operandGradients.push_back(dw);
    if (Value bias = conv.getBias())
      operandGradients.push_back(biasGradient(b, loc, gradients[0], bias));
    return success();
  }
};

/// Y = conv_transpose(X, W) + B is the adjoint of a convolution:
///   dX = conv(dY, W) with the same geometry (cut to X's size where output
///        padding at least as large as the stride added a row);
///   dW = correlation of dY (the "input") with X; dB = dY summed.
struct ConvTransposeVJP
    : DifferentiableOpInterface::ExternalModel<ConvTransposeVJP,
                                               ConvTransposeOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    auto convT = cast<ConvTransposeOp>(op);
    Location loc = op->getLoc();
    WindowGeometry g = convT.getGeometry();
    Value x = convT.getInput(), w = convT.getWeight();
    RankedTensorType xType = typeOf(x), wType = typeOf(w);
    ArrayRef<int64_t> kernel = wType.getShape().drop_front(2);

    Value outputGradient = castLike(b, loc, gradients[0], xType);
    Value weight = castLike(b, loc, w, xType);
    Value dx = ConvOp::create(b, loc, outputGradient, weight, /*bias=*/Value(),
                              convT.getStridesAttr(), convT.getPadsAttr(),
                              convT.getDilationsAttr(), convT.getGroup());
    operandGradients.push_back(sliceTo(b, loc, dx, xType.getShape()));

    Value outputGradientW = castLike(b, loc, gradients[0], wType);
    Value input = castLike(b, loc, x, wType);
    Value dw = correlationWeightGradient(b, loc, outputGradientW, input, kernel,
                                         g, convT.getGroup());
    operandGradients.push_back(dw);
    if (Value bias = convT.getBias())
      operandGradients.push_back(biasGradient(b, loc, gradients[0], bias));
    return success();
  }
};

struct MaxPoolVJP
    : DifferentiableOpInterface::ExternalModel<MaxPoolVJP, MaxPoolOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    auto pool = cast<MaxPoolOp>(op);
    operandGradients.push_back(MaxPoolGradOp::create(
        b, op->getLoc(), typeOf(pool.getInput()), pool.getInput(), gradients[0],
        pool.getKernelShapeAttr(), pool.getStridesAttr(), pool.getPadsAttr(),
        pool.getDilationsAttr(), pool.getCeilModeAttr()));
    return success();
  }
};

struct AvgPoolVJP
    : DifferentiableOpInterface::ExternalModel<AvgPoolVJP, AvgPoolOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    auto pool = cast<AvgPoolOp>(op);
    operandGradients.push_back(AvgPoolGradOp::create(
        b, op->getLoc(), typeOf(pool.getInput()), gradients[0],
        pool.getKernelShapeAttr(), pool.getStridesAttr(), pool.getPadsAttr(),
        pool.getCeilModeAttr(), pool.getCountIncludePadAttr()));
    return success();
  }
};

/// Each input element gets its channel's gradient over the spatial size.
struct GlobalAvgPoolVJP
    : DifferentiableOpInterface::ExternalModel<GlobalAvgPoolVJP,
                                               GlobalAvgPoolOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    Location loc = op->getLoc();
    RankedTensorType inType = typeOf(op->getOperand(0));
    int64_t count = 1;
    for (int64_t d = 2; d < inType.getRank(); ++d)
      count *= inType.getDimSize(d);
    Value g = gradients[0];
    Value mean = MulOp::create(
        b, loc, g, scalar(b, loc, typeOf(g).getElementType(), 1.0 / count));
    operandGradients.push_back(
        ExpandOp::create(b, loc, inType, mean).getResult());
    return success();
  }
};
} // namespace

void mlir::gs::registerConvolutionVJPs(MLIRContext *context) {
  ConvOp::attachInterface<ConvVJP>(*context);
  ConvTransposeOp::attachInterface<ConvTransposeVJP>(*context);
  MaxPoolOp::attachInterface<MaxPoolVJP>(*context);
  AvgPoolOp::attachInterface<AvgPoolVJP>(*context);
  GlobalAvgPoolOp::attachInterface<GlobalAvgPoolVJP>(*context);
}
