//===- ElementwiseImporters.cpp - Elementwise ONNX operators ---*- C++ -*-===//
//
// Unary and binary math, comparisons and logic, Where, Identity, Cast,
// Constant and Dropout.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"
#include "TensorData.h"

#include "gs/Dialect/GS/IR/ShapeUtils.h"

#include <limits>

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::onnx_import;

/// One gs op with the node's inferred result type on the node's operands.
template <typename OpTy> static LogicalResult importSimple(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> operands = ctx.inputs();
  FailureOr<RankedTensorType> type = ctx.outputType(0);
  if (failed(operands) || failed(type))
    return failure();
  FailureOr<OpTy> op =
      ctx.create<OpTy>(TypeRange{*type}, ValueRange(*operands));
  if (failed(op))
    return failure();
  ctx.setOutput(0, *op);
  return success();
}

static LogicalResult importLeakyRelu(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  return ctx.createAsOutput<LeakyReluOp>(
      *x, APFloat(ctx.floatAttr("alpha", 0.01f)));
}

/// Clip: min(max(x, low), high), either bound optional. Ties go to x (as
/// gs.max and gs.min give them), so the gradient passes at the bounds, as
/// torch.clamp's does.
static LogicalResult clip(NodeContext &ctx, Value x, Value low, Value high) {
  auto type = cast<RankedTensorType>(x.getType());
  Value result = x;
  if (low) {
    FailureOr<MaxOp> op = ctx.create<MaxOp>(type, result, low);
    if (failed(op))
      return failure();
    result = *op;
  }
  if (high) {
    FailureOr<MinOp> op = ctx.create<MinOp>(type, result, high);
    if (failed(op))
      return failure();
    result = *op;
  }
  ctx.setOutput(0, result);
  return success();
}

/// Clip up to opset 10: float bounds as attributes.
static LogicalResult importClipAttributes(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  auto scalarType = RankedTensorType::get(
      {}, cast<RankedTensorType>(x->getType()).getElementType());
  float lowest = std::numeric_limits<float>::lowest();
  float highest = std::numeric_limits<float>::max();
  // Named one by one: argument evaluation order is unspecified.
  Value low = ctx.splatConstant(scalarType, ctx.floatAttr("min", lowest));
  Value high = ctx.splatConstant(scalarType, ctx.floatAttr("max", highest));
  return clip(ctx, *x, low, high);
}

/// Clip from opset 11: optional scalar inputs of x's type.
static LogicalResult importClip(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  Value bounds[2];
  for (unsigned i : {1u, 2u}) {
    if (!ctx.hasInput(i))
      continue;
    FailureOr<Value> bound = ctx.input(i);
    if (failed(bound))
      return failure();
    if (cast<RankedTensorType>(bound->getType()).getRank() != 0)
      return ctx.emitError() << (i == 1 ? "min" : "max")
                             << " must be a scalar, not "
                             << bound->getType();
    bounds[i - 1] = *bound;
  }
  return clip(ctx, *x, bounds[0], bounds[1]);
}

/// Max, Min and Sum take any number of broadcasting operands: a chain of
/// binary ops, each with the broadcast shape of what it has seen so far.
template <typename OpTy> static LogicalResult importVariadic(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> operands = ctx.inputs();
  if (failed(operands))
    return failure();
  if (operands->empty())
    return ctx.emitError() << "needs at least one input";
  Value result = operands->front();
  for (Value next : ArrayRef<Value>(*operands).drop_front()) {
    auto lhs = cast<RankedTensorType>(result.getType());
    auto rhs = cast<RankedTensorType>(next.getType());
    std::optional<SmallVector<int64_t>> shape =
        broadcastShapes(lhs.getShape(), rhs.getShape());
    if (!shape)
      return ctx.emitError() << "inputs of types " << lhs << " and " << rhs
                             << " do not broadcast";
    FailureOr<OpTy> op = ctx.create<OpTy>(lhs.clone(*shape), result, next);
    if (failed(op))
      return failure();
    result = *op;
  }
  ctx.setOutput(0, result);
  return success();
}

/// Pow allows an exponent of another type than the base (opset 12).
static LogicalResult importPow(NodeContext &ctx) {
  FailureOr<Value> base = ctx.input(0);
  FailureOr<Value> exponent = ctx.input(1);
  FailureOr<RankedTensorType> type = ctx.outputType(0);
  if (failed(base) || failed(exponent) || failed(type))
    return failure();
  auto exponentType = cast<RankedTensorType>(exponent->getType());
  Type baseElement = type->getElementType();
  if (exponentType.getElementType() != baseElement) {
    FailureOr<CastOp> cast =
        ctx.create<CastOp>(exponentType.clone(baseElement), *exponent);
    if (failed(cast))
      return failure();
    *exponent = *cast;
  }
  return ctx.createAsOutput<PowOp>(*base, *exponent);
}

/// 1 / x.
static LogicalResult importReciprocal(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  FailureOr<RankedTensorType> type = ctx.outputType(0);
  if (failed(x) || failed(type))
    return failure();
  Value one =
      ctx.splatConstant(RankedTensorType::get({}, type->getElementType()), 1.0);
  return ctx.createAsOutput<DivOp>(one, *x);
}

template <ComparePredicate predicate>
static LogicalResult importCompare(NodeContext &ctx) {
  FailureOr<Value> lhs = ctx.input(0);
  FailureOr<Value> rhs = ctx.input(1);
  if (failed(lhs) || failed(rhs))
    return failure();
  return ctx.createAsOutput<CompareOp>(predicate, *lhs, *rhs);
}

static LogicalResult importWhere(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> operands = ctx.inputs();
  if (failed(operands))
    return failure();
  return ctx.createAsOutput<WhereOp>((*operands)[0], (*operands)[1],
                                     (*operands)[2]);
}

static LogicalResult importIdentity(NodeContext &ctx) {
  if (DenseElementsAttr value = ctx.constantInput(0)) {
    ctx.setConstantOutput(0, value);
    return success();
  }
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  ctx.setOutput(0, *x);
  return success();
}

static LogicalResult importCast(NodeContext &ctx) {
  int64_t to = ctx.intAttr("to", 0);
  if (!convertElementType(ctx.getContext(), to))
    return ctx.emitError() << "cast to " << elementTypeName(to)
                           << " is not supported";
  return importSimple<CastOp>(ctx);
}

/// CastLike: a Cast to the element type of the second input, which the
/// node's inferred output type carries.
static LogicalResult importCastLike(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  return ctx.createAsOutput<CastOp>(*x);
}

/// Constant values are kept as attributes; they become gs.constant ops
/// where something uses them as a value.
static LogicalResult importConstant(NodeContext &ctx) {
  if (ctx.node.attribute_size() != 1)
    return ctx.emitError() << "expects exactly one value attribute";
  const onnx::AttributeProto &attr = ctx.node.attribute(0);
  Builder b(ctx.getContext());
  StringRef name = attr.name();
  if (name == "value") {
    onnx::TensorProto tensor = attr.t();
    std::string error;
    ElementsAttr value = convertTensor(ctx.getContext(), tensor,
                                       ctx.graph().model.modelDir, error);
    if (!value)
      return ctx.emitError() << error;
    ctx.setConstantOutput(0, value);
    return success();
  }
  if (name == "value_float" || name == "value_int") {
    auto type = RankedTensorType::get(
        {}, name == "value_float" ? Type(b.getF32Type()) : b.getI64Type());
    Attribute element = name == "value_float"
                            ? Attribute(b.getF32FloatAttr(attr.f()))
                            : Attribute(b.getI64IntegerAttr(attr.i()));
    ctx.setConstantOutput(0, DenseElementsAttr::get(type, element));
    return success();
  }
  if (name == "value_floats") {
    SmallVector<float> values(attr.floats().begin(), attr.floats().end());
    auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                      b.getF32Type());
    ctx.setConstantOutput(0, DenseElementsAttr::get(type, ArrayRef(values)));
    return success();
  }
  if (name == "value_ints") {
    SmallVector<int64_t> values(attr.ints().begin(), attr.ints().end());
    auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                      b.getI64Type());
    ctx.setConstantOutput(0, DenseElementsAttr::get(type, ArrayRef(values)));
    return success();
  }
  return ctx.emitError() << "constant attribute '" << name
                         << "' is not supported";
}

/// Dropout before opset 12: the ratio is an attribute and there is no
/// training mode.
static LogicalResult importDropoutLegacy(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  FailureOr<RankedTensorType> type = ctx.outputType(0);
  if (failed(x) || failed(type))
    return failure();
  ctx.setOutput(0, *x);
  if (ctx.hasOutput(1)) {
    auto maskType = type->clone(IntegerType::get(ctx.getContext(), 1));
    ctx.setOutput(1, ctx.constant(DenseElementsAttr::get(maskType, true)));
  }
  return success();
}

/// Dropout from opset 12: ratio and training mode are optional inputs.
static LogicalResult importDropout(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  FailureOr<RankedTensorType> type = ctx.outputType(0);
  if (failed(x) || failed(type))
    return failure();
  double ratio = 0.5;
  if (ctx.hasInput(1)) {
    FailureOr<double> value = ctx.scalarInput(1, "ratio");
    if (failed(value))
      return failure();
    ratio = *value;
  }
  bool training = false;
  if (ctx.hasInput(2)) {
    FailureOr<double> value = ctx.scalarInput(2, "training_mode");
    if (failed(value))
      return failure();
    training = *value != 0;
  }
  Builder b(ctx.getContext());
  auto maskType = type->clone(b.getI1Type());
  FailureOr<DropoutOp> op = ctx.create<DropoutOp>(
      TypeRange{*type, maskType}, *x, /*offset=*/Value(),
      b.getF32FloatAttr(ratio), b.getI64IntegerAttr(ctx.intAttr("seed", 0)),
      training ? b.getUnitAttr() : UnitAttr());
  if (failed(op))
    return failure();
  ctx.setOutputs(op->getResults());
  return success();
}

ArrayRef<OpImporter> onnx_import::getElementwiseImporters() {
  static const OpImporter importers[] = {
      {"", "Relu", 6, importSimple<ReluOp>},
      {"", "Sigmoid", 6, importSimple<SigmoidOp>},
      {"", "Tanh", 6, importSimple<TanhOp>},
      {"", "Exp", 6, importSimple<ExpOp>},
      {"", "Log", 6, importSimple<LogOp>},
      {"", "Sqrt", 6, importSimple<SqrtOp>},
      {"", "Neg", 6, importSimple<NegOp>},
      {"", "Abs", 6, importSimple<AbsOp>},
      {"", "Erf", 9, importSimple<ErfOp>},
      {"", "Reciprocal", 6, importReciprocal},
      {"", "LeakyRelu", 6, importLeakyRelu},
      {"", "Clip", 6, importClipAttributes},
      {"", "Clip", 11, importClip},
      {"", "Add", 7, importSimple<AddOp>},
      {"", "Sub", 7, importSimple<SubOp>},
      {"", "Mul", 7, importSimple<MulOp>},
      {"", "Div", 7, importSimple<DivOp>},
      {"", "Pow", 7, importPow},
      {"", "Max", 8, importVariadic<MaxOp>},
      {"", "Min", 8, importVariadic<MinOp>},
      {"", "Sum", 8, importVariadic<AddOp>},
      {"", "Equal", 7, importCompare<ComparePredicate::eq>},
      {"", "Less", 7, importCompare<ComparePredicate::lt>},
      {"", "LessOrEqual", 12, importCompare<ComparePredicate::le>},
      {"", "Greater", 7, importCompare<ComparePredicate::gt>},
      {"", "GreaterOrEqual", 12, importCompare<ComparePredicate::ge>},
      {"", "Where", 9, importWhere},
      {"", "And", 7, importSimple<AndOp>},
      {"", "Or", 7, importSimple<OrOp>},
      {"", "Xor", 7, importSimple<XorOp>},
      {"", "Not", 1, importSimple<NotOp>},
      {"", "Identity", 1, importIdentity},
      {"", "Cast", 6, importCast},
      {"", "CastLike", 15, importCastLike},
      {"", "Constant", 1, importConstant},
      {"", "Dropout", 7, importDropoutLegacy},
      {"", "Dropout", 12, importDropout},
  };
  return importers;
}
