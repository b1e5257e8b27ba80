//===- DeviceMemory.h - Parameters gs-device-memory passes -----*- C++ -*-===//
//
// gs-device-memory (Passes.td) passes a module's parameters to its public
// functions as leading arguments; each such argument names its parameter.
// The copies of a bufferized step's host code, which it and
// gs-device-params-in-place read.
//
//===----------------------------------------------------------------------===//

#ifndef GS_CONVERSION_GSTOGPU_DEVICEMEMORY_H
#define GS_CONVERSION_GSTOGPU_DEVICEMEMORY_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <utility>

namespace mlir::gs {

/// On a leading argument of a function gs-device-memory rewrote: the
/// parameter (memref global) it passes, a FlatSymbolRefAttr.
constexpr llvm::StringLiteral kParamArgumentAttr = "gs.param";

/// The source and target of `op` where it copies one buffer into another
/// (memref.copy, or linalg.copy on buffers); nullopt otherwise.
std::optional<std::pair<Value, Value>> getBufferCopy(Operation *op);

} // namespace mlir::gs

#endif // GS_CONVERSION_GSTOGPU_DEVICEMEMORY_H
