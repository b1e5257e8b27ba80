//===- TensorProtoIO.h - ONNX TensorProto files -----------------*- C++ -*-===//

#ifndef GS_TOOLS_GSRUN_TENSORPROTOIO_H
#define GS_TOOLS_GSRUN_TENSORPROTOIO_H

#include "gs/Runtime/Tensor.h"

#include <string>

namespace mlir::gs {

/// Reads a serialized onnx.TensorProto (the ONNX backend tests' .pb
/// files). Returns an error message, empty on success.
std::string readTensorProto(const std::string &path, runtime::Tensor &tensor);

/// Writes a tensor as a serialized onnx.TensorProto (raw data), through a
/// temporary file and a rename.
std::string writeTensorProto(const std::string &path,
                             const runtime::Tensor &tensor);

} // namespace mlir::gs

#endif // GS_TOOLS_GSRUN_TENSORPROTOIO_H
