//===- EmulateSharedRaces.h - Missing barriers on the CPU ------*- C++ -*-===//
//
// gs-emulate-gpu's check for data races in shared memory (`check-races`).
// The emulation runs a block's threads one after another between barriers,
// so a kernel that lacks a barrier between one thread's write and another's
// read of the same shared memory may still compute the right values there,
// by the order the threads happen to run in. The check keeps, for every
// byte of shared memory, the last thread that wrote it and the threads that
// read it since the last barrier; a read of a byte another thread wrote, or
// a write of a byte another thread read or wrote, with no barrier between
// them is a race, and the program stops after the launch, naming the
// kernel's function.
//
// Checked: memref.load and memref.store of shared memory (the kernels'
// own, and the bytes cp.async lands at its wait) and ldmatrix's rows, read
// by the lanes that give their addresses. Not checked: what wgmma reads
// (WgmmaReadCheck checks that).
//
//===----------------------------------------------------------------------===//

#ifndef GS_CONVERSION_GSTOGPU_EMULATESHAREDRACES_H
#define GS_CONVERSION_GSTOGPU_EMULATESHAREDRACES_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Support/LLVM.h"

namespace mlir::gs {

class SharedRaceCheck {
public:
  /// Allocates the shadow of `sharedMemory` (the launch's shared memory, a
  /// buffer of bytes before it) before `launch`. Accesses through
  /// `internal` (the emulation's own view of shared memory, or null) are
  /// not the kernel's and are left unchecked.
  SharedRaceCheck(gpu::LaunchOp launch, Value sharedMemory, Value internal);

  /// Checks every memref.load and memref.store of shared memory in the
  /// launch, by the thread that runs it (before the launch is split into
  /// phases).
  void instrument();
  /// A barrier at `b`'s insertion point (outside the phases' loops over
  /// the threads), or the start of a block: what came before is ordered
  /// before what comes after.
  void barrier(OpBuilder &b, Location l);
  /// A read by `thread` of the element of `memref` (shared memory) at
  /// `indices`.
  void read(OpBuilder &b, Location l, Value memref, ValueRange indices,
            Value thread);
  /// After the launch: stops the program if a race was found.
  void assertNoRace(OpBuilder &b, Location l);

private:
  /// Whether `memref` is a view of shared memory the kernel accesses, of
  /// integers or floats.
  bool isShared(Value memref);
  /// The element of `memref` at `indices` read or written by `thread`.
  void access(OpBuilder &b, Location l, Value memref, ValueRange indices,
              Value thread, bool write);

  gpu::LaunchOp launch;
  Value sharedMemory;
  Value internal;
  /// Shared memory's address, taken before the launch.
  Value sharedBase;
  /// bytes x 4 (index): the epoch and thread of the last write, the epoch
  /// of the reads since, and their thread (kManyReaders for several).
  Value shadow;
  /// The epoch, advanced at every barrier and block (memref<1xindex>).
  Value epoch;
  /// The races found (memref<1xindex>).
  Value races;
};

} // namespace mlir::gs

#endif // GS_CONVERSION_GSTOGPU_EMULATESHAREDRACES_H
