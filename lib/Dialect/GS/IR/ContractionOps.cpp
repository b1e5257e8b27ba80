//===- ContractionOps.cpp - gemm, matmul, conv, conv_transpose -*- C++ -*-===//

#include "OpUtils.h"
#include "gs/Dialect/GS/IR/GSOps.h"
#include "gs/Dialect/GS/IR/ShapeUtils.h"

using namespace mlir;
using namespace mlir::gs;

/// Checks the input and weight ranks of a convolution-like op and returns
/// the number of spatial dimensions.
template <typename OpTy>
static FailureOr<int64_t> checkConvRanks(std::optional<Location> loc,
                                         ArrayRef<int64_t> input,
                                         ArrayRef<int64_t> weight) {
  if (input.size() < 3 || input.size() > 5)
    return inferError<OpTy>(
        loc, "expects an input of rank 3 to 5 (N x C x 1-3 spatial dims), got ",
        formatShape(input));
  if (weight.size() != input.size())
    return inferError<OpTy>(loc, "expects a weight of the input's rank ",
                            input.size(), ", got ", formatShape(weight));
  return static_cast<int64_t>(input.size()) - 2;
}

template <typename OpTy>
static LogicalResult checkBias(std::optional<Location> loc, Value bias,
                               int64_t channels) {
  if (bias && shapeOf(bias) != ArrayRef<int64_t>{channels})
    return inferError<OpTy>(loc, "expects a bias of shape ", channels, ", got ",
                            formatShape(shapeOf(bias)));
  return success();
}

/// Shared element-type rules of contraction ops: float operands of one
/// type; a bias of the result element type.
static LogicalResult verifyContractionElementTypes(Operation *op, Value lhs,
                                                   Value rhs, Value bias) {
  if (elementTypeOf(lhs) != elementTypeOf(rhs))
    return op->emitOpError("expects operands of one element type, got ")
           << elementTypeOf(lhs) << " and " << elementTypeOf(rhs);
  Type resultElement =
      cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
  if (bias && elementTypeOf(bias) != resultElement)
    return op->emitOpError("expects a bias of the result element type ")
           << resultElement << ", got " << elementTypeOf(bias);
  return success();
}

//===----------------------------------------------------------------------===//
// GemmOp
//===----------------------------------------------------------------------===//

LogicalResult GemmOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> a = shapeOf(adaptor.getA());
  ArrayRef<int64_t> b = shapeOf(adaptor.getB());
  if (a.size() != 2 || b.size() != 2)
    return inferError<GemmOp>(loc, "expects 2-D operands a and b, got ",
                              formatShape(a), " and ", formatShape(b));
  int64_t m = adaptor.getTransA() ? a[1] : a[0];
  int64_t k = adaptor.getTransA() ? a[0] : a[1];
  int64_t kb = adaptor.getTransB() ? b[1] : b[0];
  int64_t n = adaptor.getTransB() ? b[0] : b[1];
  if (k != kb)
    return inferError<GemmOp>(loc, "contraction dimensions disagree: op(a) is ",
                              m, "x", k, " and op(b) is ", kb, "x", n);
  if (Value c = adaptor.getC(); c && !isBroadcastableTo(shapeOf(c), {m, n}))
    return inferError<GemmOp>(loc, "expects c to broadcast to ", m, "x", n,
                              ", got ", formatShape(shapeOf(c)));
  types.push_back(RankedTensorType::get({m, n}, elementTypeOf(adaptor.getA())));
  return success();
}

bool GemmOp::isCompatibleReturnTypes(TypeRange inferred, TypeRange actual) {
  return isCompatibleContractionResult(inferred, actual);
}

LogicalResult GemmOp::verify() {
  if (failed(verifyByInference(*this)))
    return failure();
  return verifyContractionElementTypes(*this, getA(), getB(), getC());
}

//===----------------------------------------------------------------------===//
// MatMulOp
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> lhs = shapeOf(adaptor.getLhs());
  ArrayRef<int64_t> rhs = shapeOf(adaptor.getRhs());
  if (lhs.empty() || rhs.empty())
    return inferError<MatMulOp>(loc, "expects operands of rank >= 1");
  // NumPy promotes 1-D operands to matrices and drops the added dimension.
  SmallVector<int64_t> l(lhs), r(rhs);
  bool lhsVector = l.size() == 1, rhsVector = r.size() == 1;
  if (lhsVector)
    l.insert(l.begin(), 1);
  if (rhsVector)
    r.push_back(1);
  int64_t k = l.back(), kr = r[r.size() - 2];
  if (k != kr)
    return inferError<MatMulOp>(loc, "contraction dimensions disagree: lhs ",
                                formatShape(lhs), " and rhs ",
                                formatShape(rhs));
  std::optional<SmallVector<int64_t>> shape = broadcastShapes(
      ArrayRef<int64_t>(l).drop_back(2), ArrayRef<int64_t>(r).drop_back(2));
  if (!shape)
    return inferError<MatMulOp>(loc, "batch dimensions do not broadcast: lhs ",
                                formatShape(lhs), " and rhs ",
                                formatShape(rhs));
  if (!lhsVector)
    shape->push_back(l[l.size() - 2]);
  if (!rhsVector)
    shape->push_back(r.back());
  types.push_back(
      RankedTensorType::get(*shape, elementTypeOf(adaptor.getLhs())));
  return success();
}

bool MatMulOp::isCompatibleReturnTypes(TypeRange inferred, TypeRange actual) {
  return isCompatibleContractionResult(inferred, actual);
}

LogicalResult MatMulOp::verify() {
  if (failed(verifyByInference(*this)))
    return failure();
  return verifyContractionElementTypes(*this, getLhs(), getRhs(), Value());
}

//===----------------------------------------------------------------------===//
// ConvOp
//===----------------------------------------------------------------------===//

WindowGeometry ConvOp::getGeometry() {
  return makeGeometry(getInput().getType().getRank() - 2, orEmpty(getStrides()),
                      orEmpty(getPads()), orEmpty(getDilations()));
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> input = shapeOf(adaptor.getInput());
  ArrayRef<int64_t> weight = shapeOf(adaptor.getWeight());
  FailureOr<int64_t> spatialRank = checkConvRanks<ConvOp>(loc, input, weight);
  if (failed(spatialRank))
    return failure();
  FailureOr<WindowGeometry> g = resolveGeometry<ConvOp>(
      loc, *spatialRank, orEmpty(adaptor.getStrides()),
      orEmpty(adaptor.getPads()), orEmpty(adaptor.getDilations()));
  if (failed(g))
    return failure();
  int64_t group = adaptor.getGroup();
  if (group < 1)
    return inferError<ConvOp>(loc, "expects group >= 1, got ", group);
  if (input[1] != weight[1] * group)
    return inferError<ConvOp>(loc, "input channels (", input[1],
                              ") must equal weight dimension 1 (", weight[1],
                              ") times group (", group, ")");
  if (weight[0] % group != 0)
    return inferError<ConvOp>(loc, "output channels (", weight[0],
                              ") must be a multiple of group (", group, ")");
  if (failed(checkBias<ConvOp>(loc, adaptor.getBias(), weight[0])))
    return failure();
  SmallVector<int64_t> shape = {input[0], weight[0]};
  for (int64_t i = 0; i < *spatialRank; ++i) {
    int64_t size =
        windowOutputSize(input[i + 2], weight[i + 2], g->strides[i],
                         g->padsBegin[i], g->padsEnd[i], g->dilations[i]);
    if (size < 1)
      return inferError<ConvOp>(
          loc, "dilated kernel (",
          dilatedKernelSize(weight[i + 2], g->dilations[i]),
          ") exceeds the input (", input[i + 2], ") padded by (",
          g->padsBegin[i], ", ", g->padsEnd[i], ") in spatial dimension ", i);
    shape.push_back(size);
  }
  types.push_back(
      RankedTensorType::get(shape, elementTypeOf(adaptor.getInput())));
  return success();
}

bool ConvOp::isCompatibleReturnTypes(TypeRange inferred, TypeRange actual) {
  return isCompatibleContractionResult(inferred, actual);
}

LogicalResult ConvOp::verify() {
  if (failed(verifyByInference(*this)))
    return failure();
  return verifyContractionElementTypes(*this, getInput(), getWeight(),
                                       getBias());
}

//===----------------------------------------------------------------------===//
// ConvTransposeOp
//===----------------------------------------------------------------------===//

WindowGeometry ConvTransposeOp::getGeometry() {
  return makeGeometry(getInput().getType().getRank() - 2, orEmpty(getStrides()),
                      orEmpty(getPads()), orEmpty(getDilations()));
}

LogicalResult ConvTransposeOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> input = shapeOf(adaptor.getInput());
  ArrayRef<int64_t> weight = shapeOf(adaptor.getWeight());
  FailureOr<int64_t> spatialRank =
      checkConvRanks<ConvTransposeOp>(loc, input, weight);
  if (failed(spatialRank))
    return failure();
  FailureOr<WindowGeometry> g = resolveGeometry<ConvTransposeOp>(
      loc, *spatialRank, orEmpty(adaptor.getStrides()),
      orEmpty(adaptor.getPads()), orEmpty(adaptor.getDilations()));
  if (failed(g))
    return failure();
  ArrayRef<int64_t> outputPadding = orEmpty(adaptor.getOutputPadding());
  if (!outputPadding.empty() &&
      static_cast<int64_t>(outputPadding.size()) != *spatialRank)
    return inferError<ConvTransposeOp>(loc, "expects ", *spatialRank,
                                       " 'output_padding' values, got ",
                                       outputPadding.size());
  int64_t group = adaptor.getGroup();
  if (group < 1)
    return inferError<ConvTransposeOp>(loc, "expects group >= 1, got ", group);
  if (input[1] != weight[0])
    return inferError<ConvTransposeOp>(loc, "input channels (", input[1],
                                       ") must equal weight dimension 0 (",
                                       weight[0], ")");
  if (input[1] % group != 0)
    return inferError<ConvTransposeOp>(loc, "input channels (", input[1],
                                       ") must be a multiple of group (", group,
                                       ")");
  int64_t outChannels = weight[1] * group;
  if (failed(checkBias<ConvTransposeOp>(loc, adaptor.getBias(), outChannels)))
    return failure();
  SmallVector<int64_t> shape = {input[0], outChannels};
  for (int64_t i = 0; i < *spatialRank; ++i) {
    int64_t extra = outputPadding.empty() ? 0 : outputPadding[i];
    if (extra < 0 || extra >= std::max(g->strides[i], g->dilations[i]))
      return inferError<ConvTransposeOp>(
          loc, "output_padding ", extra,
          " must be >= 0 and smaller than the stride or the dilation");
    int64_t size = transposedWindowOutputSize(
        input[i + 2], weight[i + 2], g->strides[i], g->padsBegin[i],
        g->padsEnd[i], g->dilations[i], extra);
    if (size < 1)
      return inferError<ConvTransposeOp>(
          loc, "pads leave no output in spatial dimension ", i);
    shape.push_back(size);
  }
  types.push_back(
      RankedTensorType::get(shape, elementTypeOf(adaptor.getInput())));
  return success();
}

bool ConvTransposeOp::isCompatibleReturnTypes(TypeRange inferred,
                                              TypeRange actual) {
  return isCompatibleContractionResult(inferred, actual);
}

LogicalResult ConvTransposeOp::verify() {
  if (failed(verifyByInference(*this)))
    return failure();
  return verifyContractionElementTypes(*this, getInput(), getWeight(),
                                       getBias());
}
