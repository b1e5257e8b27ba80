//===- ShapeImporters.cpp - Shape ops, reductions, shape folding -*- C++ -*-=//
//
// Flatten, Reshape, Transpose, Concat, Split, Slice, Squeeze, Unsqueeze,
// Expand, Gather, GatherElements and the reductions; and the import-time
// evaluation of shape computations (Shape -> Gather -> Concat -> Reshape) on
// constants.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "gs/Dialect/GS/IR/ShapeUtils.h"

#include "mlir/IR/Matchers.h"

#include "llvm/ADT/StringSwitch.h"

#include <limits>

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::onnx_import;

/// The node's result type (from shape inference) on its first input.
template <typename OpTy>
static LogicalResult importReshapeLike(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  return ctx.createAsOutput<OpTy>(*x);
}

static LogicalResult importFlatten(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  int64_t rank = cast<RankedTensorType>(x->getType()).getRank();
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.intAttr("axis", 1), rank, /*inclusive=*/true);
  if (failed(axis))
    return failure();
  return ctx.createAsOutput<FlattenOp>(*x, *axis);
}

static LogicalResult importTranspose(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  FailureOr<RankedTensorType> type = ctx.outputType(0);
  if (failed(x) || failed(type))
    return failure();
  int64_t rank = type->getRank();
  SmallVector<int64_t> perm = ctx.optionalIntsAttr("perm").value_or(
      llvm::to_vector(llvm::reverse(llvm::seq<int64_t>(0, rank))));
  return ctx.createAsOutput<TransposeOp>(*x, perm);
}

static LogicalResult importConcat(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> inputs = ctx.inputs();
  FailureOr<RankedTensorType> type = ctx.outputType(0);
  if (failed(inputs) || failed(type))
    return failure();
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.intAttr("axis", 0), type->getRank());
  if (failed(axis))
    return failure();
  return ctx.createAsOutput<ConcatOp>(*inputs, *axis);
}

/// Gather and GatherElements: data, indices and an axis of the data.
template <typename OpTy> static LogicalResult importGather(NodeContext &ctx) {
  FailureOr<Value> data = ctx.input(0);
  FailureOr<Value> indices = ctx.input(1);
  if (failed(data) || failed(indices))
    return failure();
  auto dataType = cast<RankedTensorType>(data->getType());
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.intAttr("axis", 0), dataType.getRank());
  if (failed(axis))
    return failure();
  // Constant indices are checked here: out-of-range ones have no defined
  // result, and the lowering would clamp them silently.
  int64_t size = dataType.getDimSize(*axis);
  DenseIntElementsAttr constant;
  if (matchPattern(*indices, m_Constant(&constant)) &&
      !ShapedType::isDynamic(size))
    for (const APInt &index :
         constant.isSplat()
             ? SmallVector<APInt>{constant.getSplatValue<APInt>()}
             : llvm::to_vector(constant.getValues<APInt>())) {
      int64_t value = index.getSExtValue();
      if (value < -size || value >= size)
        return ctx.emitError()
               << "index " << value << " is out of range [-" << size << ", "
               << size << ") of axis " << *axis << " of its data";
    }
  return ctx.createAsOutput<OpTy>(*data, *indices, *axis);
}

static LogicalResult importSplit(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  SmallVector<Type> types;
  for (unsigned i = 0; i < ctx.numOutputs(); ++i) {
    FailureOr<RankedTensorType> type = ctx.outputType(i);
    if (failed(type))
      return failure();
    types.push_back(*type);
  }
  int64_t rank = cast<RankedTensorType>(x->getType()).getRank();
  FailureOr<int64_t> axis = ctx.normalizeAxis(ctx.intAttr("axis", 0), rank);
  if (failed(axis))
    return failure();
  FailureOr<SplitOp> op = ctx.create<SplitOp>(types, *x, *axis);
  if (failed(op))
    return failure();
  ctx.setOutputs(op->getResults());
  return success();
}

/// Normalizes axes (negative from the end), sorts them and rejects repeats.
static FailureOr<SmallVector<int64_t>>
normalizeAxes(NodeContext &ctx, ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> result;
  for (int64_t axis : axes) {
    FailureOr<int64_t> normalized = ctx.normalizeAxis(axis, rank);
    if (failed(normalized))
      return failure();
    result.push_back(*normalized);
  }
  llvm::sort(result);
  if (std::adjacent_find(result.begin(), result.end()) != result.end())
    return ctx.emitError() << "axes repeat";
  return result;
}

/// Axes of Squeeze, Unsqueeze and the reductions: an attribute before
/// `inputSince`, an optional input from then on.
static FailureOr<std::optional<SmallVector<int64_t>>> axesOf(NodeContext &ctx,
                                                             int inputSince) {
  if (ctx.opset < inputSince)
    return ctx.optionalIntsAttr("axes");
  if (!ctx.hasInput(1))
    return std::optional<SmallVector<int64_t>>();
  FailureOr<SmallVector<int64_t>> axes = ctx.intsInput(1, "axes");
  if (failed(axes))
    return failure();
  return std::optional<SmallVector<int64_t>>(*axes);
}

static LogicalResult importSqueeze(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  FailureOr<std::optional<SmallVector<int64_t>>> axes = axesOf(ctx, 13);
  if (failed(x) || failed(axes))
    return failure();
  auto inputType = cast<RankedTensorType>(x->getType());
  SmallVector<int64_t> list;
  if (*axes) {
    FailureOr<SmallVector<int64_t>> normalized =
        normalizeAxes(ctx, **axes, inputType.getRank());
    if (failed(normalized))
      return failure();
    list = *normalized;
  } else {
    for (auto [d, size] : llvm::enumerate(inputType.getShape()))
      if (size == 1)
        list.push_back(d);
  }
  return ctx.createAsOutput<SqueezeOp>(*x, list);
}

static LogicalResult importUnsqueeze(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  FailureOr<RankedTensorType> type = ctx.outputType(0);
  FailureOr<std::optional<SmallVector<int64_t>>> axes = axesOf(ctx, 13);
  if (failed(x) || failed(type) || failed(axes))
    return failure();
  if (!*axes)
    return ctx.emitError() << "needs axes";
  FailureOr<SmallVector<int64_t>> normalized =
      normalizeAxes(ctx, **axes, type->getRank());
  if (failed(normalized))
    return failure();
  return ctx.createAsOutput<UnsqueezeOp>(*x, *normalized);
}

/// Clamps ONNX slice bounds the way ONNX does: negative values count from
/// the end, then bounds are limited to the dimension.
static void clampSlice(int64_t dim, int64_t &start, int64_t &end,
                       int64_t step) {
  auto adjust = [&](int64_t v) {
    if (v < 0)
      v = v < std::numeric_limits<int64_t>::min() + dim ? -1 : v + dim;
    return v;
  };
  start = adjust(start);
  end = adjust(end);
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
  }
}

/// Starts, ends, axes and steps of a Slice: inputs from opset 10,
/// attributes before.
struct SliceBounds {
  SmallVector<int64_t> starts, ends, axes, steps;
};

static FailureOr<SliceBounds> sliceBoundsOf(NodeContext &ctx, int64_t rank) {
  SliceBounds b;
  if (ctx.opset < 10) {
    b.starts = ctx.intsAttr("starts");
    b.ends = ctx.intsAttr("ends");
    b.axes = ctx.intsAttr("axes");
  } else {
    FailureOr<SmallVector<int64_t>> starts = ctx.intsInput(1, "starts");
    FailureOr<SmallVector<int64_t>> ends = ctx.intsInput(2, "ends");
    if (failed(starts) || failed(ends))
      return failure();
    b.starts = *starts;
    b.ends = *ends;
    for (auto [index, target] :
         {std::pair<unsigned, SmallVector<int64_t> *>{3, &b.axes},
          {4, &b.steps}}) {
      if (!ctx.hasInput(index))
        continue;
      FailureOr<SmallVector<int64_t>> values =
          ctx.intsInput(index, index == 3 ? "axes" : "steps");
      if (failed(values))
        return failure();
      *target = *values;
    }
  }
  if (b.axes.empty())
    b.axes = llvm::to_vector(llvm::seq<int64_t>(0, b.starts.size()));
  if (b.steps.empty())
    b.steps.assign(b.starts.size(), 1);
  if (b.ends.size() != b.starts.size() || b.axes.size() != b.starts.size() ||
      b.steps.size() != b.starts.size())
    return ctx.emitError() << "starts, ends, axes and steps differ in length";
  for (int64_t &axis : b.axes) {
    FailureOr<int64_t> normalized = ctx.normalizeAxis(axis, rank);
    if (failed(normalized))
      return failure();
    axis = *normalized;
  }
  return b;
}

/// Full per-dimension starts, ends and steps of a slice of `shape`.
static FailureOr<SliceBounds> resolveSlice(NodeContext &ctx,
                                           ArrayRef<int64_t> shape) {
  FailureOr<SliceBounds> given = sliceBoundsOf(ctx, shape.size());
  if (failed(given))
    return failure();
  SliceBounds full;
  full.starts.assign(shape.size(), 0);
  full.ends.assign(shape.begin(), shape.end());
  full.steps.assign(shape.size(), 1);
  for (auto [i, axis] : llvm::enumerate(given->axes)) {
    int64_t start = given->starts[i], end = given->ends[i];
    int64_t step = given->steps[i];
    if (step == 0)
      return ctx.emitError() << "slice step is zero";
    clampSlice(shape[axis], start, end, step);
    full.starts[axis] = start;
    full.ends[axis] = end;
    full.steps[axis] = step;
  }
  return full;
}

static LogicalResult importSlice(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  FailureOr<SliceBounds> bounds =
      resolveSlice(ctx, cast<RankedTensorType>(x->getType()).getShape());
  if (failed(bounds))
    return failure();
  return ctx.createAsOutput<SliceOp>(*x, bounds->starts, bounds->ends,
                                     bounds->steps);
}

/// ReduceSum takes its axes as an input from opset 13, the others from 18.
template <typename OpTy, int axesInputSince>
static LogicalResult importReduce(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  FailureOr<std::optional<SmallVector<int64_t>>> axes =
      axesOf(ctx, axesInputSince);
  if (failed(x) || failed(axes))
    return failure();
  int64_t rank = cast<RankedTensorType>(x->getType()).getRank();
  SmallVector<int64_t> list;
  if (*axes && !(*axes)->empty()) {
    FailureOr<SmallVector<int64_t>> normalized =
        normalizeAxes(ctx, **axes, rank);
    if (failed(normalized))
      return failure();
    list = *normalized;
  } else if (!ctx.intAttr("noop_with_empty_axes", 0)) {
    list = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  }
  Builder b(ctx.getContext());
  return ctx.createAsOutput<OpTy>(*x, b.getDenseI64ArrayAttr(list),
                                  ctx.intAttr("keepdims", 1) ? b.getUnitAttr()
                                                             : UnitAttr());
}

ArrayRef<OpImporter> onnx_import::getShapeImporters() {
  static const OpImporter importers[] = {
      {"", "Flatten", 1, importFlatten},
      {"", "Reshape", 5, importReshapeLike<ReshapeOp>},
      {"", "Expand", 8, importReshapeLike<ExpandOp>},
      {"", "Transpose", 1, importTranspose},
      {"", "Concat", 4, importConcat},
      {"", "Split", 2, importSplit},
      {"", "Gather", 1, importGather<GatherOp>},
      {"", "GatherElements", 11, importGather<GatherElementsOp>},
      {"", "Slice", 1, importSlice},
      {"", "Squeeze", 1, importSqueeze},
      {"", "Unsqueeze", 1, importUnsqueeze},
      {"", "ReduceSum", 1, importReduce<ReduceSumOp, 13>},
      {"", "ReduceMean", 1, importReduce<ReduceMeanOp, 18>},
      {"", "ReduceMax", 1, importReduce<ReduceMaxOp, 18>},
  };
  return importers;
}
