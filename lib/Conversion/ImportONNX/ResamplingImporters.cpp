//===- ResamplingImporters.cpp - Resize, Upsample and Pad ------*- C++ -*-===//
//
// Operators that map each output position along an axis to input
// positions: Resize (10, 11, 13) and Upsample (7, 9), and Pad (2, 11, 13,
// 18, 19). Along each axis they change, they become gathers at constant
// source indices: one for nearest-neighbour sampling and padding, two or
// four blended by constant weights for linear and cubic interpolation, with
// a constant mask and value for constant padding. Autodiff, mixed precision
// and the lowerings then need nothing of their own, and the gradient is the
// gathers' (a scatter-add of the weighted output gradient).
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include <cmath>

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::onnx_import;

namespace {

/// How output positions map to input positions along each axis.
struct Sampling {
  enum Kind { Nearest, Linear, Cubic } kind = Nearest;
  /// Cubic: the kernel's coefficient and whether taps beyond the edges
  /// count.
  double cubicA = -0.75;
  bool excludeOutside = false;
  /// ONNX's coordinate_transformation_mode.
  std::string transform = "half_pixel";
  /// ONNX's nearest_mode, or "simple" (Upsample and Resize-10): truncate
  /// when upsampling, round up when downsampling, as ONNX Runtime does.
  std::string nearestMode = "round_prefer_floor";
  /// The scale of each axis: given, or output / input size.
  SmallVector<double> scales;
  /// Whether the scales were given: the transformations then take the
  /// resized length as input size x scale, unrounded (ONNX's reference).
  bool scalesGiven = false;
};

} // namespace

/// The input coordinate that output position `o` samples.
static double sourceCoordinate(const Sampling &sampling, double o, double scale,
                               int64_t in, int64_t out) {
  StringRef transform = sampling.transform;
  double resized = sampling.scalesGiven ? double(in) * scale : double(out);
  if (transform == "half_pixel")
    return (o + 0.5) / scale - 0.5;
  if (transform == "pytorch_half_pixel")
    return resized > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
  if (transform == "align_corners")
    return resized > 1 ? o * double(in - 1) / (resized - 1) : 0.0;
  if (transform == "tf_half_pixel_for_nn")
    return (o + 0.5) / scale;
  return o / scale; // asymmetric
}

static int64_t nearestIndex(StringRef mode, double x, double scale) {
  if (mode == "simple")
    return scale < 1 ? int64_t(std::ceil(x)) : int64_t(std::trunc(x));
  if (mode == "floor")
    return int64_t(std::floor(x));
  if (mode == "ceil")
    return int64_t(std::ceil(x));
  double below = std::floor(x);
  if (x - below == 0.5)
    return int64_t(mode == "round_prefer_ceil" ? below + 1 : below);
  return int64_t(std::round(x));
}

/// A constant i64 index vector.
static Value indexConstant(NodeContext &ctx, ArrayRef<int64_t> indices) {
  auto type = RankedTensorType::get({int64_t(indices.size())},
                                    IntegerType::get(ctx.getContext(), 64));
  return ctx.constant(DenseElementsAttr::get(type, indices));
}

/// Gathers `indices` of `value` along `axis`.
static FailureOr<Value> gatherAlong(NodeContext &ctx, Value value,
                                    ArrayRef<int64_t> indices, int64_t axis) {
  Builder b(ctx.getContext());
  FailureOr<GatherOp> gather = ctx.create<GatherOp>(
      value, indexConstant(ctx, indices), b.getI64IntegerAttr(axis));
  if (failed(gather))
    return failure();
  return gather->getResult();
}

/// The cubic convolution kernel with coefficient `a` at distance `t`.
static double cubicWeight(double t, double a) {
  t = std::abs(t);
  if (t <= 1)
    return ((a + 2) * t - (a + 3)) * t * t + 1;
  if (t < 2)
    return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
  return 0;
}

/// The most positions a resized or padded axis may have: each holds its
/// indices (and weights) as constants.
constexpr int64_t kMaxAxisPositions = int64_t(1) << 20;

/// The output positions along an axis as weighted sums of input positions.
struct Taps {
  explicit Taps(int count) : indices(count), weights(count) {}
  SmallVector<SmallVector<int64_t>> indices;
  SmallVector<SmallVector<double>> weights;
};

/// A constant along `axis` of `type`'s rank, broadcast over the others.
static Value axisConstant(NodeContext &ctx, RankedTensorType type, int64_t axis,
                          ArrayRef<double> values) {
  auto floatType = cast<FloatType>(type.getElementType());
  SmallVector<int64_t> shape(type.getRank(), 1);
  shape[axis] = values.size();
  SmallVector<APFloat> elements;
  for (double value : values) {
    APFloat v(value);
    bool lost;
    v.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
              &lost);
    elements.push_back(v);
  }
  return ctx.constant(DenseElementsAttr::get(
      RankedTensorType::get(shape, floatType), elements));
}

/// Builds `map` along `axis` of `value` (from `in` to `out` positions).
static FailureOr<Value> applyTaps(NodeContext &ctx, Value value, int64_t axis,
                                  int64_t in, int64_t out, const Taps &map) {
  const auto &indices = map.indices;
  const auto &weights = map.weights;
  int taps = indices.size();
  // A tap of weight 1 at each position's own index changes nothing.
  bool unchanged = in == out;
  for (int k = 0; k < taps && unchanged; ++k)
    for (int64_t o = 0; o < out && unchanged; ++o)
      unchanged =
          weights[k][o] == 0 || (weights[k][o] == 1 && indices[k][o] == o);
  if (unchanged)
    return value;

  Value sum;
  for (int k = 0; k < taps; ++k) {
    if (llvm::all_of(weights[k], [](double w) { return w == 0; }))
      continue;
    FailureOr<Value> gathered = gatherAlong(ctx, value, indices[k], axis);
    if (failed(gathered))
      return failure();
    Value term = *gathered;
    auto type = cast<RankedTensorType>(term.getType());
    if (!llvm::all_of(weights[k], [](double w) { return w == 1; })) {
      // The weights lie along `axis` and broadcast over the other axes.
      Value weight = axisConstant(ctx, type, axis, weights[k]);
      FailureOr<MulOp> product = ctx.create<MulOp>(type, term, weight);
      if (failed(product))
        return failure();
      term = *product;
    }
    if (!sum) {
      sum = term;
      continue;
    }
    FailureOr<AddOp> added = ctx.create<AddOp>(type, sum, term);
    if (failed(added))
      return failure();
    sum = *added;
  }
  if (!sum)
    return ctx.emitError() << "takes no input position along axis " << axis;
  return sum;
}

/// Resamples `value` along `axis` from `in` to `out` positions: each output
/// position is a weighted sum of taps (1 nearest, 2 linear, 4 cubic) at
/// source indices clamped into the axis.
static FailureOr<Value> resampleAxis(NodeContext &ctx, Value value,
                                     const Sampling &sampling, int64_t axis,
                                     int64_t in, int64_t out) {
  double scale = sampling.scales[axis];
  int taps = sampling.kind == Sampling::Nearest  ? 1
             : sampling.kind == Sampling::Linear ? 2
                                                 : 4;
  Taps map(taps);
  auto &indices = map.indices;
  auto &weights = map.weights;
  for (int64_t o = 0; o < out; ++o) {
    // Beyond two positions past either edge every tap reads the edge (or
    // nothing): clamping there keeps the integer conversions defined.
    double x = std::clamp(sourceCoordinate(sampling, double(o), scale, in, out),
                          -3.0, double(in) + 2.0);
    if (sampling.kind == Sampling::Nearest) {
      indices[0].push_back(std::clamp<int64_t>(
          nearestIndex(sampling.nearestMode, x, scale), 0, in - 1));
      weights[0].push_back(1);
      continue;
    }
    double below = std::floor(x), t = x - below;
    int64_t first = int64_t(below) - (taps == 4 ? 1 : 0);
    double total = 0;
    for (int k = 0; k < taps; ++k) {
      int64_t at = first + k;
      double w = taps == 2 ? (k ? t : 1 - t)
                           : cubicWeight(t - (k - 1), sampling.cubicA);
      // exclude_outside: taps beyond the edges weigh nothing, and the
      // others are renormalized; otherwise they repeat the edge value.
      if (sampling.excludeOutside && (at < 0 || at >= in))
        w = 0;
      indices[k].push_back(std::clamp<int64_t>(at, 0, in - 1));
      weights[k].push_back(w);
      total += w;
    }
    if (sampling.excludeOutside && total != 0)
      for (int k = 0; k < taps; ++k)
        weights[k].back() /= total;
  }
  return applyTaps(ctx, value, axis, in, out, map);
}

/// Resamples input 0 into the inferred output shape.
static LogicalResult resample(NodeContext &ctx, Sampling &sampling) {
  FailureOr<Value> x = ctx.input(0);
  FailureOr<RankedTensorType> outType = ctx.outputType(0);
  if (failed(x) || failed(outType))
    return failure();
  auto inType = cast<RankedTensorType>(x->getType());
  if (!isa<FloatType>(inType.getElementType()))
    return ctx.emitError() << "resizing " << inType
                           << " is not supported (float tensors only)";
  int64_t rank = inType.getRank();
  if (outType->getRank() != rank)
    return ctx.emitError() << "the output's rank differs from the input's";
  sampling.scalesGiven = !sampling.scales.empty();
  if (sampling.scales.empty())
    for (int64_t d = 0; d < rank; ++d)
      sampling.scales.push_back(double(outType->getDimSize(d)) /
                                double(inType.getDimSize(d)));
  if (int64_t(sampling.scales.size()) != rank)
    return ctx.emitError() << "has " << sampling.scales.size()
                           << " scales for an input of rank " << rank;
  for (double scale : sampling.scales)
    if (!(scale > 0) || !std::isfinite(scale))
      return ctx.emitError() << "scales must be positive and finite";
  Value y = *x;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t in = inType.getDimSize(d), out = outType->getDimSize(d);
    if (in == 0 || out == 0)
      return ctx.emitError() << "cannot resize an empty dimension";
    if (out > kMaxAxisPositions)
      return ctx.emitError() << "resizes axis " << d << " to " << out
                             << " positions, more than " << kMaxAxisPositions;
    FailureOr<Value> resampled = resampleAxis(ctx, y, sampling, d, in, out);
    if (failed(resampled))
      return failure();
    y = *resampled;
  }
  if (y.getType() != *outType)
    return ctx.emitError() << "resizes to " << y.getType() << " where ONNX "
                           << "shape inference gives " << *outType;
  ctx.setOutput(0, y);
  return success();
}

/// `mode`: nearest, linear (Upsample's "bilinear" too) or cubic.
static LogicalResult readMode(NodeContext &ctx, Sampling &sampling) {
  std::string mode = ctx.stringAttr("mode", "nearest");
  if (mode == "nearest")
    return success();
  if (mode == "linear" || mode == "bilinear") {
    sampling.kind = Sampling::Linear;
    return success();
  }
  if (mode == "cubic") {
    sampling.kind = Sampling::Cubic;
    sampling.cubicA = ctx.floatAttr("cubic_coeff_a", -0.75f);
    sampling.excludeOutside = ctx.intAttr("exclude_outside", 0) != 0;
    return success();
  }
  return ctx.emitError() << "mode '" << mode
                         << "' is not valid (nearest, linear or cubic)";
}

/// The float scales of constant input `i`; empty when it holds none.
static LogicalResult floatScalesInput(NodeContext &ctx, unsigned i,
                                      SmallVector<double> &scales) {
  if (!ctx.hasInput(i))
    return success();
  DenseElementsAttr value = ctx.constantInput(i);
  if (!value || !isa<FloatType>(value.getElementType()))
    return ctx.emitError() << "scales (input " << i
                           << ") must be a constant float tensor";
  for (const APFloat &scale : value.getValues<APFloat>())
    scales.push_back(scale.convertToDouble());
  return success();
}

/// Upsample-7: scales as an attribute; Upsample-9 and Resize-10: as input 1.
/// The transformation is asymmetric, nearest sampling "simple".
template <bool scalesAsInput>
static LogicalResult importUpsample(NodeContext &ctx) {
  Sampling sampling;
  sampling.transform = "asymmetric";
  sampling.nearestMode = "simple";
  if (failed(readMode(ctx, sampling)))
    return failure();
  if (sampling.kind == Sampling::Cubic)
    return ctx.emitError() << "cubic mode needs Resize from opset 11";
  if constexpr (scalesAsInput) {
    if (failed(floatScalesInput(ctx, 1, sampling.scales)))
      return failure();
  } else {
    const onnx::AttributeProto *scales = ctx.attribute("scales");
    if (!scales)
      return ctx.emitError() << "has no scales";
    for (float scale : scales->floats())
      sampling.scales.push_back(scale);
  }
  if (sampling.scales.empty())
    return ctx.emitError() << "has no scales";
  return resample(ctx, sampling);
}

/// Resize from opset 11: (X, roi, scales, sizes) with the coordinate
/// transformation and the nearest rounding as attributes.
static LogicalResult importResize(NodeContext &ctx) {
  Sampling sampling;
  if (failed(readMode(ctx, sampling)))
    return failure();
  sampling.transform =
      ctx.stringAttr("coordinate_transformation_mode", "half_pixel");
  if (!llvm::is_contained({"half_pixel", "pytorch_half_pixel", "align_corners",
                           "asymmetric", "tf_half_pixel_for_nn"},
                          sampling.transform))
    return ctx.emitError() << "coordinate_transformation_mode '"
                           << sampling.transform << "' is not supported";
  sampling.nearestMode = ctx.stringAttr("nearest_mode", "round_prefer_floor");
  if (!llvm::is_contained(
          {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"},
          sampling.nearestMode))
    return ctx.emitError() << "nearest_mode '" << sampling.nearestMode
                           << "' is not valid";
  if (failed(floatScalesInput(ctx, 2, sampling.scales)))
    return failure();
  // Sizes alone: the scales are output / input sizes (resample).
  if (!sampling.scales.empty() && ctx.hasInput(3))
    return ctx.emitError() << "takes scales or sizes, not both";
  if (sampling.scales.empty() && !ctx.hasInput(3))
    return ctx.emitError() << "has neither scales nor sizes";
  return resample(ctx, sampling);
}

/// The input index that output position `o` of a padded axis copies, or
/// -1 for the constant value. Negative pads crop first (as ONNX Runtime
/// does), and the modes extend what is left: reflect without repeating the
/// edge, edge by repeating it, wrap cyclically.
static int64_t paddedSource(StringRef mode, int64_t o, int64_t begin,
                            int64_t end, int64_t in) {
  int64_t cropBegin = std::max<int64_t>(-begin, 0);
  int64_t kept = in - cropBegin - std::max<int64_t>(-end, 0);
  int64_t i = o - std::max<int64_t>(begin, 0);
  if (i >= 0 && i < kept)
    return cropBegin + i;
  if (mode == "constant")
    return -1;
  if (mode == "edge")
    return cropBegin + std::clamp<int64_t>(i, 0, kept - 1);
  if (mode == "wrap")
    return cropBegin + ((i % kept) + kept) % kept;
  // reflect: period 2(kept - 1).
  if (kept == 1)
    return cropBegin;
  int64_t period = 2 * (kept - 1);
  int64_t r = ((i % period) + period) % period;
  return cropBegin + (r < kept ? r : period - r);
}

/// Pad: pads and the constant value from attributes (opset 2) or inputs
/// (11); modes constant, reflect, edge and wrap (19). Negative pads crop.
template <bool asInputs> static LogicalResult importPad(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  FailureOr<RankedTensorType> outType = ctx.outputType(0);
  if (failed(x) || failed(outType))
    return failure();
  auto inType = cast<RankedTensorType>(x->getType());
  int64_t rank = inType.getRank();
  std::string mode = ctx.stringAttr("mode", "constant");
  if (!llvm::is_contained({"constant", "reflect", "edge", "wrap"}, mode))
    return ctx.emitError() << "mode '" << mode
                           << "' is not valid (constant, reflect, edge, wrap)";
  SmallVector<int64_t> pads;
  double value = 0;
  if constexpr (asInputs) {
    FailureOr<SmallVector<int64_t>> given = ctx.intsInput(1, "pads");
    if (failed(given))
      return failure();
    pads = *given;
    if (ctx.hasInput(2)) {
      FailureOr<double> constant = ctx.scalarInput(2, "constant_value");
      if (failed(constant))
        return failure();
      value = *constant;
    }
    if (ctx.hasInput(3))
      return ctx.emitError() << "padding selected axes is not supported; "
                                "give pads for every axis";
  } else {
    pads = ctx.intsAttr("pads");
    value = ctx.floatAttr("value", 0.0f);
  }
  if (int64_t(pads.size()) != 2 * rank)
    return ctx.emitError() << "has " << pads.size() << " pads for an input of "
                           << "rank " << rank << " (expected " << 2 * rank
                           << ")";
  Value y = *x;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t begin = pads[d], end = pads[d + rank];
    if (begin < -kMaxAxisPositions || begin > kMaxAxisPositions ||
        end < -kMaxAxisPositions || end > kMaxAxisPositions)
      return ctx.emitError() << "pads axis " << d << " by (" << begin << ", "
                             << end << "), more than " << kMaxAxisPositions;
    int64_t in = inType.getDimSize(d);
    int64_t out = in + begin + end;
    if (begin == 0 && end == 0)
      continue;
    if (out != outType->getDimSize(d))
      return ctx.emitError() << "pads axis " << d << " to " << out
                             << " positions where ONNX shape inference gives "
                             << outType->getDimSize(d);
    if (in == 0 || out <= 0)
      return ctx.emitError() << "pads axis " << d << " to nothing";
    if (out > kMaxAxisPositions)
      return ctx.emitError() << "pads axis " << d << " to " << out
                             << " positions, more than " << kMaxAxisPositions;
    int64_t kept =
        in - std::max<int64_t>(-begin, 0) - std::max<int64_t>(-end, 0);
    if (kept <= 0)
      return ctx.emitError() << "crops all of axis " << d;
    if (mode == "reflect" && (begin >= kept || end >= kept))
      return ctx.emitError()
             << "reflect pads of axis " << d << " (" << begin << ", " << end
             << ") must be smaller than its size " << kept;
    Taps map(1);
    bool constant = false;
    for (int64_t o = 0; o < out; ++o) {
      int64_t source = paddedSource(mode, o, begin, end, in);
      // The constant value is one more position, appended below.
      constant |= source < 0;
      map.indices[0].push_back(source < 0 ? in : source);
      map.weights[0].push_back(1);
    }
    Value source = y;
    int64_t sourceSize = in;
    if (constant) {
      // y with a slice of the constant value appended along the axis: the
      // gather then copies both, and nothing multiplies a padded position
      // (0 x inf would be NaN).
      auto type = cast<RankedTensorType>(y.getType());
      SmallVector<int64_t> blockShape(type.getShape());
      blockShape[d] = 1;
      Value block = ctx.splatConstant(type.clone(blockShape), value);
      blockShape[d] = in + 1;
      Builder b(ctx.getContext());
      FailureOr<ConcatOp> joined = ctx.create<ConcatOp>(
          type.clone(blockShape), ValueRange{y, block}, b.getI64IntegerAttr(d));
      if (failed(joined))
        return failure();
      source = *joined;
      sourceSize = in + 1;
    }
    FailureOr<Value> padded = applyTaps(ctx, source, d, sourceSize, out, map);
    if (failed(padded))
      return failure();
    y = *padded;
  }
  if (y.getType() != *outType)
    return ctx.emitError() << "pads to " << y.getType() << " where ONNX "
                           << "shape inference gives " << *outType;
  ctx.setOutput(0, y);
  return success();
}

ArrayRef<OpImporter> onnx_import::getResamplingImporters() {
  static const OpImporter importers[] = {
      {"", "Upsample", 7, importUpsample</*scalesAsInput=*/false>},
      {"", "Upsample", 9, importUpsample</*scalesAsInput=*/true>},
      {"", "Resize", 10, importUpsample</*scalesAsInput=*/true>},
      {"", "Resize", 11, importResize},
      {"", "Pad", 2, importPad</*asInputs=*/false>},
      {"", "Pad", 11, importPad</*asInputs=*/true>},
  };
  return importers;
}
