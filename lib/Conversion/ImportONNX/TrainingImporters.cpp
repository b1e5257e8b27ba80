//===- TrainingImporters.cpp - ONNX training operators ---------*- C++ -*-===//
//
// ai.onnx.preview.training: Gradient becomes a gs.backward request that
// autodiff fills; Momentum, Adagrad and Adam become one gs.optimizer_step
// per optimized tensor.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::onnx_import;

static SmallVector<std::string> stringsAttr(NodeContext &ctx, StringRef name) {
  SmallVector<std::string> values;
  if (const onnx::AttributeProto *attr = ctx.attribute(name))
    values.assign(attr->strings().begin(), attr->strings().end());
  return values;
}

static LogicalResult importGradient(NodeContext &ctx) {
  SmallVector<std::string> xs = stringsAttr(ctx, "xs");
  SmallVector<std::string> zs = stringsAttr(ctx, "zs");
  std::string y = ctx.stringAttr("y", "");
  if (xs.empty() || y.empty())
    return ctx.emitError() << "needs the 'xs' and 'y' attributes";
  if (ctx.numInputs() != xs.size() + zs.size())
    return ctx.emitError() << "has " << ctx.numInputs()
                           << " inputs, but xs and zs name "
                           << xs.size() + zs.size();
  SmallVector<Value> wrt;
  for (auto [i, name] : llvm::enumerate(llvm::concat<std::string>(xs, zs))) {
    if (ctx.inputName(i) != name)
      return ctx.emitError() << "inputs must be the xs followed by the zs: "
                                "input "
                             << i << " is '" << ctx.inputName(i)
                             << "' but the attributes name '" << name << "'";
    if (i >= xs.size())
      continue;
    FailureOr<Value> x = ctx.input(i);
    if (failed(x))
      return failure();
    wrt.push_back(*x);
  }
  if (ctx.numOutputs() != xs.size())
    return ctx.emitError() << "has " << ctx.numOutputs() << " outputs for "
                           << xs.size() << " xs";
  FailureOr<Value> of = ctx.graph().lookup(y, ctx.loc);
  if (failed(of))
    return failure();
  FailureOr<BackwardOp> op = ctx.create<BackwardOp>(*of, wrt);
  if (failed(op))
    return failure();
  ctx.setOutputs(op->getResults());
  return success();
}

/// A float attribute of `node`, or `fallback`.
static float floatAttrOf(const onnx::NodeProto &node, StringRef name,
                         float fallback) {
  for (const auto &attr : node.attribute())
    if (attr.name() == name)
      return attr.f();
  return fallback;
}

FailureOr<OptimizerAttrInterface> onnx_import::optimizerFromNode(
    MLIRContext *context, const onnx::NodeProto &node, std::string &error) {
  auto f = [&](StringRef name, float fallback) {
    return APFloat(static_cast<double>(floatAttrOf(node, name, fallback)));
  };
  auto has = [&](StringRef name) {
    return llvm::any_of(node.attribute(),
                        [&](const auto &a) { return a.name() == name; });
  };
  StringRef op = node.op_type();
  if (op == "Momentum") {
    std::string mode = "standard";
    for (const auto &attr : node.attribute())
      if (attr.name() == "mode")
        mode = attr.s();
    std::optional<MomentumMode> parsed = symbolizeMomentumMode(mode);
    if (!parsed) {
      error = "unknown Momentum mode '" + mode + "'";
      return failure();
    }
    for (StringRef required : {"alpha", "beta", "norm_coefficient"})
      if (!has(required)) {
        error = ("Momentum needs the '" + required + "' attribute").str();
        return failure();
      }
    return cast<OptimizerAttrInterface>(
        MomentumAttr::get(context, f("alpha", 0), f("beta", 0),
                          f("norm_coefficient", 0), *parsed));
  }
  if (op == "Adagrad")
    return cast<OptimizerAttrInterface>(
        AdagradAttr::get(context, f("decay_factor", 0), f("epsilon", 1e-6f),
                         f("norm_coefficient", 0)));
  if (op == "Adam")
    return cast<OptimizerAttrInterface>(AdamAttr::get(
        context, f("alpha", 0.9f), f("beta", 0.999f), f("epsilon", 1e-6f),
        f("norm_coefficient", 0), f("norm_coefficient_post", 0)));
  error = "'" + op.str() + "' is not an optimizer";
  return failure();
}

/// A 0-d tensor input as a scalar.
static FailureOr<Value> scalarOperand(NodeContext &ctx, unsigned i,
                                      Type expected) {
  FailureOr<Value> value = ctx.input(i);
  if (failed(value))
    return failure();
  auto type = cast<RankedTensorType>(value->getType());
  if (type.getRank() != 0 || type.getElementType() != expected)
    return ctx.emitError() << "input " << i << " must be a scalar of type "
                           << expected << ", got " << type;
  return tensor::ExtractOp::create(ctx.builder(), ctx.loc, *value, ValueRange())
      .getResult();
}

/// Momentum/Adagrad (R, T, X..., G..., V...) and Adam (R, T, X..., G...,
/// V..., H...): one gs.optimizer_step per X.
static LogicalResult importOptimizer(NodeContext &ctx) {
  std::string error;
  FailureOr<OptimizerAttrInterface> optimizer =
      optimizerFromNode(ctx.getContext(), ctx.node, error);
  if (failed(optimizer))
    return ctx.emitError() << error;
  unsigned numState = optimizer->getNumStateTensors();
  unsigned group = 2 + numState;
  if (ctx.numInputs() < 2 + group || (ctx.numInputs() - 2) % group != 0)
    return ctx.emitError() << "expects R, T, then equally many X, G and "
                           << numState << " state input groups";
  unsigned n = (ctx.numInputs() - 2) / group;
  if (ctx.numOutputs() != n * (1 + numState))
    return ctx.emitError() << "expects " << n * (1 + numState) << " outputs";
  Builder b(ctx.getContext());
  FailureOr<Value> lr = scalarOperand(ctx, 0, b.getF32Type());
  FailureOr<Value> step = scalarOperand(ctx, 1, b.getI64Type());
  if (failed(lr) || failed(step))
    return failure();
  for (unsigned i = 0; i < n; ++i) {
    FailureOr<Value> x = ctx.input(2 + i), g = ctx.input(2 + n + i);
    if (failed(x) || failed(g))
      return failure();
    SmallVector<Value> state;
    for (unsigned k = 0; k < numState; ++k) {
      FailureOr<Value> s = ctx.input(2 + (2 + k) * n + i);
      if (failed(s))
        return failure();
      state.push_back(*s);
    }
    SmallVector<Type> types(1 + numState, x->getType());
    FailureOr<OptimizerStepOp> op = ctx.create<OptimizerStepOp>(
        types, *lr, *step, *x, *g, state, *optimizer);
    if (failed(op))
      return failure();
    ctx.setOutput(i, op->getNewParam());
    for (unsigned k = 0; k < numState; ++k)
      ctx.setOutput(n + k * n + i, op->getNewState()[k]);
  }
  return success();
}

ArrayRef<OpImporter> onnx_import::getTrainingImporters() {
  static const OpImporter importers[] = {
      {kTrainingDomain, "Gradient", 1, importGradient},
      {kTrainingDomain, "Momentum", 1, importOptimizer},
      {kTrainingDomain, "Adagrad", 1, importOptimizer},
      {kTrainingDomain, "Adam", 1, importOptimizer},
  };
  return importers;
}
