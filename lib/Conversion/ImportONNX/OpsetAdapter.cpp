//===- OpsetAdapter.cpp - ai.onnx opsets 18-22 to opset 17 -----*- C++ -*-===//
//
// libonnx 1.12 checks and infers ai.onnx up to opset 17. A model declaring
// 18 to 22 is rewritten into the equivalent opset-17 model first: most
// operators changed only by taking more element types and read the same;
// those whose signature changed are rewritten, two new activation functions
// are expanded into their definitions, and every other operator that is new
// or changed after 17 is refused by name.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "llvm/ADT/StringExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::onnx_import;

namespace {

/// What a node of an operator that changed after opset 17 needs.
enum class Change {
  /// Reductions: `axes` became an input (18).
  ReduceAxesInput,
  /// Split: `num_outputs` (18).
  SplitNumOutputs,
  /// Cast, CastLike: `saturate` (19), which only float 8 targets read.
  CastSaturate,
  /// AveragePool: `dilations` (19).
  PoolDilations,
  /// Resize: `antialias`, `axes`, `keep_aspect_ratio_policy` (18) and the
  /// half_pixel_symmetric transformation (19).
  ResizeAttributes,
  /// Pad: an `axes` input (18) and the wrap mode (19), which the importer
  /// reads at any opset.
  PadAxes,
  /// Gelu (20), Mish (18): new, expanded into their definitions.
  Expand,
  /// New or changed in a way GradScale does not read.
  Unsupported,
};

struct OpChange {
  llvm::StringLiteral op;
  int since;
  Change change;
};

} // namespace

/// The operators of ai.onnx 18-22 whose changes are more than new element
/// types, from the ONNX operator changelog. An operator not listed here
/// reads at opset 17 as at any opset up to 22.
static constexpr OpChange kChanges[] = {
    {"ReduceL1", 18, Change::ReduceAxesInput},
    {"ReduceL2", 18, Change::ReduceAxesInput},
    {"ReduceLogSum", 18, Change::ReduceAxesInput},
    {"ReduceLogSumExp", 18, Change::ReduceAxesInput},
    {"ReduceMax", 18, Change::ReduceAxesInput},
    {"ReduceMean", 18, Change::ReduceAxesInput},
    {"ReduceMin", 18, Change::ReduceAxesInput},
    {"ReduceProd", 18, Change::ReduceAxesInput},
    {"ReduceSumSquare", 18, Change::ReduceAxesInput},
    {"Split", 18, Change::SplitNumOutputs},
    {"Cast", 19, Change::CastSaturate},
    {"CastLike", 19, Change::CastSaturate},
    {"AveragePool", 19, Change::PoolDilations},
    {"Resize", 18, Change::ResizeAttributes},
    {"Pad", 18, Change::PadAxes},
    {"Mish", 18, Change::Expand},
    {"Gelu", 20, Change::Expand},
    {"AffineGrid", 20, Change::Unsupported},
    {"BitwiseAnd", 18, Change::Unsupported},
    {"BitwiseNot", 18, Change::Unsupported},
    {"BitwiseOr", 18, Change::Unsupported},
    {"BitwiseXor", 18, Change::Unsupported},
    {"CenterCropPad", 18, Change::Unsupported},
    {"Col2Im", 18, Change::Unsupported},
    {"DFT", 20, Change::Unsupported},
    {"DeformConv", 19, Change::Unsupported},
    {"DequantizeLinear", 19, Change::Unsupported},
    {"GridSample", 20, Change::Unsupported},
    {"GroupNormalization", 18, Change::Unsupported},
    {"ImageDecoder", 20, Change::Unsupported},
    {"LpPool", 18, Change::Unsupported},
    {"OptionalGetElement", 18, Change::Unsupported},
    {"OptionalHasElement", 18, Change::Unsupported},
    {"QuantizeLinear", 19, Change::Unsupported},
    {"RegexFullMatch", 20, Change::Unsupported},
    {"ScatterElements", 18, Change::Unsupported},
    {"ScatterND", 18, Change::Unsupported},
    {"StringConcat", 20, Change::Unsupported},
    {"StringSplit", 20, Change::Unsupported},
};

static const OpChange *findChange(StringRef op, int opset) {
  for (const OpChange &row : kChanges)
    if (row.op == op && row.since <= opset)
      return &row;
  return nullptr;
}

namespace {

/// Rewrites the ai.onnx nodes of one graph.
class GraphAdapter {
public:
  /// `outer`: the main graph, whose initializers a training graph reads.
  GraphAdapter(onnx::GraphProto &graph, const onnx::GraphProto *outer,
               int opset, unsigned &counter, llvm::raw_string_ostream &errors)
      : graph(graph), outer(outer), opset(opset), counter(counter),
        errors(errors) {}

  /// Returns the number of nodes that could not be rewritten, each described
  /// on its own line of `errors`.
  int run();

private:
  using Nodes = SmallVector<onnx::NodeProto>;

  void collectNames();
  std::string freshName(StringRef base);
  /// Reports `node` as not adaptable; returns false.
  bool refuse(const onnx::NodeProto &node, const Twine &why);

  /// The integers of `name` when it is an initializer or a Constant.
  std::optional<SmallVector<int64_t>> constantInts(StringRef name) const;
  void dropAttribute(onnx::NodeProto &node, StringRef name);
  const onnx::AttributeProto *attribute(const onnx::NodeProto &node,
                                        StringRef name) const;

  onnx::NodeProto &add(Nodes &out, StringRef op, ArrayRef<std::string> inputs,
                       StringRef output, const onnx::NodeProto &origin);
  std::string intConstant(Nodes &out, ArrayRef<int64_t> values,
                          const onnx::NodeProto &origin);
  std::string floatLike(Nodes &out, float value, StringRef like,
                        const onnx::NodeProto &origin);

  bool adaptReduce(onnx::NodeProto &node);
  bool adaptSplit(onnx::NodeProto &node, Nodes &out);
  bool adaptPoolDilations(onnx::NodeProto &node);
  bool adaptResize(onnx::NodeProto &node);
  bool expandGelu(const onnx::NodeProto &node, Nodes &out);
  bool expandMish(const onnx::NodeProto &node, Nodes &out);

  onnx::GraphProto &graph;
  const onnx::GraphProto *outer;
  int opset;
  /// Shared by the graphs of a model, whose names the training graphs see.
  unsigned &counter;
  llvm::raw_string_ostream &errors;
  llvm::StringSet<> names;
  llvm::StringMap<const onnx::TensorProto *> constants;
  int failures = 0;
};

} // namespace

void GraphAdapter::collectNames() {
  if (outer)
    for (const onnx::TensorProto &t : outer->initializer()) {
      names.insert(t.name());
      constants[t.name()] = &t;
    }
  for (const auto &v : graph.input())
    names.insert(v.name());
  for (const auto &v : graph.output())
    names.insert(v.name());
  for (const auto &v : graph.value_info())
    names.insert(v.name());
  for (const onnx::TensorProto &t : graph.initializer()) {
    names.insert(t.name());
    constants[t.name()] = &t;
  }
  for (const onnx::NodeProto &node : graph.node()) {
    names.insert(node.name());
    for (const std::string &output : node.output())
      names.insert(output);
    if (node.op_type() == "Constant" && node.output_size() == 1 &&
        canonicalDomain(node.domain()).empty())
      for (const onnx::AttributeProto &attr : node.attribute())
        if (attr.name() == "value" && attr.has_t())
          constants[node.output(0)] = &attr.t();
  }
}

std::string GraphAdapter::freshName(StringRef base) {
  std::string name;
  do
    name = (base + "__opset17_" + Twine(counter++)).str();
  while (names.contains(name));
  names.insert(name);
  return name;
}

bool GraphAdapter::refuse(const onnx::NodeProto &node, const Twine &why) {
  errors << "\n  " << describeNode(node) << ": " << why;
  ++failures;
  return false;
}

std::optional<SmallVector<int64_t>>
GraphAdapter::constantInts(StringRef name) const {
  const onnx::TensorProto *tensor = constants.lookup(name);
  if (!tensor)
    return std::nullopt;
  return integerValues(*tensor);
}

const onnx::AttributeProto *GraphAdapter::attribute(const onnx::NodeProto &node,
                                                    StringRef name) const {
  for (const onnx::AttributeProto &attr : node.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

void GraphAdapter::dropAttribute(onnx::NodeProto &node, StringRef name) {
  auto *attrs = node.mutable_attribute();
  for (int i = attrs->size() - 1; i >= 0; --i)
    if (attrs->Get(i).name() == name)
      attrs->DeleteSubrange(i, 1);
}

onnx::NodeProto &GraphAdapter::add(Nodes &out, StringRef op,
                                   ArrayRef<std::string> inputs,
                                   StringRef output,
                                   const onnx::NodeProto &origin) {
  onnx::NodeProto &node = out.emplace_back();
  // Named after the node they replace, so that diagnostics still point at
  // what the user wrote.
  node.set_name(origin.name());
  node.set_op_type(op.str());
  for (const std::string &input : inputs)
    node.add_input(input);
  node.add_output(output.str());
  return node;
}

std::string GraphAdapter::intConstant(Nodes &out, ArrayRef<int64_t> values,
                                      const onnx::NodeProto &origin) {
  std::string name = freshName(origin.output(0));
  onnx::AttributeProto *attr =
      add(out, "Constant", {}, name, origin).add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto *tensor = attr->mutable_t();
  tensor->set_data_type(onnx::TensorProto::INT64);
  tensor->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values)
    tensor->add_int64_data(v);
  return name;
}

std::string GraphAdapter::floatLike(Nodes &out, float value, StringRef like,
                                    const onnx::NodeProto &origin) {
  std::string constant = freshName(origin.output(0));
  onnx::AttributeProto *attr =
      add(out, "Constant", {}, constant, origin).add_attribute();
  attr->set_name("value_float");
  attr->set_type(onnx::AttributeProto::FLOAT);
  attr->set_f(value);
  std::string cast = freshName(origin.output(0));
  add(out, "CastLike", {constant, like.str()}, cast, origin);
  return cast;
}

/// ReduceX(data, axes?) with `noop_with_empty_axes` becomes ReduceX(data)
/// with an `axes` attribute, or Identity where no axes mean no reduction.
bool GraphAdapter::adaptReduce(onnx::NodeProto &node) {
  std::optional<SmallVector<int64_t>> axes;
  if (node.input_size() >= 2 && !node.input(1).empty()) {
    axes = constantInts(node.input(1));
    if (!axes)
      return refuse(node, "its axes must be a constant (an initializer or a "
                          "Constant) for GradScale to read it at ai.onnx "
                          "opset " +
                              Twine(opset));
  }
  const onnx::AttributeProto *noop = attribute(node, "noop_with_empty_axes");
  bool noopWhenEmpty = noop && noop->i() != 0;
  dropAttribute(node, "noop_with_empty_axes");
  if (node.input_size() > 1)
    node.mutable_input()->DeleteSubrange(1, node.input_size() - 1);
  if (!axes || axes->empty()) {
    if (noopWhenEmpty) {
      node.set_op_type("Identity");
      node.clear_attribute();
    }
    return true;
  }
  onnx::AttributeProto *attr = node.add_attribute();
  attr->set_name("axes");
  attr->set_type(onnx::AttributeProto::INTS);
  for (int64_t axis : *axes)
    attr->add_ints(axis);
  return true;
}

/// Split with `num_outputs` n: chunks of ceil(d / n) along the axis, the
/// last one smaller. Opset 17 needs the sizes as an input; they are computed
/// from the input's shape, and shape folding makes them a constant.
bool GraphAdapter::adaptSplit(onnx::NodeProto &node, Nodes &out) {
  const onnx::AttributeProto *numOutputs = attribute(node, "num_outputs");
  if (!numOutputs) {
    out.push_back(node);
    return true;
  }
  int64_t n = numOutputs->i();
  bool hasSplit = node.input_size() >= 2 && !node.input(1).empty();
  if (hasSplit)
    return refuse(node, "has both a split input and num_outputs");
  if (node.input_size() < 1 || node.input(0).empty())
    return refuse(node, "has no input to split");
  if (n < 1 || n != node.output_size())
    return refuse(node, "num_outputs " + Twine(n) + " but " +
                            Twine(node.output_size()) + " outputs");
  const onnx::AttributeProto *axisAttr = attribute(node, "axis");
  int64_t axis = axisAttr ? axisAttr->i() : 0;

  std::string shape = freshName(node.output(0));
  add(out, "Shape", {node.input(0)}, shape, node);
  std::string dim = freshName(node.output(0));
  add(out, "Gather", {shape, intConstant(out, {axis}, node)}, dim, node);
  std::string split = dim;
  if (n > 1) {
    std::string rest = intConstant(out, {n - 1}, node);
    std::string sum = freshName(node.output(0));
    add(out, "Add", {dim, rest}, sum, node);
    std::string chunk = freshName(node.output(0));
    add(out, "Div", {sum, intConstant(out, {n}, node)}, chunk, node);
    std::string covered = freshName(node.output(0));
    add(out, "Mul", {chunk, rest}, covered, node);
    std::string last = freshName(node.output(0));
    add(out, "Sub", {dim, covered}, last, node);
    SmallVector<std::string> parts(n - 1, chunk);
    parts.push_back(last);
    split = freshName(node.output(0));
    onnx::AttributeProto *concatAxis =
        add(out, "Concat", parts, split, node).add_attribute();
    concatAxis->set_name("axis");
    concatAxis->set_type(onnx::AttributeProto::INT);
    concatAxis->set_i(0);
  }
  onnx::NodeProto &adapted = out.emplace_back(node);
  dropAttribute(adapted, "num_outputs");
  if (adapted.input_size() < 2)
    adapted.add_input(split);
  else
    adapted.set_input(1, split);
  return true;
}

bool GraphAdapter::adaptPoolDilations(onnx::NodeProto &node) {
  if (const onnx::AttributeProto *dilations = attribute(node, "dilations"))
    for (int64_t d : dilations->ints())
      if (d != 1)
        return refuse(node, "dilated average pooling is not supported");
  dropAttribute(node, "dilations");
  return true;
}

/// Resize-18 and 19 read as Resize-13 where their new attributes keep
/// their defaults.
bool GraphAdapter::adaptResize(onnx::NodeProto &node) {
  const onnx::AttributeProto *antialias = attribute(node, "antialias");
  if (antialias && antialias->i() != 0)
    return refuse(node, "antialiased resizing is not supported");
  if (attribute(node, "axes"))
    return refuse(node, "resizing selected axes is not supported; give "
                        "scales or sizes for every axis");
  const onnx::AttributeProto *policy =
      attribute(node, "keep_aspect_ratio_policy");
  if (policy && policy->s() != "stretch")
    return refuse(node, "keep_aspect_ratio_policy '" + policy->s() +
                            "' is not supported");
  const onnx::AttributeProto *transform =
      attribute(node, "coordinate_transformation_mode");
  if (transform && transform->s() == "half_pixel_symmetric")
    return refuse(node, "coordinate_transformation_mode "
                        "'half_pixel_symmetric' is not supported");
  for (StringRef name : {"antialias", "axes", "keep_aspect_ratio_policy"})
    dropAttribute(node, name);
  return true;
}

/// Gelu(x) = x/2 (1 + erf(x / sqrt 2)), or with `approximate` "tanh",
/// x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
bool GraphAdapter::expandGelu(const onnx::NodeProto &node, Nodes &out) {
  if (node.input_size() != 1 || node.output_size() != 1)
    return refuse(node, "Gelu takes one input and one output");
  const onnx::AttributeProto *approximate = attribute(node, "approximate");
  std::string mode = approximate ? approximate->s() : "none";
  if (mode != "none" && mode != "tanh")
    return refuse(node, "approximate '" + mode + "' is not 'none' or 'tanh'");
  const std::string &x = node.input(0);
  std::string inner;
  if (mode == "none") {
    std::string scaled = freshName(node.output(0));
    add(out, "Mul", {x, floatLike(out, float(M_SQRT1_2), x, node)}, scaled,
        node);
    inner = freshName(node.output(0));
    add(out, "Erf", {scaled}, inner, node);
  } else {
    std::string square = freshName(node.output(0));
    add(out, "Mul", {x, x}, square, node);
    std::string cube = freshName(node.output(0));
    add(out, "Mul", {square, x}, cube, node);
    std::string term = freshName(node.output(0));
    add(out, "Mul", {cube, floatLike(out, 0.044715f, x, node)}, term, node);
    std::string sum = freshName(node.output(0));
    add(out, "Add", {x, term}, sum, node);
    std::string scaled = freshName(node.output(0));
    add(out, "Mul",
        {sum, floatLike(out, float(M_2_SQRTPI * M_SQRT1_2), x, node)}, scaled,
        node);
    inner = freshName(node.output(0));
    add(out, "Tanh", {scaled}, inner, node);
  }
  std::string onePlus = freshName(node.output(0));
  add(out, "Add", {inner, floatLike(out, 1.0f, x, node)}, onePlus, node);
  std::string half = freshName(node.output(0));
  add(out, "Mul", {x, floatLike(out, 0.5f, x, node)}, half, node);
  add(out, "Mul", {half, onePlus}, node.output(0), node);
  return true;
}

/// Mish(x) = x tanh(softplus(x)), with softplus(x) = ln(1 + e^x) as
/// max(x, 0) + ln(1 + e^-|x|): e^x overflows (past 11 in FP16), and its
/// gradient then turns NaN; e^-|x| stays in (0, 1].
bool GraphAdapter::expandMish(const onnx::NodeProto &node, Nodes &out) {
  if (node.input_size() != 1 || node.output_size() != 1)
    return refuse(node, "Mish takes one input and one output");
  const std::string &x = node.input(0);
  std::string magnitude = freshName(node.output(0));
  add(out, "Abs", {x}, magnitude, node);
  std::string negated = freshName(node.output(0));
  add(out, "Neg", {magnitude}, negated, node);
  std::string exp = freshName(node.output(0));
  add(out, "Exp", {negated}, exp, node);
  std::string onePlus = freshName(node.output(0));
  add(out, "Add", {exp, floatLike(out, 1.0f, x, node)}, onePlus, node);
  std::string log = freshName(node.output(0));
  add(out, "Log", {onePlus}, log, node);
  std::string positive = freshName(node.output(0));
  add(out, "Relu", {x}, positive, node);
  std::string softplus = freshName(node.output(0));
  add(out, "Add", {positive, log}, softplus, node);
  std::string tanh = freshName(node.output(0));
  add(out, "Tanh", {softplus}, tanh, node);
  add(out, "Mul", {x, tanh}, node.output(0), node);
  return true;
}

int GraphAdapter::run() {
  collectNames();
  Nodes adapted;
  for (onnx::NodeProto &node : *graph.mutable_node()) {
    // Subgraphs (If, Loop, Scan) would keep their opset-18 nodes.
    if (llvm::any_of(node.attribute(), [](const onnx::AttributeProto &attr) {
          return attr.has_g() || attr.graphs_size();
        }))
      refuse(node, "has a subgraph, which GradScale does not read at "
                   "ai.onnx opset " +
                       Twine(opset));
    const OpChange *change = canonicalDomain(node.domain()).empty()
                                 ? findChange(node.op_type(), opset)
                                 : nullptr;
    if (!change) {
      adapted.push_back(std::move(node));
      continue;
    }
    if (node.output_size() == 0) {
      refuse(node, "has no outputs");
      continue;
    }
    switch (change->change) {
    case Change::ReduceAxesInput:
      if (adaptReduce(node))
        adapted.push_back(std::move(node));
      break;
    case Change::SplitNumOutputs:
      adaptSplit(node, adapted);
      break;
    case Change::CastSaturate:
      dropAttribute(node, "saturate");
      adapted.push_back(std::move(node));
      break;
    case Change::PoolDilations:
      if (adaptPoolDilations(node))
        adapted.push_back(std::move(node));
      break;
    case Change::ResizeAttributes:
      if (adaptResize(node))
        adapted.push_back(std::move(node));
      break;
    case Change::PadAxes:
      if (node.input_size() >= 4 && !node.input(3).empty())
        refuse(node, "padding selected axes is not supported; give pads for "
                     "every axis");
      else
        adapted.push_back(std::move(node));
      break;
    case Change::Expand:
      if (node.op_type() == "Gelu")
        expandGelu(node, adapted);
      else
        expandMish(node, adapted);
      break;
    case Change::Unsupported:
      refuse(node, "not supported at ai.onnx opset " + Twine(opset));
      break;
    }
  }
  graph.clear_node();
  for (onnx::NodeProto &node : adapted)
    *graph.add_node() = std::move(node);
  return failures;
}

std::string onnx_import::adaptToOpset17(onnx::ModelProto &model,
                                        int &declaredOpset) {
  declaredOpset = -1;
  onnx::OperatorSetIdProto *onnxOpset = nullptr;
  for (onnx::OperatorSetIdProto &entry : *model.mutable_opset_import())
    if (canonicalDomain(entry.domain()).empty())
      onnxOpset = &entry;
  if (!onnxOpset || onnxOpset->version() <= kLibOnnxOpset)
    return {};
  int64_t version = onnxOpset->version();
  if (version > kNewestOnnxOpset)
    return ("ai.onnx opset " + Twine(version) +
            " is newer than GradScale reads (opsets 1 to " +
            Twine(kNewestOnnxOpset) +
            "); convert the model with "
            "onnx.version_converter.convert_version(model, " +
            Twine(kNewestOnnxOpset) + ")")
        .str();
  declaredOpset = static_cast<int>(version);

  std::string errors;
  llvm::raw_string_ostream os(errors);
  unsigned counter = 0;
  if (model.functions_size())
    return ("this ai.onnx opset " + Twine(declaredOpset) +
            " model has local functions, which GradScale does not read at "
            "opsets above " +
            Twine(kLibOnnxOpset))
        .str();
  const onnx::GraphProto &main = model.graph();
  auto adapt = [&](onnx::GraphProto &graph, const onnx::GraphProto *outer) {
    return GraphAdapter(graph, outer, declaredOpset, counter, os).run();
  };
  int failures = adapt(*model.mutable_graph(), nullptr);
  for (onnx::TrainingInfoProto &info : *model.mutable_training_info()) {
    if (info.has_algorithm())
      failures += adapt(*info.mutable_algorithm(), &main);
    if (info.has_initialization())
      failures += adapt(*info.mutable_initialization(), &main);
  }
  if (failures)
    return (Twine(failures) + " node" + (failures > 1 ? "s" : "") +
            " of this ai.onnx opset " + Twine(declaredOpset) +
            " model cannot be read:" + errors)
        .str();
  onnxOpset->set_version(kLibOnnxOpset);
  return {};
}
