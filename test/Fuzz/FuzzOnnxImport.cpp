//===- FuzzOnnxImport.cpp - libFuzzer target: the ONNX importer -*- C++ -*-===//
//
// Imports the input as an ONNX model, binary protobuf or (built with
// GS_FUZZ_ONNX_TEXT) ONNX's text format, with diagnostics swallowed: any
// input must give a module that verifies or an error, never a crash, a hang
// or unbounded memory.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/ImportONNX/ImportONNX.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <onnx/onnx_pb.h>

#include <cstdlib>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  onnx::ModelProto model;
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
#ifdef GS_FUZZ_ONNX_TEXT
  if (!gs::parseOnnxModel(bytes, /*text=*/true, model).empty())
    return 0;
#else
  if (!gs::parseOnnxModel(bytes, /*text=*/false, model).empty())
    return 0;
#endif
  // The importer loads the dialects it creates ops of.
  MLIRContext context(MLIRContext::Threading::DISABLED);
  ScopedDiagnosticHandler quiet(&context,
                                [](Diagnostic &) { return success(); });
  // External data resolves against a directory that does not exist.
  OwningOpRef<ModuleOp> module =
      gs::importOnnxModel(model, "/nonexistent-gs-fuzz", "fuzz.onnx", &context,
                          gs::OnnxImportOptions());
  if (module && failed(verify(*module)))
    std::abort(); // the importer produced invalid IR
  return 0;
}
