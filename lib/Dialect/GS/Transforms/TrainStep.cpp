//===- TrainStep.cpp - Train-step functions from gs.training ----*- C++ -*-===//
//
// Turns each gs.training configuration into a train-step function: a copy
// of the forward function, a gs.backward request for the gradients of its
// loss, one gs.update per trainable parameter and the step counter. The
// request is left for gs-autodiff, so that the passes that change the
// forward ops (gs-mixed-precision) run before the backward is built.
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

namespace mlir::gs {
#define GEN_PASS_DEF_TRAINSTEP
#include "gs/Dialect/GS/Transforms/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::vjp;

namespace {
/// The train-step function of `training`: the forward function, a request
/// for the gradients of its loss with respect to the trainable parameters,
/// and an optimizer update of each.
LogicalResult buildTrainStep(TrainingOp training, StringRef name,
                             SymbolTable &symbols) {
  // The verifier made sure it is a func.func.
  auto forward = symbols.lookup<func::FuncOp>(training.getFunction());
  if (forward.isDeclaration())
    return forward.emitOpError("is a declaration; gs.training needs the body "
                               "of the function it trains");
  if (symbols.lookup(name))
    return training.emitOpError("cannot create the train step @")
           << name << ": the symbol exists (was gs-train-step run already?)";
  if (!forward.getBody().hasOneBlock())
    return forward.emitOpError("must have a single block to be trained");

  auto step = cast<func::FuncOp>(forward->clone());
  step.setName(name);
  step->setAttr(kLossResultAttr,
                IntegerAttr::get(IntegerType::get(step.getContext(), 64),
                                 training.getLoss()));
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
  OptimizerAttrInterface optimizer = training.getOptimizer();
  // ONNX Adam corrects its moments' bias only for T > 0; torch.optim.Adam
  // and the Adam paper count T from 1: T = steps taken + 1.
  Value optimizerStep = stepValue;
  if (isa<AdamAttr>(optimizer))
    optimizerStep = arith::AddIOp::create(
        builder, loc, stepValue,
        arith::ConstantOp::create(builder, loc, builder.getI64IntegerAttr(1)));
  Value rate =
      arith::ConstantOp::create(builder, loc, training.getLearningRateAttr());

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
                     backward.getResult(index), rate, optimizerStep,
                     state.empty() ? ArrayAttr() : builder.getArrayAttr(state),
                     optimizer);
  }
  Value next = AddOp::create(
      builder, loc, stepTensor,
      splat(builder, loc, cast<RankedTensorType>(stepTensor.getType()), 1));
  ParamWriteOp::create(builder, loc, next, counter->getSymName());
  return success();
}

struct TrainStepPass : gs::impl::TrainStepBase<TrainStepPass> {
  using TrainStepBase::TrainStepBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (stepName.empty()) {
      module.emitError("gs-train-step: name must not be empty");
      return signalPassFailure();
    }
    SymbolTable symbols(module);
    for (TrainingOp training : llvm::to_vector(module.getOps<TrainingOp>()))
      if (failed(buildTrainStep(training, stepName, symbols)))
        return signalPassFailure();
  }
};
} // namespace
