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
  switch (type) {
  case DType::I8:
  case DType::I16:
  case DType::I32:
  case DType::I64:
  case DType::U8:
  case DType::U16:
  case DType::U32:
  case DType::U64:
    return true;
  default:
    return false;
  }
}

using Wide = __int128;

/// The least and greatest values of an integer type (bool: 0 and 1).
std::pair<Wide, Wide> integerRange(DType type) {
  switch (type) {
  case DType::I8:
    return {INT8_MIN, INT8_MAX};
  case DType::I16:
    return {INT16_MIN, INT16_MAX};
  case DType::I32:
    return {INT32_MIN, INT32_MAX};
  case DType::I64:
    return {INT64_MIN, INT64_MAX};
  case DType::U8:
    return {0, UINT8_MAX};
  case DType::U16:
    return {0, UINT16_MAX};
  case DType::U32:
    return {0, UINT32_MAX};
  case DType::U64:
    return {0, UINT64_MAX};
  default: // Bool
    return {0, 1};
  }
}

/// Stores `value`, in range for `t`'s type, as element `i`.
void storeInteger(Tensor &t, int64_t i, Wide value) {
  switch (t.type()) {
  case DType::I8:
    t.as<int8_t>()[i] = static_cast<int8_t>(value);
    break;
  case DType::I16:
    t.as<int16_t>()[i] = static_cast<int16_t>(value);
    break;
  case DType::I32:
    t.as<int32_t>()[i] = static_cast<int32_t>(value);
    break;
  case DType::I64:
    t.as<int64_t>()[i] = static_cast<int64_t>(value);
    break;
  case DType::U16:
    t.as<uint16_t>()[i] = static_cast<uint16_t>(value);
    break;
  case DType::U32:
    t.as<uint32_t>()[i] = static_cast<uint32_t>(value);
    break;
  case DType::U64:
    t.as<uint64_t>()[i] = static_cast<uint64_t>(value);
    break;
  default: // U8, Bool
    t.as<uint8_t>()[i] = static_cast<uint8_t>(value);
    break;
  }
}

/// Decimal text of `value` (std::to_string has no 128-bit overload).
std::string integerText(Wide value) {
  bool negative = value < 0;
  unsigned __int128 magnitude =
      negative ? -static_cast<unsigned __int128>(value) : value;
  std::string digits;
  do {
    digits.insert(digits.begin(), char('0' + int(magnitude % 10)));
    magnitude /= 10;
  } while (magnitude);
  return negative ? "-" + digits : digits;
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

std::string mlir::gs::runtime::makeColumn(
    const Tensor &array, const std::string &file, DType type,
    const std::vector<int64_t> &exampleShape,
    const Normalization &normalization, Tensor &rows) {
  if (array.type() == DType::Bool && type != DType::Bool)
    return "'" + file + "' holds booleans, not numbers";
  int64_t exampleSize = 1;
  for (int64_t size : exampleShape)
    exampleSize *= size;
  const std::vector<int64_t> &shape = array.shape();
  int64_t count = shape.empty() ? 0 : shape[0];
  int64_t perExample = count ? array.numElements() / count : 0;
  if (shape.empty() || count == 0 || perExample != exampleSize)
    return "'" + file + "' holds " + array.describe() + ": " +
           (shape.empty() || count == 0
                ? std::string("no examples")
                : "examples of " + std::to_string(perExample) + " elements (" +
                      shapeText({shape.begin() + 1, shape.end()}) + ")") +
           ", but the model's input takes " + std::to_string(exampleSize) +
           " elements (" + shapeText(exampleShape) + ") per example";
  std::vector<int64_t> rowsShape = {count};
  rowsShape.insert(rowsShape.end(), exampleShape.begin(), exampleShape.end());
  if (std::string error = Tensor::allocate(type, rowsShape, rows);
      !error.empty())
    return "'" + file + "': " + error;
  int64_t n = array.numElements();
  auto where = [&](int64_t i) {
    return "example " + std::to_string(i / exampleSize) + ", element " +
           std::to_string(i % exampleSize);
  };
  if (type == DType::F32 || type == DType::F64) {
    if (normalization.kind == Normalization::Unit && array.type() != DType::U8)
      return "'" + file + "' holds " + nameOf(array.type()) +
             " data: --normalize=unit divides 8-bit data by 255 (use none "
             "or standard)";
    double scale = 1, shift = 0;
    if (normalization.kind == Normalization::Unit)
      scale = 1.0 / 255;
    else if (normalization.kind == Normalization::Standard)
      scale = 1 / normalization.std,
      shift = -normalization.mean / normalization.std;
    for (int64_t i = 0; i < n; ++i) {
      double x = elementAt(array, i) * scale + shift;
      if (type == DType::F32)
        x = rows.as<float>()[i] = static_cast<float>(x);
      else
        rows.as<double>()[i] = x;
      if (!std::isfinite(x))
        return "'" + file + "': " + where(i) + " is not finite (" +
               std::to_string(x) + ")";
    }
    return {};
  }
  if (!isInteger(type) && type != DType::Bool)
    return "'" + file + "': the model's input is " + nameOf(type) +
           ", which data files do not feed";
  if (!isInteger(array.type()) && array.type() != DType::Bool)
    return "'" + file + "' holds " + nameOf(array.type()) +
           " data, but the model's input is " + nameOf(type);
  auto [low, high] = integerRange(type);
  for (int64_t i = 0; i < n; ++i) {
    Wide x = integerAt(array, i);
    if (x < low || x > high)
      return "'" + file + "': " + where(i) + " is " + integerText(x) +
             ", outside " + nameOf(type);
    storeInteger(rows, i, x);
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

void mlir::gs::runtime::gatherRows(const Tensor &rows,
                                   const std::vector<int64_t> &order,
                                   int64_t first, Tensor &batch) {
  int64_t count = batch.shape().empty() ? 1 : batch.shape()[0];
  size_t rowBytes = count ? batch.byteSize() / count : 0;
  for (int64_t b = 0; b < count; ++b) {
    int64_t position = first + b;
    int64_t example = position < static_cast<int64_t>(order.size())
                          ? order[position]
                          : order[0];
    std::memcpy(batch.data() + b * rowBytes, rows.data() + example * rowBytes,
                rowBytes);
  }
}
