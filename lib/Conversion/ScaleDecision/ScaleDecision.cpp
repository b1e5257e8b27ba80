//===- ScaleDecision.cpp - The scale choices as scalar code -----*- C++ -*-===//
//
// The threshold-dependent constants (erfinv) are evaluated here, at compile
// time, by the C++ model of gs/Support; the rest is f64 arithmetic on the
// statistics, ending in the f32 scale.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/ScaleDecision.h"

#include "gs/Conversion/ScalarArith.h"
#include "gs/Support/ScaleModel.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::telemetry;

namespace {
/// f64 scalar arithmetic, plus power-of-two rounding.
class ScalarBuilder : public ScalarArith {
public:
  ScalarBuilder(OpBuilder &b, Location loc)
      : ScalarArith(b, loc, b.getF64Type()) {}

  OpBuilder &builder() { return b; }
  Location location() { return loc; }

  /// 2^floor(log2 x) or 2^ceil(log2 x) for positive finite normal x, from
  /// its bits (exact, and the same on every target, unlike log2 next to a
  /// power of two); x itself otherwise, and with Rounding::none.
  Value roundToPowerOfTwo(Value x, Rounding rounding) {
    if (rounding == Rounding::none)
      return x;
    Type i64 = b.getI64Type();
    auto constant = [&](int64_t v) -> Value {
      return arith::ConstantIntOp::create(b, loc, i64, v);
    };
    auto icmp = [&](arith::CmpIPredicate predicate, Value lhs, Value rhs) {
      return arith::CmpIOp::create(b, loc, predicate, lhs, rhs);
    };
    constexpr int64_t kMantissaBits = 52;
    constexpr int64_t kMantissaMask = (int64_t(1) << kMantissaBits) - 1;
    Value bits = arith::BitcastOp::create(b, loc, i64, x);
    // The sign and exponent: x with its mantissa cleared, 2^floor(log2 x).
    Value notMantissa = constant(~kMantissaMask);
    Value powerBits = arith::AndIOp::create(b, loc, bits, notMantissa);
    if (rounding == Rounding::up) {
      // The next binade's power, unless x is one already.
      Value mantissaMask = constant(kMantissaMask);
      Value mantissa = arith::AndIOp::create(b, loc, bits, mantissaMask);
      Value zero = constant(0);
      Value exact = icmp(arith::CmpIPredicate::eq, mantissa, zero);
      Value step = constant(int64_t(1) << kMantissaBits);
      Value next = arith::AddIOp::create(b, loc, powerBits, step);
      powerBits = arith::SelectOp::create(b, loc, exact, powerBits, next);
    }
    Value rounded = arith::BitcastOp::create(b, loc, x.getType(), powerBits);
    // Positive, finite and normal: at least the smallest normal double.
    Value normal = le(c(0x1p-1022), x);
    Value finite = isFinite(x);
    Value inRange = arith::AndIOp::create(b, loc, normal, finite);
    return select(inRange, rounded, x);
  }
};

/// Scaled by 2^k, the values of exponent bin b (2^(b-127) <= |x| <
/// 2^(b-126)) all stay at or above 2^-25 exactly when b >= 102 - k.
constexpr double kKeptBin = 102.0;

/// A scan over the 256 bins of an exponent histogram: `step` gets the bin
/// index and the count of the bins below it (f64) and the accumulators,
/// and returns them updated. Returns the final accumulators.
SmallVector<Value>
histogramScan(OpBuilder &b, Location loc, const HistogramBinReader &histogram,
              ValueRange init,
              function_ref<SmallVector<Value>(OpBuilder &, Location, Value,
                                              Value, ValueRange)>
                  step) {
  Value lower = arith::ConstantIndexOp::create(b, loc, 0);
  Value upper = arith::ConstantIndexOp::create(b, loc, scaling::kExponentBins);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> inits = {ScalarArith(b, loc, b.getF64Type()).c(0.0)};
  inits.append(init.begin(), init.end());
  auto loop = scf::ForOp::create(
      b, loc, lower, upper, one, inits,
      [&](OpBuilder &nested, Location l, Value index, ValueRange acc) {
        ScalarBuilder t(nested, l);
        Value bin =
            arith::UIToFPOp::create(nested, l, nested.getF64Type(),
                                    arith::IndexCastUIOp::create(
                                        nested, l, nested.getI64Type(), index));
        Value count = arith::SIToFPOp::create(nested, l, nested.getF64Type(),
                                              histogram(nested, l, index));
        SmallVector<Value> next = {t.add(acc[0], count)};
        llvm::append_range(next,
                           step(nested, l, bin, acc[0], acc.drop_front()));
        scf::YieldOp::create(nested, l, next);
      });
  return SmallVector<Value>(loop.getResults().drop_front());
}
/// A model's part of a decision: the scale that meets the underflow
/// threshold, the overflow cap, and the modelled underflow rate at a scale.
/// Every operand that creates ops is named before its use: C++ leaves the
/// evaluation order of arguments unspecified, and with it the op order.
struct ModelTerms {
  Value underflowScale, overflowCap;
  std::function<Value(Value)> rateAt;
};

/// Theorem 1 (a GEMM's data gradient, fG) from the RMS and maxima of the
/// incoming gradient and the weight.
ModelTerms halfNormalTerms(ScalarBuilder &s, ComputeScaleOp op,
                           const ScaleDecisionInputs &inputs) {
  OpBuilder &b = s.builder();
  Location loc = s.location();
  auto grad = [&](StatsField f) { return inputs.gradStats(b, loc, f); };
  auto weight = [&](StatsField f) { return inputs.weightStats(b, loc, f); };
  auto rms = [&](auto field) {
    Value sumOfSquares = field(SumOfSquares);
    return s.sqrt(s.div(sumOfSquares, field(Count)));
  };
  double threshold = op.getThreshold().convertToDouble();
  double n = static_cast<double>(*op.getAccumLength());
  double factor = std::sqrt(n) * (op.getReluMask() ? std::sqrt(0.5) : 1.0);
  Value gradRms = rms(grad);
  Value weightRms = rms(weight);
  Value rmsProduct = s.mul(gradRms, weightRms);
  Value sigma = s.mul(s.c(factor), rmsProduct);
  ModelTerms terms;
  // beta_uf = 2^-24 / (sqrt(2) sigma erfinv(threshold)).
  terms.underflowScale =
      s.div(s.c(scaling::kHalfMinSubnormal /
                (std::sqrt(2.0) * scaling::erfinv(threshold))),
            sigma);
  Value gradMax = grad(MaxAbs);
  Value weightMax = weight(MaxAbs);
  Value maxProduct = s.mul(gradMax, weightMax);
  terms.overflowCap = s.div(s.c(scaling::kHalfMax / n), maxProduct);
  // erf(2^-24 / (sqrt(2) beta sigma)).
  terms.rateAt = [&s, sigma](Value beta) {
    Value numerator = s.c(scaling::kHalfMinSubnormal / std::sqrt(2.0));
    return s.erf(s.div(numerator, s.mul(beta, sigma)));
  };
  return terms;
}

/// The exponent histogram (no distribution assumed): the largest power of
/// two that flushes at most threshold of the nonzeros.
ModelTerms histogramTerms(ScalarBuilder &s, ComputeScaleOp op,
                          const ScaleDecisionInputs &inputs) {
  OpBuilder &b = s.builder();
  Location loc = s.location();
  double threshold = op.getThreshold().convertToDouble();
  Value nonzero = inputs.gradStats(b, loc, NonzeroCount);
  // Bins below `bin` flush at a scale of 2^(102 - bin): the largest bin
  // whose lower bins hold at most threshold * nonzero.
  Value limit = s.mul(s.c(threshold), nonzero);
  Value best = histogramScan(b, loc, inputs.histogram, {s.c(0.0)},
                             [&](OpBuilder &nested, Location l, Value bin,
                                 Value below, ValueRange acc) {
                               ScalarBuilder t(nested, l);
                               return SmallVector<Value>{
                                   t.select(t.le(below, limit), bin, acc[0])};
                             })[0];
  ModelTerms terms;
  terms.underflowScale =
      math::Exp2Op::create(b, loc, s.sub(s.c(kKeptBin), best));
  Value gradMax = inputs.gradStats(b, loc, MaxAbs);
  terms.overflowCap = s.div(s.c(scaling::kHalfMax), gradMax);
  // The fraction of the nonzeros in the bins below 102 - log2(beta).
  terms.rateAt = [&s, &inputs, nonzero](Value beta) {
    OpBuilder &b = s.builder();
    Location loc = s.location();
    Value log = math::Log2Op::create(b, loc, beta);
    Value cut = math::FloorOp::create(b, loc, s.sub(s.c(kKeptBin), log));
    Value flushed = histogramScan(
        b, loc, inputs.histogram, {s.c(0.0)},
        [&](OpBuilder &nested, Location l, Value bin, Value below,
            ValueRange acc) {
          ScalarBuilder t(nested, l);
          return SmallVector<Value>{t.select(t.le(bin, cut), below, acc[0])};
        })[0];
    return s.div(flushed, nonzero);
  };
  return terms;
}

/// Theorem 2 (an FP32 to FP16 cast of a gradient, fT) from the moments of
/// ln|x| over the nonzeros.
ModelTerms logNormalTerms(ScalarBuilder &s, ComputeScaleOp op,
                          const ScaleDecisionInputs &inputs) {
  OpBuilder &b = s.builder();
  Location loc = s.location();
  auto grad = [&](StatsField f) { return inputs.gradStats(b, loc, f); };
  double threshold = op.getThreshold().convertToDouble();
  Value count = grad(NonzeroCount);
  Value mu = s.div(grad(SumOfLogs), count);
  Value meanSquare = s.div(grad(SumOfSquaredLogs), count);
  Value variance = s.sub(meanSquare, s.mul(mu, mu));
  Value deviation = s.sqrt(s.max(variance, s.c(0.0)));
  ModelTerms terms;
  // beta_uf = exp(ln 2^-24 - mu - s sqrt(2) erfinv(2 threshold - 1)).
  double k = std::sqrt(2.0) * scaling::erfinv(2.0 * threshold - 1.0);
  Value headroom = s.sub(s.c(std::log(scaling::kHalfMinSubnormal)), mu);
  terms.underflowScale = s.exp(s.sub(headroom, s.mul(deviation, s.c(k))));
  Value gradMax = grad(MaxAbs);
  terms.overflowCap = s.div(s.c(scaling::kHalfMax), gradMax);
  // Phi((ln 2^-24 - mu - ln beta) / s), as erfc for the accuracy of small
  // rates.
  terms.rateAt = [&s, mu, deviation](Value beta) {
    Value headroom = s.sub(s.c(std::log(scaling::kHalfMinSubnormal)), mu);
    Value z = s.div(s.sub(headroom, s.log(beta)), deviation);
    Value scaled = s.mul(z, s.c(-1.0 / std::sqrt(2.0)));
    Value complement = s.erfc(scaled);
    return s.mul(s.c(0.5), complement);
  };
  return terms;
}
} // namespace

/// Element `index` of a 1-D tensor or memref.
static Value readElement(OpBuilder &b, Location loc, Value container,
                         Value index) {
  if (isa<MemRefType>(container.getType()))
    return memref::LoadOp::create(b, loc, container, ValueRange{index});
  return tensor::ExtractOp::create(b, loc, container, ValueRange{index});
}

StatsFieldReader mlir::gs::loweredStatsFields(Value stats) {
  return [stats](OpBuilder &b, Location loc, StatsField field) {
    Value index = arith::ConstantIndexOp::create(b, loc, field);
    return readElement(b, loc, stats, index);
  };
}

HistogramBinReader mlir::gs::histogramBins(Value histogram) {
  return [histogram](OpBuilder &b, Location loc, Value bin) {
    return readElement(b, loc, histogram, bin);
  };
}

ScaleDecision mlir::gs::buildComputeScale(OpBuilder &b, Location loc,
                                          ComputeScaleOp op,
                                          const ScaleDecisionInputs &inputs) {
  ScalarBuilder s(b, loc);
  ModelTerms terms;
  switch (op.getModel()) {
  case ScaleModel::half_normal:
    terms = halfNormalTerms(s, op, inputs);
    break;
  case ScaleModel::exponent_histogram:
    terms = histogramTerms(s, op, inputs);
    break;
  case ScaleModel::log_normal:
    terms = logNormalTerms(s, op, inputs);
    break;
  }
  // beta = min(max(round(beta_uf), min_scale), round(beta_of)), then the
  // bounds; min_scale where nothing finite bounds it.
  Value minScale = s.c(op.getMinScale().convertToDouble());
  Value beta = s.max(
      s.roundToPowerOfTwo(terms.underflowScale, op.getUnderflowRounding()),
      minScale);
  beta = s.min(
      beta, s.roundToPowerOfTwo(terms.overflowCap, op.getOverflowRounding()));
  if (std::optional<APFloat> maxScale = op.getMaxScale())
    beta = s.min(beta, s.c(maxScale->convertToDouble()));
  if (std::optional<APFloat> maxAccum = op.getMaxAccumScale()) {
    Value alpha = arith::ExtFOp::create(b, loc, b.getF64Type(), inputs.alpha);
    Value bound = s.div(s.c(maxAccum->convertToDouble()), alpha);
    beta = s.min(beta, s.roundToPowerOfTwo(bound, op.getOverflowRounding()));
  }
  beta = s.select(s.isFinite(beta), beta, minScale);
  // A gradient without nonzeros has nothing to underflow.
  Value rate = terms.rateAt(beta);
  Value nonzeros = inputs.gradStats(b, loc, NonzeroCount);
  Value any = s.lt(s.c(0.0), nonzeros);
  rate = s.select(any, rate, s.c(0.0));
  Value scale = arith::TruncFOp::create(b, loc, b.getF32Type(), beta);
  return {scale, rate};
}

/// The branch rule: the largest alpha_j with alpha_j max_i / alpha_i <
/// 65504 for every i (max_i the largest magnitude of scaled part i);
/// otherwise the smallest alpha halved until that holds, in closed form
/// min_alpha * 2^-(floor(log2(min_alpha / bound)) + 1) with bound =
/// min_i 65504 alpha_i / max_i.
Value mlir::gs::buildUnifyScales(OpBuilder &b, Location loc, ValueRange alphas,
                                 ArrayRef<StatsFieldReader> stats) {
  ScalarBuilder s(b, loc);
  SmallVector<Value> wide;
  for (Value alpha : alphas)
    wide.push_back(arith::ExtFOp::create(b, loc, b.getF64Type(), alpha));
  // beta fits part i when beta < bound_i = 65504 alpha_i / max_i.
  Value bound = s.c(INFINITY);
  // Operands are named before use (argument evaluation order is
  // unspecified, and with it the order of the ops they create).
  for (auto [alpha, part] : llvm::zip_equal(wide, stats)) {
    Value scaledMax = s.mul(s.c(scaling::kHalfMax), alpha);
    Value maxAbs = part(b, loc, MaxAbs);
    bound = s.min(bound, s.div(scaledMax, maxAbs));
  }
  Value best = s.c(0.0);
  Value smallest = s.c(INFINITY);
  for (Value alpha : wide) {
    Value fits = s.lt(alpha, bound);
    best = s.select(fits, s.max(best, alpha), best);
    smallest = s.min(smallest, alpha);
  }
  Value ratio = math::Log2Op::create(b, loc, s.div(smallest, bound));
  Value whole = math::FloorOp::create(b, loc, ratio);
  Value halvings = s.add(whole, s.c(1));
  Value halved = s.div(smallest, math::Exp2Op::create(b, loc, halvings));
  Value anyFits = s.lt(s.c(0.0), best);
  Value beta = s.select(anyFits, best, halved);
  return arith::TruncFOp::create(b, loc, b.getF32Type(), beta);
}
