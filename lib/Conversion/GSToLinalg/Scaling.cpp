//===- Scaling.cpp - Gradient statistics and scale choices -----*- C++ -*-===//
//
// !gs.stats becomes tensor<7xf64> (telemetry::StatsField), filled by
// one reduction over the gradient; gs.compute_scale and gs.unify_scales
// become scalar f64 arithmetic, the threshold-dependent constants (erfinv)
// evaluated here at compile time by the C++ model of gs/Support; the result
// is the f32 scale, with the model's underflow rate at it. gs.cast_stats
// and gs.all_finite are one reduction each (per operand).
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "gs/Support/ScaleModel.h"
#include "gs/Support/Telemetry.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::to_linalg;
using namespace mlir::gs::telemetry;

namespace {
/// f64 scalar arithmetic, plus power-of-two rounding and statistics
/// fields.
class ScalarBuilder : public ScalarArith {
public:
  ScalarBuilder(OpBuilder &b, Location loc)
      : ScalarArith(b, loc, b.getF64Type()) {}

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
  Value field(Value stats, StatsField f) {
    Value index = arith::ConstantIndexOp::create(b, loc, f);
    return tensor::ExtractOp::create(b, loc, stats, index);
  }
};

/// One linalg.generic reducing all of `input` into scalar accumulators
/// starting at `inits` (scalar constants of their types): `step` gets an
/// element and the accumulators and returns them updated. Returns the
/// final accumulators as scalars.
SmallVector<Value> reduceToScalars(
    OpBuilder &b, Location loc, Value input, ArrayRef<double> inits,
    ArrayRef<Type> types,
    function_ref<SmallVector<Value>(OpBuilder &, Location, Value, ValueRange)>
        step) {
  int64_t rank = tensorTypeOf(input).getRank();
  SmallVector<Type> resultTypes;
  SmallVector<Value> outputs;
  for (auto [init, type] : llvm::zip_equal(inits, types)) {
    resultTypes.push_back(RankedTensorType::get({}, type));
    outputs.push_back(
        filledTensor(b, loc, cast<RankedTensorType>(resultTypes.back()), init));
  }
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank)};
  maps.append(inits.size(), AffineMap::get(rank, 0, {}, b.getContext()));
  auto generic = linalg::GenericOp::create(
      b, loc, resultTypes, input, outputs, maps,
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::reduction),
      [&](OpBuilder &nested, Location l, ValueRange args) {
        linalg::YieldOp::create(nested, l,
                                step(nested, l, args[0], args.drop_front()));
      });
  SmallVector<Value> scalars;
  for (Value result : generic.getResults())
    scalars.push_back(tensor::ExtractOp::create(b, loc, result));
  return scalars;
}

/// Scaled by 2^k, the values of exponent bin b (2^(b-127) <= |x| <
/// 2^(b-126)) all stay at or above 2^-25 exactly when b >= 102 - k.
constexpr double kKeptBin = 102.0;

/// A scan over the 256 bins of an exponent histogram: `step` gets the bin
/// index and the count of the bins below it (f64) and the accumulators,
/// and returns them updated. Returns the final accumulators.
SmallVector<Value>
histogramScan(OpBuilder &b, Location loc, Value histogram, ValueRange init,
              function_ref<SmallVector<Value>(OpBuilder &, Location, Value,
                                              Value, ValueRange)>
                  step) {
  Value lower = arith::ConstantIndexOp::create(b, loc, 0);
  Value upper = arith::ConstantIndexOp::create(b, loc, scaling::kExponentBins);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> inits = {scalarConstant(b, loc, b.getF64Type(), 0.0)};
  inits.append(init.begin(), init.end());
  auto loop = scf::ForOp::create(
      b, loc, lower, upper, one, inits,
      [&](OpBuilder &nested, Location l, Value index, ValueRange acc) {
        ScalarBuilder t(nested, l);
        Value bin =
            arith::UIToFPOp::create(nested, l, nested.getF64Type(),
                                    arith::IndexCastUIOp::create(
                                        nested, l, nested.getI64Type(), index));
        Value count = arith::SIToFPOp::create(
            nested, l, nested.getF64Type(),
            tensor::ExtractOp::create(nested, l, histogram, index));
        SmallVector<Value> next = {t.add(acc[0], count)};
        llvm::append_range(next,
                           step(nested, l, bin, acc[0], acc.drop_front()));
        scf::YieldOp::create(nested, l, next);
      });
  return SmallVector<Value>(loop.getResults().drop_front());
}

/// A sequential loop over the elements scattering into 256 counters (the
/// FP32 biased exponent of each nonzero).
struct ExponentHistogramLowering : OpConversionPattern<ExponentHistogramOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ExponentHistogramOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    RankedTensorType type = tensorTypeOf(input);
    Value flat = reshapeTo(
        rewriter, loc, input,
        RankedTensorType::get({type.getNumElements()}, type.getElementType()));
    auto histogramType = cast<RankedTensorType>(op.getType());
    Value init = filledTensor(rewriter, loc, histogramType, 0);
    Value lower = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value upper =
        arith::ConstantIndexOp::create(rewriter, loc, type.getNumElements());
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    auto loop = scf::ForOp::create(
        rewriter, loc, lower, upper, one, ValueRange{init},
        [&](OpBuilder &b, Location l, Value index, ValueRange acc) {
          Value x =
              convertScalar(b, l, tensor::ExtractOp::create(b, l, flat, index),
                            b.getF32Type());
          Value bits = arith::BitcastOp::create(b, l, b.getI32Type(), x);
          Value shifted = arith::ShRUIOp::create(
              b, l, bits, arith::ConstantIntOp::create(b, l, 23, 32));
          Value exponent = arith::AndIOp::create(
              b, l, shifted, arith::ConstantIntOp::create(b, l, 255, 32));
          Value bin =
              arith::IndexCastUIOp::create(b, l, b.getIndexType(), exponent);
          Value nonzero =
              arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNE, x,
                                    scalarConstant(b, l, b.getF32Type(), 0.0));
          Value old = tensor::ExtractOp::create(b, l, acc[0], bin);
          Value counted = arith::AddIOp::create(
              b, l, old, arith::ExtUIOp::create(b, l, b.getI64Type(), nonzero));
          Value updated = tensor::InsertOp::create(b, l, counted, acc[0], bin);
          scf::YieldOp::create(b, l, updated);
        });
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};

/// One pass over the gradient into six f64 accumulators; the element count
/// is static.
struct GradStatsLowering : OpConversionPattern<GradStatsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GradStatsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    Type f64 = rewriter.getF64Type();
    SmallVector<Value> sums = reduceToScalars(
        rewriter, loc, input, SmallVector<double>(NumStatsFields - 1, 0.0),
        SmallVector<Type>(NumStatsFields - 1, f64),
        [&](OpBuilder &b, Location l, Value element, ValueRange acc) {
          ScalarBuilder s(b, l);
          Value x = convertScalar(b, l, element, f64);
          Value a = math::AbsFOp::create(b, l, x);
          Value nonzero = s.lt(s.c(0.0), a);
          // ln|x| of a zero would be -inf: zeros add nothing.
          Value one = s.c(1.0);
          Value log = math::LogOp::create(b, l, s.select(nonzero, a, one));
          Value counted = s.select(nonzero, one, s.c(0.0));
          return SmallVector<Value>{
              s.add(acc[0], x),   s.add(acc[1], s.mul(x, x)),
              s.max(acc[2], a),   s.add(acc[3], counted),
              s.add(acc[4], log), s.add(acc[5], s.mul(log, log))};
        });
    // The element count is static.
    SmallVector<Value> fields = {scalarConstant(
        rewriter, loc, f64,
        static_cast<double>(tensorTypeOf(input).getNumElements()))};
    fields.append(sums);
    rewriter.replaceOpWithNewOp<tensor::FromElementsOp>(
        op, RankedTensorType::get({NumStatsFields}, f64), fields);
    return success();
  }
};

/// The scale of docs/GradientScaling.md: the model's underflow scale, the
/// overflow cap, rounding, the clamp at min_scale, the optional bounds. A
/// gradient that is all zeros (no finite scale) gets min_scale.
struct ComputeScaleLowering : OpConversionPattern<ComputeScaleOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ComputeScaleOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ScalarBuilder s(rewriter, loc);
    double threshold = op.getThreshold().convertToDouble();
    Value grad = adaptor.getGradStats();
    Value underflowScale, overflowCap;
    std::function<Value(Value)> rateAt;
    // Every operand that creates ops is named before its use: C++ leaves the
    // evaluation order of arguments unspecified, and with it the op order.
    if (op.getModel() == ScaleModel::half_normal) {
      Value weight = adaptor.getWeightStats();
      auto rms = [&](Value stats) {
        Value sumOfSquares = s.field(stats, SumOfSquares);
        return s.sqrt(s.div(sumOfSquares, s.field(stats, Count)));
      };
      double n = static_cast<double>(*op.getAccumLength());
      double factor = std::sqrt(n) * (op.getReluMask() ? std::sqrt(0.5) : 1.0);
      Value gradRms = rms(grad);
      Value weightRms = rms(weight);
      Value rmsProduct = s.mul(gradRms, weightRms);
      Value sigma = s.mul(s.c(factor), rmsProduct);
      // beta_uf = 2^-24 / (sqrt(2) sigma erfinv(threshold)).
      underflowScale = s.div(s.c(scaling::kHalfMinSubnormal /
                                 (std::sqrt(2.0) * scaling::erfinv(threshold))),
                             sigma);
      Value gradMax = s.field(grad, MaxAbs);
      Value weightMax = s.field(weight, MaxAbs);
      Value maxProduct = s.mul(gradMax, weightMax);
      overflowCap = s.div(s.c(scaling::kHalfMax / n), maxProduct);
      // Theorem 1: erf(2^-24 / (sqrt(2) beta sigma)).
      rateAt = [&, sigma](Value beta) {
        Value numerator = s.c(scaling::kHalfMinSubnormal / std::sqrt(2.0));
        return s.erf(s.div(numerator, s.mul(beta, sigma)));
      };
    } else if (op.getModel() == ScaleModel::exponent_histogram) {
      Value histogram = adaptor.getHistogram();
      Value nonzero = s.field(grad, NonzeroCount);
      // Bins below `bin` flush at a scale of 2^(102 - bin): the largest bin
      // whose lower bins hold at most threshold * nonzero.
      Value limit = s.mul(s.c(threshold), nonzero);
      Value best = histogramScan(rewriter, loc, histogram, {s.c(0.0)},
                                 [&](OpBuilder &b, Location l, Value bin,
                                     Value below, ValueRange acc) {
                                   ScalarBuilder t(b, l);
                                   return SmallVector<Value>{t.select(
                                       t.le(below, limit), bin, acc[0])};
                                 })[0];
      underflowScale =
          math::Exp2Op::create(rewriter, loc, s.sub(s.c(kKeptBin), best));
      Value gradMax = s.field(grad, MaxAbs);
      overflowCap = s.div(s.c(scaling::kHalfMax), gradMax);
      // The fraction of the nonzeros in the bins below 102 - log2(beta).
      rateAt = [&, histogram, nonzero](Value beta) {
        Value log = math::Log2Op::create(rewriter, loc, beta);
        Value cut =
            math::FloorOp::create(rewriter, loc, s.sub(s.c(kKeptBin), log));
        Value flushed = histogramScan(rewriter, loc, histogram, {s.c(0.0)},
                                      [&](OpBuilder &b, Location l, Value bin,
                                          Value below, ValueRange acc) {
                                        ScalarBuilder t(b, l);
                                        return SmallVector<Value>{t.select(
                                            t.le(bin, cut), below, acc[0])};
                                      })[0];
        return s.div(flushed, nonzero);
      };
    } else {
      Value count = s.field(grad, NonzeroCount);
      Value mu = s.div(s.field(grad, SumOfLogs), count);
      Value meanSquare = s.div(s.field(grad, SumOfSquaredLogs), count);
      Value variance = s.sub(meanSquare, s.mul(mu, mu));
      Value deviation = s.sqrt(s.max(variance, s.c(0.0)));
      // beta_uf = exp(ln 2^-24 - mu - s sqrt(2) erfinv(2 threshold - 1)).
      double k = std::sqrt(2.0) * scaling::erfinv(2.0 * threshold - 1.0);
      Value headroom = s.sub(s.c(std::log(scaling::kHalfMinSubnormal)), mu);
      underflowScale = s.exp(s.sub(headroom, s.mul(deviation, s.c(k))));
      Value gradMax = s.field(grad, MaxAbs);
      overflowCap = s.div(s.c(scaling::kHalfMax), gradMax);
      // Theorem 2: Phi((ln 2^-24 - mu - ln beta) / s), as erfc for the
      // accuracy of small rates.
      rateAt = [&, mu, deviation](Value beta) {
        Value headroom = s.sub(s.c(std::log(scaling::kHalfMinSubnormal)), mu);
        Value z = s.div(s.sub(headroom, s.log(beta)), deviation);
        Value scaled = s.mul(z, s.c(-1.0 / std::sqrt(2.0)));
        Value complement = s.erfc(scaled);
        return s.mul(s.c(0.5), complement);
      };
    }
    Value minScale = s.c(op.getMinScale().convertToDouble());
    Value beta =
        s.max(s.roundToPowerOfTwo(underflowScale, op.getUnderflowRounding()),
              minScale);
    beta =
        s.min(beta, s.roundToPowerOfTwo(overflowCap, op.getOverflowRounding()));
    if (std::optional<APFloat> maxScale = op.getMaxScale())
      beta = s.min(beta, s.c(maxScale->convertToDouble()));
    if (std::optional<APFloat> maxAccum = op.getMaxAccumScale()) {
      Value alpha = arith::ExtFOp::create(rewriter, loc, rewriter.getF64Type(),
                                          adaptor.getAlpha());
      Value bound = s.div(s.c(maxAccum->convertToDouble()), alpha);
      beta = s.min(beta, s.roundToPowerOfTwo(bound, op.getOverflowRounding()));
    }
    beta = s.select(s.isFinite(beta), beta, minScale);
    // A gradient without nonzeros has nothing to underflow.
    Value rate = rateAt(beta);
    Value nonzeros = s.field(grad, NonzeroCount);
    Value any = s.lt(s.c(0.0), nonzeros);
    rate = s.select(any, rate, s.c(0.0));
    Value scale =
        arith::TruncFOp::create(rewriter, loc, rewriter.getF32Type(), beta);
    rewriter.replaceOp(op, {scale, rate});
    return success();
  }
};

/// The branch rule: the largest alpha_j with alpha_j max_i / alpha_i <
/// 65504 for every i (max_i the largest magnitude of scaled part i);
/// otherwise the smallest alpha halved until that holds, in closed form
/// min_alpha * 2^-(floor(log2(min_alpha / bound)) + 1) with bound =
/// min_i 65504 alpha_i / max_i.
struct UnifyScalesLowering : OpConversionPattern<UnifyScalesOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(UnifyScalesOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ScalarBuilder s(rewriter, loc);
    SmallVector<Value> alphas;
    for (Value alpha : adaptor.getAlphas())
      alphas.push_back(
          arith::ExtFOp::create(rewriter, loc, rewriter.getF64Type(), alpha));
    // beta fits part i when beta < bound_i = 65504 alpha_i / max_i.
    Value bound = s.c(INFINITY);
    // Operands are named before use (argument evaluation order is
    // unspecified, and with it the order of the ops they create).
    for (auto [alpha, stats] : llvm::zip(alphas, adaptor.getStats())) {
      Value scaledMax = s.mul(s.c(scaling::kHalfMax), alpha);
      bound = s.min(bound, s.div(scaledMax, s.field(stats, MaxAbs)));
    }
    Value best = s.c(0.0);
    Value smallest = s.c(INFINITY);
    for (Value alpha : alphas) {
      Value fits = s.lt(alpha, bound);
      best = s.select(fits, s.max(best, alpha), best);
      smallest = s.min(smallest, alpha);
    }
    Value ratio = math::Log2Op::create(rewriter, loc, s.div(smallest, bound));
    Value whole = math::FloorOp::create(rewriter, loc, ratio);
    Value halvings = s.add(whole, s.c(1));
    Value halved =
        s.div(smallest, math::Exp2Op::create(rewriter, loc, halvings));
    Value anyFits = s.lt(s.c(0.0), best);
    Value beta = s.select(anyFits, best, halved);
    rewriter.replaceOpWithNewOp<arith::TruncFOp>(op, rewriter.getF32Type(),
                                                 beta);
    return success();
  }
};

/// One pass counting, with the input rounded to FP16 as gs.cast rounds
/// it: nonzeros, those flushed to 0, those left subnormal, infs.
struct CastStatsLowering : OpConversionPattern<CastStatsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CastStatsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type i64 = rewriter.getI64Type();
    constexpr int64_t numCounts = telemetry::NumCastCounts;
    SmallVector<Value> counts = reduceToScalars(
        rewriter, loc, adaptor.getInput(), SmallVector<double>(numCounts, 0.0),
        SmallVector<Type>(numCounts, i64),
        [&](OpBuilder &b, Location l, Value x, ValueRange acc) {
          Value half = arith::TruncFOp::create(b, l, b.getF16Type(), x);
          Value magnitude = math::AbsFOp::create(b, l, half);
          auto compare = [&](arith::CmpFPredicate predicate, Value lhs,
                             double rhs) {
            return arith::CmpFOp::create(
                b, l, predicate, lhs, scalarConstant(b, l, lhs.getType(), rhs));
          };
          Value nonzero = compare(arith::CmpFPredicate::UNE, x, 0.0);
          Value zeroInHalf = compare(arith::CmpFPredicate::OEQ, magnitude, 0.0);
          Value flushed = arith::AndIOp::create(b, l, nonzero, zeroInHalf);
          Value positive = compare(arith::CmpFPredicate::OGT, magnitude, 0.0);
          Value belowNormal =
              compare(arith::CmpFPredicate::OLT, magnitude, 0x1p-14);
          Value subnormal = arith::AndIOp::create(b, l, positive, belowNormal);
          Value overflow =
              compare(arith::CmpFPredicate::OEQ, magnitude, INFINITY);
          Value predicates[] = {nonzero, flushed, subnormal, overflow};
          SmallVector<Value> next;
          for (auto [count, predicate] : llvm::zip_equal(acc, predicates))
            next.push_back(arith::AddIOp::create(
                b, l, count, arith::ExtUIOp::create(b, l, i64, predicate)));
          return next;
        });
    rewriter.replaceOpWithNewOp<tensor::FromElementsOp>(
        op, RankedTensorType::get({numCounts}, i64), counts);
    return success();
  }
};

/// And over every element of every operand of |x| < inf.
struct AllFiniteLowering : OpConversionPattern<AllFiniteOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AllFiniteOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type i1 = rewriter.getI1Type();
    Value all = arith::ConstantIntOp::create(rewriter, loc, 1, 1);
    for (Value input : adaptor.getInputs()) {
      Value finite = reduceToScalars(
          rewriter, loc, input, {1.0}, {i1},
          [&](OpBuilder &b, Location l, Value x, ValueRange acc) {
            Value magnitude = math::AbsFOp::create(b, l, x);
            Value isFinite = arith::CmpFOp::create(
                b, l, arith::CmpFPredicate::OLT, magnitude,
                scalarConstant(b, l, x.getType(), INFINITY));
            return SmallVector<Value>{
                arith::AndIOp::create(b, l, acc[0], isFinite)};
          })[0];
      all = arith::AndIOp::create(rewriter, loc, all, finite);
    }
    rewriter.replaceOp(op, all);
    return success();
  }
};
} // namespace

void to_linalg::addStatsTypeConversion(TypeConverter &converter) {
  converter.addConversion([](StatsType type) -> Type {
    return RankedTensorType::get({NumStatsFields},
                                 Float64Type::get(type.getContext()));
  });
}

void to_linalg::populateScalingPatterns(TypeConverter &converter,
                                        RewritePatternSet &patterns) {
  patterns.add<GradStatsLowering, ComputeScaleLowering, UnifyScalesLowering,
               CastStatsLowering, ExponentHistogramLowering, AllFiniteLowering>(
      converter, patterns.getContext());
}
