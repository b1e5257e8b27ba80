//===- CPUTarget.h - The CPU that code is generated for ---------*- C++ -*-===//
//
// One description of the CPU that GradScale generates code for, shared by
// gs-run's JIT and gs-compile's object files: an LLVM CPU name with its
// features, and the SIMD width the kernel schedule blocks for. The same
// model compiled for "native" and for "x86-64-v3" on an AVX-512 host runs
// two kernel schedules (512- and 256-bit register blocks), so tests can
// exercise both on one machine.
//
//===----------------------------------------------------------------------===//

#ifndef GS_PIPELINES_CPUTARGET_H
#define GS_PIPELINES_CPUTARGET_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CodeGen.h"

#include <memory>
#include <string>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir::gs {

/// The CPU code is generated for.
struct CPUTarget {
  /// The LLVM target triple (the host's).
  std::string triple;
  /// An LLVM CPU name such as "znver4" or "x86-64-v3".
  std::string cpu;
  /// LLVM subtarget features, every one on or off ("+avx2,-avx512f,...").
  std::string features;
  /// The widest SIMD registers of that CPU, in bits (128, 256 or 512).
  unsigned vectorBits = 128;

  /// Resolves `name`: "native" (the host's model and features), "generic"
  /// (the baseline of the host's architecture) or an LLVM CPU name of the
  /// host's architecture ("x86-64-v3", "skylake-avx512"). Returns an empty
  /// `cpu` and sets `error` when the name is not a CPU of the host.
  static CPUTarget resolve(llvm::StringRef name, std::string &error);

  /// The CPU that `--cpu` defaults to: the environment variable GS_CPU when
  /// it is set and not empty (how the test suite runs a second kernel
  /// schedule), else "native".
  static std::string defaultName();

  /// Marks every function defined in `module` with this CPU and its
  /// features ("target-cpu", "target-features"), which code generation
  /// and the optimizer's cost models read.
  void annotate(llvm::Module &module) const;

  /// A target machine for this CPU. Returns null and sets `error` when LLVM
  /// cannot make one.
  std::unique_ptr<llvm::TargetMachine>
  createTargetMachine(llvm::Reloc::Model relocation, std::string &error) const;
};

} // namespace mlir::gs

#endif // GS_PIPELINES_CPUTARGET_H
