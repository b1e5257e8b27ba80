//===- FuzzFlags.cpp - libFuzzer target: import flags ------------*- C++
//-*-===//
//
// Parses the input as an --onnx-shape value and as an --onnx-train value:
// a parsed shape must have a bounded element count, and every failure must
// come with a message.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/ImportONNX/ImportONNX.h"
#include "gs/Dialect/GS/IR/ShapeUtils.h"

#include <cstdlib>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef spec(reinterpret_cast<const char *>(data), size);
  gs::OnnxImportOptions options;
  std::string error;
  if (succeeded(gs::parseOnnxInputShape(spec, options, error))) {
    for (const auto &entry : options.inputShapes) {
      std::optional<int64_t> n = gs::checkedNumElements(entry.second);
      if (!n || *n > gs::kMaxNumElements)
        std::abort(); // accepted a shape whose size overflows
    }
  } else if (error.empty()) {
    std::abort();
  }
  error.clear();
  if (failed(gs::parseOnnxTrainingOptions(spec, options, error)) &&
      error.empty())
    std::abort();
  return 0;
}
