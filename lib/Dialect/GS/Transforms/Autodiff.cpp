//===- Autodiff.cpp - Reverse-mode differentiation of gs functions -*- C++
//-*-=//
//
// One reverse walk over the forward ops: each op on a path from a `wrt`
// value to the differentiated value contributes its vector-Jacobian
// product (DifferentiableOpInterface); a value with several contributions
// gets them summed by one gs.add_n.
//
//===----------------------------------------------------------------------===//

#include "TrainingState.h"
#include "VJPUtils.h"

#include "gs/Dialect/GS/IR/GSOps.h"
#include "gs/Dialect/GS/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::gs {
#define GEN_PASS_DEF_AUTODIFF
#include "gs/Dialect/GS/Transforms/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::vjp;

void mlir::gs::registerDifferentiableOpInterfaceModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, GSDialect *) {
    registerConvolutionVJPs(context);
    registerElementwiseVJPs(context);
    registerIndexingVJPs(context);
    registerLinearAlgebraVJPs(context);
    registerLossVJPs(context);
    registerNormalizationVJPs(context);
    registerShapeVJPs(context);
  });
}

namespace {
/// The gradient contributions of the values of one backward region.
class Adjoints {
public:
  explicit Adjoints(OpBuilder &builder) : builder(builder) {}

  void add(Value value, Value contribution) {
    contributions[value].push_back(contribution);
  }
  bool has(Value value) const { return contributions.contains(value); }

  /// The gradient of `value`: its one contribution, the gs.add_n of
  /// several, or null for none.
  Value get(Value value) {
    auto it = contributions.find(value);
    if (it == contributions.end())
      return Value();
    SmallVector<Value, 2> &terms = it->second;
    if (terms.size() > 1) {
      Value sum = AddNOp::create(builder, value.getLoc(), terms);
      terms.assign(1, sum);
    }
    return terms.front();
  }

private:
  OpBuilder &builder;
  llvm::DenseMap<Value, SmallVector<Value, 2>> contributions;
};

} // namespace

LogicalResult mlir::gs::differentiate(BackwardOp backward, Value seed) {
  Block *block = backward->getBlock();
  auto forward = llvm::make_range(block->begin(), backward->getIterator());

  // Values that depend on a wrt value through float computations.
  llvm::DenseSet<Value> active;
  for (Value wrt : backward.getWrt())
    active.insert(wrt);
  for (Operation &op : forward)
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return active.contains(v); }))
      for (Value result : op.getResults())
        if (isDifferentiable(result))
          active.insert(result);

  OpBuilder builder(backward.getContext());
  Block *body = builder.createBlock(&backward.getBody());
  builder.setInsertionPointToEnd(body);
  Adjoints adjoints(builder);
  Value of = backward.getOf();
  adjoints.add(of, seed ? seed
                        : splat(builder, backward.getLoc(), typeOf(of), 1.0));

  for (Operation &op : llvm::reverse(forward)) {
    if (!llvm::any_of(op.getResults(),
                      [&](Value v) { return adjoints.has(v); }) ||
        !llvm::any_of(op.getOperands(),
                      [&](Value v) { return active.contains(v); }))
      continue;
    auto differentiable = dyn_cast<DifferentiableOpInterface>(op);
    if (!differentiable)
      return op.emitOpError("is on the path from the differentiated value to "
                            "a gradient input, but has no gradient");
    SmallVector<Value> resultGradients;
    for (Value result : op.getResults())
      resultGradients.push_back(adjoints.get(result));
    SmallVector<Value> operandGradients;
    if (failed(differentiable.buildVJP(builder, resultGradients,
                                       operandGradients)))
      return failure();
    if (operandGradients.size() != op.getNumOperands())
      return op.emitOpError("built ")
             << operandGradients.size() << " operand gradients for "
             << op.getNumOperands() << " operands";
    for (auto [operand, gradient] :
         llvm::zip(op.getOperands(), operandGradients))
      if (gradient && active.contains(operand))
        adjoints.add(operand, gradient);
  }

  SmallVector<Value> gradients;
  for (Value wrt : backward.getWrt()) {
    Value gradient = adjoints.get(wrt);
    gradients.push_back(
        gradient ? gradient
                 : splat(builder, backward.getLoc(), typeOf(wrt), 0.0));
  }
  YieldOp::create(builder, backward.getLoc(), gradients);

  // VJPs build the gradients of every operand; drop those nothing needs
  // (inputs, frozen parameters).
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body)))
    if (isOpTriviallyDead(&op))
      op.erase();
  return success();
}

namespace {
/// The train-step function of `training`: the forward function, the
/// gradients of its loss with respect to the trainable parameters, and an
/// optimizer update of each.
LogicalResult buildTrainStep(TrainingOp training, StringRef name,
                             SymbolTable &symbols) {
  // The verifier made sure it is a func.func.
  auto forward = symbols.lookup<func::FuncOp>(training.getFunction());
  if (forward.isDeclaration())
    return forward.emitOpError("is a declaration; gs.training needs the body "
                               "of the function it trains");
  if (symbols.lookup(name))
    return training.emitOpError("cannot create the train step @")
           << name << ": the symbol exists (was autodiff run already?)";
  if (!forward.getBody().hasOneBlock())
    return forward.emitOpError("must have a single block to be trained");

  auto step = cast<func::FuncOp>(forward->clone());
  step.setName(name);
  symbols.insert(step, std::next(forward->getIterator()));
  Block &body = step.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  int64_t lossIndex = training.getLoss();
  if (lossIndex < 0 || lossIndex >= ret.getNumOperands())
    return training.emitOpError("loss index ")
           << lossIndex << " is out of range";
  Value loss = ret.getOperand(lossIndex);

  // One read per trainable parameter: later reads reuse the first.
  llvm::MapVector<StringAttr, ParamReadOp> reads;
  for (ParamReadOp read :
       llvm::make_early_inc_range(body.getOps<ParamReadOp>())) {
    auto param = symbols.lookup<ParamOp>(read.getParam());
    if (!param || !param.isTrainable())
      continue;
    auto [it, inserted] =
        reads.try_emplace(read.getParamAttr().getAttr(), read);
    if (!inserted) {
      read.replaceAllUsesWith(it->second.getResult());
      read.erase();
    }
  }
  SmallVector<Value> wrt;
  for (auto &[paramName, read] : reads)
    wrt.push_back(read.getResult());

  OpBuilder builder(ret);
  Location loc = training.getLoc();
  auto backward = BackwardOp::create(builder, loc, loss, wrt);
  if (failed(differentiate(backward)))
    return failure();

  // The step counter, counted from 0, and the learning rate.
  FailureOr<ParamOp> counter =
      getOrCreateState(symbols, forward, "gs.step",
                       RankedTensorType::get({}, builder.getI64Type()));
  if (failed(counter))
    return failure();
  builder.setInsertionPoint(ret);
  Value stepTensor = ParamReadOp::create(builder, loc, counter->getType(),
                                         counter->getSymName());
  Value stepValue = tensor::ExtractOp::create(builder, loc, stepTensor);
  Value rate =
      arith::ConstantOp::create(builder, loc, training.getLearningRateAttr());

  OptimizerAttrInterface optimizer = training.getOptimizer();
  for (auto [index, entry] : llvm::enumerate(reads)) {
    StringAttr paramName = entry.first;
    RankedTensorType type = typeOf(entry.second.getResult());
    SmallVector<Attribute> state;
    for (StringLiteral stateName : optimizer.getStateNames()) {
      FailureOr<ParamOp> param = getOrCreateState(
          symbols, forward, (paramName.getValue() + "." + stateName).str(),
          type);
      if (failed(param))
        return failure();
      state.push_back(FlatSymbolRefAttr::get(param->getSymNameAttr()));
    }
    builder.setInsertionPoint(ret);
    UpdateOp::create(builder, loc, paramName.getValue(),
                     backward.getResult(index), rate, stepValue,
                     state.empty() ? ArrayAttr() : builder.getArrayAttr(state),
                     optimizer);
  }
  Value next = AddOp::create(
      builder, loc, stepTensor,
      splat(builder, loc, cast<RankedTensorType>(stepTensor.getType()), 1));
  ParamWriteOp::create(builder, loc, next, counter->getSymName());
  return success();
}

struct AutodiffPass : gs::impl::AutodiffBase<AutodiffPass> {
  using AutodiffBase::AutodiffBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Gradient requests first (ONNX Gradient operators).
    SmallVector<BackwardOp> requests;
    module.walk([&](BackwardOp op) {
      if (!op.isComputed())
        requests.push_back(op);
    });
    for (BackwardOp request : requests)
      if (failed(differentiate(request)))
        return signalPassFailure();

    if (trainStepName.empty())
      return;
    SymbolTable symbols(module);
    for (TrainingOp training : llvm::to_vector(module.getOps<TrainingOp>()))
      if (failed(buildTrainStep(training, trainStepName, symbols)))
        return signalPassFailure();
  }
};
} // namespace
