//===- TensorData.h - ONNX tensors into MLIR attributes ---------*- C++ -*-===//

#ifndef GS_LIB_CONVERSION_IMPORTONNX_TENSORDATA_H
#define GS_LIB_CONVERSION_IMPORTONNX_TENSORDATA_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include "onnx/onnx_pb.h"

#include <string>

namespace mlir::gs::onnx_import {

/// The MLIR element type of an ONNX tensor element type, or null when the
/// gs dialect has no such type.
Type convertElementType(MLIRContext *context, int32_t onnxType);

/// The ONNX name of an element type, for diagnostics ("FLOAT16").
std::string elementTypeName(int32_t onnxType);

/// Tensors with more elements than this become dense_resource blobs.
constexpr int64_t kMaxInlineElements = 64;

/// Converts a TensorProto to an elements attribute of its own type. Raw
/// data of large tensors is moved into a dense_resource blob without a copy;
/// external data is mapped from its file under `modelDir` after checking
/// that its location stays inside that directory and its range inside the
/// file. On failure returns null and sets `error`.
ElementsAttr convertTensor(MLIRContext *context, onnx::TensorProto &tensor,
                           StringRef modelDir, std::string &error);

/// Checks that the external data of `tensor` (if any) names a file inside
/// `modelDir`; returns an error message, empty when it does.
std::string checkExternalLocation(const onnx::TensorProto &tensor,
                                  StringRef modelDir);

} // namespace mlir::gs::onnx_import

#endif // GS_LIB_CONVERSION_IMPORTONNX_TENSORDATA_H
