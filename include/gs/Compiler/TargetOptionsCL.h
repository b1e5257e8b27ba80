//===- TargetOptionsCL.h - The --target and --gpu-* flags -------*- C++ -*-===//
//
// Where compiled code runs, as one set of flags for the tools that compile
// (gs-compile, gs-run): registered before the command line is parsed, read
// after.
//
//===----------------------------------------------------------------------===//

#ifndef GS_COMPILER_TARGETOPTIONSCL_H
#define GS_COMPILER_TARGETOPTIONSCL_H

#include "gs/Compiler/Compiler.h"

#include <string>

namespace llvm::cl {
class OptionCategory;
} // namespace llvm::cl

namespace mlir::gs {

/// The flags' category ("Target options": --target, --gpu-arch,
/// --gpu-format and the hidden --emulate-gpu-kernels); registers them.
/// Call before llvm::cl::ParseCommandLineOptions.
llvm::cl::OptionCategory &targetCLCategory();

/// Sets `options.device` and `options.cuda` from the flags. On a bad value
/// or a GPU flag without --target=cuda, an error that starts with the
/// flag's name.
LogicalResult targetOptionsFromCL(CompileOptions &options, std::string &error);

} // namespace mlir::gs

#endif // GS_COMPILER_TARGETOPTIONSCL_H
