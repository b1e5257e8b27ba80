//===- ScaleDecision.h - The scale choices as scalar code -------*- C++ -*-===//
//
// gs.compute_scale and gs.unify_scales as scalar f64 arithmetic over the
// lowered statistics (telemetry::StatsField) and exponent histogram, read
// through callbacks: the CPU lowering reads tensors, the GPU's one-thread
// scale kernels read device buffers, and both run the same ops (so the
// CPU emulation of the kernels chooses the CPU's scales bit for bit; on a
// GPU, libdevice's exp, log and erf and the backend's FMA contraction may
// change the last bits of a value, and with them a power-of-two scale only
// where that value lies within those bits of a power of two).
//
//===----------------------------------------------------------------------===//

#ifndef GS_CONVERSION_SCALEDECISION_H
#define GS_CONVERSION_SCALEDECISION_H

#include "gs/Dialect/GS/IR/GSOps.h"
#include "gs/Support/Telemetry.h"

#include "mlir/IR/Builders.h"

#include <functional>

namespace mlir::gs {

/// One field of a lowered !gs.stats, as f64.
using StatsFieldReader =
    std::function<Value(OpBuilder &, Location, telemetry::StatsField)>;

/// Bin `index` (an index value) of a gs.exponent_histogram, as i64.
using HistogramBinReader = std::function<Value(OpBuilder &, Location, Value)>;

/// The reader of a lowered !gs.stats: a tensor<7xf64> (host code) or a
/// memref<7xf64> (a kernel's buffer).
StatsFieldReader loweredStatsFields(Value stats);

/// The reader of a gs.exponent_histogram as a tensor or a memref.
HistogramBinReader histogramBins(Value histogram);

/// Where gs.compute_scale's operands are read from; the readers a model
/// does not use may be empty.
struct ScaleDecisionInputs {
  StatsFieldReader gradStats;
  /// half_normal only.
  StatsFieldReader weightStats;
  /// exponent_histogram only.
  HistogramBinReader histogram;
  /// The incoming f32 scale, with max_accum_scale only.
  Value alpha;
};

struct ScaleDecision {
  /// f32, a power of two unless the op's roundings say none.
  Value scale;
  /// f64: the model's underflow rate at `scale`.
  Value underflowEstimate;
};

/// The scale `op` chooses (docs/GradientScaling.md), built at `b`'s
/// insertion point.
ScaleDecision buildComputeScale(OpBuilder &b, Location loc, ComputeScaleOp op,
                                const ScaleDecisionInputs &inputs);

/// The f32 scale gs.unify_scales chooses for the f32 `alphas`, part i's
/// statistics read by `stats[i]`.
Value buildUnifyScales(OpBuilder &b, Location loc, ValueRange alphas,
                       ArrayRef<StatsFieldReader> stats);

} // namespace mlir::gs

#endif // GS_CONVERSION_SCALEDECISION_H
