//===- KernelEntry.h - Kernel functions: entries and symbols ----*- C++ -*-===//
//
// A step calls its kernels through entries on tensors, so that it stays on
// tensors and bufferization sees what each kernel reads and writes.
//
//===----------------------------------------------------------------------===//

#ifndef GS_CONVERSION_GSTOGPU_KERNELENTRY_H
#define GS_CONVERSION_GSTOGPU_KERNELENTRY_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

#include <string>

namespace mlir::gs {

/// The most static shared memory (workgroup attributions) a kernel may
/// have: 48 KiB on every architecture; more must be dynamic and asked for.
constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;

/// Builds, at `builder`'s insertion point, `@<kernel>_entry` for a kernel
/// function on memrefs whose first `numInputs` arguments it reads and whose
/// others it writes: the entry takes the inputs as tensors, allocates the
/// outputs, calls the kernel and returns the outputs as tensors, all but
/// the `scratch` ones (indices among the outputs).
func::FuncOp buildKernelEntry(OpBuilder &builder, Location loc,
                              func::FuncOp kernel, unsigned numInputs,
                              ArrayRef<unsigned> scratch = {});

/// `stem`, or `stem_<n>` with the least n >= 1, such that neither it nor
/// its `_entry` names a symbol of `symbols`.
std::string uniqueKernelName(SymbolTable &symbols, StringRef stem);

/// Makes kernel functions and their entries private symbols of the module
/// `symbols` is the table of.
void addPrivate(SymbolTable &symbols, ArrayRef<func::FuncOp> functions);

/// Whether `op` is a step's host code: in no kernel (gpu.launch) and no
/// linalg op's body.
bool isHostCode(Operation *op);

} // namespace mlir::gs

#endif // GS_CONVERSION_GSTOGPU_KERNELENTRY_H
