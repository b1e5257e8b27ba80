//===- EmulateAsyncCopies.h - cp.async on the CPU ---------------*- C++ -*-===//
//
// gs-emulate-gpu's cp.async (nvgpu.device_async_copy, its groups and waits).
// Deferred, a copy completes as late as the PTX ISA lets it: its source is
// read when it is issued (a kernel's sources do not change while it runs),
// its destination is written with NaN (integers: all ones) at once and with
// the data only when a cp.async.wait_group of the issuing thread retires its
// group. A kernel that reads a tile before it waits for it, or that waits for
// too few groups, then reads NaN instead of the right values by chance.
// Immediate, a copy completes where it is issued.
//
//===----------------------------------------------------------------------===//

#ifndef GS_CONVERSION_GSTOGPU_EMULATEASYNCCOPIES_H
#define GS_CONVERSION_GSTOGPU_EMULATEASYNCCOPIES_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Support/LLVM.h"

namespace mlir::gs {

/// Rewrites the cp.async copies, groups and waits in `launch` (a block of
/// `numThreads` threads, not yet split into phases) into code of each
/// thread, and erases them with the ordering ops the emulation need not
/// run: wgmma's fences, commits and waits, proxy fences, memory barriers.
/// `sharedMemory` is the launch's shared memory, bytes of which every
/// copy's destination is a view; deferred copies need destinations of
/// static strides and offset (diagnosed otherwise).
LogicalResult emulateAsyncCopies(gpu::LaunchOp launch, int64_t numThreads,
                                 Value sharedMemory, bool deferred);

} // namespace mlir::gs

#endif // GS_CONVERSION_GSTOGPU_EMULATEASYNCCOPIES_H
