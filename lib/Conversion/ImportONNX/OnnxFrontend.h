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

/// Runs ONNX shape inference on the model, type checks included; the
/// first node it cannot infer is an error. (Shape computations are folded
/// by the importer, not by libonnx's data propagation.)
std::string inferShapes(onnx::ModelProto &model);

/// Runs ONNX shape inference past the nodes it cannot infer, so that the
/// types of the others are still recorded. Returns the errors libonnx
/// raises even so (a stated type that contradicts an inferred one).
std::string inferShapesPastNodeErrors(onnx::ModelProto &model);

/// True if libonnx knows a schema for the operator at this opset.
bool hasSchema(const std::string &opType, int opset, const std::string &domain);

} // namespace mlir::gs::onnx_frontend

#endif // GS_LIB_CONVERSION_IMPORTONNX_ONNXFRONTEND_H
