//===- EvalStep.cpp - The evaluation entry of a trained model ---*- C++ -*-===//
//
// `eval_step` is `forward` that changes no parameter: the writes of
// `forward` (batch-norm running statistics, random-number state) are left
// out. Where the model has a classification loss, it also returns that
// loss's class scores and labels ("scores", "targets"), from which a
// runtime computes accuracy or mean IoU.
//
//===----------------------------------------------------------------------===//

#include "gs/Dialect/GS/IR/GSOps.h"
#include "gs/Pipelines/Passes.h"
#include "gs/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::gs {
#define GEN_PASS_DEF_ADDEVALSTEP
#include "gs/Pipelines/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;
using namespace mlir::gs;

/// The first classification loss of `function`: a softmax cross-entropy
/// (its logits) or a negative log-likelihood (its log-probabilities), with
/// its class labels.
static std::optional<std::pair<Value, Value>>
classScoresAndTargets(func::FuncOp function) {
  std::optional<std::pair<Value, Value>> found;
  function.walk([&](Operation *op) {
    if (auto crossEntropy = dyn_cast<SoftmaxCrossEntropyOp>(op))
      found = {crossEntropy.getScores(), crossEntropy.getLabels()};
    else if (auto nll = dyn_cast<NLLLossOp>(op))
      found = {nll.getInput(), nll.getTarget()};
    return found ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found;
}

LogicalResult mlir::gs::addEvalStep(ModuleOp module) {
  SymbolTable symbols(module);
  auto forward = symbols.lookup<func::FuncOp>("forward");
  if (!forward || forward.isDeclaration())
    return module.emitError("has no 'forward' function to evaluate");
  if (Operation *existing = symbols.lookup("eval_step"))
    return existing->emitOpError("is named 'eval_step', the function "
                                 "gs-add-eval-step would add");

  OpBuilder builder(forward);
  builder.setInsertionPointAfter(forward);
  auto eval = cast<func::FuncOp>(builder.clone(*forward));
  eval.setSymName("eval_step");
  symbols.insert(eval);
  for (TrainingOp training : module.getOps<TrainingOp>())
    if (training.getFunction() == forward.getSymName())
      eval->setAttr(kLossResultAttr,
                    builder.getI64IntegerAttr(training.getLoss()));
  SmallVector<ParamWriteOp> writes;
  eval.walk([&](ParamWriteOp write) { writes.push_back(write); });
  for (ParamWriteOp write : writes)
    write.erase();

  // A classifier's scores and labels, for accuracy and mean IoU.
  std::optional<std::pair<Value, Value>> scores = classScoresAndTargets(eval);
  if (!scores)
    return success();
  auto evalReturn = cast<func::ReturnOp>(eval.getBody().back().back());
  for (auto [value, name] :
       {std::pair<Value, StringRef>{scores->first, "scores"},
        {scores->second, "targets"}}) {
    unsigned index = eval.getNumResults();
    if (failed(
            eval.insertResult(index, value.getType(),
                              builder.getDictionaryAttr(builder.getNamedAttr(
                                  "onnx.name", builder.getStringAttr(name))))))
      return eval.emitOpError("cannot return the class ") << name;
    evalReturn->insertOperands(index, value);
  }
  return success();
}

namespace {
struct AddEvalStepPass : mlir::gs::impl::AddEvalStepBase<AddEvalStepPass> {
  void runOnOperation() override {
    if (failed(addEvalStep(getOperation())))
      signalPassFailure();
  }
};
} // namespace
