//===- OnnxExport.cpp - Trained weights back into ONNX -----------*- C++
//-*-===//

#include "gs/Runtime/OnnxExport.h"

#include <algorithm>
#include <map>

using namespace mlir::gs::runtime;

namespace {
// Field numbers of onnx.proto.
constexpr uint64_t kModelGraph = 7;
constexpr uint64_t kGraphInitializer = 5;
constexpr uint64_t kTensorDims = 1, kTensorDataType = 2, kTensorName = 8,
                   kTensorRawData = 9;
enum WireType : uint64_t { Varint = 0, Fixed64 = 1, Bytes = 2, Fixed32 = 5 };

/// A field of a serialized message: its number, wire type, and the bytes
/// of the whole field (key included) and of its payload.
struct Field {
  uint64_t number;
  uint64_t wireType;
  std::string_view whole;
  std::string_view payload;
  uint64_t value; // varints
};

bool readVarint(std::string_view data, size_t &at, uint64_t &value) {
  value = 0;
  for (int shift = 0; shift < 64 && at < data.size(); shift += 7) {
    auto byte = static_cast<unsigned char>(data[at++]);
    value |= uint64_t(byte & 0x7f) << shift;
    if (!(byte & 0x80))
      return true;
  }
  return false;
}

/// Splits a message into its fields; false on malformed data.
bool fields(std::string_view message, std::vector<Field> &out) {
  size_t at = 0;
  while (at < message.size()) {
    size_t start = at;
    uint64_t key, value = 0, length = 0;
    if (!readVarint(message, at, key))
      return false;
    Field field{key >> 3, key & 7, {}, {}, 0};
    size_t payload = at;
    switch (field.wireType) {
    case Varint:
      if (!readVarint(message, at, value))
        return false;
      break;
    case Fixed64:
      at += 8;
      break;
    case Fixed32:
      at += 4;
      break;
    case Bytes:
      if (!readVarint(message, at, length) || length > message.size() - at)
        return false;
      payload = at;
      at += length;
      break;
    default:
      return false; // groups: not in onnx.proto
    }
    if (at > message.size())
      return false;
    field.value = value;
    field.whole = message.substr(start, at - start);
    field.payload = message.substr(
        payload, field.wireType == Bytes ? length : at - payload);
    out.push_back(field);
  }
  return true;
}

void putVarint(std::string &out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>(value | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void putBytes(std::string &out, uint64_t number, std::string_view bytes) {
  putVarint(out, number << 3 | Bytes);
  putVarint(out, bytes.size());
  out.append(bytes);
}

/// onnx.TensorProto.DataType of a runtime type.
uint64_t onnxDataType(DType type) {
  switch (type) {
  case DType::F32:
    return 1;
  case DType::U8:
    return 2;
  case DType::I8:
    return 3;
  case DType::I32:
    return 6;
  case DType::I64:
    return 7;
  case DType::Bool:
    return 9;
  case DType::F16:
    return 10;
  case DType::F64:
    return 11;
  case DType::U16:
    return 4;
  case DType::I16:
    return 5;
  case DType::U32:
    return 12;
  case DType::U64:
    return 13;
  }
  return 0;
}

std::string tensorProto(const std::string &name, const Tensor &value) {
  std::string proto, dims;
  for (int64_t size : value.shape())
    putVarint(dims, static_cast<uint64_t>(size));
  if (!dims.empty())
    putBytes(proto, kTensorDims, dims);
  putVarint(proto, kTensorDataType << 3 | Varint);
  putVarint(proto, onnxDataType(value.type()));
  putBytes(proto, kTensorName, name);
  putBytes(proto, kTensorRawData,
           std::string_view(value.data(), value.byteSize()));
  return proto;
}

/// The element count of a TensorProto's dims.
int64_t elementCount(const std::vector<Field> &tensor) {
  int64_t count = 1;
  for (const Field &field : tensor) {
    if (field.number != kTensorDims)
      continue;
    if (field.wireType == Varint) {
      count *= static_cast<int64_t>(field.value);
    } else if (field.wireType == Bytes) {
      size_t at = 0;
      uint64_t size;
      while (at < field.payload.size() && readVarint(field.payload, at, size))
        count *= static_cast<int64_t>(size);
    }
  }
  return count;
}
} // namespace

std::string mlir::gs::runtime::replaceInitializers(
    std::string_view model,
    const std::vector<std::pair<std::string, Tensor>> &weights,
    std::string &exported, size_t &replaced) {
  std::map<std::string, const Tensor *, std::less<>> byName;
  for (const auto &[name, value] : weights)
    byName[name] = &value;
  std::vector<Field> modelFields;
  if (!fields(model, modelFields))
    return "the embedded ONNX model is not valid protobuf";
  exported.clear();
  replaced = 0;
  for (const Field &field : modelFields) {
    if (field.number != kModelGraph || field.wireType != Bytes) {
      exported.append(field.whole);
      continue;
    }
    std::vector<Field> graphFields;
    if (!fields(field.payload, graphFields))
      return "the embedded ONNX graph is not valid protobuf";
    std::string graph;
    for (const Field &graphField : graphFields) {
      std::vector<Field> tensor;
      if (graphField.number != kGraphInitializer ||
          graphField.wireType != Bytes || !fields(graphField.payload, tensor)) {
        graph.append(graphField.whole);
        continue;
      }
      auto name = std::find_if(tensor.begin(), tensor.end(), [](auto &f) {
        return f.number == kTensorName && f.wireType == Bytes;
      });
      auto weight =
          name == tensor.end() ? byName.end() : byName.find(name->payload);
      if (weight == byName.end()) {
        graph.append(graphField.whole);
        continue;
      }
      auto dataType = std::find_if(tensor.begin(), tensor.end(), [](auto &f) {
        return f.number == kTensorDataType && f.wireType == Varint;
      });
      uint64_t newType = onnxDataType(weight->second->type());
      if (dataType == tensor.end() || dataType->value != newType)
        return "initializer '" + weight->first + "' has ONNX data type " +
               (dataType == tensor.end() ? std::string("(none)")
                                         : std::to_string(dataType->value)) +
               ", the trained weight is " + weight->second->describe();
      if (elementCount(tensor) != weight->second->numElements())
        return "initializer '" + weight->first + "' has " +
               std::to_string(elementCount(tensor)) +
               " elements in the ONNX model, the trained weight is " +
               weight->second->describe();
      putBytes(graph, kGraphInitializer,
               tensorProto(weight->first, *weight->second));
      ++replaced;
    }
    putBytes(exported, kModelGraph, graph);
  }
  return {};
}
