//===- Tensor.cpp - Host tensors and .npy files ----------------*- C++ -*-===//

#include "gs/Runtime/Tensor.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <numeric>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

using namespace mlir::gs::runtime;

size_t mlir::gs::runtime::sizeOf(DType type) {
  switch (type) {
  case DType::F16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::I8:
  case DType::Bool:
  case DType::U8:
    return 1;
  }
  return 0;
}

const char *mlir::gs::runtime::nameOf(DType type) {
  switch (type) {
  case DType::F16:
    return "float16";
  case DType::F32:
    return "float32";
  case DType::F64:
    return "float64";
  case DType::I8:
    return "int8";
  case DType::I32:
    return "int32";
  case DType::I64:
    return "int64";
  case DType::Bool:
    return "bool";
  case DType::U8:
    return "uint8";
  }
  return "?";
}

void Tensor::Free::operator()(char *p) const { std::free(p); }

Tensor::Tensor(DType type, std::vector<int64_t> shape)
    : type_(type), shape_(std::move(shape)) {
  size_t bytes = std::max<size_t>(byteSize(), 1);
  size_t rounded = (bytes + 63) / 64 * 64;
  data_.reset(static_cast<char *>(std::aligned_alloc(64, rounded)));
  std::memset(data_.get(), 0, rounded);
}

int64_t Tensor::numElements() const {
  return std::accumulate(shape_.begin(), shape_.end(), int64_t(1),
                         std::multiplies<int64_t>());
}

std::string Tensor::describe() const {
  std::string text = nameOf(type_);
  text += "[";
  for (size_t i = 0; i < shape_.size(); ++i)
    text += (i ? "x" : "") + std::to_string(shape_[i]);
  return text + "]";
}

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

/// NumPy's type string of a dtype ("<f4").
static const char *npyDescr(DType type) {
  switch (type) {
  case DType::F16:
    return "<f2";
  case DType::F32:
    return "<f4";
  case DType::F64:
    return "<f8";
  case DType::I8:
    return "|i1";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  case DType::Bool:
    return "|b1";
  case DType::U8:
    return "|u1";
  }
  return "";
}

/// The value of `key` in a .npy header dictionary, as text.
static std::string headerField(const std::string &header,
                               const std::string &key) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos)
    return {};
  size_t colon = header.find(':', at);
  if (colon == std::string::npos)
    return {};
  size_t start = header.find_first_not_of(" ", colon + 1);
  if (start == std::string::npos)
    return {};
  if (header[start] == '(') {
    size_t end = header.find(')', start);
    return end == std::string::npos ? std::string()
                                    : header.substr(start, end - start + 1);
  }
  size_t end = header.find_first_of(",}", start);
  std::string value = header.substr(start, end - start);
  while (!value.empty() && value.back() == ' ')
    value.pop_back();
  if (value.size() >= 2 && value.front() == '\'' && value.back() == '\'')
    value = value.substr(1, value.size() - 2);
  return value;
}

std::string mlir::gs::runtime::readNpy(const std::string &path,
                                       Tensor &tensor) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return "cannot open '" + path + "': " + std::strerror(errno);
  return readNpy(in, path, tensor);
}

std::string mlir::gs::runtime::readNpy(std::istream &in,
                                       const std::string &path,
                                       Tensor &tensor) {
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    return "'" + path + "' is not a .npy file";
  uint32_t headerSize = 0;
  if (magic[6] == 1) {
    uint16_t size16;
    in.read(reinterpret_cast<char *>(&size16), 2);
    headerSize = size16;
  } else {
    in.read(reinterpret_cast<char *>(&headerSize), 4);
  }
  if (!in || headerSize > (1u << 20))
    return "'" + path + "' has a corrupt .npy header";
  std::string header(headerSize, '\0');
  if (!in.read(header.data(), headerSize))
    return "'" + path + "' is truncated in its .npy header";

  std::string descr = headerField(header, "descr");
  static const std::pair<const char *, DType> types[] = {
      {"<f2", DType::F16},  {"<f4", DType::F32}, {"<f8", DType::F64},
      {"|i1", DType::I8},   {"<i4", DType::I32}, {"<i8", DType::I64},
      {"|b1", DType::Bool}, {"|u1", DType::U8}};
  const DType *type = nullptr;
  for (const auto &entry : types)
    if (descr == entry.first)
      type = &entry.second;
  if (!type)
    return "'" + path + "' holds unsupported element type '" + descr + "'";
  if (headerField(header, "fortran_order") == "True")
    return "'" + path + "' is in Fortran order; only C order is supported";
  std::string shapeText = headerField(header, "shape");
  if (shapeText.size() < 2 || shapeText.front() != '(')
    return "'" + path + "' has no shape in its .npy header";
  std::vector<int64_t> shape;
  std::stringstream dims(shapeText.substr(1, shapeText.size() - 2));
  std::string dim;
  while (std::getline(dims, dim, ',')) {
    if (dim.find_first_not_of(" ") == std::string::npos)
      continue;
    char *end = nullptr;
    long long value = std::strtoll(dim.c_str(), &end, 10);
    if (value < 0 || (end && *end != '\0' && *end != ' '))
      return "'" + path + "' has an invalid shape " + shapeText;
    shape.push_back(value);
  }
  tensor = Tensor(*type, shape);
  if (!in.read(tensor.data(), tensor.byteSize()))
    return "'" + path + "' is truncated: " + tensor.describe() + " needs " +
           std::to_string(tensor.byteSize()) + " bytes of data";
  return {};
}

bool mlir::gs::runtime::writeNpy(std::ostream &out, const Tensor &tensor) {
  std::string shape = "(";
  for (size_t i = 0; i < tensor.shape().size(); ++i)
    shape += std::to_string(tensor.shape()[i]) + ",";
  if (tensor.shape().size() > 1)
    shape.pop_back();
  shape += ")";
  std::string header = std::string("{'descr': '") + npyDescr(tensor.type()) +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so that the data starts 64-byte aligned; end with a newline.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  uint16_t size = header.size();
  out.write("\x93NUMPY\x01\x00", 8);
  out.write(reinterpret_cast<const char *>(&size), 2);
  out.write(header.data(), header.size());
  out.write(tensor.data(), tensor.byteSize());
  return static_cast<bool>(out);
}

std::string mlir::gs::runtime::writeNpy(const std::string &path,
                                        const Tensor &tensor) {
  return writeFileAtomically(
      path, [&](std::ostream &out) { return writeNpy(out, tensor); });
}

namespace {
/// Flushes `path` (a file or a directory) to the disk.
bool syncPath(const std::string &path, bool directory) {
  int fd = ::open(path.c_str(), O_RDONLY | (directory ? O_DIRECTORY : 0));
  if (fd < 0)
    return false;
  bool synced = ::fsync(fd) == 0;
  return ::close(fd) == 0 && synced;
}
} // namespace

std::string mlir::gs::runtime::writeFileAtomically(
    const std::string &path, const std::function<bool(std::ostream &)> &write) {
  std::string temporary = path + ".tmp." + std::to_string(::getpid());
  auto failed = [&]() {
    std::string error =
        "cannot write '" + path + "': " + std::strerror(errno ? errno : EIO);
    std::remove(temporary.c_str());
    return error;
  };
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out)
      return "cannot write '" + path + "': " + std::strerror(errno);
    errno = 0;
    bool written = write(out) && out.flush();
    out.close();
    if (!written || !out)
      return failed();
  }
  // The data reaches the disk before the rename makes it the file, and the
  // rename before we report success: a crash leaves the old or the new.
  if (!syncPath(temporary, /*directory=*/false) ||
      std::rename(temporary.c_str(), path.c_str()) != 0)
    return failed();
  std::string directory = path.substr(0, path.find_last_of('/') + 1);
  syncPath(directory.empty() ? "." : directory, /*directory=*/true);
  return {};
}

double mlir::gs::runtime::elementAt(const Tensor &t, int64_t i) {
  switch (t.type()) {
  case DType::F16:
    return halfToFloat(t.as<uint16_t>()[i]);
  case DType::F32:
    return t.as<float>()[i];
  case DType::F64:
    return t.as<double>()[i];
  case DType::I8:
    return t.as<int8_t>()[i];
  case DType::I32:
    return t.as<int32_t>()[i];
  case DType::I64:
    return static_cast<double>(t.as<int64_t>()[i]);
  case DType::Bool:
  case DType::U8:
    return t.as<uint8_t>()[i];
  }
  return 0;
}

std::string mlir::gs::runtime::writeFileAtomically(const std::string &path,
                                                   std::string_view bytes) {
  return writeFileAtomically(path, [&](std::ostream &out) {
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return static_cast<bool>(out);
  });
}

std::string mlir::gs::runtime::checkWritable(const std::string &path) {
  std::string probe = path + ".probe." + std::to_string(::getpid());
  if (!std::ofstream(probe))
    return "cannot write '" + path + "': " + std::strerror(errno);
  std::remove(probe.c_str());
  return {};
}

//===----------------------------------------------------------------------===//
// f16
//===----------------------------------------------------------------------===//

float mlir::gs::runtime::halfToFloat(uint16_t bits) {
  uint32_t sign = (bits & 0x8000u) << 16, exponent = (bits >> 10) & 0x1f,
           mantissa = bits & 0x3ff, result;
  if (exponent == 0x1f) {
    result = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    result = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    result = sign;
  } else {
    // Subnormal: normalize.
    int shift = 0;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      ++shift;
    }
    result = sign | ((113 - shift) << 23) | ((mantissa & 0x3ff) << 13);
  }
  float value;
  std::memcpy(&value, &result, 4);
  return value;
}

uint16_t mlir::gs::runtime::floatToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t exponent = (bits >> 23) & 0xff, mantissa = bits & 0x7fffff;
  if (exponent == 0xff) // inf or NaN
    return sign | 0x7c00u | (mantissa ? 0x200u | (mantissa >> 13) : 0);
  int e = static_cast<int>(exponent) - 127 + 15;
  if (e >= 0x1f)
    return sign | 0x7c00u;
  if (e <= 0) {
    if (e < -10)
      return sign;
    mantissa |= 0x800000u;
    int shift = 14 - e;
    uint32_t half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1)))
      ++half;
    return sign | half;
  }
  uint32_t half = (e << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half; // may carry into the exponent, up to infinity: correct
  return sign | half;
}
