//===- OnnxExport.h - Trained weights back into ONNX -------------*- C++
//-*-===//
//
// Deploying what was trained: the ONNX model that was compiled, with the
// initializers of the trained weights replaced by their new values. Works on
// protobuf's wire format directly, so the runtime needs no ONNX library;
// every other field is copied byte for byte.
//
//===----------------------------------------------------------------------===//

#ifndef GS_RUNTIME_ONNXEXPORT_H
#define GS_RUNTIME_ONNXEXPORT_H

#include "gs/Runtime/Tensor.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mlir::gs::runtime {

/// Writes to `exported` the binary ONNX `model` whose main-graph
/// initializers named in `weights` hold the given values (same element
/// count as before). `replaced` counts them. Returns an error message,
/// empty on success.
std::string
replaceInitializers(std::string_view model,
                    const std::vector<std::pair<std::string, Tensor>> &weights,
                    std::string &exported, size_t &replaced);

} // namespace mlir::gs::runtime

#endif // GS_RUNTIME_ONNXEXPORT_H
