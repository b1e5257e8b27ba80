//===- Tensor.h - Host tensors and .npy files -------------------*- C++ -*-===//
//
// The runtime's tensors: an element type, a shape and a 64-byte aligned
// buffer; and NumPy's .npy format to read and write them. No MLIR or ONNX
// dependency: executables link this.
//
//===----------------------------------------------------------------------===//

#ifndef GS_RUNTIME_TENSOR_H
#define GS_RUNTIME_TENSOR_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <istream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace mlir::gs::runtime {

enum class DType { F16, F32, F64, I8, I16, I32, I64, Bool, U8, U16, U32, U64 };

/// Bytes per element.
size_t sizeOf(DType type);
/// "float32", "int64", ... (NumPy's names).
const char *nameOf(DType type);

/// The bytes of a `type` tensor of `shape`; nullopt when a dimension is
/// negative or the size does not fit in 64 bits.
std::optional<uint64_t> checkedByteSize(DType type,
                                        const std::vector<int64_t> &shape);

/// "float32[2x3]".
std::string describeTensor(DType type, const std::vector<int64_t> &shape);

/// The most bytes one tensor read from a file may take:
/// kDefaultTensorByteLimit unless setTensorByteLimit chose another (the
/// tools' --max-tensor-bytes). Readers check sizes against it, and
/// against what the file can hold, before allocating.
constexpr uint64_t kDefaultTensorByteLimit = uint64_t(2) << 30;
uint64_t tensorByteLimit();
void setTensorByteLimit(uint64_t bytes);

/// A dense row-major tensor owning a 64-byte aligned buffer.
class Tensor {
public:
  Tensor() = default;
  /// Allocates a zeroed tensor; aborts with a message when the memory
  /// cannot be had. Sizes that come from input go through `allocate`.
  Tensor(DType type, std::vector<int64_t> shape);

  /// Allocates a zeroed `type` tensor of `shape` into `tensor`. Returns an
  /// error message (naming the tensor as "float32[AxB]") when the size
  /// overflows, exceeds tensorByteLimit() or cannot be allocated; empty on
  /// success.
  static std::string allocate(DType type, std::vector<int64_t> shape,
                              Tensor &tensor);

  /// A tensor on `data`, a 64-byte aligned buffer of at least its byte
  /// size from another allocator (page-locked memory a GPU copies to),
  /// which `release` frees with the tensor.
  static Tensor adopt(DType type, std::vector<int64_t> shape, char *data,
                      void (*release)(void *));

  DType type() const { return type_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t numElements() const;
  size_t byteSize() const { return numElements() * sizeOf(type_); }
  char *data() { return data_.get(); }
  const char *data() const { return data_.get(); }
  template <typename T> T *as() { return reinterpret_cast<T *>(data()); }
  template <typename T> const T *as() const {
    return reinterpret_cast<const T *>(data());
  }
  /// "float32[2x3]".
  std::string describe() const;

private:
  struct Free {
    Free() : release(nullptr) {}
    explicit Free(void (*release)(void *)) : release(release) {}
    void operator()(char *p) const;
    /// Null for the buffers Tensor allocates.
    void (*release)(void *);
  };
  DType type_ = DType::F32;
  std::vector<int64_t> shape_;
  std::unique_ptr<char, Free> data_;
};

/// Element `i` of a tensor (row-major) as a double.
double elementAt(const Tensor &tensor, int64_t i);

/// Element `i` of an integer or bool tensor, exactly: 128 bits hold every
/// 64-bit value of either signedness.
__int128 integerAt(const Tensor &tensor, int64_t i);

/// Checks that `path` names a regular file, without opening it (a FIFO
/// or a device would block or never end). Returns an error message naming
/// the path, empty on success.
std::string checkRegularFile(const std::string &path);

/// Reads a .npy file (format 1.0-3.0, little-endian, C order). Returns an
/// error message, empty on success.
std::string readNpy(const std::string &path, Tensor &tensor);

/// Reads .npy data from `in`; `path` names it in errors.
std::string readNpy(std::istream &in, const std::string &path, Tensor &tensor);

/// Writes `tensor` as .npy data (format 1.0) to `out`; false on failure.
bool writeNpy(std::ostream &out, const Tensor &tensor);

/// Writes a .npy file through writeFileAtomically.
std::string writeNpy(const std::string &path, const Tensor &tensor);

/// Writes `path` through a temporary file beside it, an fsync and a rename,
/// so that neither a failure nor a crash leaves a half-written or lost file
/// behind. `write` fills
/// the stream and returns false on failure. Returns an error message,
/// empty on success.
std::string
writeFileAtomically(const std::string &path,
                    const std::function<bool(std::ostream &)> &write);

/// writeFileAtomically for bytes in memory.
std::string writeFileAtomically(const std::string &path,
                                std::string_view bytes);

/// Checks that `path` can be written, by creating and removing a file
/// beside it, so that a long job fails before it starts rather than at its
/// end. Returns an error message naming the path, empty on success.
std::string checkWritable(const std::string &path);

/// f16 bits to float and back (round to nearest even).
float halfToFloat(uint16_t bits);
uint16_t floatToHalf(float value);

} // namespace mlir::gs::runtime

#endif // GS_RUNTIME_TENSOR_H
