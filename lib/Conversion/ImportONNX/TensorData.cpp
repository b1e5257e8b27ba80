//===- TensorData.cpp - ONNX tensors into MLIR attributes ------*- C++ -*-===//

#include "TensorData.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::onnx_import;
using onnx::TensorProto;

Type onnx_import::convertElementType(MLIRContext *context, int32_t onnxType) {
  Builder b(context);
  switch (onnxType) {
  case TensorProto::FLOAT:
    return b.getF32Type();
  case TensorProto::FLOAT16:
    return b.getF16Type();
  case TensorProto::DOUBLE:
    return b.getF64Type();
  case TensorProto::INT64:
    return b.getI64Type();
  case TensorProto::INT32:
    return b.getI32Type();
  case TensorProto::INT16:
    return b.getI16Type();
  case TensorProto::INT8:
    return b.getI8Type();
  case TensorProto::UINT8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case TensorProto::UINT16:
    return b.getIntegerType(16, /*isSigned=*/false);
  case TensorProto::UINT32:
    return b.getIntegerType(32, /*isSigned=*/false);
  case TensorProto::UINT64:
    return b.getIntegerType(64, /*isSigned=*/false);
  case TensorProto::BOOL:
    return b.getI1Type();
  default:
    return {};
  }
}

std::string onnx_import::elementTypeName(int32_t onnxType) {
  if (TensorProto::DataType_IsValid(onnxType))
    return TensorProto::DataType_Name(
        static_cast<TensorProto::DataType>(onnxType));
  return "data type " + std::to_string(onnxType);
}

/// Bytes per element as stored in raw_data.
static int64_t rawElementSize(Type elementType) {
  if (elementType.isInteger(1))
    return 1;
  return elementType.getIntOrFloatBitWidth() / 8;
}

/// Checks that an external-data location names a file inside `modelDir`
/// and returns its path.
static std::string resolveExternalPath(StringRef modelDir, StringRef location,
                                       std::string &error) {
  if (location.empty()) {
    error = "external data has no location";
    return {};
  }
  if (llvm::sys::path::is_absolute(location) ||
      llvm::sys::path::is_absolute(location, llvm::sys::path::Style::windows)) {
    error = ("external data location '" + location +
             "' is an absolute path; it must be relative to the model")
                .str();
    return {};
  }
  for (StringRef part : llvm::make_range(llvm::sys::path::begin(location),
                                         llvm::sys::path::end(location))) {
    if (part == "..") {
      error = ("external data location '" + location +
               "' leaves the model's directory")
                  .str();
      return {};
    }
  }
  SmallString<256> path(modelDir.empty() ? "." : modelDir);
  llvm::sys::path::append(path, location);
  // Symbolic links may still point elsewhere: compare resolved paths.
  SmallString<256> realDir, realFile;
  if (llvm::sys::fs::real_path(modelDir.empty() ? "." : modelDir, realDir) ||
      llvm::sys::fs::real_path(path, realFile)) {
    error = ("cannot open external data file '" + path + "'").str();
    return {};
  }
  if (!StringRef(realFile).starts_with((realDir + "/").str())) {
    error = ("external data location '" + location +
             "' resolves outside the model's directory")
                .str();
    return {};
  }
  return std::string(path);
}

std::string onnx_import::checkExternalLocation(const TensorProto &tensor,
                                               StringRef modelDir) {
  if (tensor.data_location() != TensorProto::EXTERNAL)
    return {};
  StringRef location;
  for (const auto &entry : tensor.external_data())
    if (entry.key() == "location")
      location = entry.value();
  std::string error;
  if (resolveExternalPath(modelDir, location, error).empty())
    return "initializer '" + tensor.name() + "': " + error;
  return {};
}

/// True if all `elementSize`-byte elements of `data` are equal.
static bool isSplat(ArrayRef<char> data, int64_t elementSize) {
  for (size_t i = elementSize; i < data.size(); i += elementSize)
    if (std::memcmp(data.data(), data.data() + i, elementSize) != 0)
      return false;
  return !data.empty();
}

/// A resource key derived from a tensor name: ONNX names may hold any
/// character, resource keys are identifiers.
static std::string blobName(StringRef tensorName) {
  std::string name = tensorName.empty() ? "tensor" : tensorName.str();
  for (char &c : name)
    if (!llvm::isAlnum(c) && c != '_' && c != '.')
      c = '_';
  if (llvm::isDigit(name.front()))
    name.insert(name.begin(), '_');
  return name;
}

/// Wraps `bytes` into a resource blob that owns them.
template <typename Owner>
static AsmResourceBlob makeOwningBlob(ArrayRef<char> bytes, size_t alignment,
                                      std::unique_ptr<Owner> owner) {
  return AsmResourceBlob(
      bytes, alignment,
      [owner = std::move(owner)](void *, size_t, size_t) mutable {
        owner.reset();
      },
      /*dataIsMutable=*/false);
}

/// Loads external data as a blob, mapping the file where possible.
static FailureOr<AsmResourceBlob>
loadExternalData(const TensorProto &tensor, StringRef modelDir,
                 int64_t expectedBytes, size_t alignment, std::string &error) {
  StringRef location;
  int64_t offset = 0, length = -1;
  for (const auto &entry : tensor.external_data()) {
    StringRef key = entry.key(), value = entry.value();
    if (key == "location") {
      location = value;
    } else if (key == "offset" || key == "length") {
      int64_t parsed;
      if (value.getAsInteger(10, parsed) || parsed < 0) {
        error = ("external data " + key + " '" + value +
                 "' is not a non-negative integer")
                    .str();
        return failure();
      }
      (key == "offset" ? offset : length) = parsed;
    }
  }
  std::string path = resolveExternalPath(modelDir, location, error);
  if (path.empty())
    return failure();
  uint64_t fileSize;
  if (llvm::sys::fs::file_size(path, fileSize)) {
    error = "cannot read external data file '" + path + "'";
    return failure();
  }
  if (length < 0)
    length = expectedBytes;
  if (length != expectedBytes) {
    error = ("external data length " + Twine(length) + " differs from the " +
             Twine(expectedBytes) + " bytes the tensor's shape needs")
                .str();
    return failure();
  }
  if (static_cast<uint64_t>(offset) > fileSize ||
      static_cast<uint64_t>(length) > fileSize - offset) {
    error = ("external data range [" + Twine(offset) + ", " +
             Twine(offset + length) + ") lies outside '" + path + "' (" +
             Twine(fileSize) + " bytes)")
                .str();
    return failure();
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFileSlice(path, length, offset);
  if (!buffer) {
    error = "cannot read external data file '" + path +
            "': " + buffer.getError().message();
    return failure();
  }
  ArrayRef<char> bytes((*buffer)->getBufferStart(), (*buffer)->getBufferSize());
  if (reinterpret_cast<uintptr_t>(bytes.data()) % alignment != 0)
    return HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, alignment);
  return makeOwningBlob(bytes, alignment, std::move(*buffer));
}

/// The typed repeated field of a tensor without raw data, as bytes in
/// raw-data layout.
static FailureOr<std::string> typedFieldBytes(const TensorProto &tensor,
                                              Type elementType,
                                              int64_t numElements) {
  std::string bytes;
  auto append = [&](const auto &field, auto convert) {
    for (auto value : field) {
      auto converted = convert(value);
      bytes.append(reinterpret_cast<const char *>(&converted),
                   sizeof(converted));
    }
    return static_cast<int64_t>(field.size());
  };
  int64_t count = -1;
  switch (tensor.data_type()) {
  case TensorProto::FLOAT:
    count = append(tensor.float_data(), [](float v) { return v; });
    break;
  case TensorProto::DOUBLE:
    count = append(tensor.double_data(), [](double v) { return v; });
    break;
  case TensorProto::INT64:
    count = append(tensor.int64_data(), [](int64_t v) { return v; });
    break;
  case TensorProto::INT32:
    count = append(tensor.int32_data(), [](int32_t v) { return v; });
    break;
  case TensorProto::FLOAT16:
    count = append(tensor.int32_data(),
                   [](int32_t v) { return static_cast<uint16_t>(v); });
    break;
  case TensorProto::INT8:
    count = append(tensor.int32_data(),
                   [](int32_t v) { return static_cast<int8_t>(v); });
    break;
  case TensorProto::UINT8:
  case TensorProto::BOOL:
    count = append(tensor.int32_data(),
                   [](int32_t v) { return static_cast<uint8_t>(v); });
    break;
  case TensorProto::INT16:
  case TensorProto::UINT16:
    count = append(tensor.int32_data(),
                   [](int32_t v) { return static_cast<uint16_t>(v); });
    break;
  case TensorProto::UINT32:
    count = append(tensor.uint64_data(),
                   [](uint64_t v) { return static_cast<uint32_t>(v); });
    break;
  case TensorProto::UINT64:
    count = append(tensor.uint64_data(), [](uint64_t v) { return v; });
    break;
  default:
    return failure();
  }
  if (count != numElements)
    return failure();
  return bytes;
}

ElementsAttr onnx_import::convertTensor(MLIRContext *context,
                                        TensorProto &tensor, StringRef modelDir,
                                        std::string &error) {
  Type elementType = convertElementType(context, tensor.data_type());
  if (!elementType) {
    error = "unsupported element type " + elementTypeName(tensor.data_type());
    return {};
  }
  SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  int64_t numElements = 1;
  for (int64_t d : shape) {
    if (d < 0 ||
        (d > 0 && numElements > std::numeric_limits<int32_t>::max() / d)) {
      error = "invalid or too large tensor shape";
      return {};
    }
    numElements *= d;
  }
  auto type = RankedTensorType::get(shape, elementType);
  int64_t elementSize = rawElementSize(elementType);
  int64_t expectedBytes = numElements * elementSize;
  size_t alignment = std::max<int64_t>(elementSize, 1);

  // Small tensors, and tensors of one repeated value, become ordinary
  // dense attributes (a single element makes a splat).
  auto denseFrom = [&](ArrayRef<char> bytes) -> ElementsAttr {
    if (elementType.isInteger(1)) {
      SmallVector<bool> values;
      for (char c : bytes)
        values.push_back(c != 0);
      return DenseElementsAttr::get(type, values);
    }
    return DenseElementsAttr::getFromRawBuffer(type, bytes);
  };
  bool inlined = numElements <= kMaxInlineElements || elementType.isInteger(1);

  if (tensor.data_location() == TensorProto::EXTERNAL) {
    FailureOr<AsmResourceBlob> blob =
        loadExternalData(tensor, modelDir, expectedBytes, alignment, error);
    if (failed(blob))
      return {};
    if (inlined)
      return denseFrom(blob->getData());
    return DenseResourceElementsAttr::get(type, blobName(tensor.name()),
                                          std::move(*blob));
  }

  std::string bytes;
  if (tensor.has_raw_data()) {
    bytes = std::move(*tensor.mutable_raw_data());
    tensor.clear_raw_data();
  } else {
    FailureOr<std::string> fieldBytes =
        typedFieldBytes(tensor, elementType, numElements);
    if (failed(fieldBytes)) {
      error = "tensor data does not match its shape " +
              std::to_string(numElements) + " elements";
      return {};
    }
    bytes = std::move(*fieldBytes);
  }
  if (static_cast<int64_t>(bytes.size()) != expectedBytes) {
    error = "tensor data has " + std::to_string(bytes.size()) +
            " bytes, but its shape and type need " +
            std::to_string(expectedBytes);
    return {};
  }
  ArrayRef<char> data(bytes.data(), bytes.size());
  if (inlined || isSplat(data, elementSize))
    return denseFrom(data.take_front(inlined ? data.size() : elementSize));

  // Hand the bytes to the blob without copying them.
  auto owner = std::make_unique<std::string>(std::move(bytes));
  data = ArrayRef<char>(owner->data(), owner->size());
  if (reinterpret_cast<uintptr_t>(data.data()) % alignment != 0)
    return DenseResourceElementsAttr::get(
        type, blobName(tensor.name()),
        HeapAsmResourceBlob::allocateAndCopyWithAlign(data, alignment));
  return DenseResourceElementsAttr::get(
      type, blobName(tensor.name()),
      makeOwningBlob(data, alignment, std::move(owner)));
}
