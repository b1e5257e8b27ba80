//===- ImportOptionsCL.h - The --onnx-* command-line flags ------*- C++ -*-===//
//
// One set of ONNX import flags for every tool that reads ONNX models
// (gs-opt, gs-run, gs-compile), in the manner of MLIR's
// registerPassManagerCLOptions: registered before the command line is
// parsed, read after.
//
//===----------------------------------------------------------------------===//

#ifndef GS_CONVERSION_IMPORTONNX_IMPORTOPTIONSCL_H
#define GS_CONVERSION_IMPORTONNX_IMPORTOPTIONSCL_H

#include "gs/Conversion/ImportONNX/ImportONNX.h"

#include <string>

namespace llvm::cl {
class OptionCategory;
} // namespace llvm::cl

namespace mlir::gs {

/// Registers --onnx, --onnx-shape, --onnx-train, --onnx-trainable,
/// --onnx-frozen, --onnx-constant-input and --onnx-bind-parameter-inputs
/// (category "ONNX import options"). Call before
/// llvm::cl::ParseCommandLineOptions.
void registerOnnxImportCLOptions();

/// The flags' category, for tools that hide unrelated options (registers
/// the flags).
llvm::cl::OptionCategory &onnxImportCLCategory();

/// The import options the flags give. On a bad value, an error that starts
/// with the flag's name.
LogicalResult onnxImportOptionsFromCL(OnnxImportOptions &options,
                                      std::string &error);

/// Whether `path` is read as an ONNX model: its extension (.onnx,
/// .onnxtext) or --onnx.
bool isOnnxInput(llvm::StringRef path);

} // namespace mlir::gs

#endif // GS_CONVERSION_IMPORTONNX_IMPORTOPTIONSCL_H
