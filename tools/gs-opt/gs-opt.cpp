//===- gs-opt.cpp - GradScale optimizer driver ------------------*- C++ -*-===//
//
// mlir-opt for GradScale: the gs dialect and passes plus the upstream
// dialects and passes its pipelines use. ONNX models (.onnx, .onnxtext)
// are accepted as input like .mlir files: they are imported first.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/ImportONNX/ImportONNX.h"
#include "gs/Conversion/ImportONNX/ImportOptionsCL.h"
#include "gs/InitAll.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

/// Imports the ONNX model and runs the mlir-opt machinery on it.
static LogicalResult runOnOnnx(StringRef inputFilename,
                               StringRef outputFilename,
                               DialectRegistry &registry) {
  gs::OnnxImportOptions options;
  std::string flagError;
  if (failed(gs::onnxImportOptionsFromCL(options, flagError))) {
    llvm::errs() << "gs-opt: error: " << flagError << "\n";
    return failure();
  }
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  if (!config.shouldVerifyDiagnostics()) {
    // MlirOptMain reads the imported module as bytecode named after the
    // model; its handler would quote a "line" of that bytecode under each
    // diagnostic. The passes' diagnostics print as the importer's do.
    config.setPassPipelineSetupFn(
        [cli = MlirOptMainConfig::createFromCLOptions()](PassManager &pm) {
          pm.getContext()->getDiagEngine().registerHandler(
              [](Diagnostic &diag) {
                gs::printOnnxDiagnostic(diag, llvm::errs());
                return success();
              });
          return cli.setupPassPipeline(pm);
        });
  }

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

/// Hides, from --help (not from --help-hidden), every flag registered
/// before main: LLVM's backend and optimizer flags, which libLLVM registers
/// when it is loaded. The flags of gs-opt, MLIR and the passes are
/// registered afterwards and stay visible.
static void hideLibraryFlags() {
  for (auto &entry : llvm::cl::getRegisteredOptions()) {
    llvm::cl::Option *option = entry.second;
    // --help, --version and the like stay.
    bool generic = llvm::is_contained({"help", "help-list", "help-hidden",
                                       "help-list-hidden", "version",
                                       "print-options", "print-all-options"},
                                      entry.first);
    if (!generic && option->getOptionHiddenFlag() == llvm::cl::NotHidden)
      option->setHiddenFlag(llvm::cl::Hidden);
  }
}

int main(int argc, char **argv) {
  hideLibraryFlags();
  DialectRegistry registry;
  gs::registerAllDialects(registry);
  gs::registerAllPasses();
  gs::registerOnnxImportCLOptions();
  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "GradScale optimizer driver\n", registry);
  if (gs::isOnnxInput(inputFilename))
    return asMainReturnCode(runOnOnnx(inputFilename, outputFilename, registry));
  return asMainReturnCode(
      MlirOptMain(argc, argv, inputFilename, outputFilename, registry));
}
