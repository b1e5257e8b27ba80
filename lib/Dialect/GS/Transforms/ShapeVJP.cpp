//===- ShapeVJP.cpp - Gradients of shape ops, reductions, softmax -*- C++ -*-=//

#include "VJPUtils.h"

#include "gs/Dialect/GS/IR/GSOps.h"

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::vjp;

namespace {
/// Ops that only rearrange elements row-major (reshape, flatten, squeeze,
/// unsqueeze): the gradient is reshaped back.
template <typename OpTy>
struct ReshapeLikeVJP
    : DifferentiableOpInterface::ExternalModel<ReshapeLikeVJP<OpTy>, OpTy> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    operandGradients.push_back(
        reshape(b, op->getLoc(), gradients[0], typeOf(op->getOperand(0))));
    return success();
  }
};

/// Expand broadcasts: the gradient is summed back.
struct ExpandVJP
    : DifferentiableOpInterface::ExternalModel<ExpandVJP, ExpandOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    operandGradients.push_back(
        unbroadcast(b, op->getLoc(), gradients[0], typeOf(op->getOperand(0))));
    return success();
  }
};

/// Transposes back with the inverse permutation.
struct TransposeVJP
    : DifferentiableOpInterface::ExternalModel<TransposeVJP, TransposeOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    ArrayRef<int64_t> permutation = cast<TransposeOp>(op).getPermutation();
    SmallVector<int64_t> inverse(permutation.size());
    for (auto [i, p] : llvm::enumerate(permutation))
      inverse[p] = i;
    operandGradients.push_back(
        TransposeOp::create(b, op->getLoc(), gradients[0], inverse));
    return success();
  }
};

/// Each input gets its slice of the gradient along the axis.
struct ConcatVJP
    : DifferentiableOpInterface::ExternalModel<ConcatVJP, ConcatOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    auto concat = cast<ConcatOp>(op);
    int64_t axis = concat.getAxis();
    RankedTensorType resultType = typeOf(concat.getResult());
    SmallVector<int64_t> starts(resultType.getRank(), 0);
    SmallVector<int64_t> ends(resultType.getShape());
    SmallVector<int64_t> steps(resultType.getRank(), 1);
    for (Value input : concat.getInputs()) {
      ends[axis] = starts[axis] + typeOf(input).getDimSize(axis);
      operandGradients.push_back(isDifferentiable(input)
                                     ? SliceOp::create(b, op->getLoc(),
                                                       gradients[0], starts,
                                                       ends, steps)
                                           .getResult()
                                     : Value());
      starts[axis] = ends[axis];
    }
    return success();
  }
};

/// The pieces' gradients joined again; zeros for pieces without one.
struct SplitVJP : DifferentiableOpInterface::ExternalModel<SplitVJP, SplitOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    auto split = cast<SplitOp>(op);
    SmallVector<Value> pieces;
    for (auto [result, gradient] : llvm::zip(split.getResults(), gradients))
      pieces.push_back(gradient ? gradient
                                : splat(b, op->getLoc(), typeOf(result), 0.0));
    operandGradients.push_back(
        ConcatOp::create(b, op->getLoc(), pieces, split.getAxis()));
    return success();
  }
};

/// The reduced axes of a reduction (all of them when `axes` is empty).
SmallVector<int64_t> reducedAxes(ArrayRef<int64_t> axes, int64_t rank) {
  if (!axes.empty())
    return SmallVector<int64_t>(axes);
  return llvm::to_vector(llvm::seq<int64_t>(0, rank));
}

/// Sum: the gradient broadcast back; mean: divided by the count; max: to
/// the elements equal to the maximum.
template <typename OpTy>
struct ReduceVJP
    : DifferentiableOpInterface::ExternalModel<ReduceVJP<OpTy>, OpTy> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    auto reduce = cast<OpTy>(op);
    Location loc = op->getLoc();
    RankedTensorType inputType = typeOf(reduce.getInput());
    SmallVector<int64_t> axes =
        reducedAxes(reduce.getAxes(), inputType.getRank());
    Value g = expandReduced(b, loc, gradients[0], inputType, axes);
    Type element = inputType.getElementType();
    if constexpr (std::is_same_v<OpTy, ReduceMeanOp>) {
      int64_t count = 1;
      for (int64_t axis : axes)
        count *= inputType.getDimSize(axis);
      g = MulOp::create(b, loc, g, scalar(b, loc, element, 1.0 / count));
    } else if constexpr (std::is_same_v<OpTy, ReduceMaxOp>) {
      Value max = expandReduced(b, loc, reduce.getResult(), inputType, axes);
      Value isMax = CompareOp::create(b, loc, ComparePredicate::eq,
                                      reduce.getInput(), max);
      g = selectOrZero(b, loc, isMax, g);
    }
    operandGradients.push_back(g);
    return success();
  }
};

/// y = softmax(x): dx = y * (g - sum(g * y)) along the axis.
struct SoftmaxVJP
    : DifferentiableOpInterface::ExternalModel<SoftmaxVJP, SoftmaxOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    auto softmax = cast<SoftmaxOp>(op);
    Location loc = op->getLoc();
    Value y = softmax.getResult(), g = gradients[0];
    int64_t axis = softmax.getAxis();
    Value gy = MulOp::create(b, loc, g, y);
    Value dot = ReduceSumOp::create(b, loc, gy, ArrayRef<int64_t>{axis},
                                    /*keepdims=*/true);
    operandGradients.push_back(
        MulOp::create(b, loc, y, SubOp::create(b, loc, g, dot)));
    return success();
  }
};

/// y = log_softmax(x): dx = g - exp(y) * sum(g) along the axis.
struct LogSoftmaxVJP
    : DifferentiableOpInterface::ExternalModel<LogSoftmaxVJP, LogSoftmaxOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    auto logSoftmax = cast<LogSoftmaxOp>(op);
    Location loc = op->getLoc();
    Value g = gradients[0];
    Value sum = ReduceSumOp::create(
        b, loc, g,
        ArrayRef<int64_t>{static_cast<int64_t>(logSoftmax.getAxis())},
        /*keepdims=*/true);
    Value softmax = ExpOp::create(b, loc, logSoftmax.getResult());
    operandGradients.push_back(
        SubOp::create(b, loc, g, MulOp::create(b, loc, softmax, sum)));
    return success();
  }
};
} // namespace

void mlir::gs::registerShapeVJPs(MLIRContext *context) {
  ReshapeOp::attachInterface<ReshapeLikeVJP<ReshapeOp>>(*context);
  FlattenOp::attachInterface<ReshapeLikeVJP<FlattenOp>>(*context);
  SqueezeOp::attachInterface<ReshapeLikeVJP<SqueezeOp>>(*context);
  UnsqueezeOp::attachInterface<ReshapeLikeVJP<UnsqueezeOp>>(*context);
  ExpandOp::attachInterface<ExpandVJP>(*context);
  TransposeOp::attachInterface<TransposeVJP>(*context);
  ConcatOp::attachInterface<ConcatVJP>(*context);
  SplitOp::attachInterface<SplitVJP>(*context);
  ReduceSumOp::attachInterface<ReduceVJP<ReduceSumOp>>(*context);
  ReduceMeanOp::attachInterface<ReduceVJP<ReduceMeanOp>>(*context);
  ReduceMaxOp::attachInterface<ReduceVJP<ReduceMaxOp>>(*context);
  SoftmaxOp::attachInterface<SoftmaxVJP>(*context);
  LogSoftmaxOp::attachInterface<LogSoftmaxVJP>(*context);
}
