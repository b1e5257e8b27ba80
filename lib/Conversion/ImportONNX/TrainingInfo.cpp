//===- TrainingInfo.cpp - ONNX TrainingInfoProto ---------------*- C++ -*-===//
//
// A TrainingInfoProto's algorithm graph describes one training step over
// the inference graph: a Gradient node, optimizer nodes (Momentum, Adagrad,
// Adam), a step counter, and update bindings that assign the new values back
// to initializers. The ONNX checker does not look at any of it, so the
// importer validates it here, then records it as the gs training
// configuration (the loss, the optimizer and its learning rate);
// gs-train-step and gs-autodiff build the step from that. The initialization
// graph becomes the function @initialize, which writes its bound outputs to the
// parameters.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"
#include "OnnxFrontend.h"
#include "TensorData.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::onnx_import;

static bool isGradientNode(const onnx::NodeProto &node) {
  return canonicalDomain(node.domain()) == kTrainingDomain &&
         node.op_type() == "Gradient";
}

static bool isOptimizerNode(const onnx::NodeProto &node) {
  return canonicalDomain(node.domain()) == kTrainingDomain &&
         llvm::is_contained({"Momentum", "Adagrad", "Adam"}, node.op_type());
}

static SmallVector<std::string> stringsAttr(const onnx::NodeProto &node,
                                            StringRef name) {
  for (const auto &attr : node.attribute())
    if (attr.name() == name)
      return SmallVector<std::string>(attr.strings().begin(),
                                      attr.strings().end());
  return {};
}

static std::string stringAttr(const onnx::NodeProto &node, StringRef name) {
  for (const auto &attr : node.attribute())
    if (attr.name() == name)
      return attr.s();
  return {};
}

void onnx_import::collectTrainedInitializers(ModelImporter &model) {
  for (const onnx::TrainingInfoProto &info : model.proto.training_info())
    for (const onnx::NodeProto &node : info.algorithm().node())
      if (isGradientNode(node))
        for (const std::string &x : stringsAttr(node, "xs"))
          if (model.isInitializer(x))
            model.trainedByTrainingInfo.insert(x);
}

namespace {
/// Validates one TrainingInfoProto against the inference graph.
class TrainingInfoChecker {
public:
  TrainingInfoChecker(ModelImporter &model, const onnx::TrainingInfoProto &info)
      : model(model), info(info), algorithm(info.algorithm()) {}

  LogicalResult check();

  const onnx::NodeProto *gradient = nullptr;
  OptimizerAttrInterface optimizer;
  double learningRate = 0;

private:
  InFlightDiagnostic error() {
    return model.emitError() << "training information: ";
  }
  LogicalResult checkNamesAndOperators();
  LogicalResult checkGradient();
  LogicalResult checkOptimizers();
  LogicalResult checkUpdateBindings();
  FailureOr<double> constantScalar(StringRef name, const onnx::NodeProto &user);
  const onnx::TensorProto *findInitializer(StringRef name);

  ModelImporter &model;
  const onnx::TrainingInfoProto &info;
  const onnx::GraphProto &algorithm;

  llvm::StringSet<> inferenceValues;
  llvm::StringMap<const onnx::NodeProto *> producers;
  llvm::StringMap<const onnx::TensorProto *> algorithmInitializers;
  SmallVector<const onnx::NodeProto *> optimizers;
  /// Gradient output name -> the x it is the gradient of.
  llvm::StringMap<std::string> gradientOf;
  /// Optimizer output name -> the initializer it must be bound to.
  llvm::StringMap<std::string> updateTarget;
  /// The step counter and the node that increments it.
  std::string counter;
};
} // namespace

const onnx::TensorProto *TrainingInfoChecker::findInitializer(StringRef name) {
  if (const onnx::TensorProto *t = model.findInitializer(name))
    return t;
  return algorithmInitializers.lookup(name);
}

/// Every operator is known and every name a node reads is defined.
LogicalResult TrainingInfoChecker::checkNamesAndOperators() {
  const onnx::GraphProto &graph = model.proto.graph();
  for (const auto &input : graph.input())
    inferenceValues.insert(input.name());
  for (const auto &init : graph.initializer())
    inferenceValues.insert(init.name());
  for (const auto &node : graph.node())
    for (const auto &output : node.output())
      inferenceValues.insert(output);

  llvm::StringSet<> defined = inferenceValues;
  for (const auto &input : algorithm.input())
    defined.insert(input.name());
  for (const auto &init : algorithm.initializer()) {
    defined.insert(init.name());
    algorithmInitializers[init.name()] = &init;
  }
  for (const onnx::NodeProto &node : algorithm.node()) {
    StringRef domain = canonicalDomain(node.domain());
    int opset = model.opsetFor(domain);
    if (opset < 0 ||
        !onnx_frontend::hasSchema(node.op_type(), opset, domain.str()))
      return error() << describeNode(node) << " uses unknown operator "
                     << node.op_type() << " (domain '" << domain << "', opset "
                     << opset << ")";
    for (const std::string &input : node.input())
      if (!input.empty() && !defined.contains(input))
        return error() << describeNode(node) << " reads '" << input
                       << "', which no input, initializer or earlier node "
                          "defines";
    bool supported =
        isGradientNode(node) || isOptimizerNode(node) ||
        (domain.empty() &&
         llvm::is_contained({"Add", "Constant", "Identity"}, node.op_type()));
    if (!supported)
      return error() << describeNode(node)
                     << " is not supported in a training algorithm; "
                        "GradScale imports a Gradient node, Momentum, "
                        "Adagrad or Adam nodes and a step counter";
    if (isGradientNode(node)) {
      if (gradient)
        return error() << "more than one Gradient node ("
                       << describeNode(*gradient) << " and "
                       << describeNode(node) << ")";
      gradient = &node;
    }
    if (isOptimizerNode(node))
      optimizers.push_back(&node);
    for (const std::string &output : node.output()) {
      defined.insert(output);
      producers[output] = &node;
    }
  }
  for (const auto &output : algorithm.output())
    if (!defined.contains(output.name()))
      return error() << "algorithm output '" << output.name()
                     << "' is not defined by any node";
  return success();
}

/// The Gradient node differentiates an inference value with respect to
/// initializers (xs), its inputs listing the xs, then the zs.
LogicalResult TrainingInfoChecker::checkGradient() {
  if (!gradient)
    return error() << "the algorithm has no Gradient node";
  SmallVector<std::string> xs = stringsAttr(*gradient, "xs");
  SmallVector<std::string> zs = stringsAttr(*gradient, "zs");
  std::string y = stringAttr(*gradient, "y");
  if (xs.empty() || y.empty())
    return error() << describeNode(*gradient)
                   << " needs the 'xs' and 'y' attributes";
  for (const std::string &x : xs)
    if (!model.isInitializer(x))
      return error() << describeNode(*gradient) << ": xs names '" << x
                     << "', which is not an initializer of the model";
  if (static_cast<size_t>(gradient->input_size()) != xs.size() + zs.size())
    return error() << describeNode(*gradient) << " has "
                   << gradient->input_size() << " inputs, but xs and zs name "
                   << xs.size() + zs.size();
  for (auto [i, name] : llvm::enumerate(llvm::concat<std::string>(xs, zs)))
    if (gradient->input(i) != name)
      return error() << describeNode(*gradient)
                     << ": inputs must be the xs followed by the zs; input "
                     << i << " is '" << gradient->input(i)
                     << "' but the attributes name '" << name << "'";
  if (!inferenceValues.contains(y))
    return error() << describeNode(*gradient) << ": y '" << y
                   << "' is not a value of the inference graph";
  if (static_cast<size_t>(gradient->output_size()) != xs.size())
    return error() << describeNode(*gradient) << " has "
                   << gradient->output_size() << " outputs for " << xs.size()
                   << " xs";
  for (auto [output, x] : llvm::zip(gradient->output(), xs))
    gradientOf[output] = x;
  return success();
}

FailureOr<double>
TrainingInfoChecker::constantScalar(StringRef name,
                                    const onnx::NodeProto &user) {
  onnx::TensorProto tensor;
  if (const onnx::TensorProto *init = findInitializer(name)) {
    tensor = *init;
  } else if (const onnx::NodeProto *producer = producers.lookup(name);
             producer && producer->op_type() == "Constant" &&
             producer->attribute_size() == 1 &&
             producer->attribute(0).has_t()) {
    tensor = producer->attribute(0).t();
  } else {
    return error() << describeNode(user) << ": '" << name
                   << "' must be a constant scalar";
  }
  std::string why;
  ElementsAttr value =
      convertTensor(model.context, tensor, model.modelDir, why);
  auto dense = dyn_cast_if_present<DenseElementsAttr>(value);
  if (!dense || dense.getNumElements() != 1)
    return error() << describeNode(user) << ": '" << name
                   << "' must be a constant scalar";
  if (isa<FloatType>(dense.getElementType()))
    return (*dense.getValues<APFloat>().begin()).convertToDouble();
  return static_cast<double>(
      (*dense.getValues<APInt>().begin()).getSExtValue());
}

/// The optimizer nodes share one rule and one learning rate, update each x
/// once with its own gradient, and keep state of x's shape.
LogicalResult TrainingInfoChecker::checkOptimizers() {
  if (optimizers.empty())
    return error() << "the algorithm has no optimizer node (Momentum, "
                      "Adagrad or Adam)";
  llvm::StringSet<> updated;
  for (const onnx::NodeProto *node : optimizers) {
    std::string why;
    FailureOr<OptimizerAttrInterface> rule =
        optimizerFromNode(model.context, *node, why);
    if (failed(rule))
      return error() << describeNode(*node) << ": " << why;
    if (optimizer && *rule != optimizer)
      return error() << describeNode(*node) << " and "
                     << describeNode(*optimizers.front())
                     << " apply different optimizers; GradScale trains "
                        "every parameter with one";
    optimizer = *rule;
    unsigned numState = optimizer.getNumStateTensors();
    unsigned group = 2 + numState;
    int numInputs = node->input_size();
    if (numInputs < 2 + static_cast<int>(group) || (numInputs - 2) % group)
      return error() << describeNode(*node) << " expects R, T, then "
                     << "equally many X, G and " << numState
                     << " state input groups";
    unsigned n = (numInputs - 2) / group;
    FailureOr<double> lr = constantScalar(node->input(0), *node);
    if (failed(lr))
      return failure();
    if (learningRate != 0 && *lr != learningRate)
      return error() << "optimizer nodes use different learning rates";
    learningRate = *lr;
    const onnx::TensorProto *step = findInitializer(node->input(1));
    if (!step || step->data_type() != onnx::TensorProto::INT64 ||
        step->dims_size() != 0)
      return error() << describeNode(*node) << ": the step count T ('"
                     << node->input(1)
                     << "') must be an int64 scalar initializer";
    if (!counter.empty() && counter != node->input(1))
      return error() << "optimizer nodes use different step counters";
    counter = node->input(1);
    for (unsigned i = 0; i < n; ++i) {
      const std::string &x = node->input(2 + i);
      const std::string &g = node->input(2 + n + i);
      if (!model.trainedByTrainingInfo.contains(x))
        return error() << describeNode(*node) << " updates '" << x
                       << "', which is not among the Gradient's xs";
      if (!updated.insert(x).second)
        return error() << "'" << x << "' is updated twice";
      auto it = gradientOf.find(g);
      if (it == gradientOf.end() || it->second != x)
        return error() << describeNode(*node)
                       << " has its inputs in the wrong order: X '" << x
                       << "' is paired with '" << g << "', "
                       << (it == gradientOf.end()
                               ? std::string("which is not a gradient")
                               : "the gradient of '" + it->second + "'");
      const onnx::TensorProto *xTensor = model.findInitializer(x);
      updateTarget[node->output(i)] = x;
      for (unsigned k = 0; k < numState; ++k) {
        const std::string &state = node->input(2 + (2 + k) * n + i);
        const onnx::TensorProto *stateTensor = findInitializer(state);
        if (!stateTensor || !llvm::equal(stateTensor->dims(), xTensor->dims()))
          return error() << describeNode(*node) << ": state '" << state
                         << "' of '" << x
                         << "' must be an initializer of its shape";
        updateTarget[node->output(n + k * n + i)] = state;
      }
    }
  }
  for (const std::string &x : stringsAttr(*gradient, "xs"))
    if (!updated.contains(x))
      return error() << "'" << x
                     << "' has a gradient but no optimizer updates it";
  return success();
}

/// Each binding assigns an optimizer output to the initializer it updates,
/// or the incremented step count to the counter.
LogicalResult TrainingInfoChecker::checkUpdateBindings() {
  llvm::StringSet<> outputs, bound;
  for (const auto &output : algorithm.output())
    outputs.insert(output.name());
  for (const onnx::StringStringEntryProto &binding : info.update_binding()) {
    StringRef key = binding.key(), value = binding.value();
    if (!findInitializer(key))
      return error() << "update binding '" << key << "' <- '" << value << "': '"
                     << key << "' is not an initializer";
    if (!outputs.contains(value))
      return error() << "update binding '" << key << "' <- '" << value << "': '"
                     << value << "' is not an output of the algorithm";
    if (!bound.insert(key).second)
      return error() << "'" << key << "' has two update bindings";
    if (auto it = updateTarget.find(value); it != updateTarget.end()) {
      if (it->second != key)
        return error() << "update binding '" << key << "' <- '" << value
                       << "' assigns the update of '" << it->second << "' to '"
                       << key << "'";
      continue;
    }
    const onnx::NodeProto *producer = producers.lookup(value);
    bool increments = key == counter && producer &&
                      producer->op_type() == "Add" &&
                      llvm::is_contained(producer->input(), counter);
    if (!increments)
      return error() << "update binding '" << key << "' <- '" << value
                     << "' is neither an optimizer update nor the step "
                        "counter's increment";
  }
  for (const std::string &x : stringsAttr(*gradient, "xs"))
    if (!bound.contains(x))
      return error() << "'" << x
                     << "' has no update binding to its optimizer's output";
  return success();
}

LogicalResult TrainingInfoChecker::check() {
  return success(succeeded(checkNamesAndOperators()) &&
                 succeeded(checkGradient()) && succeeded(checkOptimizers()) &&
                 succeeded(checkUpdateBindings()));
}

/// The initialization graph as @initialize: it computes fresh values and
/// writes those bound to model parameters.
static LogicalResult importInitialization(ModelImporter &model,
                                          const onnx::TrainingInfoProto &info) {
  const onnx::GraphProto &graph = info.initialization();
  if (graph.node_size() == 0 && info.initialization_binding_size() == 0)
    return success();
  llvm::StringSet<> outputs;
  for (const auto &output : graph.output())
    outputs.insert(output.name());
  for (const auto &binding : info.initialization_binding()) {
    if (!outputs.contains(binding.value()))
      return model.emitError()
             << "training information: initialization binding '"
             << binding.key() << "' <- '" << binding.value() << "': '"
             << binding.value()
             << "' is not an output of the initialization graph";
    bool inAlgorithm =
        llvm::any_of(info.algorithm().initializer(),
                     [&](const auto &t) { return t.name() == binding.key(); });
    if (!model.isInitializer(binding.key()) && !inAlgorithm)
      return model.emitError()
             << "training information: initialization binding '"
             << binding.key() << "' <- '" << binding.value() << "': '"
             << binding.key() << "' is not an initializer";
  }
  std::string unsupported;
  for (const onnx::NodeProto &node : graph.node()) {
    StringRef domain = canonicalDomain(node.domain());
    if (!findOpImporter(domain, node.op_type(), model.opsetFor(domain)))
      unsupported += "\n  " + describeNode(node);
  }
  if (!unsupported.empty())
    return model.emitError() << "training information: the initialization "
                                "graph uses unsupported operators:"
                             << unsupported;

  OpBuilder b(model.context);
  auto function = func::FuncOp::create(b, model.fileLoc, "initialize",
                                       b.getFunctionType({}, {}));
  model.symbolTable().insert(function);
  function.addEntryBlock();
  GraphImporter importer(model, function);
  importer.addTypes(graph);
  SmallVector<const onnx::NodeProto *> nodes;
  for (const onnx::NodeProto &node : graph.node())
    nodes.push_back(&node);
  if (failed(importer.importNodes(nodes)))
    return failure();
  for (const auto &binding : info.initialization_binding()) {
    if (!model.paramKindOf(binding.key()))
      continue; // Algorithm state and constants start from their values.
    FailureOr<ParamOp> param = model.getParam(binding.key(), model.fileLoc);
    FailureOr<Value> value = importer.lookup(binding.value(), model.fileLoc);
    if (failed(param) || failed(value))
      return failure();
    if (value->getType() != param->getType())
      return model.emitError()
             << "training information: initialization binding '"
             << binding.key() << "' <- '" << binding.value()
             << "' changes the type " << param->getType() << " to "
             << value->getType();
    ParamWriteOp::create(importer.builder, model.fileLoc, *value,
                         param->getSymName());
  }
  func::ReturnOp::create(importer.builder, model.fileLoc);
  return success();
}

/// The index of the forward result holding `name`, appending it when the
/// loss is an intermediate value.
static FailureOr<int64_t> lossResult(ModelImporter &model, func::FuncOp forward,
                                     GraphImporter &mainGraph, StringRef name) {
  for (auto [i, output] : llvm::enumerate(model.proto.graph().output()))
    if (output.name() == name)
      return static_cast<int64_t>(i);
  FailureOr<Value> value = mainGraph.lookup(name, model.fileLoc);
  if (failed(value))
    return failure();
  auto ret = cast<func::ReturnOp>(forward.getBody().front().getTerminator());
  ret->insertOperands(ret->getNumOperands(), *value);
  forward.setFunctionType(FunctionType::get(
      model.context, forward.getArgumentTypes(), ret.getOperandTypes()));
  int64_t index = ret->getNumOperands() - 1;
  forward.setResultAttr(index, "onnx.name",
                        StringAttr::get(model.context, name));
  return index;
}

LogicalResult onnx_import::importTrainingInfo(ModelImporter &model,
                                              func::FuncOp forward,
                                              GraphImporter &mainGraph,
                                              bool &imported) {
  imported = false;
  int count = model.proto.training_info_size();
  if (count == 0)
    return success();
  if (count > 1)
    return model.emitError() << "the model has " << count
                             << " TrainingInfoProto entries; GradScale "
                                "imports one";
  const onnx::TrainingInfoProto &info = model.proto.training_info(0);
  TrainingInfoChecker checker(model, info);
  if (failed(checker.check()) || failed(importInitialization(model, info)))
    return failure();
  FailureOr<int64_t> loss =
      lossResult(model, forward, mainGraph, stringAttr(*checker.gradient, "y"));
  if (failed(loss))
    return failure();
  OpBuilder b(model.context);
  b.setInsertionPointToEnd(model.module->getBody());
  TrainingOp::create(b, model.fileLoc, SymbolRefAttr::get(forward),
                     b.getI64IntegerAttr(*loss), checker.optimizer,
                     b.getF32FloatAttr(checker.learningRate));
  imported = true;
  return success();
}
