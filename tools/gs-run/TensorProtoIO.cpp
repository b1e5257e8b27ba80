//===- TensorProtoIO.cpp - ONNX TensorProto files --------------*- C++ -*-===//

#include "TensorProtoIO.h"

#include "onnx/onnx_pb.h"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace runtime = mlir::gs::runtime;
using mlir::gs::runtime::DType;
using mlir::gs::runtime::Tensor;
using onnx::TensorProto;

static bool dtypeOf(int32_t onnxType, DType &type) {
  switch (onnxType) {
  case TensorProto::FLOAT16:
    type = DType::F16;
    return true;
  case TensorProto::FLOAT:
    type = DType::F32;
    return true;
  case TensorProto::DOUBLE:
    type = DType::F64;
    return true;
  case TensorProto::INT8:
    type = DType::I8;
    return true;
  case TensorProto::INT32:
    type = DType::I32;
    return true;
  case TensorProto::INT64:
    type = DType::I64;
    return true;
  case TensorProto::BOOL:
    type = DType::Bool;
    return true;
  case TensorProto::UINT8:
    type = DType::U8;
    return true;
  case TensorProto::INT16:
    type = DType::I16;
    return true;
  case TensorProto::UINT16:
    type = DType::U16;
    return true;
  case TensorProto::UINT32:
    type = DType::U32;
    return true;
  case TensorProto::UINT64:
    type = DType::U64;
    return true;
  default:
    return false;
  }
}

static int32_t onnxTypeOf(DType type) {
  switch (type) {
  case DType::F16:
    return TensorProto::FLOAT16;
  case DType::F32:
    return TensorProto::FLOAT;
  case DType::F64:
    return TensorProto::DOUBLE;
  case DType::I8:
    return TensorProto::INT8;
  case DType::I32:
    return TensorProto::INT32;
  case DType::I64:
    return TensorProto::INT64;
  case DType::Bool:
    return TensorProto::BOOL;
  case DType::U8:
    return TensorProto::UINT8;
  case DType::I16:
    return TensorProto::INT16;
  case DType::U16:
    return TensorProto::UINT16;
  case DType::U32:
    return TensorProto::UINT32;
  case DType::U64:
    return TensorProto::UINT64;
  }
  return TensorProto::UNDEFINED;
}

std::string mlir::gs::readTensorProto(const std::string &path, Tensor &tensor) {
  if (std::string error = runtime::checkRegularFile(path); !error.empty())
    return error;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return "cannot open '" + path + "': " + std::strerror(errno);
  TensorProto proto;
  if (!proto.ParseFromIstream(&in))
    return "'" + path + "' is not a valid TensorProto file";
  DType type;
  if (!dtypeOf(proto.data_type(), type))
    return "'" + path + "' holds an unsupported element type (" +
           std::to_string(proto.data_type()) + ")";
  if (proto.data_location() == TensorProto::EXTERNAL)
    return "'" + path + "' refers to external data, which is not supported";
  std::vector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  for (int64_t d : shape)
    if (d < 0)
      return "'" + path + "' has a negative dimension";
  // The data must match the shape before a buffer is allocated for it.
  std::optional<uint64_t> bytes = runtime::checkedByteSize(type, shape);
  if (!bytes)
    return "'" + path + "' has a shape whose size overflows";
  uint64_t n = *bytes / runtime::sizeOf(type);
  std::string describe = runtime::describeTensor(type, shape);
  auto sizeError = [&](size_t got) {
    return "'" + path + "' holds " + std::to_string(got) + " values, but " +
           describe + " needs " + std::to_string(n);
  };
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != *bytes)
      return "'" + path + "' has " + std::to_string(proto.raw_data().size()) +
             " bytes of data, but " + describe + " needs " +
             std::to_string(*bytes);
    if (std::string error = Tensor::allocate(type, shape, tensor);
        !error.empty())
      return "'" + path + "': " + error;
    std::memcpy(tensor.data(), proto.raw_data().data(), *bytes);
    return {};
  }
  // Copies `field` into a new tensor of element type decltype(element).
  auto copy = [&](const auto &field, auto element) -> std::string {
    if (static_cast<uint64_t>(field.size()) != n)
      return sizeError(field.size());
    if (std::string error = Tensor::allocate(type, shape, tensor);
        !error.empty())
      return "'" + path + "': " + error;
    auto *out = tensor.as<decltype(element)>();
    for (uint64_t i = 0; i < n; ++i)
      out[i] = static_cast<decltype(element)>(field[i]);
    return {};
  };
  switch (type) {
  case DType::F32:
    return copy(proto.float_data(), float());
  case DType::F64:
    return copy(proto.double_data(), double());
  case DType::I64:
    return copy(proto.int64_data(), int64_t());
  case DType::I32:
    return copy(proto.int32_data(), int32_t());
  case DType::F16:
    return copy(proto.int32_data(), uint16_t());
  case DType::I8:
    return copy(proto.int32_data(), int8_t());
  case DType::Bool:
  case DType::U8:
    return copy(proto.int32_data(), uint8_t());
  case DType::I16:
    return copy(proto.int32_data(), int16_t());
  case DType::U16:
    return copy(proto.int32_data(), uint16_t());
  case DType::U32:
    return copy(proto.uint64_data(), uint32_t());
  case DType::U64:
    return copy(proto.uint64_data(), uint64_t());
  }
  return {};
}

std::string mlir::gs::writeTensorProto(const std::string &path,
                                       const Tensor &tensor) {
  TensorProto proto;
  proto.set_data_type(onnxTypeOf(tensor.type()));
  for (int64_t d : tensor.shape())
    proto.add_dims(d);
  proto.set_raw_data(tensor.data(), tensor.byteSize());
  return mlir::gs::runtime::writeFileAtomically(
      path, [&](std::ostream &out) { return proto.SerializeToOstream(&out); });
}
