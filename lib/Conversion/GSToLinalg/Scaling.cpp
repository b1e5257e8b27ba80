//===- Scaling.cpp - Gradient statistics and scale choices -----*- C++ -*-===//
//
// !gs.stats becomes tensor<7xf64> (telemetry::StatsField), filled by
// one reduction over the gradient; gs.compute_scale and gs.unify_scales
// become the scalar f64 code of gs/Conversion/ScaleDecision.h reading those
// tensors. gs.cast_stats and gs.all_finite are one reduction each (per
// operand).
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "gs/Conversion/ScaleDecision.h"
#include "gs/Support/Telemetry.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::to_linalg;
using namespace mlir::gs::telemetry;

namespace {
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

/// ln a in f64, for a positive f64 `a` widened from a narrower float (so
/// never subnormal), inline so that the statistics loop vectorizes where a
/// libm call would keep it scalar (ResNet-18's gs step spent 3.7% in
/// glibc's log): a = m 2^e with m in [sqrt(1/2), sqrt(2)), and
/// ln m = 2 atanh(s) = 2 (s + s^3/3 + ... + s^17/17) with s = (m-1)/(m+1),
/// |s| < 0.172. The quotient is an f32 reciprocal of m+1 refined by one
/// Newton step in f64 (relative error about 2^-47, where an f64 division,
/// 8 lanes at a time, took as long as the rest of the statistics), the
/// series evaluated by FMAs; the first term left out is below 2^-50 of the
/// sum. Within 2^-46 of ln a; +inf stays +inf.
Value buildWideLog(OpBuilder &b, Location l, Value a) {
  ScalarArith s(b, l, b.getF64Type());
  Type i64 = b.getI64Type();
  auto integer = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, l, v, 64).getResult();
  };
  auto fma = [&](Value x, Value y, Value z) {
    return math::FmaOp::create(b, l, x, y, z).getResult();
  };
  Value bits = arith::BitcastOp::create(b, l, i64, a);
  Value biased = arith::ShRUIOp::create(b, l, bits, integer(52));
  Value mantissaBits =
      arith::AndIOp::create(b, l, bits, integer((int64_t{1} << 52) - 1));
  Value unitBits =
      arith::OrIOp::create(b, l, mantissaBits, integer(int64_t{1023} << 52));
  Value mantissa = arith::BitcastOp::create(b, l, b.getF64Type(), unitBits);
  Value high = s.lt(s.c(M_SQRT2), mantissa);
  Value halved = s.mul(mantissa, s.c(0.5));
  Value m = s.select(high, halved, mantissa);
  Value exponent = arith::SubIOp::create(b, l, biased, integer(1023));
  Value bumped = arith::AddIOp::create(b, l, exponent, integer(1));
  Value e = arith::SelectOp::create(b, l, high, bumped, exponent);
  Value one = s.c(1.0);
  Value numerator = s.sub(m, one);
  Value denominator = s.add(m, one);
  // r ~ 1 / (m+1) to 2^-24; t0 = (m-1) r; t = t0 + ((m-1) - t0 (m+1)) r.
  Type f32 = b.getF32Type();
  Value narrow = arith::TruncFOp::create(b, l, f32, denominator);
  Value narrowOne = arith::ConstantOp::create(b, l, f32, b.getF32FloatAttr(1));
  Value narrowReciprocal = arith::DivFOp::create(b, l, narrowOne, narrow);
  Value r = arith::ExtFOp::create(b, l, b.getF64Type(), narrowReciprocal);
  Value t0 = s.mul(numerator, r);
  Value residual = fma(arith::NegFOp::create(b, l, t0), denominator, numerator);
  Value t = fma(residual, r, t0);
  Value t2 = s.mul(t, t);
  Value series = s.c(1.0 / 17);
  for (int k = 15; k >= 1; k -= 2)
    series = fma(series, t2, s.c(1.0 / k));
  Value logM = s.mul(s.mul(s.c(2.0), t), series);
  Value wholes = arith::SIToFPOp::create(b, l, b.getF64Type(), e);
  Value log = fma(wholes, s.c(M_LN2), logM);
  Value finite = s.lt(a, s.c(INFINITY));
  return s.select(finite, log, a);
}

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
          ScalarArith s(b, l, b.getF64Type());
          Value x = convertScalar(b, l, element, f64);
          Value a = math::AbsFOp::create(b, l, x);
          Value nonzero = s.lt(s.c(0.0), a);
          // ln|x| of a zero would be -inf: zeros add nothing.
          Value one = s.c(1.0);
          Value safe = s.select(nonzero, a, one);
          Value log = element.getType().getIntOrFloatBitWidth() < 64
                          ? buildWideLog(b, l, safe)
                          : math::LogOp::create(b, l, safe).getResult();
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

/// The scale of docs/GradientScaling.md, on the lowered statistics.
struct ComputeScaleLowering : OpConversionPattern<ComputeScaleOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ComputeScaleOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ScaleDecisionInputs inputs;
    inputs.gradStats = loweredStatsFields(adaptor.getGradStats());
    if (Value weight = adaptor.getWeightStats())
      inputs.weightStats = loweredStatsFields(weight);
    if (Value histogram = adaptor.getHistogram())
      inputs.histogram = histogramBins(histogram);
    inputs.alpha = adaptor.getAlpha();
    ScaleDecision decision =
        buildComputeScale(rewriter, op.getLoc(), op, inputs);
    rewriter.replaceOp(op, {decision.scale, decision.underflowEstimate});
    return success();
  }
};

/// The branch rule, on the lowered statistics.
struct UnifyScalesLowering : OpConversionPattern<UnifyScalesOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(UnifyScalesOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<StatsFieldReader> stats;
    for (Value part : adaptor.getStats())
      stats.push_back(loweredStatsFields(part));
    rewriter.replaceOp(op, buildUnifyScales(rewriter, op.getLoc(),
                                            adaptor.getAlphas(), stats));
    return success();
  }
};

/// A cast of a !gs.stats to its lowered type (convert-gs-to-gpu's, where a
/// kernel reads statistics computed on the host) is the lowered value.
struct StatsCastLowering : OpConversionPattern<UnrealizedConversionCastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(UnrealizedConversionCastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isStatsLowering(op))
      return failure();
    Value lowered = adaptor.getInputs()[0];
    if (lowered.getType() != op.getResult(0).getType())
      return failure();
    rewriter.replaceOp(op, lowered);
    return success();
  }
};

/// One pass counting, with the input rounded to FP16 as gs.cast rounds
/// it: nonzeros, those flushed to 0, those left subnormal, infs. The
/// counters are i32 where the input has fewer than 2^31 elements (widened
/// to i64 after the pass): twice the lanes per vector of i64 counters.
struct CastStatsLowering : OpConversionPattern<CastStatsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CastStatsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type i64 = rewriter.getI64Type();
    RankedTensorType inputType = tensorTypeOf(adaptor.getInput());
    Type counter =
        inputType.hasStaticShape() &&
                inputType.getNumElements() < std::numeric_limits<int32_t>::max()
            ? rewriter.getI32Type()
            : i64;
    constexpr int64_t numCounts = telemetry::NumCastCounts;
    SmallVector<Value> counts = reduceToScalars(
        rewriter, loc, adaptor.getInput(), SmallVector<double>(numCounts, 0.0),
        SmallVector<Type>(numCounts, counter),
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
                b, l, count, arith::ExtUIOp::create(b, l, counter, predicate)));
          return next;
        });
    if (counter != i64)
      for (Value &count : counts)
        count = arith::ExtUIOp::create(rewriter, loc, i64, count);
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

bool to_linalg::isStatsLowering(UnrealizedConversionCastOp op) {
  return op.getNumOperands() == 1 && op.getNumResults() == 1 &&
         isa<StatsType>(op.getOperand(0).getType());
}

void to_linalg::addStatsTypeConversion(TypeConverter &converter) {
  converter.addConversion([](StatsType type) -> Type {
    return RankedTensorType::get({NumStatsFields},
                                 Float64Type::get(type.getContext()));
  });
}

void to_linalg::populateScalingPatterns(TypeConverter &converter,
                                        RewritePatternSet &patterns) {
  patterns.add<GradStatsLowering, ComputeScaleLowering, UnifyScalesLowering,
               CastStatsLowering, ExponentHistogramLowering, AllFiniteLowering,
               StatsCastLowering>(converter, patterns.getContext());
}
