//===- RuntimeFunction.h - Runtime functions by name ------------*- C++ -*-===//
//
// The runtime's C functions that compiled steps call, by name, for a JIT
// that links steps into a process which need not export them.
//
//===----------------------------------------------------------------------===//

#ifndef GS_RUNTIME_RUNTIMEFUNCTION_H
#define GS_RUNTIME_RUNTIMEFUNCTION_H

namespace mlir::gs::runtime {

struct RuntimeFunction {
  const char *name;
  void *address;
};

} // namespace mlir::gs::runtime

#endif // GS_RUNTIME_RUNTIMEFUNCTION_H
