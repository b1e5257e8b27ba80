//===- DeviceMemory.h - Parameters gs-device-memory passes -----*- C++ -*-===//
//
// gs-device-memory (Passes.td) passes a module's parameters to its public
// functions as leading arguments; each such argument names its parameter.
//
//===----------------------------------------------------------------------===//

#ifndef GS_CONVERSION_GSTOGPU_DEVICEMEMORY_H
#define GS_CONVERSION_GSTOGPU_DEVICEMEMORY_H

#include "llvm/ADT/StringRef.h"

namespace mlir::gs {

/// On a leading argument of a function gs-device-memory rewrote: the
/// parameter (memref global) it passes, a FlatSymbolRefAttr.
constexpr llvm::StringLiteral kParamArgumentAttr = "gs.param";

} // namespace mlir::gs

#endif // GS_CONVERSION_GSTOGPU_DEVICEMEMORY_H
