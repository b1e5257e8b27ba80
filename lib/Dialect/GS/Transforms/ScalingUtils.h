//===- ScalingUtils.h - Shared by the scaling passes ------------*- C++ -*-===//
//
// What gs-gradient-scaling and gs-loss-scaling have in common: finding the
// gradient values of a backward region and the places where they are
// rounded from FP32 to FP16, the telemetry records written there, state
// parameters, and skipping the updates of a step with a non-finite
// gradient.
//
//===----------------------------------------------------------------------===//

#ifndef GS_DIALECT_GS_TRANSFORMS_SCALINGUTILS_H
#define GS_DIALECT_GS_TRANSFORMS_SCALINGUTILS_H

#include "TrainingState.h"

#include "gs/Dialect/GS/IR/GSOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::gs::scaling_ir {

/// The values of `body` computed from `seed`, the gradient of the
/// differentiated value: every one is linear in it.
llvm::DenseSet<Value> gradientValues(Block &body, Value seed);

/// The FP32->FP16 roundings of gradients in `body`, in order: gs.cast ops
/// from f32 to f16 (case fT) and contractions with an FP16 result (fG).
SmallVector<Operation *> gradientRoundings(Block &body,
                                           const llvm::DenseSet<Value> &grads);

/// Makes the rounding of `contraction`'s FP16 result explicit: the result
/// becomes f32 (the accumulator) and a gs.cast to f16, which takes its
/// uses, is returned. Numerically the same.
CastOp exposeRounding(Operation *contraction);

/// The telemetry record `gs.scaling.cast<index>` (telemetry::RecordField),
/// NaN-filled, with a `gs.site` attribute saying which rounding it is.
FailureOr<ParamOp> createSiteRecord(SymbolTable &symbols, Operation *anchor,
                                    int64_t index, Operation *rounding);

/// Writes `record`: the accumulated scale `alpha` and this site's `beta`
/// (f32), the model's `estimate` (f64, or null: NaN), and the counts of
/// gs.cast_stats of `preCast` (or NaN without it).
void writeSiteRecord(OpBuilder &b, Location loc, ParamOp record, Value alpha,
                     Value beta, Value estimate, Value preCast);

/// The record `gs.scaling.unify<index>` of the branch `op` whose
/// `numParts` gradient operands are brought to one scale
/// (telemetry::UnifyField), NaN-filled, with a `gs.site` attribute.
FailureOr<ParamOp> createUnifyRecord(SymbolTable &symbols, Operation *anchor,
                                     int64_t index, Operation *op,
                                     int64_t numParts);

/// Writes `record`: the unified scale, and each part's scale and factor
/// (all f32).
void writeUnifyRecord(OpBuilder &b, Location loc, ParamOp record,
                      Value unified, ValueRange partScales,
                      ValueRange factors);

/// Field `field` of a record's value (tensor<7xf64>) as an f64 scalar.
Value recordField(OpBuilder &b, Location loc, Value record, int64_t field);

/// Moves the gs.update ops after `backward`, and the write of the step
/// counter, into an scf.if on `finite`: a step with a non-finite gradient
/// changes no parameter, optimizer state or step count. Leaves `b` after
/// the scf.if. False where there is no update to guard.
bool guardUpdates(OpBuilder &b, BackwardOp backward, Value finite);

/// The i64 state `gs.skipped_steps`, created (zero) on first use.
FailureOr<ParamOp> getOrCreateSkippedSteps(SymbolTable &symbols,
                                           Operation *anchor);

/// Adds one to the i64 scalar state `counter` when `finite` is false.
void countSkippedStep(OpBuilder &b, Location loc, ParamOp counter,
                      Value finite);

/// Skips a train step whose `gradients` are not finite: gs.all_finite of
/// them guards the updates and the step count after `backward`
/// (guardUpdates), and a skipped step is counted in gs.skipped_steps.
/// Returns the i1, or null where there is no update to guard (a gradient
/// request), which builds nothing. `b` is after `backward`.
FailureOr<Value> skipNonFiniteSteps(OpBuilder &b, BackwardOp backward,
                                    ValueRange gradients, SymbolTable &symbols,
                                    Operation *anchor);

/// The i64 or f32 scalar in a rank-0 tensor state: read and write.
Value readScalar(OpBuilder &b, Location loc, ParamOp param);
void writeScalar(OpBuilder &b, Location loc, ParamOp param, Value scalar);

} // namespace mlir::gs::scaling_ir

#endif // GS_DIALECT_GS_TRANSFORMS_SCALINGUTILS_H
