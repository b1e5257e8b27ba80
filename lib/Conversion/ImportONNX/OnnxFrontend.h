//===- OnnxFrontend.h - libonnx parsing, checking, inference ----*- C++ -*-===//
//
// The calls into libonnx that may throw. They are compiled with exceptions
// in one translation unit and turn every exception into an error message;
// the rest of the importer is built without exceptions, like LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef GS_LIB_CONVERSION_IMPORTONNX_ONNXFRONTEND_H
#define GS_LIB_CONVERSION_IMPORTONNX_ONNXFRONTEND_H

#include "onnx/onnx_pb.h"

#include <string>

namespace mlir::gs::onnx_frontend {

/// Parses a binary model from `path`. Returns an error message, empty on
/// success.
std::string loadBinaryModel(const std::string &path, onnx::ModelProto &model);

/// Reads a TensorProto file (.pb, as the ONNX backend tests store data).
std::string loadTensor(const std::string &path, onnx::TensorProto &tensor);

/// Parses ONNX's text format.
std::string parseTextModel(const std::string &text, onnx::ModelProto &model);

/// Runs the ONNX checker (which does not look at training information);
/// external data is looked up in `modelDir`.
std::string checkModel(const onnx::ModelProto &model,
                       const std::string &modelDir);

/// Runs ONNX shape inference on the main graph, with data propagation so
/// that shape computations (Shape -> Gather -> Reshape) resolve.
std::string inferShapes(onnx::ModelProto &model);

/// True if libonnx knows a schema for the operator at this opset.
bool hasSchema(const std::string &opType, int opset, const std::string &domain);

} // namespace mlir::gs::onnx_frontend

#endif // GS_LIB_CONVERSION_IMPORTONNX_ONNXFRONTEND_H
