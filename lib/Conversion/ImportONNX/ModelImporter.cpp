//===- ModelImporter.cpp - ONNX graphs into gs functions -------*- C++ -*-===//

#include "Importer.h"
#include "TensorData.h"

#include "gs/Dialect/GS/IR/ShapeUtils.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::onnx_import;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

FailureOr<RankedTensorType>
onnx_import::convertType(MLIRContext *context, const onnx::TypeProto &type,
                         std::string &why) {
  if (!type.has_tensor_type()) {
    why = "it is not a tensor";
    return failure();
  }
  const onnx::TypeProto::Tensor &tensor = type.tensor_type();
  Type elementType = convertElementType(context, tensor.elem_type());
  if (!elementType) {
    why = "its element type " + elementTypeName(tensor.elem_type()) +
          " is not supported";
    return failure();
  }
  if (!tensor.has_shape()) {
    why = "shape inference found no static shape (it may depend on the "
          "value of an input that is not a constant)";
    return failure();
  }
  SmallVector<int64_t> shape;
  for (const auto &dim : tensor.shape().dim()) {
    if (!dim.has_dim_value() || dim.dim_value() < 0) {
      why = "its shape is dynamic";
      return failure();
    }
    shape.push_back(dim.dim_value());
  }
  std::optional<int64_t> elements = checkedNumElements(shape);
  if (!elements || *elements > kMaxNumElements) {
    why = "its shape has more elements than 64-bit sizes can address";
    return failure();
  }
  return RankedTensorType::get(shape, elementType);
}

std::string onnx_import::describeNode(const onnx::NodeProto &node) {
  std::string text = "node '" + node.name() + "' (" + node.op_type() + ")";
  if (node.name().empty())
    text = "node producing '" +
           (node.output_size() ? node.output(0) : std::string("?")) + "' (" +
           node.op_type() + ")";
  return text;
}

//===----------------------------------------------------------------------===//
// NodeContext
//===----------------------------------------------------------------------===//

NodeContext::NodeContext(GraphImporter &graph, const onnx::NodeProto &node,
                         int opset, Location loc)
    : node(node), opset(opset), loc(loc), importer(graph) {}

OpBuilder &NodeContext::builder() { return importer.builder; }
MLIRContext *NodeContext::getContext() { return importer.model.context; }

InFlightDiagnostic NodeContext::emitError() {
  return mlir::emitError(importer.model.fileLoc) << describeNode(node) << ": ";
}

bool NodeContext::hasInput(unsigned i) const {
  return i < numInputs() && !node.input(i).empty();
}

FailureOr<Value> NodeContext::input(unsigned i) {
  if (!hasInput(i))
    return emitError() << "missing input " << i;
  return importer.lookup(node.input(i), loc);
}

FailureOr<SmallVector<Value>> NodeContext::inputs(unsigned from) {
  SmallVector<Value> values;
  for (unsigned i = from; i < numInputs(); ++i) {
    FailureOr<Value> value = input(i);
    if (failed(value))
      return failure();
    values.push_back(*value);
  }
  return values;
}

DenseElementsAttr NodeContext::constantInput(unsigned i) {
  if (!hasInput(i))
    return {};
  return importer.lookupConstant(node.input(i));
}

FailureOr<SmallVector<int64_t>> NodeContext::intsInput(unsigned i,
                                                       StringRef what) {
  DenseElementsAttr value = constantInput(i);
  if (!value || !isa<IntegerType>(value.getElementType()))
    return emitError() << what << " (input " << i
                       << ") must be a constant integer tensor";
  SmallVector<int64_t> result;
  for (const APInt &v : value.getValues<APInt>())
    result.push_back(v.getSExtValue());
  return result;
}

FailureOr<double> NodeContext::scalarInput(unsigned i, StringRef what) {
  DenseElementsAttr value = constantInput(i);
  if (!value || value.getNumElements() != 1)
    return emitError() << what << " (input " << i
                       << ") must be a constant scalar";
  if (isa<FloatType>(value.getElementType()))
    return (*value.getValues<APFloat>().begin()).convertToDouble();
  return static_cast<double>(
      (*value.getValues<APInt>().begin()).getSExtValue());
}

const onnx::AttributeProto *NodeContext::attribute(StringRef name) const {
  for (const auto &attr : node.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

int64_t NodeContext::intAttr(StringRef name, int64_t fallback) const {
  const onnx::AttributeProto *attr = attribute(name);
  return attr ? attr->i() : fallback;
}

float NodeContext::floatAttr(StringRef name, float fallback) const {
  const onnx::AttributeProto *attr = attribute(name);
  return attr ? attr->f() : fallback;
}

std::string NodeContext::stringAttr(StringRef name, StringRef fallback) const {
  const onnx::AttributeProto *attr = attribute(name);
  return attr ? attr->s() : fallback.str();
}

SmallVector<int64_t> NodeContext::intsAttr(StringRef name) const {
  return optionalIntsAttr(name).value_or(SmallVector<int64_t>());
}

std::optional<SmallVector<int64_t>>
NodeContext::optionalIntsAttr(StringRef name) const {
  const onnx::AttributeProto *attr = attribute(name);
  if (!attr)
    return std::nullopt;
  return SmallVector<int64_t>(attr->ints().begin(), attr->ints().end());
}

LogicalResult NodeContext::rejectAttr(StringRef name, StringRef why) {
  if (!hasAttr(name))
    return success();
  return emitError() << "attribute '" << name << "' is not supported: " << why;
}

bool NodeContext::hasOutput(unsigned i) const {
  return i < numOutputs() && !node.output(i).empty();
}

FailureOr<RankedTensorType> NodeContext::outputType(unsigned i) {
  std::string why;
  FailureOr<RankedTensorType> type = importer.typeOf(node.output(i), why);
  if (failed(type))
    return emitError() << "cannot give output '" << node.output(i)
                       << "' a static type: " << why;
  return type;
}

void NodeContext::setOutput(unsigned i, Value value) {
  if (hasOutput(i))
    importer.addValue(node.output(i), value);
}

void NodeContext::setOutputs(ValueRange values) {
  for (auto [i, value] : llvm::enumerate(values))
    setOutput(i, value);
}

void NodeContext::setConstantOutput(unsigned i, ElementsAttr value) {
  if (hasOutput(i))
    importer.addConstant(node.output(i), value);
}

FailureOr<int64_t> NodeContext::normalizeAxis(int64_t axis, int64_t rank,
                                              bool inclusive) {
  int64_t limit = inclusive ? rank + 1 : rank;
  if (axis < -rank || axis >= limit)
    return emitError() << "axis " << axis << " is out of range for rank "
                       << rank;
  return axis < 0 ? axis + rank : axis;
}

Value NodeContext::constant(DenseElementsAttr value) {
  return ConstantOp::create(builder(), loc, value);
}

Value NodeContext::splatConstant(RankedTensorType type, double value) {
  Attribute element;
  if (auto floatType = dyn_cast<FloatType>(type.getElementType()))
    element = FloatAttr::get(floatType, value);
  else
    element =
        IntegerAttr::get(type.getElementType(), static_cast<int64_t>(value));
  return constant(DenseElementsAttr::get(type, element));
}

LogicalResult NodeContext::verifyCreated(Operation *op) {
  std::string message;
  {
    ScopedDiagnosticHandler capture(getContext(), [&](Diagnostic &diag) {
      if (message.empty())
        message = diag.str();
      return success();
    });
    if (succeeded(verify(op)))
      return success();
  }
  op->erase();
  return emitError() << message;
}

//===----------------------------------------------------------------------===//
// GraphImporter
//===----------------------------------------------------------------------===//

GraphImporter::GraphImporter(ModelImporter &model, func::FuncOp function)
    : model(model), function(function), builder(model.context) {
  builder.setInsertionPointToEnd(&function.getBody().front());
}

void GraphImporter::addTypes(const onnx::GraphProto &graph) {
  for (const auto &info : graph.input())
    declaredTypes[info.name()] = &info.type();
  for (const auto &info : graph.value_info())
    declaredTypes[info.name()] = &info.type();
  for (const auto &info : graph.output())
    declaredTypes[info.name()] = &info.type();
}

bool GraphImporter::isKnown(StringRef name) {
  return values.count(name) || constants.count(name) ||
         model.isInitializer(name);
}

FailureOr<RankedTensorType> GraphImporter::typeOf(StringRef name,
                                                  std::string &why) {
  if (auto it = values.find(name); it != values.end())
    return cast<RankedTensorType>(it->second.getType());
  if (auto it = constants.find(name); it != constants.end())
    return cast<RankedTensorType>(it->second.getShapedType());
  if (auto it = declaredTypes.find(name); it != declaredTypes.end())
    return convertType(model.context, *it->second, why);
  if (const onnx::TensorProto *tensor = model.findInitializer(name)) {
    Type element = convertElementType(model.context, tensor->data_type());
    if (!element) {
      why = "its element type " + elementTypeName(tensor->data_type()) +
            " is not supported";
      return failure();
    }
    return RankedTensorType::get(
        SmallVector<int64_t>(tensor->dims().begin(), tensor->dims().end()),
        element);
  }
  why = "shape inference gave it no type";
  return failure();
}

DenseElementsAttr GraphImporter::lookupConstant(StringRef name) {
  if (auto it = constants.find(name); it != constants.end())
    return dyn_cast<DenseElementsAttr>(it->second);
  if (!model.isInitializer(name) || values.count(name))
    return {};
  FailureOr<ElementsAttr> value =
      model.initializerValue(name, function.getLoc());
  if (failed(value))
    return {};
  return dyn_cast<DenseElementsAttr>(*value);
}

FailureOr<Value> GraphImporter::lookup(StringRef name, Location loc) {
  if (auto it = values.find(name); it != values.end())
    return it->second;
  // Constants and parameter reads go to the top of the function so that
  // they dominate every use.
  OpBuilder entry(model.context);
  entry.setInsertionPointToStart(&function.getBody().front());
  while (entry.getInsertionPoint() != entry.getBlock()->end() &&
         isa<ConstantOp, ParamReadOp>(*entry.getInsertionPoint()))
    entry.setInsertionPoint(entry.getBlock(),
                            std::next(entry.getInsertionPoint()));
  Value value;
  if (auto it = constants.find(name); it != constants.end()) {
    value = ConstantOp::create(entry, loc, it->second);
  } else if (model.isInitializer(name)) {
    if (model.paramKindOf(name)) {
      FailureOr<ParamOp> param = model.getParam(name, loc);
      if (failed(param))
        return failure();
      value = ParamReadOp::create(entry, loc, param->getType(),
                                  param->getSymName());
    } else {
      FailureOr<ElementsAttr> constant = model.initializerValue(name, loc);
      if (failed(constant))
        return failure();
      value = ConstantOp::create(entry, loc, *constant);
    }
  } else {
    return model.emitError() << "value '" << name
                             << "' is used before any node produces it and "
                                "is neither a graph input nor an initializer";
  }
  values[name] = value;
  return value;
}

Location GraphImporter::nodeLocation(const onnx::NodeProto &node) {
  StringRef name =
      node.name().empty() ? StringRef(node.op_type()) : StringRef(node.name());
  return NameLoc::get(StringAttr::get(model.context, name), model.fileLoc);
}

LogicalResult GraphImporter::importNode(const onnx::NodeProto &node) {
  StringRef domain = canonicalDomain(node.domain());
  NodeContext ctx(*this, node, model.opsetFor(domain), nodeLocation(node));
  const OpImporter *importer =
      findOpImporter(domain, node.op_type(), ctx.opset);
  if (!importer) {
    return ctx.emitError() << "operator " << node.op_type() << " ("
                           << model.describeOpset(domain)
                           << ") is not supported";
  }
  return importer->import(ctx);
}

LogicalResult
GraphImporter::importNodes(ArrayRef<const onnx::NodeProto *> nodes) {
  for (const onnx::NodeProto *node : nodes)
    if (failed(importNode(*node)))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// ModelImporter
//===----------------------------------------------------------------------===//

SymbolTable &ModelImporter::symbolTable() {
  if (!symbols)
    symbols = std::make_unique<SymbolTable>(*module);
  return *symbols;
}

ModelImporter::ModelImporter(MLIRContext *context, onnx::ModelProto &model,
                             StringRef modelDir, StringRef sourceName,
                             const OnnxImportOptions &options)
    : context(context), proto(model), modelDir(modelDir.str()),
      options(options), fileLoc(FileLineColLoc::get(context, sourceName, 1, 1)),
      moduleBuilder(context) {}

std::string ModelImporter::describeOpset(StringRef domain) const {
  std::string name = domain.empty() ? "ai.onnx" : domain.str();
  int opset = domain.empty() && declaredOnnxOpset > 0 ? declaredOnnxOpset
                                                      : opsetFor(domain);
  return name + " opset " + std::to_string(opset);
}

int ModelImporter::opsetFor(StringRef domain) const {
  auto it = opsets.find(canonicalDomain(domain));
  return it == opsets.end() ? -1 : it->second;
}

const onnx::TensorProto *ModelImporter::findInitializer(StringRef name) const {
  auto it = initializers.find(name);
  return it == initializers.end() ? nullptr : it->second;
}

FailureOr<ElementsAttr> ModelImporter::initializerValue(StringRef name,
                                                        Location loc) {
  if (auto it = initializerValues.find(name); it != initializerValues.end())
    return it->second;
  onnx::TensorProto *tensor = initializers.lookup(name);
  std::string error;
  ElementsAttr value = convertTensor(context, *tensor, modelDir, error);
  if (!value)
    return emitError() << "initializer '" << name << "': " << error;
  initializerValues[name] = value;
  return value;
}

std::optional<ParamKind> ModelImporter::paramKindOf(StringRef name) const {
  const onnx::TensorProto *tensor = findInitializer(name);
  if (!tensor || (tensor->data_type() != onnx::TensorProto::FLOAT &&
                  tensor->data_type() != onnx::TensorProto::FLOAT16))
    return std::nullopt;
  if (options.constantInputs.count(name))
    return std::nullopt;
  if (llvm::is_contained(options.frozen, name))
    return ParamKind::buffer;
  if (llvm::is_contained(options.trainable, name))
    return ParamKind::trainable;
  if (proto.training_info_size() > 0)
    return trainedByTrainingInfo.contains(name) ? ParamKind::trainable
                                                : ParamKind::buffer;
  if (batchNormStatistics.contains(name))
    return ParamKind::buffer;
  return ParamKind::trainable;
}

FailureOr<ParamOp> ModelImporter::getParam(StringRef name, Location loc) {
  if (auto it = params.find(name); it != params.end())
    return it->second;
  FailureOr<ElementsAttr> value = initializerValue(name, loc);
  if (failed(value))
    return failure();
  std::optional<ParamKind> kind = paramKindOf(name);
  OpBuilder detached(context);
  auto param = ParamOp::create(detached, fileLoc, name, *kind, *value);
  // Parameters come first, in the order of their first use; the symbol
  // table renames one whose name a function already has.
  Block::iterator before = llvm::find_if(
      *module->getBody(), [](Operation &op) { return !isa<ParamOp>(op); });
  symbolTable().insert(param, before);
  if (param.getSymName() != name)
    param->setAttr("onnx.name", StringAttr::get(context, name));
  params[name] = param;
  return param;
}

/// Lists every node whose operator has no importer, in one error.
LogicalResult ModelImporter::collectUnsupportedNodes() {
  std::string list;
  llvm::raw_string_ostream os(list);
  int count = 0;
  for (const onnx::NodeProto &node : proto.graph().node()) {
    StringRef domain = canonicalDomain(node.domain());
    int opset = opsetFor(domain);
    if (findOpImporter(domain, node.op_type(), opset))
      continue;
    os << "\n  " << describeNode(node) << ", " << describeOpset(domain);
    ++count;
  }
  if (count == 0)
    return success();
  return emitError() << count << " node" << (count > 1 ? "s use" : " uses")
                     << " unsupported ONNX operators:" << list;
}

/// Graph inputs must be static once the requested shapes are pinned; one
/// error lists every dynamic dimension.
LogicalResult ModelImporter::checkStaticInputs() {
  std::string list;
  llvm::raw_string_ostream os(list);
  bool dynamic = false;
  for (const onnx::ValueInfoProto &input : proto.graph().input()) {
    if (isInitializer(input.name()) || !input.type().has_tensor_type())
      continue;
    const auto &tensor = input.type().tensor_type();
    if (!tensor.has_shape()) {
      os << "\n  input '" << input.name() << "': unknown rank";
      dynamic = true;
      continue;
    }
    SmallVector<std::string> dims;
    bool inputDynamic = false;
    for (const auto &dim : tensor.shape().dim()) {
      if (dim.has_dim_value() && dim.dim_value() >= 0) {
        dims.push_back(std::to_string(dim.dim_value()));
        continue;
      }
      inputDynamic = true;
      dims.push_back(dim.has_dim_param() ? dim.dim_param() : "?");
    }
    if (!inputDynamic)
      continue;
    dynamic = true;
    os << "\n  input '" << input.name() << "': [";
    llvm::interleaveComma(dims, os);
    os << "]";
  }
  if (!dynamic)
    return success();
  return emitError() << "the model has dynamic dimensions; pin every input "
                        "shape with --onnx-shape=name=1x3x224x224:"
                     << list;
}

func::FuncOp ModelImporter::createFunction(StringRef name,
                                           const onnx::GraphProto &graph,
                                           GraphImporter *&importer) {
  SmallVector<Type> argTypes;
  SmallVector<const onnx::ValueInfoProto *> args;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (isInitializer(input.name()))
      continue;
    std::string why;
    FailureOr<RankedTensorType> type = convertType(context, input.type(), why);
    if (failed(type)) {
      emitError() << "graph input '" << input.name()
                  << "' cannot be imported: " << why;
      return {};
    }
    argTypes.push_back(*type);
    args.push_back(&input);
  }
  auto function = func::FuncOp::create(
      moduleBuilder, fileLoc, name, FunctionType::get(context, argTypes, {}));
  Block *entry = function.addEntryBlock();
  mainGraph = std::make_unique<GraphImporter>(*this, function);
  importer = mainGraph.get();
  importer->addTypes(graph);
  // Position of each argument among the graph's own inputs (those that are
  // not initializers of the model as given), which is how ONNX test data
  // numbers them.
  int64_t position = 0;
  llvm::StringMap<int64_t> positions;
  for (const onnx::ValueInfoProto &input : graph.input())
    if (!isInitializer(input.name()) ||
        options.constantInputs.count(input.name()))
      positions[input.name()] = position++;
  // All argument attributes at once: setting them one by one copies the
  // whole list each time (quadratic in the number of inputs).
  SmallVector<DictionaryAttr> argAttrs;
  Builder builder(context);
  for (auto [i, input] : llvm::enumerate(args)) {
    importer->addValue(input->name(), entry->getArgument(i));
    argAttrs.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr("onnx.name",
                              builder.getStringAttr(input->name())),
         builder.getNamedAttr(
             "onnx.input_index",
             builder.getI64IntegerAttr(positions.lookup(input->name())))}));
  }
  function.setAllArgAttrs(argAttrs);
  return function;
}

LogicalResult ModelImporter::importMainGraph() {
  const onnx::GraphProto &graph = proto.graph();
  GraphImporter *importer = nullptr;
  func::FuncOp forward = createFunction("forward", graph, importer);
  if (!forward)
    return failure();
  forward->setAttr("onnx.graph_name", StringAttr::get(context, graph.name()));

  SmallVector<const onnx::NodeProto *> nodes;
  for (const onnx::NodeProto &node : graph.node())
    nodes.push_back(&node);
  if (failed(importer->importNodes(nodes)))
    return failure();

  SmallVector<Value> results;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    FailureOr<Value> value = importer->lookup(output.name(), fileLoc);
    if (failed(value))
      return failure();
    results.push_back(*value);
  }
  OpBuilder &b = importer->builder;
  func::ReturnOp::create(b, fileLoc, results);
  forward.setFunctionType(FunctionType::get(context, forward.getArgumentTypes(),
                                            ValueRange(results).getTypes()));
  SmallVector<DictionaryAttr> resultAttrs;
  Builder builder(context);
  for (const onnx::ValueInfoProto &output : graph.output())
    resultAttrs.push_back(builder.getDictionaryAttr(builder.getNamedAttr(
        "onnx.name", builder.getStringAttr(output.name()))));
  forward.setAllResultAttrs(resultAttrs);

  bool trainingInfoImported = false;
  if (failed(
          importTrainingInfo(*this, forward, *importer, trainingInfoImported)))
    return failure();
  if (!trainingInfoImported)
    return addTrainingConfig(forward);
  return success();
}

/// The training configuration of a model without training information:
/// the loss named by the options, the only scalar float output, or the
/// output named `loss`.
LogicalResult ModelImporter::addTrainingConfig(func::FuncOp forward) {
  const OnnxTrainingOptions &training = options.training;
  // Gradient nodes in the main graph already say what to differentiate.
  bool hasGradientNodes = false;
  forward.walk([&](BackwardOp) { hasGradientNodes = true; });
  if (hasGradientNodes && !training.requested)
    return success();

  SmallVector<std::string> candidates;
  int64_t lossIndex = -1;
  for (auto [i, type] : llvm::enumerate(forward.getResultTypes())) {
    auto tensor = cast<RankedTensorType>(type);
    StringRef name = proto.graph().output(i).name();
    if (!training.loss.empty()) {
      if (name == training.loss)
        lossIndex = i;
      continue;
    }
    if (tensor.getRank() == 0 && isa<FloatType>(tensor.getElementType())) {
      candidates.push_back(name.str());
      if (name == "loss")
        lossIndex = i;
    }
  }
  if (!training.loss.empty() && lossIndex < 0) {
    std::string outputs;
    llvm::raw_string_ostream os(outputs);
    llvm::interleaveComma(proto.graph().output(), os,
                          [&](const auto &o) { os << "'" << o.name() << "'"; });
    return emitError() << "the loss '" << training.loss
                       << "' is not a graph output (outputs: " << outputs
                       << ")";
  }
  if (lossIndex < 0 && candidates.size() == 1)
    lossIndex = llvm::find_if(proto.graph().output(),
                              [&](const auto &o) {
                                return o.name() == candidates.front();
                              }) -
                proto.graph().output().begin();
  if (lossIndex < 0) {
    if (!training.requested)
      return success(); // An inference model: no training configuration.
    std::string names;
    llvm::raw_string_ostream os(names);
    llvm::interleaveComma(candidates, os,
                          [&](const std::string &n) { os << "'" << n << "'"; });
    return emitError() << "cannot tell which output is the loss: "
                       << (candidates.empty()
                               ? "no output is a float scalar"
                               : "several outputs are float scalars (" + names +
                                     ")")
                       << "; name it with the loss option (loss=<output>)";
  }
  auto lossType = cast<RankedTensorType>(forward.getResultTypes()[lossIndex]);
  if (lossType.getRank() != 0 || !isa<FloatType>(lossType.getElementType()))
    return emitError() << "the loss '" << proto.graph().output(lossIndex).name()
                       << "' must be a float scalar, but has type " << lossType;
  std::string error;
  FailureOr<OptimizerAttrInterface> optimizer =
      buildOptimizer(context, training, error);
  if (failed(optimizer))
    return emitError() << error;
  OpBuilder b(context);
  b.setInsertionPointToEnd(module->getBody());
  TrainingOp::create(b, fileLoc, SymbolRefAttr::get(forward),
                     b.getI64IntegerAttr(lossIndex), *optimizer,
                     b.getF32FloatAttr(training.learningRate));
  return success();
}

OwningOpRef<ModuleOp> ModelImporter::run() {
  for (const onnx::OperatorSetIdProto &opset : proto.opset_import())
    opsets[canonicalDomain(opset.domain())] = opset.version();
  for (onnx::TensorProto &tensor :
       *proto.mutable_graph()->mutable_initializer())
    initializers[tensor.name()] = &tensor;
  for (const onnx::NodeProto &node : proto.graph().node())
    if (node.op_type() == "BatchNormalization" &&
        canonicalDomain(node.domain()).empty())
      for (int i = 3; i < std::min(node.input_size(), 5); ++i)
        batchNormStatistics.insert(node.input(i));
  for (StringRef name :
       llvm::concat<const std::string>(options.trainable, options.frozen))
    if (!isInitializer(name)) {
      emitError() << "'" << name
                  << "' is named as trainable or frozen but is not an "
                     "initializer of the model";
      return nullptr;
    }
  collectTrainedInitializers(*this);

  module = ModuleOp::create(fileLoc);
  moduleBuilder.setInsertionPointToEnd(module->getBody());
  // Dynamic inputs first: shape computations on them cannot fold and would
  // show up as unsupported operators.
  if (failed(checkStaticInputs()) || failed(collectUnsupportedNodes()) ||
      failed(importMainGraph()))
    return nullptr;
  if (failed(verify(*module)))
    return nullptr;
  return std::move(module);
}

FailureOr<OptimizerAttrInterface>
onnx_import::buildOptimizer(MLIRContext *context,
                            const OnnxTrainingOptions &options,
                            std::string &error) {
  auto f = [](double value) { return APFloat(value); };
  APFloat decay = f(options.weightDecay);
  if (options.optimizer == "sgd")
    return cast<OptimizerAttrInterface>(SGDAttr::get(context, decay));
  if (options.optimizer == "momentum" || options.optimizer == "nesterov")
    return cast<OptimizerAttrInterface>(MomentumAttr::get(
        context, f(options.momentum), f(1.0 - options.dampening), decay,
        options.optimizer == "nesterov" ? MomentumMode::nesterov
                                        : MomentumMode::standard));
  if (options.optimizer == "adagrad")
    return cast<OptimizerAttrInterface>(AdagradAttr::get(
        context, f(options.lrDecay), f(options.epsilon), decay));
  if (options.optimizer == "adam")
    return cast<OptimizerAttrInterface>(
        AdamAttr::get(context, f(options.beta1), f(options.beta2),
                      f(options.epsilon), decay, f(0.0)));
  error = "unknown optimizer '" + options.optimizer + "'";
  return failure();
}
