//===- ImportONNX.h - ONNX models into the gs dialect -----------*- C++ -*-===//
//
// Imports ONNX models (binary .onnx, or ONNX's text format) and their
// training information into a module of the gs dialect.
//
//===----------------------------------------------------------------------===//

#ifndef GS_CONVERSION_IMPORTONNX_IMPORTONNX_H
#define GS_CONVERSION_IMPORTONNX_IMPORTONNX_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace mlir::gs {

/// How to train a model that carries no ONNX training information.
struct OnnxTrainingOptions {
  /// Graph output to minimize. Empty: a single scalar float output, or the
  /// output named `loss`.
  std::string loss;
  /// `sgd`, `momentum`, `nesterov`, `adagrad` or `adam`.
  std::string optimizer = "momentum";
  double learningRate = 0.01;
  /// Momentum coefficient (ONNX Momentum alpha) and dampening (1 - beta).
  double momentum = 0.9;
  double dampening = 0.0;
  /// L2 coefficient added to the gradient (ONNX norm_coefficient).
  double weightDecay = 0.0;
  /// Adam's moment decays and the denominator guard of Adam and Adagrad.
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  /// Adagrad's learning-rate decay.
  double lrDecay = 0.0;
  /// True once any option was set: an ambiguous loss is then an error.
  bool requested = false;
};

struct OnnxImportOptions {
  /// Static shapes for graph inputs with dynamic dimensions.
  llvm::StringMap<llvm::SmallVector<int64_t>> inputShapes;
  OnnxTrainingOptions training;
  /// Float initializers to train, or to keep fixed, overriding the default
  /// (every float initializer except batch-norm running statistics).
  llvm::SmallVector<std::string> trainable;
  llvm::SmallVector<std::string> frozen;
  /// Graph inputs to replace by constants read from TensorProto files
  /// (input name -> .pb path), e.g. an axes or shape input.
  llvm::StringMap<std::string> constantInputs;
  /// A directory of ONNX test data (input_N.pb): the graph's integer,
  /// boolean and scalar inputs (axes, shapes, ratios, learning rates) that
  /// have a file there become constants, as the backend tests need.
  std::string parameterInputDir;
};

/// Parses `name=path.pb` into `options.constantInputs`.
LogicalResult parseOnnxConstantInput(llvm::StringRef spec,
                                     OnnxImportOptions &options,
                                     std::string &error);

/// Parses `name=1x3x224x224` into `options.inputShapes`.
LogicalResult parseOnnxInputShape(llvm::StringRef spec,
                                  OnnxImportOptions &options,
                                  std::string &error);

/// Parses space-separated `key=value` training options: `loss`,
/// `optimizer`, `lr`, `momentum`, `dampening`, `weight_decay`, `beta1`,
/// `beta2`, `epsilon`, `lr_decay`.
LogicalResult parseOnnxTrainingOptions(llvm::StringRef spec,
                                       OnnxImportOptions &options,
                                       std::string &error);

/// Reads the model at `path` (binary ONNX; ONNX text when the path ends in
/// `.onnxtext`). Returns an error message naming the file, empty on
/// success.
std::string readOnnxModel(llvm::StringRef path, onnx::ModelProto &model);

/// Parses a model held in memory: binary ONNX, or ONNX's text format when
/// `text`. Returns an error message, empty on success.
std::string parseOnnxModel(llvm::StringRef bytes, bool text,
                           onnx::ModelProto &model);

/// Imports the model at `path` (binary ONNX; ONNX text when the path ends
/// in `.onnxtext`). Reports problems through the context's diagnostic
/// engine and returns null on failure.
OwningOpRef<ModuleOp> importOnnxFile(llvm::StringRef path, MLIRContext *context,
                                     const OnnxImportOptions &options);

/// Imports a model held in memory. Tensor data is moved out of `model`;
/// external data is resolved relative to `modelDir`. `sourceName` names the
/// model in diagnostics and locations.
OwningOpRef<ModuleOp> importOnnxModel(onnx::ModelProto &model,
                                      llvm::StringRef modelDir,
                                      llvm::StringRef sourceName,
                                      MLIRContext *context,
                                      const OnnxImportOptions &options);

/// Prints `diag` and its notes as `model.onnx: error: message`: a model
/// file has no lines to point at.
void printOnnxDiagnostic(Diagnostic &diag, llvm::raw_ostream &os);

/// Prints diagnostics of an import with printOnnxDiagnostic while it is in
/// scope.
class OnnxDiagnosticPrinter : public ScopedDiagnosticHandler {
public:
  OnnxDiagnosticPrinter(MLIRContext *context, llvm::raw_ostream &os);
};

/// True if `path` names an ONNX model by its extension.
bool isOnnxFile(llvm::StringRef path);

} // namespace mlir::gs

#endif // GS_CONVERSION_IMPORTONNX_IMPORTONNX_H
