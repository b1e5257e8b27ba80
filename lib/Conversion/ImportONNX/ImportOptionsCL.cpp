//===- ImportOptionsCL.cpp - The --onnx-* command-line flags ----*- C++ -*-===//

#include "gs/Conversion/ImportONNX/ImportOptionsCL.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ManagedStatic.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
struct OnnxImportCLOptions {
  cl::OptionCategory category{"ONNX import options"};

  cl::opt<bool> force{
      "onnx",
      cl::desc("Read the input as an ONNX model whatever its extension "
               "(.onnx and .onnxtext are recognized)"),
      cl::cat(category)};
  cl::list<std::string> inputShapes{
      "onnx-shape",
      cl::desc("Pin the shape of a graph input: name=1x3x224x224 "
               "(repeatable)"),
      cl::cat(category)};
  cl::opt<std::string> training{
      "onnx-train",
      cl::desc("How to train a model without ONNX training information: "
               "\"loss=<output> optimizer=sgd|momentum|nesterov|adagrad|adam "
               "lr=0.01 momentum=0.9 dampening=0 weight_decay=0 beta1=0.9 "
               "beta2=0.999 epsilon=1e-8 lr_decay=0\""),
      cl::cat(category)};
  cl::list<std::string> trainable{
      "onnx-trainable", cl::CommaSeparated,
      cl::desc("Initializers to train (default: every float initializer "
               "except batch-norm running statistics)"),
      cl::cat(category)};
  cl::list<std::string> frozen{"onnx-frozen", cl::CommaSeparated,
                               cl::desc("Initializers to keep fixed"),
                               cl::cat(category)};
  cl::list<std::string> constantInputs{
      "onnx-constant-input",
      cl::desc("Replace a graph input by the constant in a TensorProto "
               "file: name=file.pb (repeatable)"),
      cl::cat(category)};
  cl::opt<std::string> parameterInputDir{
      "onnx-bind-parameter-inputs",
      cl::desc("Bind the integer, boolean and scalar graph inputs, and "
               "Resize's scales, to the input_N.pb files of an ONNX test "
               "data directory"),
      cl::value_desc("dir"), cl::cat(category)};
};

llvm::ManagedStatic<OnnxImportCLOptions> clOptions;
} // namespace

void gs::registerOnnxImportCLOptions() {
  // Constructing the options registers them.
  *clOptions;
}

cl::OptionCategory &gs::onnxImportCLCategory() { return clOptions->category; }

LogicalResult gs::onnxImportOptionsFromCL(OnnxImportOptions &options,
                                          std::string &error) {
  if (!clOptions.isConstructed())
    return success();
  auto flagError = [&](llvm::StringRef flag) {
    error = ("--" + flag + ": " + error).str();
    return failure();
  };
  for (const std::string &spec : clOptions->inputShapes)
    if (failed(parseOnnxInputShape(spec, options, error)))
      return flagError("onnx-shape");
  if (failed(parseOnnxTrainingOptions(clOptions->training, options, error)))
    return flagError("onnx-train");
  for (const std::string &spec : clOptions->constantInputs)
    if (failed(parseOnnxConstantInput(spec, options, error)))
      return flagError("onnx-constant-input");
  options.parameterInputDir = clOptions->parameterInputDir;
  options.trainable.assign(clOptions->trainable.begin(),
                           clOptions->trainable.end());
  options.frozen.assign(clOptions->frozen.begin(), clOptions->frozen.end());
  return success();
}

bool gs::isOnnxInput(llvm::StringRef path) {
  return (clOptions.isConstructed() && clOptions->force) || isOnnxFile(path);
}
