//===- EmulateAsyncOps.cpp - cp.async and wgmma on the CPU -----*- C++ -*-===//
//
// Deferred wgmmas move to the wgmma.wait_group that retires their group: a
// commit closes the group of the wgmmas since the last, and a wait for all
// but the newest N retires the others.
//
// Deferred copies go through a queue per thread, in memory the emulation
// allocates for the launch: a ring of records (the bytes a copy read, where
// in shared memory they go, its group) and three counters (records landed,
// records issued, groups committed). A copy appends a record and writes NaN
// where it will land; a commit counts a group; a wait lands the records of
// every group but the newest N, in order. A thread's records are in the
// order of their groups, so the landed ones are always a prefix. Where a
// thread has kQueueCapacity copies pending, its oldest lands before the
// next is issued, as the GPU may land it.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/GSToGPU/EmulateAsyncOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::gs;

namespace {
/// The copies a thread may have pending before its oldest lands.
constexpr int64_t kQueueCapacity = 64;
/// The most bytes one cp.async copies.
constexpr int64_t kMaxCopyBytes = 16;

/// The counters of each thread's queue.
enum QueueCounter : int64_t { kLanded = 0, kIssued = 1, kCommitted = 2 };

/// The fields of each record but its bytes.
enum RecordField : int64_t { kAddress = 0, kSize = 1, kGroup = 2 };

/// NaN for floating-point elements, all ones for integers.
TypedAttr poisonAttr(Type element) {
  if (auto floating = dyn_cast<FloatType>(element))
    return FloatAttr::get(element,
                          APFloat::getQNaN(floating.getFloatSemantics()));
  return IntegerAttr::get(element,
                          APInt::getAllOnes(element.getIntOrFloatBitWidth()));
}

/// `count` elements of `copy`'s source from its indices, those at or past
/// its source size zero, each passed to `use` with its offset.
void readSource(OpBuilder &b, Location l, nvgpu::DeviceAsyncCopyOp copy,
                function_ref<void(OpBuilder &, Location, Value, Value)> use) {
  int64_t count = copy.getDstElements().getZExtValue();
  Value total = arith::ConstantIndexOp::create(b, l, count);
  Value sourceCount = copy.getSrcElements() ? copy.getSrcElements() : total;
  Type element = copy.getDst().getType().getElementType();
  Value zero = arith::ConstantOp::create(b, l, b.getZeroAttr(element));
  Value lower = arith::ConstantIndexOp::create(b, l, 0);
  Value step = arith::ConstantIndexOp::create(b, l, 1);
  scf::ForOp::create(
      b, l, lower, total, step, ValueRange{},
      [&](OpBuilder &nb, Location nl, Value e, ValueRange) {
        Value read = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ult, e,
                                           sourceCount);
        auto value = scf::IfOp::create(
            nb, nl, read,
            [&](OpBuilder &tb, Location tl) {
              SmallVector<Value> at(copy.getSrcIndices());
              at.back() = arith::AddIOp::create(tb, tl, at.back(), e);
              Value loaded = memref::LoadOp::create(tb, tl, copy.getSrc(), at);
              scf::YieldOp::create(tb, tl, loaded);
            },
            [&](OpBuilder &eb, Location el) {
              scf::YieldOp::create(eb, el, zero);
            });
        use(nb, nl, e, value.getResult(0));
        scf::YieldOp::create(nb, nl);
      });
}

/// `indices` with `offset` added to the last.
SmallVector<Value> offsetLast(OpBuilder &b, Location l, ValueRange indices,
                              Value offset) {
  SmallVector<Value> at(indices);
  at.back() = arith::AddIOp::create(b, l, at.back(), offset);
  return at;
}

class AsyncCopyQueues {
public:
  /// `sharedMemory`: the bytes of the launch's shared memory, a buffer
  /// defined before it, of which every copy's destination is a view.
  AsyncCopyQueues(gpu::LaunchOp launch, int64_t numThreads, Value sharedMemory);

  /// Empties every thread's queue where a thread block starts.
  void reset();
  void issue(nvgpu::DeviceAsyncCopyOp copy);
  void commit(nvgpu::DeviceAsyncCreateGroupOp group);
  void wait(nvgpu::DeviceAsyncWaitOp wait);

private:
  Value constant(OpBuilder &b, Location l, int64_t v) {
    return arith::ConstantIndexOp::create(b, l, v);
  }
  Value counter(OpBuilder &b, Location l, Value thread, QueueCounter which);
  void setCounter(OpBuilder &b, Location l, Value thread, QueueCounter which,
                  Value value);
  Value field(OpBuilder &b, Location l, Value thread, Value slot,
              RecordField which);
  void setField(OpBuilder &b, Location l, Value thread, Value slot,
                RecordField which, Value value);
  /// The byte offset in shared memory of `copy`'s destination.
  Value destinationAddress(OpBuilder &b, nvgpu::DeviceAsyncCopyOp copy);
  /// Writes the bytes of the record in ring slot `slot` of `thread` to
  /// shared memory.
  void land(OpBuilder &b, Location l, Value thread, Value slot);

  gpu::LaunchOp launch;
  Value sharedMemory;
  /// Its aligned pointer, which the destinations' are compared with.
  Value sharedBase;
  /// numThreads x 3: the counters.
  Value counters;
  /// numThreads x capacity x 3: each record's fields.
  Value records;
  /// numThreads x capacity x kMaxCopyBytes: the bytes each record read.
  Value bytes;
};
} // namespace

AsyncCopyQueues::AsyncCopyQueues(gpu::LaunchOp launch, int64_t numThreads,
                                 Value sharedMemory)
    : launch(launch), sharedMemory(sharedMemory) {
  // On the heap (the CPU pipeline's buffer deallocation frees them): the
  // rings of a block of 256 threads take 640 KiB.
  OpBuilder b(launch);
  Location l = launch.getLoc();
  Type indexType = b.getIndexType();
  auto allocate = [&](ArrayRef<int64_t> shape, Type element) {
    return memref::AllocOp::create(b, l, MemRefType::get(shape, element))
        .getResult();
  };
  counters = allocate({numThreads, 3}, indexType);
  records = allocate({numThreads, kQueueCapacity, 3}, indexType);
  bytes = allocate({numThreads, kQueueCapacity, kMaxCopyBytes}, b.getI8Type());
  sharedBase =
      memref::ExtractAlignedPointerAsIndexOp::create(b, l, sharedMemory);
}

Value AsyncCopyQueues::counter(OpBuilder &b, Location l, Value thread,
                               QueueCounter which) {
  return memref::LoadOp::create(b, l, counters,
                                ValueRange{thread, constant(b, l, which)});
}

void AsyncCopyQueues::setCounter(OpBuilder &b, Location l, Value thread,
                                 QueueCounter which, Value value) {
  memref::StoreOp::create(b, l, value, counters,
                          ValueRange{thread, constant(b, l, which)});
}

Value AsyncCopyQueues::field(OpBuilder &b, Location l, Value thread, Value slot,
                             RecordField which) {
  return memref::LoadOp::create(
      b, l, records, ValueRange{thread, slot, constant(b, l, which)});
}

void AsyncCopyQueues::setField(OpBuilder &b, Location l, Value thread,
                               Value slot, RecordField which, Value value) {
  memref::StoreOp::create(b, l, value, records,
                          ValueRange{thread, slot, constant(b, l, which)});
}

void AsyncCopyQueues::reset() {
  Block &body = launch.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&body);
  Location l = launch.getLoc();
  Value thread = gpu::ThreadIdOp::create(b, l, gpu::Dimension::x);
  Value zero = constant(b, l, 0);
  for (QueueCounter which : {kLanded, kIssued, kCommitted})
    setCounter(b, l, thread, which, zero);
}

Value AsyncCopyQueues::destinationAddress(OpBuilder &b,
                                          nvgpu::DeviceAsyncCopyOp copy) {
  Location l = copy.getLoc();
  MemRefType type = copy.getDst().getType();
  auto [strides, offset] = type.getStridesAndOffset();
  Value element = constant(b, l, offset);
  for (auto [index, stride] : llvm::zip_equal(copy.getDstIndices(), strides))
    element = arith::AddIOp::create(
        b, l, element,
        arith::MulIOp::create(b, l, index, constant(b, l, stride)));
  Value elementBytes =
      constant(b, l, type.getElementType().getIntOrFloatBitWidth() / 8);
  Value base =
      memref::ExtractAlignedPointerAsIndexOp::create(b, l, copy.getDst());
  Value shift = arith::SubIOp::create(b, l, base, sharedBase);
  return arith::AddIOp::create(
      b, l, shift, arith::MulIOp::create(b, l, element, elementBytes));
}

void AsyncCopyQueues::land(OpBuilder &b, Location l, Value thread, Value slot) {
  Value address = field(b, l, thread, slot, kAddress);
  Value size = field(b, l, thread, slot, kSize);
  scf::ForOp::create(
      b, l, constant(b, l, 0), size, constant(b, l, 1), ValueRange{},
      [&](OpBuilder &nb, Location nl, Value i, ValueRange) {
        Value byte =
            memref::LoadOp::create(nb, nl, bytes, ValueRange{thread, slot, i});
        Value at = arith::AddIOp::create(nb, nl, address, i);
        memref::StoreOp::create(nb, nl, byte, sharedMemory, ValueRange{at});
        scf::YieldOp::create(nb, nl);
      });
}

void AsyncCopyQueues::issue(nvgpu::DeviceAsyncCopyOp copy) {
  OpBuilder b(copy);
  Location l = copy.getLoc();
  Type element = copy.getDst().getType().getElementType();
  int64_t elementBytes = element.getIntOrFloatBitWidth() / 8;
  Type word = b.getIntegerType(8 * elementBytes);
  Value thread = gpu::ThreadIdOp::create(b, l, gpu::Dimension::x);
  Value capacity = constant(b, l, kQueueCapacity);
  Value landed = counter(b, l, thread, kLanded);
  Value issued = counter(b, l, thread, kIssued);
  Value pending = arith::SubIOp::create(b, l, issued, landed);
  Value full =
      arith::CmpIOp::create(b, l, arith::CmpIPredicate::uge, pending, capacity);
  scf::IfOp::create(b, l, full, [&](OpBuilder &tb, Location tl) {
    land(tb, tl, thread, arith::RemUIOp::create(tb, tl, landed, capacity));
    Value one = constant(tb, tl, 1);
    setCounter(tb, tl, thread, kLanded,
               arith::AddIOp::create(tb, tl, landed, one));
    scf::YieldOp::create(tb, tl);
  });
  Value slot = arith::RemUIOp::create(b, l, issued, capacity);
  Value poison = arith::ConstantOp::create(b, l, poisonAttr(element));
  readSource(b, l, copy, [&](OpBuilder &nb, Location nl, Value e, Value v) {
    // The value's bytes, least significant first, as the GPU stores them.
    Value raw = v;
    if (raw.getType() != word)
      raw = arith::BitcastOp::create(nb, nl, word, v);
    Value first = arith::MulIOp::create(
        nb, nl, e, arith::ConstantIndexOp::create(nb, nl, elementBytes));
    for (int64_t i = 0; i < elementBytes; ++i) {
      Value shifted = raw;
      if (i > 0)
        shifted = arith::ShRUIOp::create(
            nb, nl, raw,
            arith::ConstantOp::create(nb, nl, nb.getIntegerAttr(word, 8 * i)));
      Value byte = shifted;
      if (word != nb.getI8Type())
        byte = arith::TruncIOp::create(nb, nl, nb.getI8Type(), shifted);
      Value at = arith::AddIOp::create(
          nb, nl, first, arith::ConstantIndexOp::create(nb, nl, i));
      memref::StoreOp::create(nb, nl, byte, bytes,
                              ValueRange{thread, slot, at});
    }
    memref::StoreOp::create(nb, nl, poison, copy.getDst(),
                            offsetLast(nb, nl, copy.getDstIndices(), e));
  });
  int64_t size = copy.getDstElements().getZExtValue() * elementBytes;
  setField(b, l, thread, slot, kAddress, destinationAddress(b, copy));
  setField(b, l, thread, slot, kSize, constant(b, l, size));
  setField(b, l, thread, slot, kGroup, counter(b, l, thread, kCommitted));
  setCounter(b, l, thread, kIssued,
             arith::AddIOp::create(b, l, issued, constant(b, l, 1)));
}

void AsyncCopyQueues::commit(nvgpu::DeviceAsyncCreateGroupOp group) {
  OpBuilder b(group);
  Location l = group.getLoc();
  Value thread = gpu::ThreadIdOp::create(b, l, gpu::Dimension::x);
  Value committed = counter(b, l, thread, kCommitted);
  setCounter(b, l, thread, kCommitted,
             arith::AddIOp::create(b, l, committed, constant(b, l, 1)));
}

void AsyncCopyQueues::wait(nvgpu::DeviceAsyncWaitOp wait) {
  OpBuilder b(wait);
  Location l = wait.getLoc();
  Value thread = gpu::ThreadIdOp::create(b, l, gpu::Dimension::x);
  Value newest = constant(b, l, wait.getNumGroups().value_or(0));
  Value capacity = constant(b, l, kQueueCapacity);
  Value landed = counter(b, l, thread, kLanded);
  Value issued = counter(b, l, thread, kIssued);
  Value committed = counter(b, l, thread, kCommitted);
  // A record lands if its group is older than the newest N committed.
  auto loop = scf::ForOp::create(
      b, l, landed, issued, constant(b, l, 1), ValueRange{landed},
      [&](OpBuilder &nb, Location nl, Value record, ValueRange carried) {
        Value slot = arith::RemUIOp::create(nb, nl, record, capacity);
        Value group = field(nb, nl, thread, slot, kGroup);
        Value younger = arith::AddIOp::create(nb, nl, group, newest);
        Value retired = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ult,
                                              younger, committed);
        scf::IfOp::create(nb, nl, retired, [&](OpBuilder &tb, Location tl) {
          land(tb, tl, thread, slot);
          scf::YieldOp::create(tb, tl);
        });
        Value next = arith::AddIOp::create(nb, nl, record, constant(nb, nl, 1));
        Value count =
            arith::SelectOp::create(nb, nl, retired, next, carried.front());
        scf::YieldOp::create(nb, nl, count);
      });
  setCounter(b, l, thread, kLanded, loop.getResult(0));
}

LogicalResult mlir::gs::deferWgmmas(gpu::LaunchOp launch) {
  SmallVector<Block *> blocks;
  launch.getBody().walk([&](Block *block) { blocks.push_back(block); });
  for (Block *block : blocks) {
    SmallVector<SmallVector<NVVM::WgmmaMmaAsyncOp>> committed;
    SmallVector<NVVM::WgmmaMmaAsyncOp> open;
    for (Operation &op : llvm::make_early_inc_range(*block)) {
      if (auto wgmma = dyn_cast<NVVM::WgmmaMmaAsyncOp>(op)) {
        open.push_back(wgmma);
        continue;
      }
      if (isa<NVVM::WgmmaGroupSyncAlignedOp>(op)) {
        committed.push_back(std::move(open));
        open.clear();
        continue;
      }
      auto wait = dyn_cast<NVVM::WgmmaWaitGroupSyncOp>(op);
      if (!wait)
        continue;
      int64_t newest = static_cast<int64_t>(wait.getGroup());
      int64_t retired =
          std::max<int64_t>(0, static_cast<int64_t>(committed.size()) - newest);
      SmallVector<NVVM::WgmmaMmaAsyncOp> moved;
      for (auto &group : ArrayRef(committed).take_front(retired))
        moved.append(group.begin(), group.end());
      committed.erase(committed.begin(), committed.begin() + retired);
      // Until the wait, only the next wgmmas may take a result (as their
      // accumulator).
      for (NVVM::WgmmaMmaAsyncOp wgmma : moved)
        for (Operation *user : wgmma->getUsers()) {
          Operation *at = block->findAncestorOpInBlock(*user);
          bool chained = isa<NVVM::WgmmaMmaAsyncOp>(user) &&
                         llvm::is_contained(moved, user);
          if (!chained && at && !wait->isBeforeInBlock(at))
            return user->emitOpError("reads the result of a "
                                     "wgmma.mma_async before the "
                                     "wgmma.wait_group that retires it");
        }
      for (NVVM::WgmmaMmaAsyncOp wgmma : moved)
        wgmma->moveBefore(wait);
    }
    for (SmallVector<NVVM::WgmmaMmaAsyncOp> &group : committed)
      if (!group.empty())
        return group.front().emitOpError(
            "is emulated only where a wgmma.wait_group after it in its "
            "block retires it");
    if (!open.empty())
      return open.front().emitOpError(
          "is emulated only where a wgmma.commit_group and a "
          "wgmma.wait_group after it in its block retire it");
  }
  return success();
}

/// A copy completed where it is issued.
static void copyAtOnce(nvgpu::DeviceAsyncCopyOp copy) {
  OpBuilder b(copy);
  readSource(b, copy.getLoc(), copy,
             [&](OpBuilder &nb, Location nl, Value e, Value v) {
               memref::StoreOp::create(
                   nb, nl, v, copy.getDst(),
                   offsetLast(nb, nl, copy.getDstIndices(), e));
             });
}

LogicalResult mlir::gs::emulateAsyncCopies(gpu::LaunchOp launch,
                                           int64_t numThreads,
                                           Value sharedMemory, bool deferred) {
  SmallVector<Operation *> orderings;
  SmallVector<nvgpu::DeviceAsyncCopyOp> copies;
  SmallVector<nvgpu::DeviceAsyncCreateGroupOp> groups;
  SmallVector<nvgpu::DeviceAsyncWaitOp> waits;
  launch.getBody().walk([&](Operation *op) {
    if (auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op))
      copies.push_back(copy);
    else if (auto group = dyn_cast<nvgpu::DeviceAsyncCreateGroupOp>(op))
      groups.push_back(group);
    else if (auto wait = dyn_cast<nvgpu::DeviceAsyncWaitOp>(op))
      waits.push_back(wait);
    else if (isa<NVVM::WgmmaFenceAlignedOp, NVVM::WgmmaGroupSyncAlignedOp,
                 NVVM::WgmmaWaitGroupSyncOp, NVVM::FenceProxyOp,
                 NVVM::MembarOp>(op))
      orderings.push_back(op);
  });

  if (deferred && !copies.empty()) {
    for (nvgpu::DeviceAsyncCopyOp copy : copies) {
      MemRefType type = copy.getDst().getType();
      int64_t offset;
      SmallVector<int64_t> strides;
      if (!type.getElementType().isIntOrFloat() ||
          type.getElementTypeBitWidth() % 8 != 0)
        return copy.emitOpError("is emulated only for integer and "
                                "floating-point elements of whole bytes");
      if (failed(type.getStridesAndOffset(strides, offset)) ||
          ShapedType::isDynamic(offset) ||
          llvm::any_of(strides, ShapedType::isDynamic))
        return copy.emitOpError(
            "is emulated deferred only into a destination of static strides "
            "and offset (gs-emulate-gpu{defer-async=false} completes "
            "it where it is issued)");
    }
    AsyncCopyQueues queues(launch, numThreads, sharedMemory);
    queues.reset();
    for (nvgpu::DeviceAsyncCopyOp copy : copies)
      queues.issue(copy);
    for (nvgpu::DeviceAsyncCreateGroupOp group : groups)
      queues.commit(group);
    for (nvgpu::DeviceAsyncWaitOp wait : waits)
      queues.wait(wait);
  } else {
    for (nvgpu::DeviceAsyncCopyOp copy : copies)
      copyAtOnce(copy);
  }

  // The waits first: they use the groups' tokens, which use the copies'.
  for (nvgpu::DeviceAsyncWaitOp wait : waits)
    wait.erase();
  for (Operation *op : orderings)
    op->erase();
  for (nvgpu::DeviceAsyncCreateGroupOp group : groups)
    group.erase();
  for (nvgpu::DeviceAsyncCopyOp copy : copies)
    copy.erase();
  return success();
}
