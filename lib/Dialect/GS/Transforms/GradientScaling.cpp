//===- GradientScaling.cpp - Per-tensor gradient scales ---------*- C++ -*-===//
//
// The gradient-scaling method of docs/GradientScaling.md. Each gradient of
// a backward region carries a scale alpha; where a gradient is rounded
// from FP32 to FP16 a scale beta from a model of the rounding's underflow
// rate multiplies it first (fG: a contraction's FP16 result, fT: a cast);
// where gradients with different scales meet they are brought to a common
// one; the yielded gradients are unscaled.
//
//===----------------------------------------------------------------------===//

#include "ScalingUtils.h"
#include "VJPUtils.h"

#include "gs/Dialect/GS/IR/GSOps.h"
#include "gs/Dialect/GS/Transforms/Passes.h"
#include "gs/Support/Telemetry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

#include <cmath>

namespace mlir::gs {
#define GEN_PASS_DEF_GRADIENTSCALING
#include "gs/Dialect/GS/Transforms/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::scaling_ir;
using vjp::splat;
using vjp::typeOf;

llvm::cl::ValuesClass mlir::gs::roundingValues() {
  return llvm::cl::values(
      clEnumValN(Rounding::up, "up", "the next power of two above"),
      clEnumValN(Rounding::down, "down", "the next power of two below"),
      clEnumValN(Rounding::none, "none", "not rounded"));
}

llvm::cl::ValuesClass mlir::gs::scaleModelValues(bool withHalfNormal) {
  auto logNormal = clEnumValN(ScaleModel::log_normal, "log_normal",
                              "log-normal magnitudes (the paper's at casts)");
  auto histogram = clEnumValN(
      ScaleModel::exponent_histogram, "exponent_histogram",
      "no distribution assumed: the smallest power of two that flushes at "
      "most `threshold` of the nonzeros");
  if (!withHalfNormal)
    return llvm::cl::values(logNormal, histogram);
  return llvm::cl::values(
      clEnumValN(ScaleModel::half_normal, "half_normal",
                 "the paper's at contractions, from the operands' statistics"),
      logNormal, histogram);
}

llvm::cl::ValuesClass mlir::gs::reluMaskValues() {
  return llvm::cl::values(
      clEnumValN(ReluMaskRule::Structural, "structural", "under a ReLU's mask"),
      clEnumValN(ReluMaskRule::Always, "always",
                 "at every contraction (the authors' code)"),
      clEnumValN(ReluMaskRule::Never, "never", "nowhere"));
}

namespace {
/// The options of one run, checked.
struct ScalingConfig {
  double threshold;
  int64_t interval;
  Rounding underflowRounding, overflowRounding;
  double minScale;
  std::optional<double> maxScale, maxAccumScale;
  ScaleModel gemmModel, castModel;
  ReluMaskRule reluMask;
  bool telemetry;
};

/// The number of products summed into one element of `contraction`'s
/// result: N of the half-normal model. A strided conv_transpose (a conv's
/// data gradient) sums kernel / stride positions per output on average.
int64_t accumulationLength(Operation *contraction) {
  auto shape = [](Value v) { return typeOf(v).getShape(); };
  if (auto gemm = dyn_cast<GemmOp>(contraction))
    return shape(gemm.getA())[gemm.getTransA() ? 0 : 1];
  if (auto matmul = dyn_cast<MatMulOp>(contraction))
    return shape(matmul.getLhs()).back();
  auto window = [&](Value weight, std::optional<ArrayRef<int64_t>> strides) {
    double positions = 1.0;
    ArrayRef<int64_t> kernel = shape(weight).drop_front(2);
    for (auto [d, size] : llvm::enumerate(kernel))
      positions *= static_cast<double>(size) /
                   static_cast<double>(strides ? (*strides)[d] : 1);
    return positions;
  };
  if (auto conv = dyn_cast<ConvOp>(contraction))
    return shape(conv.getWeight())[1] *
           static_cast<int64_t>(window(conv.getWeight(), std::nullopt));
  auto transpose = cast<ConvTransposeOp>(contraction);
  double channels = static_cast<double>(shape(transpose.getWeight())[0]) /
                    static_cast<double>(transpose.getGroup());
  return std::max<int64_t>(
      1, std::llround(channels *
                      window(transpose.getWeight(), transpose.getStrides())));
}

/// `gradient` as `where(mask, g, 0)` or `where(mask, 0, g)` with `g` a
/// gradient, the backward of a ReLU (or of another op that masks): g; null
/// otherwise.
Value unmasked(Value gradient, function_ref<bool(Value)> isGradient) {
  auto where = gradient.getDefiningOp<WhereOp>();
  if (!where)
    return Value();
  auto isZero = [](Value v) { return matchPattern(v, m_AnyZeroFloat()); };
  for (auto [kept, other] : {std::pair(where.getX(), where.getY()),
                             std::pair(where.getY(), where.getX())})
    if (isGradient(kept) && isZero(other) && typeOf(kept) == typeOf(gradient))
      return kept;
  return Value();
}

/// Scales the gradients of one backward region.
class RegionScaler {
public:
  RegionScaler(const ScalingConfig &config, BackwardOp backward,
               SymbolTable &symbols, int64_t &sites, int64_t &unifications)
      : config(config), backward(backward), symbols(symbols), sites(sites),
        unifications(unifications), b(backward.getContext()),
        anchor(backward->getParentOfType<func::FuncOp>()) {}

  LogicalResult run();

private:
  /// beta and the model's estimate for one site: `compute` builds them;
  /// with an interval they come from the site's record between updates.
  std::pair<Value, Value>
  scaleFor(Location loc, ParamOp record,
           function_ref<std::pair<Value, Value>(OpBuilder &)> compute);

  ComputeScaleOp createComputeScale(Location loc, ScaleModel model,
                                    Value gradStats, Value weightStats,
                                    Value histogram, Value alpha,
                                    int64_t accumLength, bool reluMask);
  /// beta and estimate from `value`'s own statistics (the log-normal or
  /// the exponent-histogram model).
  std::pair<Value, Value> scaleFromValue(Location loc, ScaleModel model,
                                         Value value, Value alpha);
  LogicalResult scaleContraction(Operation *op, ParamOp record);
  void scaleCast(CastOp cast, ParamOp record);
  /// Brings the gradient operands of `op` to one scale; returns it (null
  /// on failure).
  Value unify(Operation *op, ArrayRef<unsigned> gradientOperands);
  LogicalResult unscaleYield(YieldOp yield);
  LogicalResult skipNonFiniteSteps();

  const ScalingConfig &config;
  BackwardOp backward;
  SymbolTable &symbols;
  int64_t &sites;
  int64_t &unifications;
  OpBuilder b;
  Operation *anchor;
  llvm::DenseMap<Value, Value> alphaOf;
  /// i1: the scales are recomputed this step (with an interval).
  Value recompute;
  ParamOp recomputeFlag;
};
} // namespace

LogicalResult RegionScaler::run() {
  if (!backward.isComputed())
    return backward.emitOpError(
        "must be differentiated (by gs-autodiff) before gs-gradient-scaling");
  Location loc = backward.getLoc();
  Block &body = backward.getBody().front();
  // The seed is the gradient of the loss as it is: scale 1.
  Value seed = backward.getSeedArgument();
  llvm::DenseSet<Value> grads = gradientValues(body, seed);

  // One record per rounding, numbered before anything is inserted.
  llvm::DenseMap<Operation *, ParamOp> records;
  for (Operation *rounding : gradientRoundings(body, grads)) {
    if (!config.telemetry && config.interval == 1) {
      records[rounding] = ParamOp();
      continue;
    }
    FailureOr<ParamOp> record =
        createSiteRecord(symbols, anchor, sites++, rounding);
    if (failed(record))
      return failure();
    records[rounding] = *record;
  }

  b.setInsertionPointToStart(&body);
  alphaOf[seed] = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0));
  if (config.interval > 1) {
    // Recompute on every interval-th step and after a skipped one.
    auto step = symbols.lookup<ParamOp>("gs.step");
    if (!step)
      return backward.emitOpError("gs-gradient-scaling interval > 1 needs the "
                                  "step counter @gs.step of a train step");
    auto flagType = RankedTensorType::get({}, b.getI64Type());
    FailureOr<ParamOp> flag =
        createState(symbols, anchor, "gs.scaling.recompute", flagType,
                    b.getI64IntegerAttr(0), "the scale-recompute flag");
    if (failed(flag))
      return failure();
    recomputeFlag = *flag;
    Value zero = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0));
    Value k =
        arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(config.interval));
    Value due = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::RemSIOp::create(b, loc, readScalar(b, loc, step), k), zero);
    Value flagged =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                              readScalar(b, loc, recomputeFlag), zero);
    recompute = arith::OrIOp::create(b, loc, due, flagged);
  }

  for (Operation *op :
       llvm::map_to_vector(body, [](Operation &op) { return &op; })) {
    SmallVector<unsigned> gradientOperands;
    for (OpOperand &operand : op->getOpOperands())
      if (alphaOf.contains(operand.get()))
        gradientOperands.push_back(operand.getOperandNumber());
    if (gradientOperands.empty())
      continue;
    if (auto yield = dyn_cast<YieldOp>(op)) {
      if (failed(unscaleYield(yield)))
        return failure();
      continue;
    }
    Value alpha = unify(op, gradientOperands);
    if (!alpha)
      return failure();
    auto it = records.find(op);
    if (it == records.end()) {
      for (Value result : op->getResults())
        alphaOf[result] = alpha;
      continue;
    }
    if (auto cast = dyn_cast<CastOp>(op)) {
      scaleCast(cast, it->second);
    } else if (failed(scaleContraction(op, it->second))) {
      return failure();
    }
  }
  return skipNonFiniteSteps();
}

Value RegionScaler::unify(Operation *op, ArrayRef<unsigned> gradientOperands) {
  SmallVector<Value> alphas;
  for (unsigned index : gradientOperands)
    alphas.push_back(alphaOf.lookup(op->getOperand(index)));
  if (llvm::all_equal(alphas))
    return alphas.front();
  // The branch rule: a common scale from the parts' scales and maxima.
  Location loc = op->getLoc();
  b.setInsertionPoint(op);
  SmallVector<Value> stats;
  for (unsigned index : gradientOperands)
    stats.push_back(GradStatsOp::create(b, loc, op->getOperand(index)));
  Value common = UnifyScalesOp::create(b, loc, alphas, stats);
  SmallVector<Value> factors;
  for (auto [index, alpha] : llvm::zip(gradientOperands, alphas)) {
    Value factor = arith::DivFOp::create(b, loc, common, alpha);
    Value rescaled = RescaleOp::create(b, loc, op->getOperand(index), factor);
    alphaOf[rescaled] = common;
    op->setOperand(index, rescaled);
    factors.push_back(factor);
  }
  if (config.telemetry) {
    FailureOr<ParamOp> record = createUnifyRecord(
        symbols, anchor, unifications++, op, gradientOperands.size());
    if (failed(record))
      return Value();
    writeUnifyRecord(b, loc, *record, common, alphas, factors);
  }
  return common;
}

ComputeScaleOp RegionScaler::createComputeScale(
    Location loc, ScaleModel model, Value gradStats, Value weightStats,
    Value histogram, Value alpha, int64_t accumLength, bool reluMask) {
  auto op = ComputeScaleOp::create(
      b, loc, b.getF32Type(), b.getF64Type(), gradStats, weightStats, histogram,
      config.maxAccumScale ? alpha : Value(),
      ScaleModelAttr::get(b.getContext(), model),
      b.getF64FloatAttr(config.threshold),
      model == ScaleModel::half_normal ? b.getI64IntegerAttr(accumLength)
                                       : IntegerAttr(),
      reluMask ? b.getUnitAttr() : UnitAttr(),
      b.getF64FloatAttr(config.minScale),
      config.maxScale ? b.getF64FloatAttr(*config.maxScale) : FloatAttr(),
      config.maxAccumScale ? b.getF64FloatAttr(*config.maxAccumScale)
                           : FloatAttr(),
      RoundingAttr::get(b.getContext(), config.underflowRounding),
      RoundingAttr::get(b.getContext(), config.overflowRounding));
  return op;
}

std::pair<Value, Value> RegionScaler::scaleFromValue(Location loc,
                                                     ScaleModel model,
                                                     Value value, Value alpha) {
  Value stats = GradStatsOp::create(b, loc, value);
  Value histogram;
  if (model == ScaleModel::exponent_histogram)
    histogram = ExponentHistogramOp::create(b, loc, value);
  auto compute = createComputeScale(loc, model, stats, Value(), histogram,
                                    alpha, 0, false);
  return {compute.getScale(), compute.getUnderflowEstimate()};
}

std::pair<Value, Value> RegionScaler::scaleFor(
    Location loc, ParamOp record,
    function_ref<std::pair<Value, Value>(OpBuilder &)> compute) {
  if (config.interval == 1)
    return compute(b);
  // The cached scale, unless this step recomputes or there is none yet.
  Value state =
      ParamReadOp::create(b, loc, record.getType(), record.getSymName());
  Value cached = recordField(b, loc, state, telemetry::RecordField::SiteScale);
  Value cachedEstimate =
      recordField(b, loc, state, telemetry::RecordField::Estimate);
  // NaN (never computed) or not positive: none.
  Value none = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::UGE,
      arith::ConstantOp::create(b, loc, b.getF64FloatAttr(0.0)), cached);
  Value fresh = arith::OrIOp::create(b, loc, recompute, none);
  auto ifOp = scf::IfOp::create(
      b, loc, TypeRange{b.getF32Type(), b.getF64Type()}, fresh,
      /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  auto [beta, estimate] = compute(b);
  scf::YieldOp::create(b, loc, ValueRange{beta, estimate});
  b.setInsertionPointToStart(ifOp.elseBlock());
  Value narrowed = arith::TruncFOp::create(b, loc, b.getF32Type(), cached);
  scf::YieldOp::create(b, loc, ValueRange{narrowed, cachedEstimate});
  return {ifOp.getResult(0), ifOp.getResult(1)};
}

LogicalResult RegionScaler::scaleContraction(Operation *op, ParamOp record) {
  Location loc = op->getLoc();
  unsigned numOperands = op->getNumOperands();
  if (numOperands != 2 || alphaOf.contains(op->getOperand(0)) ==
                              alphaOf.contains(op->getOperand(1)))
    return op->emitOpError("is a backward contraction with an FP16 result, "
                           "but not of one gradient and one other operand "
                           "(gradient scaling needs it linear in the "
                           "gradient)");
  unsigned gradientIndex = alphaOf.contains(op->getOperand(0)) ? 0 : 1;
  Value gradient = op->getOperand(gradientIndex);
  Value weight = op->getOperand(1 - gradientIndex);
  Value alpha = alphaOf.lookup(gradient);

  // Statistics before a ReLU's mask, with the variance halved (the
  // paper's footnote 3, from He et al.).
  Value statsOf = gradient;
  bool reluMask = config.reluMask == ReluMaskRule::Always;
  if (config.reluMask == ReluMaskRule::Structural)
    if (Value source =
            unmasked(gradient, [&](Value v) { return alphaOf.contains(v); })) {
      statsOf = source;
      reluMask = true;
    }

  CastOp rounding = exposeRounding(op);
  Value accumulator = op->getResult(0);
  std::pair<Value, Value> scale;
  if (config.gemmModel == ScaleModel::half_normal) {
    b.setInsertionPoint(op);
    int64_t length = accumulationLength(op);
    scale = scaleFor(loc, record, [&](OpBuilder &) {
      Value gradStats = GradStatsOp::create(b, loc, statsOf);
      Value weightStats = GradStatsOp::create(b, loc, weight);
      auto compute =
          createComputeScale(loc, ScaleModel::half_normal, gradStats,
                             weightStats, Value(), alpha, length, reluMask);
      return std::make_pair(compute.getScale(), compute.getUnderflowEstimate());
    });
  } else {
    // From the FP32 accumulator's own statistics.
    b.setInsertionPoint(rounding);
    scale = scaleFor(loc, record, [&](OpBuilder &) {
      return scaleFromValue(loc, config.gemmModel, accumulator, alpha);
    });
  }
  b.setInsertionPoint(rounding);
  Value scaled = RescaleOp::create(b, loc, accumulator, scale.first);
  rounding.getInputMutable().assign(scaled);
  Value newAlpha = arith::MulFOp::create(b, loc, alpha, scale.first);
  if (record)
    writeSiteRecord(b, loc, record, newAlpha, scale.first, scale.second,
                    config.telemetry ? scaled : Value());
  alphaOf[rounding.getResult()] = newAlpha;
  return success();
}

void RegionScaler::scaleCast(CastOp cast, ParamOp record) {
  Location loc = cast.getLoc();
  Value input = cast.getInput();
  Value alpha = alphaOf.lookup(input);
  b.setInsertionPoint(cast);
  auto [beta, estimate] = scaleFor(loc, record, [&](OpBuilder &) {
    return scaleFromValue(loc, config.castModel, input, alpha);
  });
  Value scaled = RescaleOp::create(b, loc, input, beta);
  cast.getInputMutable().assign(scaled);
  Value newAlpha = arith::MulFOp::create(b, loc, alpha, beta);
  if (record)
    writeSiteRecord(b, loc, record, newAlpha, beta, estimate,
                    config.telemetry ? scaled : Value());
  alphaOf[cast.getResult()] = newAlpha;
}

LogicalResult RegionScaler::unscaleYield(YieldOp yield) {
  b.setInsertionPoint(yield);
  for (OpOperand &operand : yield->getOpOperands()) {
    Value alpha = alphaOf.lookup(operand.get());
    if (!alpha || matchPattern(alpha, m_OneFloat()))
      continue;
    if (!typeOf(operand.get()).getElementType().isF32())
      return backward.emitOpError("gradient scaling unscales FP32 gradients, "
                                  "got ")
             << operand.get().getType() << " for gradient #"
             << operand.getOperandNumber();
    // alpha is a product of scales, each a power of two of at least
    // min_scale (1 unless set lower).
    operand.set(UnscaleOp::create(b, yield.getLoc(), operand.get(), alpha,
                                  /*power_of_two=*/true));
  }
  return success();
}

LogicalResult RegionScaler::skipNonFiniteSteps() {
  Location loc = backward.getLoc();
  b.setInsertionPointAfter(backward);
  FailureOr<Value> finite = scaling_ir::skipNonFiniteSteps(
      b, backward, backward.getResults(), symbols, anchor);
  if (failed(finite))
    return failure();
  if (!*finite)
    return success();
  if (recomputeFlag) {
    Value flag = arith::ExtUIOp::create(
        b, loc, b.getI64Type(),
        arith::XOrIOp::create(
            b, loc, *finite,
            arith::ConstantOp::create(b, loc, b.getBoolAttr(true))));
    writeScalar(b, loc, recomputeFlag, flag);
  }
  return success();
}

namespace {
struct GradientScalingPass
    : gs::impl::GradientScalingBase<GradientScalingPass> {
  using GradientScalingBase::GradientScalingBase;

  /// The options as a config; an error naming the bad one.
  FailureOr<ScalingConfig> parseOptions() {
    Location loc = getOperation().getLoc();
    auto bad = [&](StringRef option) {
      return emitError(loc, "gs-gradient-scaling: ") << option << " ";
    };
    ScalingConfig config;
    config.threshold = threshold;
    if (!(threshold > 0.0 && threshold < 1.0))
      return bad("threshold")
             << "must be in (0, 1), got " << static_cast<double>(threshold);
    config.interval = interval;
    if (interval < 1)
      return bad("interval")
             << "must be >= 1, got " << static_cast<int64_t>(interval);
    config.underflowRounding = underflowRounding;
    config.overflowRounding = overflowRounding;
    config.minScale = minScale;
    if (!(minScale > 0.0))
      return bad("min-scale")
             << "must be positive, got " << static_cast<double>(minScale);
    if (maxScale != 0.0) {
      if (!(maxScale >= minScale))
        return bad("max-scale") << "must be >= min-scale (or 0: none), got "
                                << static_cast<double>(maxScale);
      config.maxScale = maxScale;
    }
    if (maxAccumScale != 0.0) {
      if (!(maxAccumScale > 0.0))
        return bad("max-accum-scale") << "must be positive (or 0: none), got "
                                      << static_cast<double>(maxAccumScale);
      config.maxAccumScale = maxAccumScale;
    }
    // The choice options were checked when they were parsed; cast-model's
    // choices leave out half_normal, but a ScalingOptions struct can hold it.
    config.gemmModel = gemmModel;
    if (castModel == ScaleModel::half_normal)
      return bad("cast-model")
             << "must be log_normal or exponent_histogram, got half_normal";
    config.castModel = castModel;
    config.reluMask = reluMask;
    config.telemetry = telemetry;
    return config;
  }

  void runOnOperation() override {
    FailureOr<ScalingConfig> config = parseOptions();
    if (failed(config))
      return signalPassFailure();
    SmallVector<BackwardOp> backwards;
    getOperation().walk([&](BackwardOp op) { backwards.push_back(op); });
    SymbolTable symbols(getOperation());
    int64_t sites = 0, unifications = 0;
    for (BackwardOp backward : backwards)
      if (failed(RegionScaler(*config, backward, symbols, sites, unifications)
                     .run()))
        return signalPassFailure();
  }
};
} // namespace
