//===- EvalStep.cpp - The evaluation entry of a trained model ---*- C++ -*-===//
//
// `eval_step` is `forward` that also returns the class scores its loss is
// computed from, so that a runtime can count correct predictions. It
// changes no parameter: the writes of `forward` (batch-norm running
// statistics, random-number state) are left out.
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

/// The class scores a returned loss is computed from: the logits of a
/// softmax cross-entropy, the log-probabilities of a negative
/// log-likelihood.
static Value scoresOfLoss(Value loss) {
  Operation *producer = loss.getDefiningOp();
  if (auto crossEntropy = dyn_cast_if_present<SoftmaxCrossEntropyOp>(producer))
    return crossEntropy.getScores();
  if (auto nll = dyn_cast_if_present<NLLLossOp>(producer))
    return nll.getInput();
  return nullptr;
}

LogicalResult mlir::gs::addEvalStep(ModuleOp module) {
  SymbolTable symbols(module);
  auto forward = symbols.lookup<func::FuncOp>("forward");
  if (!forward || forward.isDeclaration())
    return module.emitError("has no 'forward' function to evaluate");
  if (Operation *existing = symbols.lookup("eval_step"))
    return existing->emitOpError("is named 'eval_step', the function "
                                 "gs-add-eval-step would add");
  auto returnOp = cast<func::ReturnOp>(forward.getBody().back().back());
  Value scores;
  unsigned lossIndex = 0;
  for (; lossIndex < returnOp.getNumOperands(); ++lossIndex)
    if ((scores = scoresOfLoss(returnOp.getOperand(lossIndex))))
      break;
  if (!scores)
    return returnOp.emitOpError(
        "returns no softmax cross-entropy or negative log-likelihood loss, "
        "whose class scores accuracy needs");
  auto scoresType = cast<RankedTensorType>(scores.getType());
  if (scoresType.getRank() != 2 || !scoresType.hasStaticShape())
    return returnOp.getOperand(lossIndex).getDefiningOp()->emitOpError(
               "has class scores of type ")
           << scoresType << "; accuracy needs a static batch x classes shape";

  OpBuilder builder(forward);
  builder.setInsertionPointAfter(forward);
  auto eval = cast<func::FuncOp>(builder.clone(*forward));
  eval.setSymName("eval_step");
  symbols.insert(eval);
  SmallVector<ParamWriteOp> writes;
  eval.walk([&](ParamWriteOp write) { writes.push_back(write); });
  for (ParamWriteOp write : writes)
    write.erase();
  auto evalReturn = cast<func::ReturnOp>(eval.getBody().back().back());
  Value evalScores = scoresOfLoss(evalReturn.getOperand(lossIndex));
  unsigned index = eval.getNumResults();
  if (failed(eval.insertResult(
          index, evalScores.getType(),
          builder.getDictionaryAttr(builder.getNamedAttr(
              "onnx.name", builder.getStringAttr("scores"))))))
    return eval.emitOpError("cannot take the class scores as a result");
  evalReturn->insertOperands(index, evalScores);
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
