//===- EmulateAsyncOps.h - cp.async and wgmma on the CPU --------*- C++ -*-===//
//
// gs-emulate-gpu's asynchronous operations, which complete as late as the
// PTX ISA lets them, so that a kernel that does not wait for them long
// enough computes NaN on the CPU instead of the right values by chance:
// - cp.async (nvgpu.device_async_copy, its groups and waits): its source is
//   read when it is issued (a kernel's sources do not change while it
//   runs), its destination is written with NaN (integers: all ones) at once
//   and with the data only when a cp.async.wait_group of the issuing thread
//   retires its group;
// - wgmma.mma_async: it reads shared memory where the wgmma.wait_group that
//   retires its group is, after whatever the kernel stored there since.
// Not deferred, a copy completes where it is issued, a wgmma where it is.
//
//===----------------------------------------------------------------------===//

#ifndef GS_CONVERSION_GSTOGPU_EMULATEASYNCOPS_H
#define GS_CONVERSION_GSTOGPU_EMULATEASYNCOPS_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Support/LLVM.h"

namespace mlir::gs {

/// Moves each wgmma.mma_async in `launch` to the wgmma.wait_group that
/// retires its group, in the same block (diagnosed otherwise, and where the
/// kernel reads its result before that wait).
LogicalResult deferWgmmas(gpu::LaunchOp launch);

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

#endif // GS_CONVERSION_GSTOGPU_EMULATEASYNCOPS_H
