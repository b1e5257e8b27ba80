//===- EmulateAsyncOps.h - cp.async and wgmma on the CPU --------*- C++ -*-===//
//
// gs-emulate-gpu's asynchronous operations, which complete as late as the
// PTX ISA lets them, so that a kernel that does not wait for them long
// enough fails on the CPU instead of computing the right values by chance:
// - cp.async (nvgpu.device_async_copy, its groups and waits): its source is
//   read when it is issued (a kernel's sources do not change while it
//   runs), its destination is written with NaN (integers: all ones) at once
//   and with the data only when a cp.async.wait_group of the issuing thread
//   retires its group;
// - wgmma.mma_async: what it reads must not change until every warpgroup
//   is past the wgmma.wait_group that retires it (WgmmaReadCheck).
// Not deferred, a copy completes where it is issued, and wgmmas are not
// checked.
//
//===----------------------------------------------------------------------===//

#ifndef GS_CONVERSION_GSTOGPU_EMULATEASYNCOPS_H
#define GS_CONVERSION_GSTOGPU_EMULATEASYNCOPS_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Support/LLVM.h"

namespace mlir::gs {

/// An index constant.
Value indexConstant(OpBuilder &b, Location l, int64_t v);
/// A buffer of `shape` x `element` on the heap, allocated before `launch`
/// (the CPU pipeline's buffer deallocation frees it).
Value allocateBefore(gpu::LaunchOp launch, ArrayRef<int64_t> shape,
                     Type element);
/// The bytes of an element of `memref` (an i1 takes one).
int64_t elementBytes(Value memref);
/// The byte offset in shared memory (whose address is `sharedBase`) of the
/// element of `memref`, a view of it, at `indices`.
Value sharedByteOffset(OpBuilder &b, Location l, Value sharedBase, Value memref,
                       ValueRange indices);
/// Where `flag` (a memref<1xindex> an emulated launch sets) is not zero:
/// writes "gs-emulate-gpu: in @<the launch's function>, <what>" to stderr
/// with write(2), not through stdio, whose buffers abort does not flush,
/// and aborts. The text is a constant of `launch`'s module named after
/// `symbol`.
void buildAbortIfSet(OpBuilder &b, Location l, gpu::LaunchOp launch, Value flag,
                     StringRef what, StringRef symbol);

/// The check that the shared memory each emulated wgmma.mma_async of a
/// launch reads does not change from its issue to the first barrier after
/// the wgmma.wait_group that retires its group: only there is every
/// warpgroup past that wait (its own may write the operands between the
/// two as far as PTX goes; the kernels here do not). Each warpgroup keeps
/// a record of its wgmmas (their descriptors and a hash of what they read);
/// a barrier compares the retired ones with shared memory as it is then,
/// the end of a block all, and where one changed, the program stops after
/// the launch with a failed assertion naming the kernel's function.
class WgmmaReadCheck {
public:
  /// Allocates the records before `launch` (of `numThreads` threads, with
  /// wgmmas) and reads shared memory through `halves`, an f16 view of it.
  WgmmaReadCheck(gpu::LaunchOp launch, int64_t numThreads, Value halves);

  /// Empties the records where a block starts, and rewrites the wgmma
  /// commits and waits of the launch into code of each thread that counts
  /// its warpgroup's groups committed and retired (erasing them).
  void instrument();
  /// Records the wgmma of warpgroup `warpgroup` issued at `b`'s insertion
  /// point: its descriptors, its N and its operands' majorness.
  void issue(OpBuilder &b, Location l, Value warpgroup, Value descriptorA,
             Value descriptorB, int64_t n, bool aKMajor, bool bKMajor);
  /// Checks the retired records of every warpgroup (`all`: every record).
  void check(OpBuilder &b, Location l, bool all);
  /// After the launch: the assertion that nothing changed.
  void assertUnchanged(OpBuilder &b, Location l);

private:
  Value counter(OpBuilder &b, Location l, Value warpgroup, int64_t which);
  void setCounter(OpBuilder &b, Location l, Value warpgroup, int64_t which,
                  Value value);
  /// A hash of what the wgmma with these descriptors reads.
  Value hashOperands(OpBuilder &b, Location l, Value descriptorA,
                     Value descriptorB, Value n, Value aKMajor, Value bKMajor);
  /// Compares record `slot` of `warpgroup` with shared memory now.
  void checkRecord(OpBuilder &b, Location l, Value warpgroup, Value slot);

  gpu::LaunchOp launch;
  Value halves;
  /// warpgroups x 4: issued, checked, committed, retired.
  Value counters;
  /// warpgroups x capacity x fields: each record.
  Value records;
  /// 1: the records found changed.
  Value changed;
};

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
