//===- DataParallel.cpp - Replicas of a train step train as one -*- C++ -*-===//
//
// Turns each train step into one replica of a data-parallel step: ranks
// hold shards of the global batch, and the collectives this pass inserts
// (gs.all_reduce) make every rank compute what one process would on the
// whole global batch. With gradient scaling that takes more than summing
// the weight gradients: each scale decision reads statistics of a gradient
// of the whole batch, so the statistics are summed before every decision,
// and every rank chooses the same scales and skips the same steps.
//
//===----------------------------------------------------------------------===//

#include "gs/Dialect/GS/IR/GSOps.h"
#include "gs/Dialect/GS/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

#include <functional>

namespace mlir::gs {
#define GEN_PASS_DEF_DATAPARALLEL
#include "gs/Dialect/GS/Transforms/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;
using namespace mlir::gs;

namespace {
/// The sum of `value` over the ranks.
Value sumOverRanks(OpBuilder &b, Location loc, Value value) {
  return AllReduceOp::create(b, loc, value.getType(), value,
                             CollectiveReduction::sum);
}

/// 1 / gs.world_size, an f32.
Value inverseWorldSize(OpBuilder &b, Location loc) {
  Value size = WorldSizeOp::create(b, loc, b.getI64Type());
  Value ranks = arith::SIToFPOp::create(b, loc, b.getF32Type(), size);
  Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f));
  return arith::DivFOp::create(b, loc, one, ranks);
}

/// The mean of `value` over the ranks.
Value meanOverRanks(OpBuilder &b, Location loc, Value value, Value inverse) {
  Value sum = sumOverRanks(b, loc, value);
  return RescaleOp::create(b, loc, sum, inverse);
}

/// Replaces `operand` by its sum over the ranks, computed just before its
/// owner; `summed` caches the sums made in the owner's block.
void sumOperandOverRanks(OpOperand &operand, DenseMap<Value, Value> &summed) {
  Operation *owner = operand.getOwner();
  Value value = operand.get();
  auto [it, inserted] = summed.try_emplace(value);
  if (inserted || it->second.getParentBlock() != owner->getBlock() ||
      !it->second.getDefiningOp()->isBeforeInBlock(owner)) {
    OpBuilder b(owner);
    it->second = sumOverRanks(b, owner->getLoc(), value);
  }
  operand.set(it->second);
}

/// The statistics the scale decisions of `region` read, summed over the
/// ranks before each decision; the cast counts (telemetry) after they are
/// taken.
void sumScalingStatistics(Region &region) {
  DenseMap<Value, Value> summed;
  region.walk([&](Operation *op) {
    if (auto decision = dyn_cast<ComputeScaleOp>(op)) {
      sumOperandOverRanks(decision.getGradStatsMutable(), summed);
      // A contraction's other operand is a weight, the same on every rank
      // (summing its statistics keeps its moments and maximum), or an
      // activation, which is not.
      if (decision.getWeightStats())
        sumOperandOverRanks(decision.getWeightStatsMutable()[0], summed);
      if (decision.getHistogram())
        sumOperandOverRanks(decision.getHistogramMutable()[0], summed);
    } else if (auto unify = dyn_cast<UnifyScalesOp>(op)) {
      for (OpOperand &stats : unify.getStatsMutable())
        sumOperandOverRanks(stats, summed);
    } else if (auto counts = dyn_cast<CastStatsOp>(op)) {
      OpBuilder b(op->getContext());
      b.setInsertionPointAfter(op);
      Value total = sumOverRanks(b, op->getLoc(), counts.getResult());
      counts.getResult().replaceAllUsesExcept(total, total.getDefiningOp());
    }
  });
}

/// Orders `gradients`, results of `backward`, by where its body computes
/// them (an unscaling or cast of a gradient is ready with its operands):
/// the last layer's first, as the backward pass makes them, so that a
/// bucket's all-reduce can start once its own layers are done
/// (gs-overlap-collectives).
void sortByReadiness(BackwardOp backward, SmallVector<Value> &gradients) {
  Block &body = backward.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  DenseMap<Operation *, unsigned> position;
  for (auto [i, op] : llvm::enumerate(body))
    position[&op] = i;
  std::function<unsigned(Value)> readyAt = [&](Value value) -> unsigned {
    Operation *definition = value.getDefiningOp();
    if (!definition || !(definition = body.findAncestorOpInBlock(*definition)))
      return 0;
    if (!isa<UnscaleOp, RescaleOp, CastOp, ReshapeOp>(definition))
      return position.lookup(definition);
    unsigned ready = 0;
    for (Value operand : definition->getOperands())
      ready = std::max(ready, readyAt(operand));
    return ready;
  };
  DenseMap<Value, unsigned> ready;
  for (Value gradient : gradients)
    ready[gradient] = readyAt(
        yield.getGradients()[cast<OpResult>(gradient).getResultNumber()]);
  llvm::stable_sort(gradients,
                    [&](Value a, Value b) { return ready[a] < ready[b]; });
}

/// `gradients` in buckets: each one as large as `bucketBytes` or larger
/// alone, the smaller ones in order together while their bytes fit.
SmallVector<SmallVector<Value>> bucketGradients(ArrayRef<Value> gradients,
                                                int64_t bucketBytes) {
  SmallVector<SmallVector<Value>> buckets;
  SmallVector<Value> filling;
  int64_t filled = 0;
  for (Value gradient : gradients) {
    auto type = cast<RankedTensorType>(gradient.getType());
    int64_t bytes = type.getNumElements() * sizeof(float);
    if (bytes >= bucketBytes) {
      buckets.push_back({gradient});
      continue;
    }
    if (filled + bytes > bucketBytes) {
      buckets.push_back(std::move(filling));
      filling.clear();
      filled = 0;
    }
    filling.push_back(gradient);
    filled += bytes;
  }
  if (!filling.empty())
    buckets.push_back(std::move(filling));
  return buckets;
}

/// Replaces each gradient of `bucket` by its sum over the ranks: one
/// all-reduce of them all, flattened and concatenated.
void sumBucketOverRanks(OpBuilder &b, Location loc, ArrayRef<Value> bucket) {
  if (bucket.size() == 1) {
    Value gradient = bucket.front();
    Value total = sumOverRanks(b, loc, gradient);
    gradient.replaceAllUsesExcept(total, total.getDefiningOp());
    return;
  }
  SmallVector<Value> flat;
  SmallVector<Type> flatTypes;
  for (Value gradient : bucket) {
    auto type = cast<RankedTensorType>(gradient.getType());
    auto flatType =
        RankedTensorType::get({type.getNumElements()}, type.getElementType());
    flat.push_back(ReshapeOp::create(b, loc, flatType, gradient));
    flatTypes.push_back(flatType);
  }
  Value joined = ConcatOp::create(b, loc, flat, /*axis=*/0);
  Value total = sumOverRanks(b, loc, joined);
  auto pieces = SplitOp::create(b, loc, flatTypes, total, /*axis=*/0);
  for (auto [i, bucketed] : llvm::enumerate(bucket)) {
    Value gradient = bucketed;
    Value shaped =
        ReshapeOp::create(b, loc, gradient.getType(), pieces.getResult(i));
    Operation *flattening = flat[i].getDefiningOp();
    gradient.replaceUsesWithIf(
        shaped, [&](OpOperand &use) { return use.getOwner() != flattening; });
  }
}

LogicalResult makeReplica(func::FuncOp step, SymbolTable &symbols,
                          int64_t bucketBytes) {
  SmallVector<BackwardOp> backwards;
  step.walk([&](BackwardOp backward) {
    if (!backward.getBody().empty())
      backwards.push_back(backward);
  });
  if (backwards.empty())
    return success();
  OpBuilder b(step.getContext());
  b.setInsertionPointToStart(&step.getBody().front());
  Location loc = step.getLoc();
  Value inverse = inverseWorldSize(b, loc);

  for (BackwardOp backward : backwards) {
    b.setInsertionPoint(backward);
    Value seed = backward.getSeed();
    if (!seed) {
      auto type = cast<RankedTensorType>(backward.getOf().getType());
      seed = arith::ConstantOp::create(
          b, backward.getLoc(),
          DenseElementsAttr::get(type,
                                 b.getFloatAttr(type.getElementType(), 1.0)));
    }
    Value share = RescaleOp::create(b, backward.getLoc(), seed, inverse);
    backward.getSeedMutable().assign(share);
    sumScalingStatistics(backward.getBody());

    b.setInsertionPointAfter(backward);
    SmallVector<Value> gradients;
    for (Value gradient : backward.getGradients()) {
      if (gradient.use_empty())
        continue;
      auto type = cast<RankedTensorType>(gradient.getType());
      if (!type.getElementType().isF32() || !type.hasStaticShape())
        return backward.emitOpError("data-parallel training sums FP32 "
                                    "gradients of a static shape; got ")
               << type;
      gradients.push_back(gradient);
    }
    sortByReadiness(backward, gradients);
    for (ArrayRef<Value> bucket : bucketGradients(gradients, bucketBytes))
      sumBucketOverRanks(b, backward.getLoc(), bucket);
  }

  // Buffers the step writes (batch-norm running statistics) and its scalar
  // results: their mean over the ranks.
  WalkResult walk = step.walk([&](ParamWriteOp write) -> WalkResult {
    auto param = symbols.lookup<ParamOp>(write.getParam());
    if (!param || param.getKind() != ParamKind::buffer)
      return WalkResult::advance();
    auto type = cast<RankedTensorType>(write.getValue().getType());
    if (!type.getElementType().isF32())
      return write.emitOpError("data-parallel training averages FP32 "
                               "buffers over the ranks; got ")
             << type;
    b.setInsertionPoint(write);
    write.getValueMutable().assign(
        meanOverRanks(b, write.getLoc(), write.getValue(), inverse));
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  auto ret = cast<func::ReturnOp>(step.getBody().front().getTerminator());
  b.setInsertionPoint(ret);
  for (OpOperand &result : ret->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(result.get().getType());
    if (type && type.getRank() == 0 && type.getElementType().isF32())
      result.set(meanOverRanks(b, ret.getLoc(), result.get(), inverse));
  }
  return success();
}

struct DataParallelPass
    : public mlir::gs::impl::DataParallelBase<DataParallelPass> {
  using DataParallelBase::DataParallelBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto step : module.getOps<func::FuncOp>())
      if (failed(makeReplica(step, symbols, bucketBytes)))
        return signalPassFailure();
  }
};
} // namespace
