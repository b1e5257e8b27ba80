//===- Scaling.cpp - Gradient statistics and scale choices -----*- C++ -*-===//
//
// !gs.stats becomes tensor<7xf64> (the StatsField layout below), filled by
// one reduction over the gradient; gs.compute_scale and gs.unify_scales
// become scalar f64 arithmetic, the threshold-dependent constants (erfinv)
// evaluated here at compile time by the C++ model of gs/Support; the result
// is the f32 scale. gs.all_finite is one reduction per operand.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "gs/Support/ScaleModel.h"

#include <cmath>

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::to_linalg;

namespace {
/// Where each statistic lives in the lowered !gs.stats.
enum StatsField : int64_t {
  Count,
  Sum,
  SumOfSquares,
  MaxAbs,
  NonzeroCount,
  SumOfLogs,
  SumOfSquaredLogs,
  NumStatsFields
};

/// f64 scalar arithmetic, plus power-of-two rounding and statistics
/// fields.
class ScalarBuilder : public ScalarArith {
public:
  ScalarBuilder(OpBuilder &b, Location loc)
      : ScalarArith(b, loc, b.getF64Type()) {}

  /// 2^floor(log2 x) or 2^ceil(log2 x) for positive finite x; x itself
  /// otherwise, and with Rounding::none.
  Value roundToPowerOfTwo(Value x, Rounding rounding) {
    if (rounding == Rounding::none)
      return x;
    Value log = math::Log2Op::create(b, loc, x);
    Value whole = rounding == Rounding::up
                      ? math::CeilOp::create(b, loc, log).getResult()
                      : math::FloorOp::create(b, loc, log).getResult();
    Value rounded = math::Exp2Op::create(b, loc, whole);
    return select(isFinite(log), rounded, x);
  }
  Value field(Value stats, StatsField f) {
    Value index = arith::ConstantIndexOp::create(b, loc, f);
    return tensor::ExtractOp::create(b, loc, stats, index);
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
    RankedTensorType type = tensorTypeOf(input);
    int64_t rank = type.getRank();
    Type f64 = rewriter.getF64Type();
    auto scalarType = RankedTensorType::get({}, f64);
    SmallVector<Value> inits;
    for (int i = 0; i < NumStatsFields - 1; ++i)
      inits.push_back(filledTensor(rewriter, loc, scalarType, 0.0));
    SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank)};
    maps.append(NumStatsFields - 1,
                AffineMap::get(rank, 0, {}, rewriter.getContext()));
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::reduction);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, SmallVector<Type>(NumStatsFields - 1, scalarType), input,
        inits, maps, iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          ScalarBuilder s(b, l);
          Value x = convertScalar(b, l, args[0], f64);
          Value a = math::AbsFOp::create(b, l, x);
          Value nonzero = s.lt(s.c(0.0), a);
          // ln|x| of a zero would be -inf: zeros add nothing.
          Value one = s.c(1.0);
          Value log = math::LogOp::create(b, l, s.select(nonzero, a, one));
          Value counted = s.select(nonzero, one, s.c(0.0));
          linalg::YieldOp::create(
              b, l,
              ValueRange{s.add(args[1], x), s.add(args[2], s.mul(x, x)),
                         s.max(args[3], a), s.add(args[4], counted),
                         s.add(args[5], log), s.add(args[6], s.mul(log, log))});
        });
    SmallVector<Value> fields = {scalarConstant(
        rewriter, loc, f64, static_cast<double>(type.getNumElements()))};
    for (Value result : generic.getResults())
      fields.push_back(tensor::ExtractOp::create(rewriter, loc, result));
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
    if (op.getModel() == ScaleModel::half_normal) {
      Value weight = adaptor.getWeightStats();
      auto rms = [&](Value stats) {
        return s.sqrt(
            s.div(s.field(stats, SumOfSquares), s.field(stats, Count)));
      };
      double n = static_cast<double>(*op.getAccumLength());
      double factor = std::sqrt(n) * (op.getReluMask() ? std::sqrt(0.5) : 1.0);
      Value sigma = s.mul(s.c(factor), s.mul(rms(grad), rms(weight)));
      // beta_uf = 2^-24 / (sqrt(2) sigma erfinv(threshold)).
      underflowScale = s.div(s.c(scaling::kHalfMinSubnormal /
                                 (std::sqrt(2.0) * scaling::erfinv(threshold))),
                             sigma);
      overflowCap =
          s.div(s.c(scaling::kHalfMax / n),
                s.mul(s.field(grad, MaxAbs), s.field(weight, MaxAbs)));
    } else {
      Value count = s.field(grad, NonzeroCount);
      Value mu = s.div(s.field(grad, SumOfLogs), count);
      Value variance =
          s.sub(s.div(s.field(grad, SumOfSquaredLogs), count), s.mul(mu, mu));
      Value deviation = s.sqrt(s.max(variance, s.c(0.0)));
      // beta_uf = exp(ln 2^-24 - mu - s sqrt(2) erfinv(2 threshold - 1)).
      double k = std::sqrt(2.0) * scaling::erfinv(2.0 * threshold - 1.0);
      underflowScale =
          s.exp(s.sub(s.sub(s.c(std::log(scaling::kHalfMinSubnormal)), mu),
                      s.mul(deviation, s.c(k))));
      overflowCap = s.div(s.c(scaling::kHalfMax), s.field(grad, MaxAbs));
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
    rewriter.replaceOpWithNewOp<arith::TruncFOp>(op, rewriter.getF32Type(),
                                                 beta);
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
    for (auto [alpha, stats] : llvm::zip(alphas, adaptor.getStats()))
      bound = s.min(bound, s.div(s.mul(s.c(scaling::kHalfMax), alpha),
                                 s.field(stats, MaxAbs)));
    Value best = s.c(0.0), smallest = s.c(INFINITY);
    for (Value alpha : alphas) {
      best = s.select(s.lt(alpha, bound), s.max(best, alpha), best);
      smallest = s.min(smallest, alpha);
    }
    Value ratio = math::Log2Op::create(rewriter, loc, s.div(smallest, bound));
    Value halvings = s.add(math::FloorOp::create(rewriter, loc, ratio), s.c(1));
    Value halved =
        s.div(smallest, math::Exp2Op::create(rewriter, loc, halvings));
    Value beta = s.select(s.lt(s.c(0.0), best), best, halved);
    rewriter.replaceOpWithNewOp<arith::TruncFOp>(op, rewriter.getF32Type(),
                                                 beta);
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
      int64_t rank = tensorTypeOf(input).getRank();
      auto scalarType = RankedTensorType::get({}, i1);
      Value init = filledTensor(rewriter, loc, scalarType, 1);
      auto generic = linalg::GenericOp::create(
          rewriter, loc, scalarType, input, init,
          SmallVector<AffineMap>{
              rewriter.getMultiDimIdentityMap(rank),
              AffineMap::get(rank, 0, {}, rewriter.getContext())},
          SmallVector<utils::IteratorType>(rank,
                                           utils::IteratorType::reduction),
          [&](OpBuilder &b, Location l, ValueRange args) {
            Type element = args[0].getType();
            Value magnitude = math::AbsFOp::create(b, l, args[0]);
            Value finite = arith::CmpFOp::create(
                b, l, arith::CmpFPredicate::OLT, magnitude,
                scalarConstant(b, l, element, INFINITY));
            linalg::YieldOp::create(
                b, l, ValueRange{arith::AndIOp::create(b, l, args[1], finite)});
          });
      Value reduced =
          tensor::ExtractOp::create(rewriter, loc, generic.getResult(0));
      all = arith::AndIOp::create(rewriter, loc, all, reduced);
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
               AllFiniteLowering>(converter, patterns.getContext());
}
