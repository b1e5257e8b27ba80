//===- ElementwiseVJP.cpp - Gradients of elementwise ops --------*- C++ -*-===//
//
// One derivative rule per op, written against the op's input `x`, result
// `y` and incoming gradient `g`; the models around them handle
// broadcasting (binary ops) and null gradients. At kinks (relu, abs, max)
// the rules take PyTorch's choices.
//
//===----------------------------------------------------------------------===//

#include "VJPUtils.h"

#include "gs/Dialect/GS/IR/GSOps.h"

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::vjp;

namespace {
/// Shorthands for the ops the rules build.
struct Rules {
  OpBuilder &b;
  Location loc;

  Value c(Value like, double value) {
    return scalar(b, loc, typeOf(like).getElementType(), value);
  }
  Value mul(Value x, Value y) { return MulOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return DivOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return SubOp::create(b, loc, x, y); }
  Value neg(Value x) { return NegOp::create(b, loc, x); }
  Value cmp(ComparePredicate predicate, Value x, Value y) {
    return CompareOp::create(b, loc, predicate, x, y);
  }
  Value where(Value mask, Value x, Value y) {
    return WhereOp::create(b, loc, mask, x, y);
  }

  // d/dx of unary ops, times g.
  Value unary(NegOp, Value, Value, Value g) { return neg(g); }
  Value unary(AbsOp, Value x, Value, Value g) {
    Value zero = c(x, 0);
    Value positive = cmp(ComparePredicate::gt, x, zero);
    Value negative = cmp(ComparePredicate::lt, x, zero);
    return where(positive, g, where(negative, neg(g), zero));
  }
  Value unary(ReluOp, Value x, Value, Value g) {
    return selectOrZero(b, loc, cmp(ComparePredicate::gt, x, c(x, 0)), g);
  }
  Value unary(LeakyReluOp op, Value x, Value, Value g) {
    Value alpha = c(x, op.getAlpha().convertToDouble());
    Value positive = cmp(ComparePredicate::gt, x, c(x, 0));
    return where(positive, g, mul(g, alpha));
  }
  Value unary(SigmoidOp, Value, Value y, Value g) {
    return mul(g, mul(y, sub(c(y, 1), y)));
  }
  Value unary(TanhOp, Value, Value y, Value g) {
    Value square = mul(y, y);
    return mul(g, sub(c(y, 1), square));
  }
  Value unary(ExpOp, Value, Value y, Value g) { return mul(g, y); }
  Value unary(LogOp, Value x, Value, Value g) { return div(g, x); }
  Value unary(SqrtOp, Value, Value y, Value g) {
    return div(mul(g, c(y, 0.5)), y);
  }
  Value unary(ErfOp, Value x, Value, Value g) {
    constexpr double twoOverSqrtPi = 1.12837916709551257390;
    Value gauss = ExpOp::create(b, loc, neg(mul(x, x)));
    return mul(g, mul(gauss, c(x, twoOverSqrtPi)));
  }

  // (d/dx, d/dy) of binary ops, times g, at the result's shape.
  std::pair<Value, Value> binary(AddOp, Value, Value, Value, Value g) {
    return {g, g};
  }
  std::pair<Value, Value> binary(SubOp, Value, Value, Value, Value g) {
    return {g, neg(g)};
  }
  std::pair<Value, Value> binary(MulOp, Value x, Value y, Value, Value g) {
    return {mul(g, y), mul(g, x)};
  }
  std::pair<Value, Value> binary(DivOp, Value, Value y, Value z, Value g) {
    Value gx = div(g, y);
    return {gx, neg(mul(gx, z))};
  }
  std::pair<Value, Value> binary(MaxOp, Value x, Value y, Value, Value g) {
    return toWinner(ComparePredicate::ge, x, y, g);
  }
  std::pair<Value, Value> binary(MinOp, Value x, Value y, Value, Value g) {
    return toWinner(ComparePredicate::le, x, y, g);
  }
  /// Max and min: g goes to x where `xWins` holds (ties included), else to y.
  std::pair<Value, Value> toWinner(ComparePredicate xWins, Value x, Value y,
                                   Value g) {
    Value mask = cmp(xWins, x, y), zero = c(g, 0);
    return {where(mask, g, zero), where(mask, zero, g)};
  }
  std::pair<Value, Value> binary(PowOp, Value x, Value y, Value z, Value g) {
    // d/dx x^y = y x^(y-1); d/dy x^y = x^y log x.
    Value dx = mul(y, PowOp::create(b, loc, x, sub(y, c(y, 1))));
    Value dy = mul(z, LogOp::create(b, loc, x));
    return {mul(g, dx), mul(g, dy)};
  }
};

template <typename OpTy>
struct UnaryVJP
    : DifferentiableOpInterface::ExternalModel<UnaryVJP<OpTy>, OpTy> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    auto unary = cast<OpTy>(op);
    Rules rules{b, op->getLoc()};
    operandGradients.push_back(
        rules.unary(unary, unary.getInput(), unary.getResult(), gradients[0]));
    return success();
  }
};

template <typename OpTy>
struct BinaryVJP
    : DifferentiableOpInterface::ExternalModel<BinaryVJP<OpTy>, OpTy> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    auto binary = cast<OpTy>(op);
    Location loc = op->getLoc();
    Rules rules{b, loc};
    auto [gx, gy] = rules.binary(binary, binary.getLhs(), binary.getRhs(),
                                 binary.getResult(), gradients[0]);
    operandGradients.push_back(
        unbroadcast(b, loc, gx, typeOf(binary.getLhs())));
    operandGradients.push_back(
        unbroadcast(b, loc, gy, typeOf(binary.getRhs())));
    return success();
  }
};

/// Every input of a sum gets the sum's gradient.
struct AddNVJP : DifferentiableOpInterface::ExternalModel<AddNVJP, AddNOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    operandGradients.assign(op->getNumOperands(), gradients[0]);
    return success();
  }
};

/// The gradient flows back through the cast, in the input's precision.
struct CastVJP : DifferentiableOpInterface::ExternalModel<CastVJP, CastOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    Value input = cast<CastOp>(op).getInput();
    operandGradients.push_back(
        isDifferentiable(input)
            ? castLike(b, op->getLoc(), gradients[0], typeOf(input))
            : Value());
    return success();
  }
};

/// Kept elements pass their gradient scaled like the forward values,
/// through the forward pass's mask.
struct DropoutVJP
    : DifferentiableOpInterface::ExternalModel<DropoutVJP, DropoutOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    auto dropout = cast<DropoutOp>(op);
    Value g = gradients[0];
    double ratio = dropout.getRatio().convertToDouble();
    if (g && dropout.getTraining() && ratio != 0.0) {
      Location loc = op->getLoc();
      Rules rules{b, loc};
      g = selectOrZero(b, loc, dropout.getMask(),
                       rules.mul(g, rules.c(g, 1.0 / (1.0 - ratio))));
    }
    operandGradients.push_back(g);
    if (dropout.getOffset())
      operandGradients.push_back(Value());
    return success();
  }
};

/// Where: the gradient goes to the branch each element took.
struct WhereVJP : DifferentiableOpInterface::ExternalModel<WhereVJP, WhereOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    auto where = cast<WhereOp>(op);
    Location loc = op->getLoc();
    Rules rules{b, loc};
    Value g = gradients[0], zero = rules.c(g, 0);
    operandGradients.push_back(Value());
    for (auto [value, taken] :
         {std::pair{where.getX(), rules.where(where.getCondition(), g, zero)},
          std::pair{where.getY(), rules.where(where.getCondition(), zero, g)}})
      operandGradients.push_back(isDifferentiable(value)
                                     ? unbroadcast(b, loc, taken, typeOf(value))
                                     : Value());
    return success();
  }
};
} // namespace

void mlir::gs::registerElementwiseVJPs(MLIRContext *context) {
  NegOp::attachInterface<UnaryVJP<NegOp>>(*context);
  AbsOp::attachInterface<UnaryVJP<AbsOp>>(*context);
  ReluOp::attachInterface<UnaryVJP<ReluOp>>(*context);
  LeakyReluOp::attachInterface<UnaryVJP<LeakyReluOp>>(*context);
  SigmoidOp::attachInterface<UnaryVJP<SigmoidOp>>(*context);
  TanhOp::attachInterface<UnaryVJP<TanhOp>>(*context);
  ExpOp::attachInterface<UnaryVJP<ExpOp>>(*context);
  LogOp::attachInterface<UnaryVJP<LogOp>>(*context);
  SqrtOp::attachInterface<UnaryVJP<SqrtOp>>(*context);
  ErfOp::attachInterface<UnaryVJP<ErfOp>>(*context);
  AddOp::attachInterface<BinaryVJP<AddOp>>(*context);
  SubOp::attachInterface<BinaryVJP<SubOp>>(*context);
  MulOp::attachInterface<BinaryVJP<MulOp>>(*context);
  DivOp::attachInterface<BinaryVJP<DivOp>>(*context);
  MaxOp::attachInterface<BinaryVJP<MaxOp>>(*context);
  MinOp::attachInterface<BinaryVJP<MinOp>>(*context);
  PowOp::attachInterface<BinaryVJP<PowOp>>(*context);
  AddNOp::attachInterface<AddNVJP>(*context);
  CastOp::attachInterface<CastVJP>(*context);
  DropoutOp::attachInterface<DropoutVJP>(*context);
  WhereOp::attachInterface<WhereVJP>(*context);
}
