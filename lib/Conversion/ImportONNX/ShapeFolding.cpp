//===- ShapeFolding.cpp - Evaluate ONNX shape computations -----*- C++ -*-===//
//
// Exporters compute shapes at run time (Shape -> Gather -> Concat ->
// Reshape), which leaves ONNX shape inference without static shapes. With
// the inputs' shapes pinned, those computations are constant: this file
// evaluates them on the model itself, replacing each foldable node by a
// Constant node, so that shape inference can then resolve what follows.
// Only integer (and boolean) tensors are evaluated; they are small.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "gs/Dialect/GS/IR/ShapeUtils.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

#include <cstring>

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::onnx_import;
using onnx::TensorProto;

namespace {
/// A small integer tensor, row-major.
struct IntTensor {
  SmallVector<int64_t> shape;
  SmallVector<int64_t> values;
  int32_t dataType = TensorProto::INT64;
};
} // namespace

/// The most elements an integer shape value may have, read or folded:
/// shape computations are small, and a larger one is left to the importer.
constexpr int64_t kMaxFoldedElements = 4096;
/// The most elements a folded float ConstantOfShape may have (64 MiB).
constexpr int64_t kMaxFoldedFloats = int64_t(1) << 24;
/// Float vectors joined by Concat: scales and the like, not weights.
constexpr int64_t kMaxConcatFloats = 64;

/// The element count of `shape` when it is at most `limit`.
static std::optional<int64_t>
boundedProduct(ArrayRef<int64_t> shape, int64_t limit = kMaxFoldedElements) {
  std::optional<int64_t> n = checkedNumElements(shape);
  if (!n || *n > limit)
    return std::nullopt;
  return n;
}

/// The product of `shape`, saturated at INT64_MAX (never UB).
static int64_t product(ArrayRef<int64_t> shape) { return numElements(shape); }

/// Two's-complement arithmetic on int64 (what a runtime computes; no UB).
static int64_t wrappingAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(uint64_t(a) + uint64_t(b));
}
static int64_t wrappingSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(uint64_t(a) - uint64_t(b));
}
static int64_t wrappingMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(uint64_t(a) * uint64_t(b));
}

static bool isIntegerType(int32_t type) {
  return type == TensorProto::INT64 || type == TensorProto::INT32 ||
         type == TensorProto::BOOL || type == TensorProto::INT8 ||
         type == TensorProto::UINT8 || type == TensorProto::INT16;
}

/// Reads an integer TensorProto (raw or typed data, not external).
static std::optional<IntTensor> readTensor(const TensorProto &tensor) {
  if (!isIntegerType(tensor.data_type()) ||
      tensor.data_location() == TensorProto::EXTERNAL)
    return std::nullopt;
  IntTensor t;
  t.dataType = tensor.data_type();
  t.shape.assign(tensor.dims().begin(), tensor.dims().end());
  std::optional<int64_t> count = boundedProduct(t.shape);
  if (!count)
    return std::nullopt;
  int64_t n = *count;
  if (tensor.has_raw_data()) {
    const std::string &raw = tensor.raw_data();
    size_t width = tensor.data_type() == TensorProto::INT64   ? 8
                   : tensor.data_type() == TensorProto::INT32 ? 4
                   : tensor.data_type() == TensorProto::INT16 ? 2
                                                              : 1;
    if (raw.size() != static_cast<size_t>(n) * width)
      return std::nullopt;
    for (int64_t i = 0; i < n; ++i) {
      const char *p = raw.data() + i * width;
      int64_t v = 0;
      switch (tensor.data_type()) {
      case TensorProto::INT64: {
        std::memcpy(&v, p, 8);
        break;
      }
      case TensorProto::INT32: {
        int32_t x;
        std::memcpy(&x, p, 4);
        v = x;
        break;
      }
      case TensorProto::INT16: {
        int16_t x;
        std::memcpy(&x, p, 2);
        v = x;
        break;
      }
      case TensorProto::INT8:
        v = static_cast<int8_t>(*p);
        break;
      default:
        v = static_cast<uint8_t>(*p);
      }
      t.values.push_back(v);
    }
  } else if (tensor.data_type() == TensorProto::INT64) {
    t.values.assign(tensor.int64_data().begin(), tensor.int64_data().end());
  } else {
    t.values.assign(tensor.int32_data().begin(), tensor.int32_data().end());
  }
  if (static_cast<int64_t>(t.values.size()) != n)
    return std::nullopt;
  return t;
}

static TensorProto writeTensor(const IntTensor &t, StringRef name) {
  TensorProto tensor;
  tensor.set_name(name.str());
  tensor.set_data_type(t.dataType);
  for (int64_t d : t.shape)
    tensor.add_dims(d);
  for (int64_t v : t.values) {
    if (t.dataType == TensorProto::INT64)
      tensor.add_int64_data(v);
    else
      tensor.add_int32_data(static_cast<int32_t>(v));
  }
  return tensor;
}

/// NumPy broadcasting of several tensors; calls `f` with each result
/// index's source offsets.
static std::optional<IntTensor>
broadcastMap(ArrayRef<const IntTensor *> inputs, int32_t resultType,
             function_ref<int64_t(ArrayRef<int64_t>)> f) {
  size_t rank = 0;
  for (const IntTensor *t : inputs)
    rank = std::max(rank, t->shape.size());
  SmallVector<int64_t> shape(rank, 1);
  for (const IntTensor *t : inputs)
    for (size_t i = 0; i < t->shape.size(); ++i) {
      int64_t &d = shape[rank - t->shape.size() + i];
      int64_t s = t->shape[i];
      if (d != s && d != 1 && s != 1)
        return std::nullopt;
      d = d == 1 ? s : d;
    }
  IntTensor result;
  result.shape = shape;
  result.dataType = resultType;
  std::optional<int64_t> count = boundedProduct(shape);
  if (!count)
    return std::nullopt;
  int64_t n = *count;
  SmallVector<int64_t> operands(inputs.size());
  for (int64_t index = 0; index < n; ++index) {
    for (auto [k, t] : llvm::enumerate(inputs)) {
      int64_t rest = index, offset = 0, stride = 1;
      for (int64_t d = rank - 1, s = t->shape.size() - 1; d >= 0; --d, --s) {
        int64_t coord = rest % shape[d];
        rest /= shape[d];
        if (s >= 0) {
          if (t->shape[s] != 1)
            offset += coord * stride;
          stride *= t->shape[s];
        }
      }
      operands[k] = t->values[offset];
    }
    result.values.push_back(f(operands));
  }
  return result;
}

namespace {
/// Evaluates the foldable nodes of one graph.
class ShapeFolder {
public:
  explicit ShapeFolder(onnx::GraphProto &graph) : graph(graph) {}

  /// Replaces every node whose value it can compute by a Constant; returns
  /// whether anything changed.
  bool run();

private:
  std::optional<IntTensor> evaluate(const onnx::NodeProto &node);
  /// ConstantOfShape with a float value, as a constant tensor.
  std::optional<TensorProto> fillFloats(const onnx::NodeProto &node);
  /// Concat of constant float vectors (how exporters build Resize's
  /// scales), as a constant tensor.
  std::optional<TensorProto> concatFloats(const onnx::NodeProto &node);
  void recordFloats(const std::string &name, const TensorProto &tensor);
  const IntTensor *known(const onnx::NodeProto &node, int i) {
    if (i >= node.input_size() || node.input(i).empty())
      return nullptr;
    auto it = values.find(node.input(i));
    return it == values.end() ? nullptr : &it->second;
  }
  std::optional<SmallVector<int64_t>> staticShape(StringRef name);

  onnx::GraphProto &graph;
  llvm::StringMap<IntTensor> values;
  /// The small float vectors known so far.
  llvm::StringMap<SmallVector<float>> floatVectors;
  llvm::StringMap<const onnx::TypeProto *> types;
};
} // namespace

void ShapeFolder::recordFloats(const std::string &name,
                               const TensorProto &tensor) {
  if (tensor.data_type() != TensorProto::FLOAT || tensor.dims_size() != 1 ||
      tensor.dims(0) < 0 || tensor.dims(0) > kMaxConcatFloats ||
      tensor.data_location() == TensorProto::EXTERNAL)
    return;
  size_t n = tensor.dims(0);
  SmallVector<float> data(n);
  if (tensor.has_raw_data()) {
    if (tensor.raw_data().size() != n * sizeof(float))
      return;
    std::memcpy(data.data(), tensor.raw_data().data(), n * sizeof(float));
  } else {
    if (size_t(tensor.float_data_size()) != n)
      return;
    llvm::copy(tensor.float_data(), data.begin());
  }
  floatVectors[name] = std::move(data);
}

std::optional<TensorProto>
ShapeFolder::concatFloats(const onnx::NodeProto &node) {
  if (node.op_type() != "Concat" || !canonicalDomain(node.domain()).empty() ||
      node.output_size() != 1 || node.input_size() == 0)
    return std::nullopt;
  SmallVector<float> data;
  for (const std::string &input : node.input()) {
    auto it = floatVectors.find(input);
    if (it == floatVectors.end())
      return std::nullopt;
    llvm::append_range(data, it->second);
  }
  if (data.size() > size_t(kMaxConcatFloats))
    return std::nullopt;
  TensorProto result;
  result.set_name(node.output(0));
  result.set_data_type(TensorProto::FLOAT);
  result.add_dims(int64_t(data.size()));
  result.set_raw_data(data.data(), data.size() * sizeof(float));
  return result;
}

std::optional<SmallVector<int64_t>> ShapeFolder::staticShape(StringRef name) {
  const onnx::TypeProto *type = types.lookup(name);
  if (!type || !type->tensor_type().has_shape())
    return std::nullopt;
  SmallVector<int64_t> shape;
  for (const auto &dim : type->tensor_type().shape().dim()) {
    if (!dim.has_dim_value())
      return std::nullopt;
    shape.push_back(dim.dim_value());
  }
  return shape;
}

static int64_t intAttr(const onnx::NodeProto &node, StringRef name,
                       int64_t fallback) {
  for (const auto &attr : node.attribute())
    if (attr.name() == name)
      return attr.i();
  return fallback;
}

/// The `axis` attribute (default `fallback`) of a node on a tensor of rank
/// `rank`, counted from the back when negative; nullopt outside [0, rank),
/// or [0, rank] with `upToRank`.
static std::optional<int64_t> axisAttr(const onnx::NodeProto &node,
                                       int64_t fallback, int64_t rank,
                                       bool upToRank = false) {
  int64_t axis = intAttr(node, "axis", fallback);
  axis = axis < 0 ? axis + rank : axis;
  if (axis < 0 || axis > rank || (axis == rank && !upToRank))
    return std::nullopt;
  return axis;
}

static std::optional<SmallVector<int64_t>> intsAttr(const onnx::NodeProto &node,
                                                    StringRef name) {
  for (const auto &attr : node.attribute())
    if (attr.name() == name)
      return SmallVector<int64_t>(attr.ints().begin(), attr.ints().end());
  return std::nullopt;
}

/// Constant's value, where it is an integer tensor.
static std::optional<IntTensor> foldConstant(const onnx::NodeProto &node) {
  for (const auto &attr : node.attribute()) {
    if (attr.name() == "value")
      return readTensor(attr.t());
    if (attr.name() == "value_int")
      return IntTensor{{}, {attr.i()}, TensorProto::INT64};
    if (attr.name() == "value_ints")
      return IntTensor{{attr.ints_size()},
                       {attr.ints().begin(), attr.ints().end()},
                       TensorProto::INT64};
  }
  return std::nullopt;
}

/// Shape of an input of static shape `shape`, with start and end.
static std::optional<IntTensor> foldShape(const onnx::NodeProto &node,
                                          ArrayRef<int64_t> shape) {
  int64_t rank = shape.size();
  int64_t start = intAttr(node, "start", 0), end = intAttr(node, "end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  IntTensor t;
  t.values.assign(shape.begin() + start, shape.begin() + std::max(start, end));
  t.shape = {static_cast<int64_t>(t.values.size())};
  return t;
}

/// Size of an input of static shape `shape`.
static std::optional<IntTensor> foldSize(ArrayRef<int64_t> shape) {
  std::optional<int64_t> size = checkedNumElements(shape);
  if (!size)
    return std::nullopt;
  return IntTensor{{}, {*size}, TensorProto::INT64};
}

// The folders of the ops computed from their inputs' values: the node and
// the values (`in[0]` present; an omitted optional input null).

static std::optional<IntTensor> foldIdentity(const onnx::NodeProto &,
                                             ArrayRef<const IntTensor *> in) {
  return *in[0];
}

static std::optional<IntTensor> foldNegOrAbs(const onnx::NodeProto &node,
                                             ArrayRef<const IntTensor *> in) {
  bool negate = node.op_type() == "Neg";
  IntTensor t = *in[0];
  for (int64_t &v : t.values)
    v = negate || v < 0 ? wrappingSub(0, v) : v;
  return t;
}

static std::optional<IntTensor> foldCast(const onnx::NodeProto &node,
                                         ArrayRef<const IntTensor *> in) {
  int64_t to = intAttr(node, "to", 0);
  if (!isIntegerType(to))
    return std::nullopt;
  IntTensor t = *in[0];
  t.dataType = to;
  if (to == TensorProto::BOOL)
    for (int64_t &v : t.values)
      v = v != 0;
  return t;
}

static std::optional<IntTensor> foldReshape(const onnx::NodeProto &node,
                                            ArrayRef<const IntTensor *> in) {
  const IntTensor &x = *in[0];
  if (in.size() < 2 || !in[1])
    return std::nullopt;
  SmallVector<int64_t> shape(in[1]->values);
  SmallVector<int64_t> stated;
  int64_t infer = -1;
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (d == 0 && !intAttr(node, "allowzero", 0))
      d = i < x.shape.size() ? x.shape[i] : 1;
    if (d == -1 && infer < 0)
      infer = i;
    else
      stated.push_back(d);
  }
  // A second -1, another negative size or a product past int64 is not
  // folded: the node stays, for the importer to report.
  std::optional<int64_t> known = checkedNumElements(stated);
  if (!known)
    return std::nullopt;
  if (infer >= 0)
    shape[infer] = *known ? product(x.shape) / *known : 0;
  if (checkedNumElements(shape) != product(x.shape))
    return std::nullopt;
  IntTensor t = x;
  t.shape = shape;
  return t;
}

/// The `count` values of a strided view of `x` (not empty; evaluate() keeps
/// every tensor's values as many as its shape holds) of shape `shape`:
/// output index (i_0, ..., i_k) reads x at first[d] + i_d * step[d] along
/// x's axis source[d], for each output axis d. Transpose and Slice.
static SmallVector<int64_t> viewValues(const IntTensor &x,
                                       ArrayRef<int64_t> shape,
                                       ArrayRef<int64_t> source,
                                       ArrayRef<int64_t> first,
                                       ArrayRef<int64_t> step, int64_t count) {
  int64_t rank = x.shape.size();
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * x.shape[d + 1];
  SmallVector<int64_t> values, index(shape.size(), 0);
  for (int64_t n = 0; n < count; ++n) {
    int64_t offset = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      offset += (first[d] + index[d] * step[d]) * strides[source[d]];
    values.push_back(x.values[offset]);
    // The next output index, last axis fastest.
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return values;
}

/// Transpose: `perm` (default: the axes reversed) must be a permutation.
static std::optional<IntTensor> foldTranspose(const onnx::NodeProto &node,
                                              ArrayRef<const IntTensor *> in) {
  const IntTensor &x = *in[0];
  int64_t rank = x.shape.size();
  if (x.values.empty())
    return std::nullopt;
  SmallVector<int64_t> perm =
      intsAttr(node, "perm")
          .value_or(
              llvm::to_vector(llvm::reverse(llvm::seq<int64_t>(0, rank))));
  SmallVector<bool> seen(rank, false);
  if (int64_t(perm.size()) != rank)
    return std::nullopt;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return std::nullopt;
    seen[p] = true;
  }
  IntTensor result;
  result.dataType = x.dataType;
  for (int64_t p : perm)
    result.shape.push_back(x.shape[p]);
  SmallVector<int64_t> zeros(rank, 0), ones(rank, 1);
  result.values =
      viewValues(x, result.shape, perm, zeros, ones, int64_t(x.values.size()));
  return result;
}

static std::optional<IntTensor> foldFlatten(const onnx::NodeProto &node,
                                            ArrayRef<const IntTensor *> in) {
  const IntTensor &x = *in[0];
  // Flatten's axis may also be the rank (everything in the first dim).
  std::optional<int64_t> axis =
      axisAttr(node, 1, x.shape.size(), /*upToRank=*/true);
  if (!axis)
    return std::nullopt;
  IntTensor t = x;
  t.shape = {product(ArrayRef(x.shape).take_front(*axis)),
             product(ArrayRef(x.shape).drop_front(*axis))};
  return t;
}

/// Unsqueeze and Squeeze: the axes from the attribute (up to opset 12) or
/// the second input.
static std::optional<IntTensor>
foldSqueezeOrUnsqueeze(const onnx::NodeProto &node,
                       ArrayRef<const IntTensor *> in) {
  const IntTensor &x = *in[0];
  bool unsqueeze = node.op_type() == "Unsqueeze";
  int64_t rank = x.shape.size();
  std::optional<SmallVector<int64_t>> axes = intsAttr(node, "axes");
  if (in.size() > 1 && in[1])
    axes = SmallVector<int64_t>(in[1]->values);
  int64_t outRank = unsqueeze ? rank + (axes ? axes->size() : 0) : rank;
  SmallVector<int64_t> normalized;
  for (int64_t a : axes.value_or(SmallVector<int64_t>()))
    normalized.push_back(a < 0 ? a + outRank : a);
  IntTensor t = x;
  t.shape.clear();
  if (unsqueeze) {
    if (!axes)
      return std::nullopt;
    // Axes out of range or repeated would take more dimensions than x has.
    SmallVector<int64_t> sorted(normalized);
    llvm::sort(sorted);
    if (llvm::any_of(sorted,
                     [&](int64_t a) { return a < 0 || a >= outRank; }) ||
        std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      return std::nullopt;
    auto dims = x.shape.begin();
    for (int64_t d = 0; d < outRank; ++d)
      t.shape.push_back(llvm::is_contained(normalized, d) ? 1 : *dims++);
  } else {
    for (int64_t d = 0; d < rank; ++d)
      if (axes ? !llvm::is_contained(normalized, d) : x.shape[d] != 1)
        t.shape.push_back(x.shape[d]);
  }
  return t;
}

static std::optional<IntTensor> foldConcat(const onnx::NodeProto &node,
                                           ArrayRef<const IntTensor *> in) {
  const IntTensor &x = *in[0];
  std::optional<int64_t> normalized = axisAttr(node, 0, x.shape.size());
  if (!normalized)
    return std::nullopt;
  int64_t axis = *normalized;
  IntTensor t;
  t.dataType = x.dataType;
  t.shape = x.shape;
  t.shape[axis] = 0;
  for (const IntTensor *part : in) {
    if (!part || part->shape.size() != x.shape.size())
      return std::nullopt;
    for (size_t d = 0; d < x.shape.size(); ++d)
      if (int64_t(d) != axis && part->shape[d] != x.shape[d])
        return std::nullopt;
    t.shape[axis] += part->shape[axis];
  }
  int64_t outer = product(ArrayRef(x.shape).take_front(axis));
  for (int64_t o = 0; o < outer; ++o)
    for (const IntTensor *part : in) {
      int64_t block = product(ArrayRef(part->shape).drop_front(axis));
      t.values.append(part->values.begin() + o * block,
                      part->values.begin() + (o + 1) * block);
    }
  return t;
}

static std::optional<IntTensor> foldGather(const onnx::NodeProto &node,
                                           ArrayRef<const IntTensor *> in) {
  const IntTensor &x = *in[0];
  if (in.size() < 2 || !in[1])
    return std::nullopt;
  std::optional<int64_t> normalized = axisAttr(node, 0, x.shape.size());
  if (!normalized)
    return std::nullopt;
  int64_t axis = *normalized;
  const IntTensor &indices = *in[1];
  IntTensor t;
  t.dataType = x.dataType;
  t.shape.assign(x.shape.begin(), x.shape.begin() + axis);
  t.shape.append(indices.shape);
  t.shape.append(x.shape.begin() + axis + 1, x.shape.end());
  int64_t outer = product(ArrayRef(x.shape).take_front(axis));
  int64_t inner = product(ArrayRef(x.shape).drop_front(axis + 1));
  int64_t size = x.shape[axis];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t index : indices.values) {
      if (index < -size || index >= size)
        return std::nullopt;
      index = index < 0 ? index + size : index;
      int64_t base = (o * size + index) * inner;
      t.values.append(x.values.begin() + base, x.values.begin() + base + inner);
    }
  return t;
}

/// Slice of a 1-D tensor.
/// Slice (opset 10 on) of any rank: starts, ends and the optional axes and
/// steps as inputs.
static std::optional<IntTensor> foldSlice(const onnx::NodeProto &node,
                                          ArrayRef<const IntTensor *> in) {
  const IntTensor &x = *in[0];
  int64_t rank = x.shape.size();
  if (rank == 0 || x.values.empty() || in.size() < 3 || !in[1] || !in[2])
    return std::nullopt;
  size_t count = in[1]->values.size();
  if (in[2]->values.size() != count)
    return std::nullopt;
  SmallVector<int64_t> axes, steps(count, 1);
  if (in.size() > 3 && in[3])
    axes.assign(in[3]->values.begin(), in[3]->values.end());
  else
    axes = llvm::to_vector(llvm::seq<int64_t>(0, count));
  if (in.size() > 4 && in[4])
    steps.assign(in[4]->values.begin(), in[4]->values.end());
  if (axes.size() != count || steps.size() != count)
    return std::nullopt;
  // Per axis: the first index and the step (the whole axis unless sliced).
  SmallVector<int64_t> first(rank, 0), stride(rank, 1), size(x.shape);
  SmallVector<bool> sliced(rank, false);
  for (size_t k = 0; k < count; ++k) {
    int64_t axis = axes[k] < 0 ? axes[k] + rank : axes[k];
    int64_t step = steps[k];
    if (axis < 0 || axis >= rank || sliced[axis] || step == 0)
      return std::nullopt;
    sliced[axis] = true;
    int64_t dim = x.shape[axis];
    int64_t start = in[1]->values[k], end = in[2]->values[k];
    start = start < 0 ? start + dim : start;
    end = end < 0 ? (end < -dim ? -1 : end + dim) : end;
    start = step > 0 ? std::clamp<int64_t>(start, 0, dim)
                     : std::clamp<int64_t>(start, 0, dim - 1);
    end = step > 0 ? std::clamp<int64_t>(end, 0, dim)
                   : std::clamp<int64_t>(end, -1, dim - 1);
    first[axis] = start, stride[axis] = step;
    size[axis] = sliceSize(start, end, step);
  }
  std::optional<int64_t> total = checkedNumElements(size);
  if (!total || *total > kMaxFoldedElements)
    return std::nullopt;
  IntTensor t;
  t.dataType = x.dataType;
  t.shape = size;
  t.values = viewValues(x, size, llvm::to_vector(llvm::seq<int64_t>(0, rank)),
                        first, stride, *total);
  return t;
}

static std::optional<IntTensor> foldRange(const onnx::NodeProto &node,
                                          ArrayRef<const IntTensor *> in) {
  const IntTensor &x = *in[0];
  if (in.size() != 3 || !in[1] || !in[2] || in[2]->values[0] == 0)
    return std::nullopt;
  int64_t first = x.values[0], limit = in[1]->values[0],
          delta = in[2]->values[0];
  int64_t n = sliceSize(first, limit, delta);
  if (n > kMaxFoldedElements)
    return std::nullopt;
  IntTensor t;
  t.dataType = x.dataType;
  // Every element is in range; k * delta alone may not be.
  for (int64_t k = 0; k < n; ++k)
    t.values.push_back(wrappingAdd(first, wrappingMul(k, delta)));
  t.shape = {static_cast<int64_t>(t.values.size())};
  return t;
}

/// ConstantOfShape with an integer value (float ones: fillFloats).
static std::optional<IntTensor>
foldConstantOfShape(const onnx::NodeProto &node,
                    ArrayRef<const IntTensor *> in) {
  const IntTensor &x = *in[0];
  int64_t fill = 0;
  int32_t type = TensorProto::FLOAT;
  for (const auto &attr : node.attribute())
    if (attr.name() == "value") {
      std::optional<IntTensor> v = readTensor(attr.t());
      if (!v || v->values.size() != 1)
        return std::nullopt;
      fill = v->values[0];
      type = v->dataType;
    }
  if (!isIntegerType(type))
    return std::nullopt;
  IntTensor t;
  t.dataType = type;
  t.shape.assign(x.values.begin(), x.values.end());
  std::optional<int64_t> n = boundedProduct(t.shape);
  if (!n)
    return std::nullopt;
  t.values.assign(*n, fill);
  return t;
}

static std::optional<IntTensor> foldExpand(const onnx::NodeProto &,
                                           ArrayRef<const IntTensor *> in) {
  const IntTensor &x = *in[0];
  if (in.size() != 2 || !in[1])
    return std::nullopt;
  // Broadcast against a tensor of the requested shape.
  IntTensor target{SmallVector<int64_t>(in[1]->values), {}, x.dataType};
  std::optional<int64_t> n = boundedProduct(target.shape);
  if (!n)
    return std::nullopt;
  target.values.assign(*n, 0);
  return broadcastMap({&x, &target}, x.dataType,
                      [](ArrayRef<int64_t> v) { return v[0]; });
}

static std::optional<IntTensor> foldWhere(const onnx::NodeProto &,
                                          ArrayRef<const IntTensor *> in) {
  if (in.size() != 3 || !in[1] || !in[2])
    return std::nullopt;
  return broadcastMap({in[0], in[1], in[2]}, in[1]->dataType,
                      [](ArrayRef<int64_t> v) { return v[0] ? v[1] : v[2]; });
}

/// A binary op of two values, elementwise with broadcasting, into `type`
/// (null: the first operand's).
template <typename F>
static std::optional<IntTensor> foldBinary(ArrayRef<const IntTensor *> in,
                                           std::optional<int32_t> type, F f) {
  if (in.size() != 2 || !in[1])
    return std::nullopt;
  return broadcastMap(
      {in[0], in[1]}, type.value_or(in[0]->dataType),
      [&](ArrayRef<int64_t> v) { return static_cast<int64_t>(f(v[0], v[1])); });
}

/// The folder of a binary op: `f` on the values, into the first operand's
/// type or `Result`.
template <auto F, int32_t Result = -1>
static std::optional<IntTensor> binaryFolder(const onnx::NodeProto &,
                                             ArrayRef<const IntTensor *> in) {
  std::optional<int32_t> type;
  if (Result >= 0)
    type = Result;
  return foldBinary(in, type, F);
}

static int64_t maxOf(int64_t a, int64_t b) { return std::max(a, b); }
static int64_t minOf(int64_t a, int64_t b) { return std::min(a, b); }
static bool equalTo(int64_t a, int64_t b) { return a == b; }
static bool lessThan(int64_t a, int64_t b) { return a < b; }
static bool greaterThan(int64_t a, int64_t b) { return a > b; }

static std::optional<IntTensor> foldDiv(const onnx::NodeProto &,
                                        ArrayRef<const IntTensor *> in) {
  if (in.size() == 2 && in[1] && llvm::is_contained(in[1]->values, 0))
    return std::nullopt;
  // INT64_MIN / -1 overflows: its two's-complement result is INT64_MIN.
  return foldBinary(in, std::nullopt, [](int64_t a, int64_t b) {
    return b == -1 ? wrappingSub(0, a) : a / b;
  });
}

using FoldFn = std::optional<IntTensor> (*)(const onnx::NodeProto &,
                                            ArrayRef<const IntTensor *>);

/// The folders by op type.
static const llvm::StringMap<FoldFn> &foldersByOpType() {
  static const llvm::StringMap<FoldFn> folders = {
      {"Identity", foldIdentity},
      {"Neg", foldNegOrAbs},
      {"Abs", foldNegOrAbs},
      {"Cast", foldCast},
      {"Reshape", foldReshape},
      {"Flatten", foldFlatten},
      {"Transpose", foldTranspose},
      {"Squeeze", foldSqueezeOrUnsqueeze},
      {"Unsqueeze", foldSqueezeOrUnsqueeze},
      {"Concat", foldConcat},
      {"Gather", foldGather},
      {"Slice", foldSlice},
      {"Range", foldRange},
      {"ConstantOfShape", foldConstantOfShape},
      {"Expand", foldExpand},
      {"Where", foldWhere},
      {"Add", binaryFolder<wrappingAdd>},
      {"Sub", binaryFolder<wrappingSub>},
      {"Mul", binaryFolder<wrappingMul>},
      {"Div", foldDiv},
      {"Equal", binaryFolder<equalTo, TensorProto::BOOL>},
      {"Less", binaryFolder<lessThan, TensorProto::BOOL>},
      {"Greater", binaryFolder<greaterThan, TensorProto::BOOL>},
      {"Max", binaryFolder<maxOf>},
      {"Min", binaryFolder<minOf>},
  };
  return folders;
}

std::optional<IntTensor> ShapeFolder::evaluate(const onnx::NodeProto &node) {
  StringRef op = node.op_type();
  if (!canonicalDomain(node.domain()).empty() || node.output_size() != 1)
    return std::nullopt;
  if (op == "Constant")
    return foldConstant(node);
  if (op == "Shape" || op == "Size") {
    if (node.input_size() < 1)
      return std::nullopt;
    std::optional<SmallVector<int64_t>> shape = staticShape(node.input(0));
    if (!shape)
      return std::nullopt;
    return op == "Shape" ? foldShape(node, *shape) : foldSize(*shape);
  }
  FoldFn fold = foldersByOpType().lookup(op);
  if (!fold)
    return std::nullopt;
  // The others need all of their inputs constant (an omitted optional
  // input is null), the first one present.
  SmallVector<const IntTensor *> in;
  for (int i = 0; i < node.input_size(); ++i) {
    if (node.input(i).empty()) {
      in.push_back(nullptr);
      continue;
    }
    const IntTensor *t = known(node, i);
    if (!t)
      return std::nullopt;
    in.push_back(t);
  }
  if (in.empty() || !in[0])
    return std::nullopt;
  std::optional<IntTensor> result = fold(node, in);
  // Every folder may rely on a tensor holding as many values as its shape.
  if (result) {
    std::optional<int64_t> count = checkedNumElements(result->shape);
    if (!count || *count != int64_t(result->values.size()))
      return std::nullopt;
  }
  return result;
}

std::optional<TensorProto>
ShapeFolder::fillFloats(const onnx::NodeProto &node) {
  if (node.op_type() != "ConstantOfShape" ||
      !canonicalDomain(node.domain()).empty())
    return std::nullopt;
  const IntTensor *shape = known(node, 0);
  const onnx::AttributeProto *value = nullptr;
  for (const auto &attr : node.attribute())
    if (attr.name() == "value")
      value = &attr;
  if (!shape || !value || value->t().data_type() != TensorProto::FLOAT)
    return std::nullopt;
  const TensorProto &fill = value->t();
  float element = fill.float_data_size() ? fill.float_data(0) : 0.0f;
  if (fill.has_raw_data() && fill.raw_data().size() == sizeof(float))
    std::memcpy(&element, fill.raw_data().data(), sizeof(float));
  TensorProto result;
  result.set_name(node.output(0));
  result.set_data_type(TensorProto::FLOAT);
  for (int64_t d : shape->values)
    result.add_dims(d);
  std::optional<int64_t> n = boundedProduct(shape->values, kMaxFoldedFloats);
  if (!n)
    return std::nullopt;
  std::vector<float> data(*n, element);
  result.set_raw_data(data.data(), data.size() * sizeof(float));
  return result;
}

bool ShapeFolder::run() {
  for (const auto &info : graph.input())
    types[info.name()] = &info.type();
  for (const auto &info : graph.value_info())
    types[info.name()] = &info.type();
  for (const auto &info : graph.output())
    types[info.name()] = &info.type();
  for (const TensorProto &init : graph.initializer()) {
    if (std::optional<IntTensor> t = readTensor(init))
      values[init.name()] = std::move(*t);
    recordFloats(init.name(), init);
  }

  bool changed = false;
  auto replaceByConstant = [&](onnx::NodeProto &node, TensorProto value) {
    onnx::NodeProto constant;
    constant.set_name(node.name());
    constant.set_op_type("Constant");
    constant.add_output(node.output(0));
    onnx::AttributeProto *attr = constant.add_attribute();
    attr->set_name("value");
    attr->set_type(onnx::AttributeProto::TENSOR);
    *attr->mutable_t() = std::move(value);
    node = std::move(constant);
    changed = true;
  };
  for (onnx::NodeProto &node : *graph.mutable_node()) {
    if (node.op_type() == "Constant" && node.output_size() == 1)
      for (const auto &attr : node.attribute())
        if (attr.name() == "value")
          recordFloats(node.output(0), attr.t());
    if (std::optional<TensorProto> filled = fillFloats(node)) {
      replaceByConstant(node, std::move(*filled));
      continue;
    }
    if (std::optional<TensorProto> joined = concatFloats(node)) {
      recordFloats(node.output(0), *joined);
      replaceByConstant(node, std::move(*joined));
      continue;
    }
    std::optional<IntTensor> value = evaluate(node);
    if (!value)
      continue;
    std::string output = node.output(0);
    if (node.op_type() != "Constant")
      replaceByConstant(node, writeTensor(*value, output));
    values[output] = std::move(*value);
  }
  return changed;
}

bool onnx_import::foldShapeComputations(onnx::ModelProto &model) {
  return ShapeFolder(*model.mutable_graph()).run();
}

std::optional<SmallVector<int64_t>>
onnx_import::integerValues(const TensorProto &tensor) {
  std::optional<IntTensor> t = readTensor(tensor);
  if (!t)
    return std::nullopt;
  return std::move(t->values);
}
