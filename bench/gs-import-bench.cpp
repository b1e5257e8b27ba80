//===- gs-import-bench.cpp - Time and memory of an ONNX import -*- C++ -*-===//
//
// Imports a model a number of times and reports, as one JSON line, the
// model file's size, the import times and the process's resident memory
// before and at its peak.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/ImportONNX/ImportONNX.h"
#include "gs/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>

namespace cl = llvm::cl;

static cl::opt<std::string> modelPath(cl::Positional, cl::desc("<model.onnx>"),
                                      cl::Required);
static cl::list<std::string> inputShapes("onnx-shape",
                                         cl::desc("name=1x3x224x224"));
static cl::opt<int> repetitions("repetitions", cl::desc("imports to time"),
                                cl::init(5));

/// A field of /proc/self/status in KiB (VmRSS, VmHWM).
static long statusKiB(const std::string &field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind(field + ":", 0) == 0)
      return std::stol(line.substr(field.size() + 1));
  return -1;
}

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "Times ONNX imports\n");
  mlir::gs::OnnxImportOptions options;
  std::string error;
  for (const std::string &spec : inputShapes)
    if (mlir::failed(mlir::gs::parseOnnxInputShape(spec, options, error))) {
      llvm::errs() << error << "\n";
      return 1;
    }
  uint64_t fileSize = 0;
  if (llvm::sys::fs::file_size(modelPath, fileSize)) {
    llvm::errs() << "cannot read '" << modelPath << "'\n";
    return 1;
  }
  mlir::DialectRegistry registry;
  mlir::gs::registerAllDialects(registry);
  long baseline = statusKiB("VmRSS");
  std::vector<double> seconds;
  for (int i = 0; i < repetitions; ++i) {
    mlir::MLIRContext context(registry);
    auto start = std::chrono::steady_clock::now();
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::gs::importOnnxFile(modelPath, &context, options);
    seconds.push_back(std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count());
    if (!module)
      return 1;
  }
  std::sort(seconds.begin(), seconds.end());
  long peak = statusKiB("VmHWM");
  llvm::outs() << "{\"file_bytes\": " << fileSize
               << ", \"median_seconds\": " << seconds[seconds.size() / 2]
               << ", \"min_seconds\": " << seconds.front()
               << ", \"baseline_rss_kib\": " << baseline
               << ", \"peak_rss_kib\": " << peak << "}\n";
  return 0;
}
