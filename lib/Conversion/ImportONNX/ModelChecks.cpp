//===- ModelChecks.cpp - What libonnx trusts, checked first ------*- C++
//-*-===//
//
// libonnx's shape inference divides by strides and indexes by axes without
// checking them, so a hostile attribute crashes the process before the
// importer sees the node. These checks run on the whole model before each
// round of inference: window attributes, block sizes, the ranks of a
// convolution's input and weight and the normalization axis, and names
// that C strings and symbols must carry. Ranks come from the model's
// types, from the ops whose output rank their inputs' ranks give, and,
// where a check needs a rank neither tells, from libonnx's inference of
// the nodes before the one checked (which the checks have passed). A node
// with a subgraph (If, Loop, Scan) is refused: libonnx infers a subgraph
// with types from its outer scope that these checks do not see, and
// GradScale imports no control flow.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"
#include "OnnxFrontend.h"
#include "TensorData.h"

#include "gs/Dialect/GS/IR/ShapeUtils.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <functional>
#include <optional>

using namespace mlir;
using namespace mlir::gs;

/// The largest window attribute (stride, dilation, kernel extent, pad,
/// block size) accepted: window arithmetic then cannot overflow int64.
static constexpr int64_t kMaxWindowValue = int64_t(1) << 31;

/// `name` printable: NUL and other control bytes escaped.
static std::string escaped(llvm::StringRef name) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::printEscapedString(name, os);
  return text;
}

static std::string checkName(llvm::StringRef what, const std::string &name) {
  if (name.find('\0') == std::string::npos)
    return {};
  return what.str() + " '" + escaped(name) +
         "' contains a NUL byte, which names cannot carry";
}

namespace {
/// The ranks of the values of a graph's first N nodes as libonnx infers
/// them.
using PrefixRanks = std::function<llvm::StringMap<int64_t>(int)>;

/// How a tensor's elements are stored: bytes per element in raw_data, and
/// the typed field and values per element without it. Zero bytes: a type
/// this check leaves to the importer (strings, unknown types).
struct TensorStorage {
  int64_t rawBytes = 0;
  int valuesPerElement = 1;
};

TensorStorage storageOf(int32_t dataType) {
  using T = onnx::TensorProto;
  switch (dataType) {
  case T::UINT8:
  case T::INT8:
  case T::BOOL:
    return {1};
  case T::UINT16:
  case T::INT16:
  case T::FLOAT16:
  case T::BFLOAT16:
    return {2};
  case T::FLOAT:
  case T::INT32:
  case T::UINT32:
    return {4};
  case T::INT64:
  case T::UINT64:
  case T::DOUBLE:
    return {8};
  case T::COMPLEX64:
    return {8, 2};
  case T::COMPLEX128:
    return {16, 2};
  default:
    return {};
  }
}

/// The number of values of `tensor`'s typed field for its type.
int64_t typedValues(const onnx::TensorProto &tensor) {
  using T = onnx::TensorProto;
  switch (tensor.data_type()) {
  case T::FLOAT:
  case T::COMPLEX64:
    return tensor.float_data_size();
  case T::INT64:
    return tensor.int64_data_size();
  case T::DOUBLE:
  case T::COMPLEX128:
    return tensor.double_data_size();
  case T::UINT32:
  case T::UINT64:
    return tensor.uint64_data_size();
  default:
    return tensor.int32_data_size();
  }
}

/// libonnx's shape inference reads constant tensors (initializers,
/// Constant values) for data propagation and trusts their data to fit
/// their shape: checks that it does, for data held in the model.
/// `a * b`, or nullopt where it overflows.
std::optional<int64_t> product(int64_t a, int64_t b) {
  int64_t result;
  if (llvm::MulOverflow(a, b, result))
    return std::nullopt;
  return result;
}

std::string checkTensorData(const onnx::TensorProto &tensor,
                            const std::string &subject) {
  for (int64_t d : tensor.dims())
    if (d < 0)
      return subject + " has the negative dimension " + std::to_string(d);
  std::optional<int64_t> elements = checkedNumElements(
      ArrayRef<int64_t>(tensor.dims().data(), tensor.dims_size()));
  if (!elements)
    return subject + " has more elements than 64 bits count";
  TensorStorage storage = storageOf(tensor.data_type());
  if (storage.rawBytes == 0 ||
      tensor.data_location() == onnx::TensorProto::EXTERNAL)
    return {};
  std::string type =
      onnx_import::elementTypeName(tensor.data_type()) + "[" +
      llvm::join(llvm::map_range(tensor.dims(),
                                 [](int64_t d) { return std::to_string(d); }),
                 "x") +
      "]";
  if (tensor.has_raw_data()) {
    std::optional<int64_t> bytes = product(*elements, storage.rawBytes);
    if (!bytes || static_cast<int64_t>(tensor.raw_data().size()) != *bytes)
      return subject + " holds " + std::to_string(tensor.raw_data().size()) +
             " bytes of data, but " + type + " needs " +
             (bytes ? std::to_string(*bytes) : std::string("more"));
    return {};
  }
  std::optional<int64_t> values = product(*elements, storage.valuesPerElement);
  if (!values || typedValues(tensor) != *values)
    return subject + " holds " + std::to_string(typedValues(tensor)) +
           " values, but " + type + " needs " +
           (values ? std::to_string(*values) : std::string("more"));
  return {};
}

/// The checks of one graph; `ranks` holds the rank of every value whose
/// type the model states or whose op determines it from its inputs'.
class GraphChecker {
public:
  /// A check that needs a rank the model and the op table leave open asks
  /// `prefixRanks` for it.
  explicit GraphChecker(PrefixRanks prefixRanks)
      : prefixRanks(std::move(prefixRanks)) {}

  std::string check(const onnx::GraphProto &graph) {
    for (const onnx::ValueInfoProto &value : graph.input())
      noteRank(value);
    for (const onnx::ValueInfoProto &value : graph.value_info())
      noteRank(value);
    for (const onnx::TensorProto &tensor : graph.initializer()) {
      ranks[tensor.name()] = tensor.dims_size();
      if (std::string error = checkName("initializer", tensor.name());
          !error.empty())
        return error;
      if (std::string error = checkTensorData(
              tensor, "initializer '" + escaped(tensor.name()) + "'");
          !error.empty())
        return error;
    }
    for (const onnx::ValueInfoProto &value : graph.input())
      if (std::string error = checkName("graph input", value.name());
          !error.empty())
        return error;
    for (const onnx::ValueInfoProto &value : graph.output())
      if (std::string error = checkName("graph output", value.name());
          !error.empty())
        return error;
    for (auto [i, node] : llvm::enumerate(graph.node())) {
      learnMissingRanks(node, static_cast<int>(i));
      if (std::string error = checkNode(node); !error.empty())
        return error;
      noteOutputRanks(node);
    }
    return {};
  }

private:
  /// The inputs whose ranks the checks of `node` compare.
  static SmallVector<int> rankCheckedInputs(const onnx::NodeProto &node) {
    if (!onnx_import::canonicalDomain(node.domain()).empty())
      return {};
    llvm::StringRef op = node.op_type();
    if (op == "Conv" || op == "ConvTranspose" || op == "ConvInteger")
      return {0, 1};
    if (op == "QLinearConv")
      return {0, 3};
    if (op == "LayerNormalization")
      return {0};
    return {};
  }

  /// Asks libonnx for the ranks the checks of `node` (the graph's node
  /// `index`) need and the model leaves open.
  void learnMissingRanks(const onnx::NodeProto &node, int index) {
    bool missing = llvm::any_of(rankCheckedInputs(node), [&](int i) {
      return i < node.input_size() && !node.input(i).empty() &&
             !ranks.contains(node.input(i));
    });
    if (!missing)
      return;
    for (const auto &entry : prefixRanks(index))
      ranks.try_emplace(entry.getKey(), entry.getValue());
  }

  void noteRank(const onnx::ValueInfoProto &value) {
    if (value.type().has_tensor_type() &&
        value.type().tensor_type().has_shape())
      ranks[value.name()] = value.type().tensor_type().shape().dim_size();
  }

  /// The ranks of `node`'s outputs where its op and its inputs' ranks
  /// determine them (nodes come in topological order), so that the checks
  /// reach values whose type the model leaves to inference. A rank the
  /// model states is kept.
  void noteOutputRanks(const onnx::NodeProto &node) {
    if (!onnx_import::canonicalDomain(node.domain()).empty() ||
        node.output_size() == 0)
      return;
    auto rankOf = [&](int i) -> std::optional<int64_t> {
      if (i >= node.input_size())
        return std::nullopt;
      auto it = ranks.find(node.input(i));
      return it == ranks.end() ? std::nullopt
                               : std::optional<int64_t>(it->second);
    };
    auto note = [&](int output, std::optional<int64_t> rank) {
      if (rank && output < node.output_size() && !node.output(output).empty())
        ranks.try_emplace(node.output(output), *rank);
    };
    llvm::StringRef op = node.op_type();
    // Op tables, a line per row.
    // clang-format off
    bool sameAsInput =
        llvm::StringSwitch<bool>(op)
            .Cases({"Abs", "Ceil", "Celu", "Clip", "Cos", "Elu", "Erf", "Exp",
                    "Floor", "Gelu", "HardSigmoid", "HardSwish", "Identity",
                    "IsInf", "IsNaN", "LeakyRelu", "Log", "Neg", "Not",
                    "Reciprocal", "Relu", "Round", "Selu", "Sigmoid", "Sign",
                    "Sin", "Softplus", "Softsign", "Sqrt", "Tanh"},
                   true)
            .Cases({"Cast", "CumSum", "Softmax", "LogSoftmax", "Hardmax",
                    "Conv", "ConvTranspose", "MaxPool", "AveragePool",
                    "LpPool", "GlobalAveragePool", "GlobalMaxPool",
                    "BatchNormalization", "InstanceNormalization",
                    "LayerNormalization", "LRN", "Dropout", "Transpose",
                    "Pad", "Slice", "Tile", "Resize", "Upsample", "Concat",
                    "DepthToSpace", "SpaceToDepth", "ThresholdedRelu",
                    "Shrink"},
                   true)
            .Default(false);
    if (sameAsInput) {
      note(0, rankOf(0));
      // Dropout's mask, MaxPool's indices.
      if (op == "Dropout" || op == "MaxPool")
        note(1, rankOf(0));
      return;
    }
    bool broadcast =
        llvm::StringSwitch<bool>(op)
            .Cases({"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min",
                    "Sum", "Mean", "Equal", "Less", "Greater", "LessOrEqual",
                    "GreaterOrEqual", "And", "Or", "Xor", "Where", "PRelu",
                    "BitShift"},
                   true)
            .Default(false);
    // clang-format on
    if (broadcast) {
      int64_t rank = 0;
      for (int i = 0; i < node.input_size(); ++i) {
        std::optional<int64_t> r = rankOf(i);
        if (!r)
          return;
        rank = std::max(rank, *r);
      }
      note(0, rank);
      return;
    }
    if (op == "Gemm" || op == "Flatten")
      return note(0, 2);
    if (op == "MatMul") {
      std::optional<int64_t> a = rankOf(0), b = rankOf(1);
      if (!a || !b || *a < 1 || *b < 1)
        return;
      int64_t rank = std::max(*a, *b) - (*a == 1) - (*b == 1);
      return note(0, std::max<int64_t>(rank, 0));
    }
  }

  std::string checkNode(const onnx::NodeProto &node) {
    for (const std::string &name : node.input())
      if (std::string error = checkName("node input", name); !error.empty())
        return onnx_import::describeNode(node) + ": " + error;
    for (const std::string &name : node.output())
      if (std::string error = checkName("node output", name); !error.empty())
        return onnx_import::describeNode(node) + ": " + error;
    if (std::string error = checkName("node name", node.name()); !error.empty())
      return error;
    if (std::string error = checkWeightRank(node); !error.empty())
      return onnx_import::describeNode(node) + ": " + error;
    if (std::string error = checkNormalizationAxis(node); !error.empty())
      return onnx_import::describeNode(node) + ": " + error;
    for (const onnx::AttributeProto &attribute : node.attribute()) {
      if (std::string error = checkAttribute(node, attribute); !error.empty())
        return onnx_import::describeNode(node) + ": " + error;
      std::string tensorWhat =
          "the tensor of attribute '" + escaped(attribute.name()) + "'";
      if (attribute.has_t())
        if (std::string error = checkTensorData(attribute.t(), tensorWhat);
            !error.empty())
          return onnx_import::describeNode(node) + ": " + error;
      for (const onnx::TensorProto &tensor : attribute.tensors())
        if (std::string error = checkTensorData(tensor, tensorWhat);
            !error.empty())
          return onnx_import::describeNode(node) + ": " + error;
      if (attribute.has_g() || attribute.graphs_size() > 0)
        return onnx_import::describeNode(node) + ": attribute '" +
               escaped(attribute.name()) +
               "' holds a subgraph; GradScale does not import control "
               "flow (If, Loop, Scan)";
    }
    return {};
  }

  /// libonnx takes a convolution's kernel extents from its weight's shape
  /// and indexes the input's per-dimension attributes with them.
  std::string checkWeightRank(const onnx::NodeProto &node) {
    llvm::StringRef op = node.op_type();
    int weightIndex = op == "QLinearConv" ? 3 : 1;
    bool convolution = op == "Conv" || op == "ConvTranspose" ||
                       op == "ConvInteger" || op == "QLinearConv";
    if (!convolution || node.input_size() <= weightIndex ||
        !onnx_import::canonicalDomain(node.domain()).empty())
      return {};
    auto input = ranks.find(node.input(0));
    auto weight = ranks.find(node.input(weightIndex));
    if (input == ranks.end() || weight == ranks.end() ||
        input->second == weight->second)
      return {};
    return "its weight '" + node.input(weightIndex) + "' has rank " +
           std::to_string(weight->second) + ", its input '" + node.input(0) +
           "' rank " + std::to_string(input->second) + "; they must be equal";
  }

  std::string checkAttribute(const onnx::NodeProto &node,
                             const onnx::AttributeProto &attribute) {
    llvm::StringRef op = node.op_type(), name = attribute.name();
    if (!onnx_import::canonicalDomain(node.domain()).empty())
      return {};
    bool window =
        llvm::StringSwitch<bool>(op)
            .Cases({"Conv", "ConvTranspose", "ConvInteger", "QLinearConv",
                    "MaxPool", "AveragePool", "LpPool"},
                   true)
            .Default(false);
    if (window) {
      // Strides, dilations and kernel extents are at least 1; pads and
      // output paddings at least 0; all bounded.
      int64_t least = llvm::StringSwitch<int64_t>(name)
                          .Cases({"strides", "dilations", "kernel_shape"}, 1)
                          .Cases({"pads", "output_padding"}, 0)
                          .Default(-1);
      if (least >= 0)
        for (int64_t value : attribute.ints())
          if (value < least || value > kMaxWindowValue)
            return "attribute '" + name.str() + "' holds " +
                   std::to_string(value) + "; it must be in [" +
                   std::to_string(least) + ", 2^31]";
      if (name == "group" &&
          (attribute.i() < 1 || attribute.i() > kMaxWindowValue))
        return "attribute 'group' is " + std::to_string(attribute.i()) +
               "; it must be in [1, 2^31]";
    }
    if ((op == "DepthToSpace" || op == "SpaceToDepth") && name == "blocksize" &&
        (attribute.i() < 1 || attribute.i() > kMaxWindowValue))
      return "attribute 'blocksize' is " + std::to_string(attribute.i()) +
             "; it must be in [1, 2^31]";
    return {};
  }

  /// libonnx indexes LayerNormalization's input shape by its axis (default
  /// -1) unchecked: a rank-0 input crashes it even without the attribute.
  std::string checkNormalizationAxis(const onnx::NodeProto &node) {
    if (node.op_type() != "LayerNormalization" || node.input_size() == 0 ||
        !onnx_import::canonicalDomain(node.domain()).empty())
      return {};
    auto rank = ranks.find(node.input(0));
    if (rank == ranks.end())
      return {};
    int64_t axis = -1;
    bool stated = false;
    for (const onnx::AttributeProto &attribute : node.attribute())
      if (attribute.name() == "axis") {
        axis = attribute.i();
        stated = true;
      }
    if (axis >= -rank->second && axis < rank->second)
      return {};
    return (stated ? "attribute 'axis' is "
                   : "attribute 'axis' (default) is ") +
           std::to_string(axis) + ", out of range for its rank-" +
           std::to_string(rank->second) + " input";
  }

  PrefixRanks prefixRanks;
  llvm::StringMap<int64_t> ranks;
};
} // namespace

/// Initializers up to this many elements keep their values in the model
/// whose prefix libonnx infers (shape inputs need them); larger ones become
/// graph inputs of their type.
static constexpr int64_t kMaxCopiedInitializerElements = 4096;

std::string onnx_import::checkBeforeInference(const onnx::ModelProto &model) {
  PrefixRanks prefixRanks = [&](int count) {
    onnx::ModelProto prefix;
    *prefix.mutable_opset_import() = model.opset_import();
    prefix.set_ir_version(model.ir_version());
    const onnx::GraphProto &graph = model.graph();
    onnx::GraphProto &inferred = *prefix.mutable_graph();
    *inferred.mutable_input() = graph.input();
    *inferred.mutable_value_info() = graph.value_info();
    for (const onnx::TensorProto &tensor : graph.initializer()) {
      std::optional<int64_t> elements = checkedNumElements(
          ArrayRef<int64_t>(tensor.dims().data(), tensor.dims_size()));
      if (elements && *elements <= kMaxCopiedInitializerElements) {
        *inferred.add_initializer() = tensor;
        continue;
      }
      onnx::ValueInfoProto &input = *inferred.add_input();
      input.set_name(tensor.name());
      auto &type = *input.mutable_type()->mutable_tensor_type();
      type.set_elem_type(tensor.data_type());
      for (int64_t d : tensor.dims())
        type.mutable_shape()->add_dim()->set_dim_value(d);
    }
    for (int i = 0; i < count; ++i)
      *inferred.add_node() = graph.node(i);
    llvm::StringMap<int64_t> ranks;
    // A node libonnx cannot infer leaves its outputs' ranks open, not the
    // others'; the full inference reports it.
    if (!onnx_frontend::inferShapesPastNodeErrors(prefix).empty())
      return ranks;
    for (const onnx::ValueInfoProto &value : inferred.value_info())
      if (value.type().has_tensor_type() &&
          value.type().tensor_type().has_shape())
        ranks[value.name()] = value.type().tensor_type().shape().dim_size();
    return ranks;
  };
  return GraphChecker(std::move(prefixRanks)).check(model.graph());
}
