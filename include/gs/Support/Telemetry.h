//===- Telemetry.h - Layout of the gradient-scaling telemetry --*- C++ -*-===//
//
// The layouts of lowered statistics (!gs.stats, gs.cast_stats), and what
// the scaling passes record per step, in state parameters the runtime
// reads: for every FP32->FP16 rounding of a gradient (a cast, or the FP16
// result of a backward GEMM), the parameter `gs.scaling.cast<i>` holds one
// record of RecordField values (f64); for every branch whose gradients
// arrive with different scales, `gs.scaling.unify<i>` holds how they were
// brought to one (UnifyField); `gs.skipped_steps` counts the steps
// whose updates a non-finite gradient skipped. No MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef GS_SUPPORT_TELEMETRY_H
#define GS_SUPPORT_TELEMETRY_H

#include <cstdint>

namespace mlir::gs::telemetry {

/// The fields of a lowered !gs.stats (f64 each), in order: what
/// gs.grad_stats gathers and gs.compute_scale reads, on every target.
enum StatsField : int64_t {
  Count,
  Sum,
  SumOfSquares,
  MaxAbs,
  /// Over the nonzero elements: their count, and the sum and sum of
  /// squares of ln|x|.
  NonzeroCount,
  SumOfLogs,
  SumOfSquaredLogs,
  NumStatsFields
};

/// The counts of gs.cast_stats, in order.
enum CastCount : int64_t {
  /// Elements that are nonzero before the cast.
  Nonzero,
  /// Nonzero elements that became 0 (underflow).
  Flushed,
  /// Elements left subnormal: nonzero, below 2^-14 in magnitude.
  Subnormal,
  /// Elements that became (or were) inf.
  Overflow,
  NumCastCounts
};

/// One site's record, the counts at the end.
enum RecordField : int64_t {
  /// The tensor's accumulated scale (alpha) where it is cast.
  Scale,
  /// The scale this site chose (beta); the loss scale for the baselines.
  SiteScale,
  /// The model's underflow rate at that scale; NaN without a model.
  Estimate,
  FirstCount,
  NumRecordFields = FirstCount + NumCastCounts
};

/// A branch unification's record (`gs.scaling.unify<i>`, f64): the scale
/// the parts were brought to, then per part (in operand order) the scale
/// it arrived with and the factor it was rescaled by (unified / arrived).
enum UnifyField : int64_t {
  UnifiedScale,
  FirstPart,
};
enum UnifyPartField : int64_t {
  PartScale,
  PartFactor,
  NumUnifyPartFields
};
constexpr int64_t unifyRecordFields(int64_t parts) {
  return FirstPart + parts * NumUnifyPartFields;
}

/// The prefix of the per-site parameters and the skipped-step counter.
constexpr const char *kSitePrefix = "gs.scaling.cast";
constexpr const char *kUnifyPrefix = "gs.scaling.unify";
constexpr const char *kSkippedSteps = "gs.skipped_steps";
/// The loss scale of fixed and dynamic loss scaling (f32 scalar).
constexpr const char *kLossScale = "gs.loss_scale";

} // namespace mlir::gs::telemetry

#endif // GS_SUPPORT_TELEMETRY_H
