//===- gs-opt.cpp - GradScale optimizer driver ------------------*- C++ -*-===//
//
// mlir-opt for GradScale: the gs dialect and passes plus the upstream
// dialects and passes its pipelines use. ONNX models (.onnx, .onnxtext)
// are accepted as input like .mlir files: they are imported first.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/ImportONNX/ImportONNX.h"
#include "gs/InitAll.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory onnxCategory("ONNX import options");

static cl::opt<bool>
    forceOnnx("onnx",
              cl::desc("Read the input as a binary ONNX model whatever its "
                       "extension (.onnx and .onnxtext are recognized)"),
              cl::cat(onnxCategory));

static cl::list<std::string> inputShapes(
    "onnx-shape",
    cl::desc("Pin the shape of a graph input: name=1x3x224x224 (repeatable)"),
    cl::cat(onnxCategory));

static cl::opt<std::string> trainingSpec(
    "onnx-train",
    cl::desc("How to train a model without ONNX training information: "
             "\"loss=<output> optimizer=sgd|momentum|nesterov|adagrad|adam "
             "lr=0.01 momentum=0.9 dampening=0 weight_decay=0 beta1=0.9 "
             "beta2=0.999 epsilon=1e-8 lr_decay=0\""),
    cl::cat(onnxCategory));

static cl::list<std::string> trainable(
    "onnx-trainable", cl::CommaSeparated,
    cl::desc("Initializers to train (default: every float initializer "
             "except batch-norm running statistics)"),
    cl::cat(onnxCategory));

static cl::list<std::string> constantInputs(
    "onnx-constant-input",
    cl::desc("Replace a graph input by the constant in a TensorProto file: "
             "name=file.pb (repeatable)"),
    cl::cat(onnxCategory));

static cl::opt<std::string> parameterInputDir(
    "onnx-bind-parameter-inputs",
    cl::desc("Bind the integer, boolean and scalar graph inputs to the "
             "input_N.pb files of an ONNX test data directory"),
    cl::value_desc("dir"), cl::cat(onnxCategory));

static cl::list<std::string> frozen("onnx-frozen", cl::CommaSeparated,
                                    cl::desc("Initializers to keep fixed"),
                                    cl::cat(onnxCategory));

/// The import options given on the command line.
static LogicalResult buildImportOptions(gs::OnnxImportOptions &options) {
  std::string error;
  for (const std::string &spec : inputShapes)
    if (failed(gs::parseOnnxInputShape(spec, options, error))) {
      llvm::errs() << "gs-opt: error: --onnx-shape: " << error << "\n";
      return failure();
    }
  if (failed(gs::parseOnnxTrainingOptions(trainingSpec, options, error))) {
    llvm::errs() << "gs-opt: error: --onnx-train: " << error << "\n";
    return failure();
  }
  for (const std::string &spec : constantInputs)
    if (failed(gs::parseOnnxConstantInput(spec, options, error))) {
      llvm::errs() << "gs-opt: error: --onnx-constant-input: " << error << "\n";
      return failure();
    }
  options.parameterInputDir = parameterInputDir;
  options.trainable.assign(trainable.begin(), trainable.end());
  options.frozen.assign(frozen.begin(), frozen.end());
  return success();
}

/// Imports the ONNX model and runs the mlir-opt machinery on it.
static LogicalResult runOnOnnx(StringRef inputFilename,
                               StringRef outputFilename,
                               DialectRegistry &registry) {
  gs::OnnxImportOptions options;
  if (failed(buildImportOptions(options)))
    return failure();
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();

  std::string bytecode;
  {
    MLIRContext context(registry);
    gs::OnnxDiagnosticPrinter diagnostics(&context, llvm::errs());
    OwningOpRef<ModuleOp> module =
        gs::importOnnxFile(inputFilename, &context, options);
    if (!module)
      return failure();
    llvm::raw_string_ostream os(bytecode);
    if (failed(writeBytecodeToFile(*module, os)))
      return failure();
  }
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << "gs-opt: error: " << error << "\n";
    return failure();
  }
  std::unique_ptr<llvm::MemoryBuffer> buffer = llvm::MemoryBuffer::getMemBuffer(
      bytecode, inputFilename, /*RequiresNullTerminator=*/false);
  if (failed(MlirOptMain(output->os(), std::move(buffer), registry, config)))
    return failure();
  output->keep();
  return success();
}

int main(int argc, char **argv) {
  DialectRegistry registry;
  gs::registerAllDialects(registry);
  gs::registerAllPasses();
  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "GradScale optimizer driver\n", registry);
  if (forceOnnx || gs::isOnnxFile(inputFilename))
    return asMainReturnCode(runOnOnnx(inputFilename, outputFilename, registry));
  return asMainReturnCode(
      MlirOptMain(argc, argv, inputFilename, outputFilename, registry));
}
