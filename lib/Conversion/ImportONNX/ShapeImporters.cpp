//===- ShapeImporters.cpp - Shape ops, reductions, shape folding -*- C++ -*-=//
//
// Flatten, Reshape, Transpose, Concat, Split, Slice, Squeeze, Unsqueeze,
// Expand and the reductions; and the import-time evaluation of shape
// computations (Shape -> Gather -> Concat -> Reshape) on constants.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "gs/Dialect/GS/IR/ShapeUtils.h"

#include "llvm/ADT/StringSwitch.h"

#include <limits>

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::onnx_import;

/// The node's result type (from shape inference) on its first input.
template <typename OpTy>
static LogicalResult importReshapeLike(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  FailureOr<RankedTensorType> type = ctx.outputType(0);
  if (failed(x) || failed(type))
    return failure();
  FailureOr<OpTy> op = ctx.create<OpTy>(*type, *x);
  if (failed(op))
    return failure();
  ctx.setOutput(0, *op);
  return success();
}

static LogicalResult importFlatten(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  FailureOr<RankedTensorType> type = ctx.outputType(0);
  if (failed(x) || failed(type))
    return failure();
  int64_t rank = cast<RankedTensorType>(x->getType()).getRank();
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.intAttr("axis", 1), rank, /*inclusive=*/true);
  if (failed(axis))
    return failure();
  FailureOr<FlattenOp> op = ctx.create<FlattenOp>(*type, *x, *axis);
  if (failed(op))
    return failure();
  ctx.setOutput(0, *op);
  return success();
}

static LogicalResult importTranspose(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  FailureOr<RankedTensorType> type = ctx.outputType(0);
  if (failed(x) || failed(type))
    return failure();
  int64_t rank = type->getRank();
  SmallVector<int64_t> perm = ctx.optionalIntsAttr("perm").value_or(
      llvm::to_vector(llvm::reverse(llvm::seq<int64_t>(0, rank))));
  FailureOr<TransposeOp> op = ctx.create<TransposeOp>(*type, *x, perm);
  if (failed(op))
    return failure();
  ctx.setOutput(0, *op);
  return success();
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
  FailureOr<ConcatOp> op = ctx.create<ConcatOp>(*type, *inputs, *axis);
  if (failed(op))
    return failure();
  ctx.setOutput(0, *op);
  return success();
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
  FailureOr<RankedTensorType> type = ctx.outputType(0);
  FailureOr<std::optional<SmallVector<int64_t>>> axes = axesOf(ctx, 13);
  if (failed(x) || failed(type) || failed(axes))
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
  FailureOr<SqueezeOp> op = ctx.create<SqueezeOp>(*type, *x, list);
  if (failed(op))
    return failure();
  ctx.setOutput(0, *op);
  return success();
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
  FailureOr<UnsqueezeOp> op = ctx.create<UnsqueezeOp>(*type, *x, *normalized);
  if (failed(op))
    return failure();
  ctx.setOutput(0, *op);
  return success();
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
  FailureOr<RankedTensorType> type = ctx.outputType(0);
  if (failed(x) || failed(type))
    return failure();
  FailureOr<SliceBounds> bounds =
      resolveSlice(ctx, cast<RankedTensorType>(x->getType()).getShape());
  if (failed(bounds))
    return failure();
  FailureOr<SliceOp> op = ctx.create<SliceOp>(*type, *x, bounds->starts,
                                              bounds->ends, bounds->steps);
  if (failed(op))
    return failure();
  ctx.setOutput(0, *op);
  return success();
}

/// ReduceSum takes its axes as an input from opset 13, the others from 18.
template <typename OpTy, int axesInputSince>
static LogicalResult importReduce(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  FailureOr<RankedTensorType> type = ctx.outputType(0);
  FailureOr<std::optional<SmallVector<int64_t>>> axes =
      axesOf(ctx, axesInputSince);
  if (failed(x) || failed(type) || failed(axes))
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
  FailureOr<OpTy> op = ctx.create<OpTy>(
      *type, *x, b.getDenseI64ArrayAttr(list),
      ctx.intAttr("keepdims", 1) ? b.getUnitAttr() : UnitAttr());
  if (failed(op))
    return failure();
  ctx.setOutput(0, *op);
  return success();
}

ArrayRef<OpImporter> onnx_import::getShapeImporters() {
  static const OpImporter importers[] = {
      {"", "Flatten", 1, importFlatten},
      {"", "Reshape", 5, importReshapeLike<ReshapeOp>},
      {"", "Expand", 8, importReshapeLike<ExpandOp>},
      {"", "Transpose", 1, importTranspose},
      {"", "Concat", 4, importConcat},
      {"", "Split", 2, importSplit},
      {"", "Slice", 1, importSlice},
      {"", "Squeeze", 1, importSqueeze},
      {"", "Unsqueeze", 1, importUnsqueeze},
      {"", "ReduceSum", 1, importReduce<ReduceSumOp, 13>},
      {"", "ReduceMean", 1, importReduce<ReduceMeanOp, 18>},
      {"", "ReduceMax", 1, importReduce<ReduceMaxOp, 18>},
  };
  return importers;
}

//===----------------------------------------------------------------------===//
// Shape computations at import time
//===----------------------------------------------------------------------===//

/// The integer values of a constant, or nullopt.
static std::optional<SmallVector<int64_t>> intValues(DenseElementsAttr attr) {
  if (!attr || !isa<IntegerType>(attr.getElementType()))
    return std::nullopt;
  SmallVector<int64_t> values;
  for (const APInt &v : attr.getValues<APInt>())
    values.push_back(attr.getElementType().isInteger(1) ? v.getZExtValue()
                                                        : v.getSExtValue());
  return values;
}

/// A dense attribute of `type` holding `values` (converted to its element
/// type).
static DenseElementsAttr makeInts(RankedTensorType type,
                                  ArrayRef<int64_t> values) {
  SmallVector<APInt> elements;
  unsigned width = type.getElementType().getIntOrFloatBitWidth();
  for (int64_t v : values)
    elements.push_back(
        APInt(width, v, /*isSigned=*/true, /*implicitTrunc=*/true));
  return DenseElementsAttr::get(type, elements);
}

/// NumPy-broadcast integer arithmetic of two constants.
static std::optional<SmallVector<int64_t>>
foldIntBinary(StringRef op, ArrayRef<int64_t> lhsShape, ArrayRef<int64_t> lhs,
              ArrayRef<int64_t> rhsShape, ArrayRef<int64_t> rhs,
              ArrayRef<int64_t> resultShape) {
  int64_t n = numElements(resultShape);
  int64_t rank = resultShape.size();
  // Index of a result element in a broadcast operand.
  auto source = [&](ArrayRef<int64_t> shape, int64_t index) {
    int64_t offset = 0, stride = 1;
    for (int64_t d = rank - 1, s = shape.size() - 1; d >= 0; --d, --s) {
      int64_t coord = index % resultShape[d];
      index /= resultShape[d];
      if (s >= 0) {
        if (shape[s] != 1)
          offset += coord * stride;
        stride *= shape[s];
      }
    }
    return offset;
  };
  SmallVector<int64_t> result;
  for (int64_t i = 0; i < n; ++i) {
    int64_t a = lhs[source(lhsShape, i)], b = rhs[source(rhsShape, i)];
    if (op == "Add")
      result.push_back(a + b);
    else if (op == "Sub")
      result.push_back(a - b);
    else if (op == "Mul")
      result.push_back(a * b);
    else if (op == "Div") {
      if (b == 0)
        return std::nullopt;
      result.push_back(a / b);
    } else if (op == "Equal")
      result.push_back(a == b);
    else
      return std::nullopt;
  }
  return result;
}

bool onnx_import::isFoldOnlyOperator(StringRef domain, StringRef opType) {
  return domain.empty() &&
         llvm::is_contained(
             {"Shape", "Gather", "ConstantOfShape", "Range", "Equal", "Where"},
             opType);
}

/// Operators that fold when all their inputs are constant.
static bool isFoldable(StringRef opType) {
  return llvm::is_contained({"Gather", "ConstantOfShape", "Range", "Equal",
                             "Where", "Unsqueeze", "Squeeze", "Reshape",
                             "Concat", "Cast", "Add", "Sub", "Mul", "Div",
                             "Slice", "Flatten", "Expand"},
                            opType);
}

FailureOr<bool> onnx_import::foldShapeComputation(NodeContext &ctx) {
  StringRef opType = ctx.node.op_type();
  if (!canonicalDomain(ctx.node.domain()).empty())
    return false;

  // Shape needs only a static input type.
  if (opType == "Shape") {
    std::string why;
    FailureOr<RankedTensorType> inputType =
        ctx.graph().typeOf(ctx.inputName(0), why);
    if (failed(inputType))
      return ctx.emitError() << "needs the static shape of '"
                             << ctx.inputName(0) << "': " << why;
    ArrayRef<int64_t> shape = inputType->getShape();
    int64_t rank = shape.size();
    int64_t start = ctx.intAttr("start", 0), end = ctx.intAttr("end", rank);
    start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
    ArrayRef<int64_t> dims =
        shape.slice(start, std::max<int64_t>(end - start, 0));
    auto type = RankedTensorType::get({static_cast<int64_t>(dims.size())},
                                      IntegerType::get(ctx.getContext(), 64));
    ctx.setConstantOutput(0, makeInts(type, dims));
    return true;
  }

  if (!isFoldable(opType))
    return false;
  SmallVector<DenseElementsAttr> inputs;
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    if (!ctx.hasInput(i)) {
      inputs.push_back({});
      continue;
    }
    DenseElementsAttr value = ctx.constantInput(i);
    if (!value)
      return false;
    inputs.push_back(value);
  }
  if (inputs.empty() || !inputs.front())
    return false;
  std::string why;
  FailureOr<RankedTensorType> type =
      ctx.graph().typeOf(ctx.node.output(0), why);
  if (failed(type))
    return false;

  // Shape-only rewrites work on constants of any element type.
  if (llvm::is_contained({"Unsqueeze", "Squeeze", "Reshape", "Flatten"},
                         opType)) {
    ctx.setConstantOutput(0, inputs.front().reshape(*type));
    return true;
  }
  if (opType == "Expand" && inputs.front().isSplat()) {
    ctx.setConstantOutput(0, inputs.front().resizeSplat(*type));
    return true;
  }
  if (opType == "ConstantOfShape") {
    Attribute element = FloatAttr::get(Float32Type::get(ctx.getContext()), 0.0);
    if (const onnx::AttributeProto *attr = ctx.attribute("value")) {
      std::optional<SmallVector<int64_t>> ints;
      if (attr->t().data_type() == onnx::TensorProto::FLOAT)
        element = FloatAttr::get(type->getElementType(),
                                 attr->t().float_data_size()
                                     ? attr->t().float_data(0)
                                     : *reinterpret_cast<const float *>(
                                           attr->t().raw_data().data()));
      else if (attr->t().data_type() == onnx::TensorProto::INT64)
        element = IntegerAttr::get(type->getElementType(),
                                   attr->t().int64_data_size()
                                       ? attr->t().int64_data(0)
                                       : *reinterpret_cast<const int64_t *>(
                                             attr->t().raw_data().data()));
      else
        return false;
    }
    ctx.setConstantOutput(0, DenseElementsAttr::get(*type, element));
    return true;
  }

  // The rest computes on integers.
  SmallVector<SmallVector<int64_t>> values;
  for (DenseElementsAttr input : inputs) {
    std::optional<SmallVector<int64_t>> ints =
        input ? intValues(input) : SmallVector<int64_t>();
    if (!ints)
      return false;
    values.push_back(*ints);
  }
  if (!isa<IntegerType>(type->getElementType()))
    return false;
  auto shapeOfInput = [&](unsigned i) {
    return cast<RankedTensorType>(inputs[i].getType()).getShape();
  };
  std::optional<SmallVector<int64_t>> result;
  if (opType == "Cast" || opType == "Concat") {
    result.emplace();
    for (const auto &v : values)
      result->append(v);
    if (opType == "Concat" && type->getRank() != 1)
      return false;
  } else if (opType == "Gather") {
    int64_t axis = ctx.intAttr("axis", 0);
    if (shapeOfInput(0).size() != 1 || (axis != 0 && axis != -1))
      return false;
    result.emplace();
    int64_t size = values[0].size();
    for (int64_t index : values[1]) {
      if (index < -size || index >= size)
        return ctx.emitError()
               << "gather index " << index << " is out of range";
      result->push_back(values[0][index < 0 ? index + size : index]);
    }
  } else if (opType == "Range") {
    if (values.size() != 3 || values[2].size() != 1 || values[2][0] == 0)
      return false;
    result.emplace();
    for (int64_t v = values[0][0];
         values[2][0] > 0 ? v < values[1][0] : v > values[1][0];
         v += values[2][0])
      result->push_back(v);
  } else if (opType == "Where") {
    if (values.size() != 3 || values[0].size() != values[1].size() ||
        values[1].size() != values[2].size())
      return false;
    result.emplace();
    for (auto [c, a, b] : llvm::zip(values[0], values[1], values[2]))
      result->push_back(c ? a : b);
  } else if (opType == "Slice") {
    if (shapeOfInput(0).size() != 1)
      return false;
    FailureOr<SliceBounds> bounds = resolveSlice(ctx, shapeOfInput(0));
    if (failed(bounds))
      return failure();
    result.emplace();
    for (int64_t i = bounds->starts[0];
         bounds->steps[0] > 0 ? i < bounds->ends[0] : i > bounds->ends[0];
         i += bounds->steps[0])
      result->push_back(values[0][i]);
  } else {
    result = foldIntBinary(opType, shapeOfInput(0), values[0], shapeOfInput(1),
                           values[1], type->getShape());
  }
  if (!result || static_cast<int64_t>(result->size()) != type->getNumElements())
    return false;
  ctx.setConstantOutput(0, makeInts(*type, *result));
  return true;
}
