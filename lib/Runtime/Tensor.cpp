//===- Tensor.cpp - Host tensors and .npy files ----------------*- C++ -*-===//

#include "gs/Runtime/Tensor.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <numeric>
#include <sstream>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir::gs::runtime;

size_t mlir::gs::runtime::sizeOf(DType type) {
  switch (type) {
  case DType::F16:
    return 2;
  case DType::I16:
  case DType::U16:
    return 2;
  case DType::F32:
  case DType::I32:
  case DType::U32:
    return 4;
  case DType::F64:
  case DType::I64:
  case DType::U64:
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
  case DType::I16:
    return "int16";
  case DType::U8:
    return "uint8";
  case DType::U16:
    return "uint16";
  case DType::U32:
    return "uint32";
  case DType::U64:
    return "uint64";
  }
  return "?";
}

void Tensor::Free::operator()(char *p) const {
  if (release)
    release(p);
  else
    std::free(p);
}

std::optional<uint64_t>
mlir::gs::runtime::checkedByteSize(DType type,
                                   const std::vector<int64_t> &shape) {
  uint64_t bytes = sizeOf(type);
  for (int64_t dim : shape) {
    if (dim < 0 ||
        __builtin_mul_overflow(bytes, static_cast<uint64_t>(dim), &bytes))
      return std::nullopt;
  }
  // Buffers are padded to 64 bytes and indexed with int64_t.
  if (bytes > static_cast<uint64_t>(INT64_MAX) - 64)
    return std::nullopt;
  return bytes;
}

std::string
mlir::gs::runtime::describeTensor(DType type,
                                  const std::vector<int64_t> &shape) {
  std::string text = nameOf(type);
  text += "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "x" : "") + std::to_string(shape[i]);
  return text + "]";
}

static uint64_t &byteLimit() {
  static uint64_t limit = kDefaultTensorByteLimit;
  return limit;
}

uint64_t mlir::gs::runtime::tensorByteLimit() { return byteLimit(); }

void mlir::gs::runtime::setTensorByteLimit(uint64_t bytes) {
  byteLimit() = bytes;
}

/// A zeroed, 64-byte aligned buffer of at least `bytes`, or null.
static char *allocateZeroed(uint64_t bytes) {
  size_t rounded = (std::max<uint64_t>(bytes, 1) + 63) / 64 * 64;
  char *data = static_cast<char *>(std::aligned_alloc(64, rounded));
  if (data)
    std::memset(data, 0, rounded);
  return data;
}

Tensor::Tensor(DType type, std::vector<int64_t> shape)
    : type_(type), shape_(std::move(shape)) {
  std::optional<uint64_t> bytes = checkedByteSize(type_, shape_);
  data_.reset(bytes ? allocateZeroed(*bytes) : nullptr);
  if (!data_) {
    std::fprintf(stderr, "error: cannot allocate a %s tensor\n",
                 describe().c_str());
    std::abort();
  }
}

Tensor Tensor::adopt(DType type, std::vector<int64_t> shape, char *data,
                     void (*release)(void *)) {
  Tensor tensor;
  tensor.type_ = type;
  tensor.shape_ = std::move(shape);
  tensor.data_ = std::unique_ptr<char, Free>(data, Free{release});
  return tensor;
}

std::string Tensor::allocate(DType type, std::vector<int64_t> shape,
                             Tensor &tensor) {
  std::optional<uint64_t> bytes = checkedByteSize(type, shape);
  if (!bytes)
    return describeTensor(type, shape) + " has a negative dimension or more "
                                         "bytes than a 64-bit size holds";
  if (*bytes > tensorByteLimit())
    return describeTensor(type, shape) + " needs " + std::to_string(*bytes) +
           " bytes, more than the limit of " +
           std::to_string(tensorByteLimit()) +
           " bytes (raise it with --max-tensor-bytes)";
  char *data = allocateZeroed(*bytes);
  if (!data)
    return "cannot allocate " + std::to_string(*bytes) + " bytes for " +
           describeTensor(type, shape);
  tensor = Tensor();
  tensor.type_ = type;
  tensor.shape_ = std::move(shape);
  tensor.data_.reset(data);
  return {};
}

int64_t Tensor::numElements() const {
  return std::accumulate(shape_.begin(), shape_.end(), int64_t(1),
                         std::multiplies<int64_t>());
}

std::string Tensor::describe() const { return describeTensor(type_, shape_); }

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
  case DType::I16:
    return "<i2";
  case DType::U8:
    return "|u1";
  case DType::U16:
    return "<u2";
  case DType::U32:
    return "<u4";
  case DType::U64:
    return "<u8";
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

std::string mlir::gs::runtime::checkRegularFile(const std::string &path) {
  struct stat status;
  if (::stat(path.c_str(), &status) != 0)
    return "cannot open '" + path + "': " + std::strerror(errno);
  if (S_ISDIR(status.st_mode))
    return "'" + path + "' is a directory, not a file";
  if (!S_ISREG(status.st_mode))
    return "'" + path + "' is not a regular file (a pipe or a device)";
  return {};
}

std::string mlir::gs::runtime::readNpy(const std::string &path,
                                       Tensor &tensor) {
  if (std::string error = checkRegularFile(path); !error.empty())
    return error;
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
      {"|b1", DType::Bool}, {"|u1", DType::U8},  {"<i2", DType::I16},
      {"<u2", DType::U16},  {"<u4", DType::U32}, {"<u8", DType::U64}};
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
    errno = 0;
    long long value = std::strtoll(dim.c_str(), &end, 10);
    if (value < 0 || errno == ERANGE || end == dim.c_str() ||
        (*end != '\0' && *end != ' '))
      return "'" + path + "' has an invalid shape " + shapeText;
    shape.push_back(value);
  }
  std::optional<uint64_t> bytes = checkedByteSize(*type, shape);
  if (!bytes)
    return "'" + path + "' has an invalid shape " + shapeText +
           ": its size overflows";
  // The data must be there before the buffer is allocated: a few bytes
  // claiming gigabytes fail here, not in the allocator.
  std::streampos dataStart = in.tellg();
  if (dataStart != std::streampos(-1) && in.seekg(0, std::ios::end)) {
    uint64_t available = static_cast<uint64_t>(in.tellg() - dataStart);
    in.seekg(dataStart);
    if (available < *bytes)
      return "'" + path + "' is truncated: " + describeTensor(*type, shape) +
             " needs " + std::to_string(*bytes) + " bytes of data, it holds " +
             std::to_string(available);
  }
  in.clear();
  if (std::string error = Tensor::allocate(*type, shape, tensor);
      !error.empty())
    return "'" + path + "': " + error;
  if (!in.read(tensor.data(), static_cast<std::streamsize>(*bytes)))
    return "'" + path + "' is truncated: " + tensor.describe() + " needs " +
           std::to_string(*bytes) + " bytes of data";
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

/// Removes the temporary files that writers of `path` killed before their
/// rename left behind: `path.tmp.<pid>` of processes that no longer exist.
static void removeStaleTemporaries(const std::string &path) {
  size_t slash = path.find_last_of('/');
  std::string directory =
      slash == std::string::npos ? "." : path.substr(0, slash + 1);
  std::string prefix =
      (slash == std::string::npos ? path : path.substr(slash + 1)) + ".tmp.";
  DIR *entries = ::opendir(directory.c_str());
  if (!entries)
    return;
  while (const struct dirent *entry = ::readdir(entries)) {
    std::string name = entry->d_name;
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix))
      continue;
    std::string digits = name.substr(prefix.size());
    if (digits.find_first_not_of("0123456789") != std::string::npos ||
        digits.size() > 9)
      continue;
    pid_t pid = static_cast<pid_t>(std::stol(digits));
    if (pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH)
      ::unlink((slash == std::string::npos ? name : directory + name).c_str());
  }
  ::closedir(entries);
}

std::string mlir::gs::runtime::writeFileAtomically(
    const std::string &path, const std::function<bool(std::ostream &)> &write) {
  removeStaleTemporaries(path);
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
  default:
    return static_cast<double>(integerAt(t, i));
  }
}

__int128 mlir::gs::runtime::integerAt(const Tensor &t, int64_t i) {
  switch (t.type()) {
  case DType::I8:
    return t.as<int8_t>()[i];
  case DType::I16:
    return t.as<int16_t>()[i];
  case DType::I32:
    return t.as<int32_t>()[i];
  case DType::I64:
    return t.as<int64_t>()[i];
  case DType::U16:
    return t.as<uint16_t>()[i];
  case DType::U32:
    return t.as<uint32_t>()[i];
  case DType::U64:
    return t.as<uint64_t>()[i];
  default: // U8, Bool
    return t.as<uint8_t>()[i];
  }
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
