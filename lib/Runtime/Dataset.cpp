//===- Dataset.cpp - Training and evaluation data ---------------*- C++ -*-===//

#include "gs/Runtime/Dataset.h"
#include "gs/Runtime/DataFiles.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <numeric>

using namespace mlir::gs::runtime;

namespace {
bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool isInteger(DType type) {
  return type == DType::I8 || type == DType::I32 || type == DType::I64 ||
         type == DType::U8;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text;
  for (int64_t size : shape)
    text += (text.empty() ? "" : "x") + std::to_string(size);
  return text.empty() ? "scalar" : text;
}
} // namespace

std::string mlir::gs::runtime::readArray(const std::string &spec,
                                         Tensor &array) {
  // `file.npz:array` names a member; a colon elsewhere is part of the path.
  std::string path = spec, member;
  if (size_t colon = spec.rfind(':');
      colon != std::string::npos && endsWith(spec.substr(0, colon), ".npz"))
    path = spec.substr(0, colon), member = spec.substr(colon + 1);
  if (std::string error = checkRegularFile(path); !error.empty())
    return error;
  std::ifstream probe(path, std::ios::binary);
  if (!probe)
    return "cannot open '" + path + "': " + std::strerror(errno);
  char magic[6] = {};
  probe.read(magic, 6);
  if (probe.gcount() >= 6 && std::memcmp(magic, "\x93NUMPY", 6) == 0)
    return readNpy(path, array);
  if (probe.gcount() >= 2 && magic[0] == 'P' && magic[1] == 'K') {
    std::vector<std::pair<std::string, Tensor>> arrays;
    if (std::string error = readNpz(path, arrays); !error.empty())
      return error;
    std::string names;
    for (auto &[name, tensor] : arrays) {
      if (name == member || (member.empty() && arrays.size() == 1)) {
        array = std::move(tensor);
        return {};
      }
      names += (names.empty() ? "" : ", ") + name;
    }
    return "'" + path + "' " +
           (member.empty()
                ? "holds several arrays (" + names + "): name one as " + path +
                      ":ARRAY"
                : "has no array '" + member + "' (it holds " + names + ")");
  }
  return readIdx(path, array);
}

bool mlir::gs::runtime::parseNormalization(const std::string &text, DType type,
                                           Normalization &normalization) {
  if (text == "auto")
    normalization.kind =
        type == DType::U8 ? Normalization::Unit : Normalization::None;
  else if (text == "none")
    normalization.kind = Normalization::None;
  else if (text == "unit")
    normalization.kind = Normalization::Unit;
  else if (text == "standard")
    normalization.kind = Normalization::Standard;
  else
    return false;
  return true;
}

void mlir::gs::runtime::meanAndStd(const Tensor &inputs, double &mean,
                                   double &std) {
  double sum = 0, squares = 0;
  int64_t n = inputs.numElements();
  for (int64_t i = 0; i < n; ++i) {
    double x = elementAt(inputs, i);
    sum += x;
    squares += x * x;
  }
  mean = n ? sum / n : 0;
  double variance = n ? squares / n - mean * mean : 0;
  std = variance > 0 ? std::sqrt(variance) : 1;
}

std::string mlir::gs::runtime::makeDataset(
    const Tensor &inputs, const std::string &inputsName, const Tensor &labels,
    const std::string &labelsName, int64_t sampleSize, int64_t classes,
    const Normalization &normalization, Dataset &dataset) {
  if (inputs.type() == DType::Bool)
    return "'" + inputsName + "' holds booleans, not numbers";
  const std::vector<int64_t> &shape = inputs.shape();
  int64_t count = shape.empty() ? 0 : shape[0];
  int64_t perExample = count ? inputs.numElements() / count : 0;
  if (shape.empty() || count == 0 || perExample != sampleSize)
    return "'" + inputsName + "' holds " + inputs.describe() + ": " +
           (shape.empty() || count == 0
                ? std::string("no examples")
                : "examples of " + std::to_string(perExample) + " elements (" +
                      shapeText({shape.begin() + 1, shape.end()}) + ")") +
           ", but the model's input takes " + std::to_string(sampleSize) +
           " elements per example";
  if (!isInteger(labels.type()))
    return "'" + labelsName + "' holds " + labels.describe() +
           ": class labels must be integers";
  if (labels.shape().empty() || labels.shape()[0] != count ||
      labels.numElements() != count)
    return "'" + labelsName + "' holds " + labels.describe() + ", but '" +
           inputsName + "' has " + std::to_string(count) +
           " examples: expected one label per example";
  if (normalization.kind == Normalization::Unit && inputs.type() != DType::U8)
    return "'" + inputsName + "' holds " + nameOf(inputs.type()) +
           " data: --normalize=unit divides 8-bit data by 255 (use none or "
           "standard)";

  dataset.count = count;
  dataset.sampleSize = sampleSize;
  dataset.labels.resize(count);
  for (int64_t i = 0; i < count; ++i) {
    double label = elementAt(labels, i);
    if (label < 0 || (classes > 0 && label >= classes))
      return "'" + labelsName + "': label " +
             std::to_string(static_cast<int64_t>(label)) + " of example " +
             std::to_string(i) + " is out of range: the model has " +
             std::to_string(classes) + " classes (0 to " +
             std::to_string(classes - 1) + ")";
    dataset.labels[i] = static_cast<int64_t>(label);
  }
  dataset.inputs.resize(inputs.numElements());
  double scale = 1, shift = 0;
  if (normalization.kind == Normalization::Unit)
    scale = 1.0 / 255;
  else if (normalization.kind == Normalization::Standard)
    scale = 1 / normalization.std,
    shift = -normalization.mean / normalization.std;
  for (int64_t i = 0, n = inputs.numElements(); i < n; ++i) {
    float x = static_cast<float>(elementAt(inputs, i) * scale + shift);
    if (!std::isfinite(x))
      return "'" + inputsName + "': example " + std::to_string(i / sampleSize) +
             " holds a non-finite value (" + std::to_string(x) +
             ") at element " + std::to_string(i % sampleSize);
    dataset.inputs[i] = x;
  }
  return {};
}

namespace {
/// splitmix64: a small, well-mixed generator whose sequence is the same on
/// every platform (std::shuffle's is not).
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, bound), without modulo bias.
  uint64_t below(uint64_t bound) {
    uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t value;
    do
      value = next();
    while (value >= limit);
    return value % bound;
  }
};
} // namespace

std::vector<int64_t> mlir::gs::runtime::epochOrder(int64_t count, uint64_t seed,
                                                   int64_t epoch,
                                                   bool shuffle) {
  std::vector<int64_t> order(count);
  std::iota(order.begin(), order.end(), 0);
  if (!shuffle)
    return order;
  SplitMix64 random{seed * 0x100000001b3ull ^ static_cast<uint64_t>(epoch)};
  for (int64_t i = count - 1; i > 0; --i)
    std::swap(order[i], order[random.below(static_cast<uint64_t>(i) + 1)]);
  return order;
}

void mlir::gs::runtime::gatherBatch(const Dataset &dataset,
                                    const std::vector<int64_t> &order,
                                    int64_t first, int64_t batch, float *inputs,
                                    int64_t *labels) {
  for (int64_t b = 0; b < batch; ++b) {
    int64_t position = first + b;
    int64_t example = position < static_cast<int64_t>(order.size())
                          ? order[position]
                          : order[0];
    std::memcpy(inputs + b * dataset.sampleSize,
                dataset.inputs.data() + example * dataset.sampleSize,
                dataset.sampleSize * sizeof(float));
    labels[b] = dataset.labels[example];
  }
}
