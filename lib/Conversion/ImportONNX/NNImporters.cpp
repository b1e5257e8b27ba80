//===- NNImporters.cpp - Linear algebra, normalization, losses -*- C++ -*-===//
//
// Gemm, MatMul, Conv, ConvTranspose, the normalizations, pooling, softmax
// and the two classification losses.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "gs/Dialect/GS/IR/ShapeUtils.h"

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::onnx_import;

static ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

static DenseI64ArrayAttr arrayAttr(NodeContext &ctx, ArrayRef<int64_t> values) {
  return DenseI64ArrayAttr::get(ctx.getContext(), values);
}

//===----------------------------------------------------------------------===//
// Window geometry
//===----------------------------------------------------------------------===//

/// Strides, dilations and explicit pads of a windowed node, with ONNX's
/// auto_pad resolved for the given spatial sizes and kernel.
struct Window {
  SmallVector<int64_t> strides, dilations, pads;
};

static FailureOr<Window> resolveWindow(NodeContext &ctx,
                                       ArrayRef<int64_t> spatial,
                                       ArrayRef<int64_t> kernel) {
  size_t rank = spatial.size();
  Window w;
  w.strides =
      ctx.optionalIntsAttr("strides").value_or(SmallVector<int64_t>(rank, 1));
  w.dilations =
      ctx.optionalIntsAttr("dilations").value_or(SmallVector<int64_t>(rank, 1));
  if (w.strides.size() != rank || w.dilations.size() != rank ||
      kernel.size() != rank)
    return ctx.emitError() << "strides, dilations and kernel must have one "
                              "value per spatial dimension ("
                           << rank << ")";
  std::string autoPad = ctx.stringAttr("auto_pad", "NOTSET");
  if (autoPad == "NOTSET") {
    w.pads = ctx.optionalIntsAttr("pads").value_or(
        SmallVector<int64_t>(2 * rank, 0));
    return w;
  }
  w.pads.assign(2 * rank, 0);
  if (autoPad == "VALID")
    return w;
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    return ctx.emitError() << "unknown auto_pad '" << autoPad << "'";
  for (size_t i = 0; i < rank; ++i) {
    if (w.strides[i] < 1)
      return ctx.emitError() << "strides must be positive";
    int64_t out = (spatial[i] + w.strides[i] - 1) / w.strides[i];
    int64_t total = std::max<int64_t>(
        0, (out - 1) * w.strides[i] +
               dilatedKernelSize(kernel[i], w.dilations[i]) - spatial[i]);
    int64_t small = total / 2;
    w.pads[i] = autoPad == "SAME_UPPER" ? small : total - small;
    w.pads[i + rank] = total - w.pads[i];
  }
  return w;
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

static LogicalResult importGemm(NodeContext &ctx) {
  FailureOr<Value> a = ctx.input(0), b = ctx.input(1);
  if (failed(a) || failed(b))
    return failure();
  Value c;
  if (ctx.hasInput(2)) {
    FailureOr<Value> value = ctx.input(2);
    if (failed(value))
      return failure();
    c = *value;
  }
  return ctx.createAsOutput<GemmOp>(*a, *b, c, ctx.intAttr("transA", 0) != 0,
                                    ctx.intAttr("transB", 0) != 0,
                                    APFloat(ctx.floatAttr("alpha", 1.0f)),
                                    APFloat(ctx.floatAttr("beta", 1.0f)));
}

static LogicalResult importMatMul(NodeContext &ctx) {
  FailureOr<Value> a = ctx.input(0), b = ctx.input(1);
  if (failed(a) || failed(b))
    return failure();
  return ctx.createAsOutput<MatMulOp>(*a, *b);
}

/// The optional bias input of Conv and ConvTranspose.
static FailureOr<Value> optionalBias(NodeContext &ctx) {
  if (!ctx.hasInput(2))
    return Value();
  return ctx.input(2);
}

static LogicalResult importConv(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0), w = ctx.input(1);
  FailureOr<Value> bias = optionalBias(ctx);
  if (failed(x) || failed(w) || failed(bias))
    return failure();
  ArrayRef<int64_t> kernel = shapeOf(*w).drop_front(2);
  if (auto declared = ctx.optionalIntsAttr("kernel_shape");
      declared && ArrayRef<int64_t>(*declared) != kernel)
    return ctx.emitError() << "kernel_shape disagrees with the weight's shape";
  FailureOr<Window> window =
      resolveWindow(ctx, shapeOf(*x).drop_front(2), kernel);
  if (failed(window))
    return failure();
  return ctx.createAsOutput<ConvOp>(
      *x, *w, *bias, arrayAttr(ctx, window->strides),
      arrayAttr(ctx, window->pads), arrayAttr(ctx, window->dilations),
      ctx.builder().getI64IntegerAttr(ctx.intAttr("group", 1)));
}

static LogicalResult importConvTranspose(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0), w = ctx.input(1);
  FailureOr<Value> bias = optionalBias(ctx);
  if (failed(x) || failed(w) || failed(bias))
    return failure();
  ArrayRef<int64_t> spatial = shapeOf(*x).drop_front(2);
  ArrayRef<int64_t> kernel = shapeOf(*w).drop_front(2);
  size_t rank = spatial.size();
  SmallVector<int64_t> outputPadding =
      ctx.optionalIntsAttr("output_padding")
          .value_or(SmallVector<int64_t>(rank, 0));
  SmallVector<int64_t> strides =
      ctx.optionalIntsAttr("strides").value_or(SmallVector<int64_t>(rank, 1));
  SmallVector<int64_t> dilations =
      ctx.optionalIntsAttr("dilations").value_or(SmallVector<int64_t>(rank, 1));
  if (strides.size() != rank || dilations.size() != rank ||
      outputPadding.size() != rank)
    return ctx.emitError() << "strides, dilations and output_padding must "
                              "have one value per spatial dimension";
  std::string autoPad = ctx.stringAttr("auto_pad", "NOTSET");
  std::optional<SmallVector<int64_t>> outputShape =
      ctx.optionalIntsAttr("output_shape");
  SmallVector<int64_t> pads =
      ctx.optionalIntsAttr("pads").value_or(SmallVector<int64_t>(2 * rank, 0));
  if (outputShape || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    // ONNX derives the pads from the requested output size.
    if (outputShape && outputShape->size() != rank)
      return ctx.emitError() << "output_shape must have one value per "
                                "spatial dimension";
    for (size_t i = 0; i < rank; ++i) {
      int64_t target =
          outputShape ? (*outputShape)[i] : spatial[i] * strides[i];
      int64_t total = strides[i] * (spatial[i] - 1) + outputPadding[i] +
                      dilatedKernelSize(kernel[i], dilations[i]) - target;
      if (total < 0) {
        // A larger output than the window covers: extra output padding.
        outputPadding[i] -= total;
        total = 0;
      }
      int64_t half = total / 2;
      pads[i] = autoPad == "SAME_UPPER" ? half : total - half;
      pads[i + rank] = total - pads[i];
    }
  } else if (autoPad == "VALID") {
    pads.assign(2 * rank, 0);
  }
  return ctx.createAsOutput<ConvTransposeOp>(
      *x, *w, *bias, arrayAttr(ctx, strides), arrayAttr(ctx, pads),
      arrayAttr(ctx, dilations), arrayAttr(ctx, outputPadding),
      ctx.builder().getI64IntegerAttr(ctx.intAttr("group", 1)));
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

/// Converts `value` to `type`'s element type if needed.
static FailureOr<Value> castTo(NodeContext &ctx, Value value, Type element) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() == element)
    return value;
  FailureOr<CastOp> cast = ctx.create<CastOp>(type.clone(element), value);
  if (failed(cast))
    return failure();
  return cast->getResult();
}

/// `running * momentum + batch * (1 - momentum)`, ONNX's running-statistics
/// update.
static FailureOr<Value> runningAverage(NodeContext &ctx, Value running,
                                       Value batch, double momentum) {
  auto type = cast<RankedTensorType>(running.getType());
  Value keep = ctx.splatConstant(type, momentum);
  Value take = ctx.splatConstant(type, 1.0 - momentum);
  FailureOr<MulOp> old = ctx.create<MulOp>(type, running, keep);
  FailureOr<MulOp> fresh = ctx.create<MulOp>(type, batch, take);
  if (failed(old) || failed(fresh))
    return failure();
  FailureOr<AddOp> sum = ctx.create<AddOp>(type, *old, *fresh);
  if (failed(sum))
    return failure();
  return sum->getResult();
}

static LogicalResult importBatchNorm(NodeContext &ctx) {
  FailureOr<SmallVector<Value>> operands = ctx.inputs();
  FailureOr<RankedTensorType> type = ctx.outputType(0);
  if (failed(operands) || failed(type))
    return failure();
  if (operands->size() != 5)
    return ctx.emitError() << "expects 5 inputs";
  // Opset 14 states the mode; before, extra outputs meant training.
  bool training = ctx.opset >= 14 ? ctx.intAttr("training_mode", 0) != 0
                                  : ctx.numOutputs() > 1;
  // The saved mean and variance outputs of opset 9 are left undefined: a
  // node that reads them fails to find them.
  Value x = (*operands)[0];
  // gs keeps scale, bias and statistics in one element type.
  Type statsElement =
      cast<RankedTensorType>((*operands)[3].getType()).getElementType();
  SmallVector<Value> channel;
  for (Value v : ArrayRef<Value>(*operands).drop_front()) {
    FailureOr<Value> converted = castTo(ctx, v, statsElement);
    if (failed(converted))
      return failure();
    channel.push_back(*converted);
  }
  APFloat epsilon(ctx.floatAttr("epsilon", 1e-5f));
  if (!training) {
    FailureOr<BatchNormInferenceOp> op = ctx.create<BatchNormInferenceOp>(
        *type, x, channel[0], channel[1], channel[2], channel[3], epsilon);
    if (failed(op))
      return failure();
    ctx.setOutput(0, *op);
    return success();
  }
  auto channelType = cast<RankedTensorType>(channel[0].getType());
  FailureOr<BatchNormOp> op =
      ctx.create<BatchNormOp>(TypeRange{*type, channelType, channelType}, x,
                              channel[0], channel[1], epsilon);
  if (failed(op))
    return failure();
  double momentum = ctx.floatAttr("momentum", 0.9f);
  FailureOr<Value> mean =
      runningAverage(ctx, channel[2], op->getBatchMean(), momentum);
  FailureOr<Value> var =
      runningAverage(ctx, channel[3], op->getBatchVar(), momentum);
  if (failed(mean) || failed(var))
    return failure();
  ctx.setOutput(0, op->getResult());
  ctx.setOutput(1, *mean);
  ctx.setOutput(2, *var);
  // Running statistics held in parameters are model state: update them.
  for (auto [index, value] :
       {std::pair<unsigned, Value>{3, *mean}, {4, *var}}) {
    StringRef name = ctx.inputName(index);
    if (!ctx.graph().model.paramKindOf(name) ||
        (*operands)[index].getType() != value.getType())
      continue;
    FailureOr<ParamOp> param = ctx.graph().model.getParam(name, ctx.loc);
    if (failed(param))
      return failure();
    ParamWriteOp::create(ctx.builder(), ctx.loc, value, param->getSymName());
  }
  return success();
}

static LogicalResult importLayerNorm(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0), scale = ctx.input(1);
  FailureOr<RankedTensorType> type = ctx.outputType(0);
  if (failed(x) || failed(scale) || failed(type))
    return failure();
  Value bias;
  if (ctx.hasInput(2)) {
    FailureOr<Value> value = ctx.input(2);
    if (failed(value))
      return failure();
    bias = *value;
  }
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.intAttr("axis", -1), type->getRank());
  if (failed(axis))
    return failure();
  // ONNX lets scale and bias broadcast; gs wants the normalized shape.
  auto normalized = RankedTensorType::get(type->getShape().drop_front(*axis),
                                          type->getElementType());
  for (Value *v : {&*scale, &bias}) {
    if (!*v || v->getType() == normalized)
      continue;
    FailureOr<ExpandOp> expanded = ctx.create<ExpandOp>(normalized, *v);
    if (failed(expanded))
      return failure();
    *v = *expanded;
  }
  SmallVector<int64_t> statsShape(type->getShape());
  std::fill(statsShape.begin() + *axis, statsShape.end(), 1);
  auto statsType =
      RankedTensorType::get(statsShape, Float32Type::get(ctx.getContext()));
  FailureOr<LayerNormOp> op = ctx.create<LayerNormOp>(
      TypeRange{*type, statsType, statsType}, *x, *scale, bias, *axis,
      APFloat(ctx.floatAttr("epsilon", 1e-5f)));
  if (failed(op))
    return failure();
  ctx.setOutput(0, op->getResult());
  for (unsigned i = 1; i < 3; ++i) {
    if (!ctx.hasOutput(i))
      continue;
    FailureOr<RankedTensorType> declared = ctx.outputType(i);
    if (failed(declared))
      return failure();
    FailureOr<Value> value = castTo(ctx, op->getOperation()->getResult(i),
                                    declared->getElementType());
    if (failed(value))
      return failure();
    ctx.setOutput(i, *value);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

template <typename OpTy> static LogicalResult importPool(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  FailureOr<RankedTensorType> type = ctx.outputType(0);
  if (failed(x) || failed(type))
    return failure();
  if (ctx.hasOutput(1))
    return ctx.emitError() << "the Indices output is not supported";
  if (ctx.intAttr("storage_order", 0) != 0)
    return ctx.emitError() << "storage_order 1 is not supported";
  SmallVector<int64_t> kernel = ctx.intsAttr("kernel_shape");
  FailureOr<Window> window =
      resolveWindow(ctx, shapeOf(*x).drop_front(2), kernel);
  if (failed(window))
    return failure();
  Builder b(ctx.getContext());
  UnitAttr ceil = ctx.intAttr("ceil_mode", 0) ? b.getUnitAttr() : UnitAttr();
  FailureOr<OpTy> op = failure();
  if constexpr (std::is_same_v<OpTy, MaxPoolOp>) {
    op = ctx.create<MaxPoolOp>(
        *type, *x, arrayAttr(ctx, kernel), arrayAttr(ctx, window->strides),
        arrayAttr(ctx, window->pads), arrayAttr(ctx, window->dilations), ceil);
  } else {
    if (llvm::any_of(window->dilations, [](int64_t d) { return d != 1; }))
      return ctx.emitError() << "dilated average pooling is not supported";
    op = ctx.create<AvgPoolOp>(
        *type, *x, arrayAttr(ctx, kernel), arrayAttr(ctx, window->strides),
        arrayAttr(ctx, window->pads), ceil,
        ctx.intAttr("count_include_pad", 0) ? b.getUnitAttr() : UnitAttr());
  }
  if (failed(op))
    return failure();
  ctx.setOutput(0, *op);
  return success();
}

static LogicalResult importGlobalAvgPool(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  return ctx.createAsOutput<GlobalAvgPoolOp>(*x);
}

//===----------------------------------------------------------------------===//
// Softmax and losses
//===----------------------------------------------------------------------===//

/// Softmax and LogSoftmax from opset 13: along one axis.
template <typename OpTy> static LogicalResult importSoftmax(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  FailureOr<RankedTensorType> type = ctx.outputType(0);
  if (failed(x) || failed(type))
    return failure();
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.intAttr("axis", -1), type->getRank());
  if (failed(axis))
    return failure();
  return ctx.createAsOutput<OpTy>(*x, *axis);
}

/// Before opset 13 the input is coerced to 2-D at `axis` (default 1) and
/// the softmax runs over the whole second dimension.
template <typename OpTy>
static LogicalResult importSoftmaxLegacy(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  FailureOr<RankedTensorType> type = ctx.outputType(0);
  if (failed(x) || failed(type))
    return failure();
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.intAttr("axis", 1), type->getRank());
  if (failed(axis))
    return failure();
  ArrayRef<int64_t> shape = type->getShape();
  auto flat = type->clone({numElements(shape.take_front(*axis)),
                           numElements(shape.drop_front(*axis))});
  FailureOr<ReshapeOp> in = ctx.create<ReshapeOp>(flat, *x);
  if (failed(in))
    return failure();
  FailureOr<OpTy> op = ctx.create<OpTy>(flat, *in, 1);
  if (failed(op))
    return failure();
  FailureOr<ReshapeOp> out = ctx.create<ReshapeOp>(*type, *op);
  if (failed(out))
    return failure();
  ctx.setOutput(0, *out);
  return success();
}

static FailureOr<ReductionAttr> reductionOf(NodeContext &ctx) {
  std::string name = ctx.stringAttr("reduction", "mean");
  std::optional<Reduction> reduction = symbolizeReduction(name);
  if (!reduction)
    return ctx.emitError() << "unknown reduction '" << name << "'";
  return ReductionAttr::get(ctx.getContext(), *reduction);
}

static IntegerAttr ignoreIndexOf(NodeContext &ctx) {
  if (!ctx.hasAttr("ignore_index"))
    return {};
  return ctx.builder().getI64IntegerAttr(ctx.intAttr("ignore_index", 0));
}

static LogicalResult importSoftmaxCrossEntropy(NodeContext &ctx) {
  FailureOr<Value> scores = ctx.input(0), labels = ctx.input(1);
  FailureOr<Value> weights = optionalBias(ctx);
  FailureOr<RankedTensorType> lossType = ctx.outputType(0);
  FailureOr<ReductionAttr> reduction = reductionOf(ctx);
  if (failed(scores) || failed(labels) || failed(weights) || failed(lossType) ||
      failed(reduction))
    return failure();
  FailureOr<SoftmaxCrossEntropyOp> op = ctx.create<SoftmaxCrossEntropyOp>(
      TypeRange{*lossType, scores->getType()}, *scores, *labels, *weights,
      *reduction, ignoreIndexOf(ctx));
  if (failed(op))
    return failure();
  ctx.setOutputs(op->getResults());
  return success();
}

static LogicalResult importNLLLoss(NodeContext &ctx) {
  FailureOr<Value> input = ctx.input(0), target = ctx.input(1);
  FailureOr<Value> weights = optionalBias(ctx);
  FailureOr<RankedTensorType> lossType = ctx.outputType(0);
  FailureOr<ReductionAttr> reduction = reductionOf(ctx);
  if (failed(input) || failed(target) || failed(weights) || failed(lossType) ||
      failed(reduction))
    return failure();
  FailureOr<NLLLossOp> op = ctx.create<NLLLossOp>(
      *lossType, *input, *target, *weights, *reduction, ignoreIndexOf(ctx));
  if (failed(op))
    return failure();
  ctx.setOutput(0, *op);
  return success();
}

ArrayRef<OpImporter> onnx_import::getNNImporters() {
  static const OpImporter importers[] = {
      {"", "Gemm", 7, importGemm},
      {"", "MatMul", 1, importMatMul},
      {"", "Conv", 1, importConv},
      {"", "ConvTranspose", 1, importConvTranspose},
      {"", "BatchNormalization", 9, importBatchNorm},
      {"", "LayerNormalization", 17, importLayerNorm},
      {"", "MaxPool", 1, importPool<MaxPoolOp>},
      {"", "AveragePool", 7, importPool<AvgPoolOp>},
      {"", "GlobalAveragePool", 1, importGlobalAvgPool},
      {"", "Softmax", 1, importSoftmaxLegacy<SoftmaxOp>},
      {"", "Softmax", 13, importSoftmax<SoftmaxOp>},
      {"", "LogSoftmax", 1, importSoftmaxLegacy<LogSoftmaxOp>},
      {"", "LogSoftmax", 13, importSoftmax<LogSoftmaxOp>},
      {"", "SoftmaxCrossEntropyLoss", 12, importSoftmaxCrossEntropy},
      {"", "NegativeLogLikelihoodLoss", 12, importNLLLoss},
  };
  return importers;
}
