//===- EmulateSharedRaces.cpp - Missing barriers on the CPU ----*- C++ -*-===//
//
// Part of gs-emulate-gpu: a shadow of shared memory that finds accesses of
// two threads to the same byte with no barrier between them.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/GSToGPU/EmulateSharedRaces.h"
#include "gs/Conversion/GSToGPU/EmulateAsyncOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::gs;

namespace {
/// The fields of a byte's shadow.
enum ShadowField : int64_t {
  kWriteEpoch = 0,
  kWriter = 1,
  kReadEpoch = 2,
  kReader = 3,
  kNumShadowFields = 4
};
/// The reader of a byte that several threads read since the last barrier.
constexpr int64_t kManyReaders = -1;
} // namespace

SharedRaceCheck::SharedRaceCheck(gpu::LaunchOp launch, Value sharedMemory,
                                 Value internal)
    : launch(launch), sharedMemory(sharedMemory), internal(internal) {
  OpBuilder b(launch);
  Location l = launch.getLoc();
  Type indexType = b.getIndexType();
  int64_t bytes = cast<MemRefType>(sharedMemory.getType()).getNumElements();
  shadow = allocateBefore(launch, {bytes, kNumShadowFields}, indexType);
  epoch = allocateBefore(launch, {1}, indexType);
  races = allocateBefore(launch, {1}, indexType);
  // Epoch 0 is before the first block: no byte was accessed in it.
  Value zero = indexConstant(b, l, 0);
  Value one = indexConstant(b, l, 1);
  scf::ForOp::create(b, l, zero, indexConstant(b, l, bytes), one, ValueRange{},
                     [&](OpBuilder &nb, Location nl, Value byte, ValueRange) {
                       for (int64_t field = 0; field < kNumShadowFields;
                            ++field)
                         memref::StoreOp::create(
                             nb, nl, zero, shadow,
                             ValueRange{byte, indexConstant(nb, nl, field)});
                       scf::YieldOp::create(nb, nl);
                     });
  memref::StoreOp::create(b, l, zero, epoch, ValueRange{zero});
  memref::StoreOp::create(b, l, zero, races, ValueRange{zero});
  sharedBase =
      memref::ExtractAlignedPointerAsIndexOp::create(b, l, sharedMemory);
}

bool SharedRaceCheck::isShared(Value memref) {
  // Shared memory of scalars of a size: what the kernels keep there.
  if (!cast<MemRefType>(memref.getType()).getElementType().isIntOrFloat())
    return false;
  while (memref != internal) {
    if (memref == sharedMemory)
      return true;
    if (auto argument = dyn_cast<BlockArgument>(memref))
      return llvm::is_contained(launch.getWorkgroupAttributions(), argument);
    auto view = memref.getDefiningOp<ViewLikeOpInterface>();
    if (!view)
      return false;
    memref = view.getViewSource();
  }
  return false;
}

void SharedRaceCheck::access(OpBuilder &b, Location l, Value memref,
                             ValueRange indices, Value thread, bool write) {
  Value address = sharedByteOffset(b, l, sharedBase, memref, indices);
  Value zero = indexConstant(b, l, 0);
  Value now = memref::LoadOp::create(b, l, epoch, ValueRange{zero});
  auto field = [&](Value byte, int64_t which) {
    return memref::LoadOp::create(b, l, shadow,
                                  ValueRange{byte, indexConstant(b, l, which)});
  };
  auto setField = [&](Value byte, int64_t which, Value value) {
    memref::StoreOp::create(b, l, value, shadow,
                            ValueRange{byte, indexConstant(b, l, which)});
  };
  auto equal = [&](Value x, Value y) {
    return arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, x, y);
  };
  auto differ = [&](Value x, Value y) {
    return arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, x, y);
  };
  Value found = arith::ConstantIntOp::create(b, l, b.getI1Type(), 0);
  for (int64_t k = 0, e = elementBytes(memref); k < e; ++k) {
    Value byte = arith::AddIOp::create(b, l, address, indexConstant(b, l, k));
    // Another thread wrote it since the last barrier.
    Value writtenNow = equal(field(byte, kWriteEpoch), now);
    Value otherWriter = differ(field(byte, kWriter), thread);
    Value written = arith::AndIOp::create(b, l, writtenNow, otherWriter);
    Value readEpoch = field(byte, kReadEpoch);
    Value readNow = equal(readEpoch, now);
    Value reader = field(byte, kReader);
    if (write) {
      // ... or read it.
      Value otherReader = differ(reader, thread);
      Value read = arith::AndIOp::create(b, l, readNow, otherReader);
      Value race = arith::OrIOp::create(b, l, written, read);
      found = arith::OrIOp::create(b, l, found, race);
      setField(byte, kWriteEpoch, now);
      setField(byte, kWriter, thread);
    } else {
      found = arith::OrIOp::create(b, l, found, written);
      // The only reader since the barrier, or one more.
      Value readBefore = differ(readEpoch, now);
      Value sameReader = equal(reader, thread);
      Value alone = arith::OrIOp::create(b, l, readBefore, sameReader);
      Value many = indexConstant(b, l, kManyReaders);
      Value readers = arith::SelectOp::create(b, l, alone, thread, many);
      setField(byte, kReadEpoch, now);
      setField(byte, kReader, readers);
    }
  }
  Value count = memref::LoadOp::create(b, l, races, ValueRange{zero});
  Value more = arith::IndexCastUIOp::create(b, l, b.getIndexType(), found);
  memref::StoreOp::create(b, l, arith::AddIOp::create(b, l, count, more), races,
                          ValueRange{zero});
}

void SharedRaceCheck::instrument() {
  SmallVector<Operation *> accesses;
  launch.getBody().walk([&](Operation *op) {
    if (auto load = dyn_cast<memref::LoadOp>(op);
        load && isShared(load.getMemRef()))
      accesses.push_back(op);
    if (auto store = dyn_cast<memref::StoreOp>(op);
        store && isShared(store.getMemRef()))
      accesses.push_back(op);
  });
  for (Operation *op : accesses) {
    OpBuilder b(op);
    Location l = op->getLoc();
    Value thread = gpu::ThreadIdOp::create(b, l, gpu::Dimension::x);
    if (auto load = dyn_cast<memref::LoadOp>(op))
      access(b, l, load.getMemRef(), load.getIndices(), thread,
             /*write=*/false);
    else
      access(b, l, cast<memref::StoreOp>(op).getMemRef(),
             cast<memref::StoreOp>(op).getIndices(), thread, /*write=*/true);
  }
}

void SharedRaceCheck::barrier(OpBuilder &b, Location l) {
  Value zero = indexConstant(b, l, 0);
  Value now = memref::LoadOp::create(b, l, epoch, ValueRange{zero});
  Value next = arith::AddIOp::create(b, l, now, indexConstant(b, l, 1));
  memref::StoreOp::create(b, l, next, epoch, ValueRange{zero});
}

void SharedRaceCheck::read(OpBuilder &b, Location l, Value memref,
                           ValueRange indices, Value thread) {
  access(b, l, memref, indices, thread, /*write=*/false);
}

void SharedRaceCheck::assertNoRace(OpBuilder &b, Location l) {
  buildAbortIfSet(b, l, launch, races,
                  "two threads of a block accessed the same shared memory, "
                  "one of them writing it, with no barrier between them",
                  "gs_shared_memory_race");
}
