//===- EmulateAsyncOps.cpp - cp.async and wgmma on the CPU -----*- C++ -*-===//
//
// The wgmma check counts, per warpgroup, the groups committed (a commit
// closes the group of the wgmmas since the last) and retired (a wait for
// all but the newest N retires the others).
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

#include "gs/Conversion/GSToGPU/FragmentLayout.h"
#include "gs/Conversion/GSToGPU/WgmmaDescriptor.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::tensorcore;

namespace {
/// The copies a thread may have pending before its oldest lands.
constexpr int64_t kQueueCapacity = 64;
/// The most bytes one cp.async copies (nvgpu's verifier allows no more).
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
  Value counter(OpBuilder &b, Location l, Value thread, QueueCounter which);
  void setCounter(OpBuilder &b, Location l, Value thread, QueueCounter which,
                  Value value);
  /// Sets counter `which`, now `current`, to `current` + 1.
  void increment(OpBuilder &b, Location l, Value thread, QueueCounter which,
                 Value current);
  Value field(OpBuilder &b, Location l, Value thread, Value slot,
              RecordField which);
  void setField(OpBuilder &b, Location l, Value thread, Value slot,
                RecordField which, Value value);
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

Value mlir::gs::indexConstant(OpBuilder &b, Location l, int64_t v) {
  return arith::ConstantIndexOp::create(b, l, v);
}

Value mlir::gs::allocateBefore(gpu::LaunchOp launch, ArrayRef<int64_t> shape,
                               Type element) {
  OpBuilder b(launch);
  return memref::AllocOp::create(b, launch.getLoc(),
                                 MemRefType::get(shape, element));
}

int64_t mlir::gs::elementBytes(Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  return std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
}

Value mlir::gs::sharedByteOffset(OpBuilder &b, Location l, Value sharedBase,
                                 Value memref, ValueRange indices) {
  auto type = cast<MemRefType>(memref.getType());
  // Static strides from the type: a workgroup attribution becomes a view
  // of another memory space later, which no op with a memref result of
  // its own (extract_strided_metadata) may see.
  SmallVector<int64_t> staticStrides;
  int64_t staticOffset;
  SmallVector<Value> strides;
  Value element;
  if (succeeded(type.getStridesAndOffset(staticStrides, staticOffset)) &&
      !ShapedType::isDynamic(staticOffset) &&
      llvm::none_of(staticStrides, ShapedType::isDynamic)) {
    element = indexConstant(b, l, staticOffset);
    for (int64_t stride : staticStrides)
      strides.push_back(indexConstant(b, l, stride));
  } else {
    auto metadata = memref::ExtractStridedMetadataOp::create(b, l, memref);
    element = metadata.getOffset();
    llvm::append_range(strides, metadata.getStrides());
  }
  for (auto [index, stride] : llvm::zip_equal(indices, strides)) {
    Value step = arith::MulIOp::create(b, l, index, stride);
    element = arith::AddIOp::create(b, l, element, step);
  }
  Value pointer = memref::ExtractAlignedPointerAsIndexOp::create(b, l, memref);
  Value start = arith::SubIOp::create(b, l, pointer, sharedBase);
  Value offset = arith::MulIOp::create(
      b, l, element, indexConstant(b, l, elementBytes(memref)));
  return arith::AddIOp::create(b, l, start, offset);
}

AsyncCopyQueues::AsyncCopyQueues(gpu::LaunchOp launch, int64_t numThreads,
                                 Value sharedMemory)
    : launch(launch), sharedMemory(sharedMemory) {
  // On the heap: the rings of a block of 256 threads take 640 KiB.
  OpBuilder b(launch);
  Type indexType = b.getIndexType();
  counters = allocateBefore(launch, {numThreads, 3}, indexType);
  records = allocateBefore(launch, {numThreads, kQueueCapacity, 3}, indexType);
  bytes = allocateBefore(launch, {numThreads, kQueueCapacity, kMaxCopyBytes},
                         b.getI8Type());
  sharedBase = memref::ExtractAlignedPointerAsIndexOp::create(
      b, launch.getLoc(), sharedMemory);
}

Value AsyncCopyQueues::counter(OpBuilder &b, Location l, Value thread,
                               QueueCounter which) {
  return memref::LoadOp::create(b, l, counters,
                                ValueRange{thread, indexConstant(b, l, which)});
}

void AsyncCopyQueues::setCounter(OpBuilder &b, Location l, Value thread,
                                 QueueCounter which, Value value) {
  memref::StoreOp::create(b, l, value, counters,
                          ValueRange{thread, indexConstant(b, l, which)});
}

void AsyncCopyQueues::increment(OpBuilder &b, Location l, Value thread,
                                QueueCounter which, Value current) {
  Value one = indexConstant(b, l, 1);
  setCounter(b, l, thread, which, arith::AddIOp::create(b, l, current, one));
}

Value AsyncCopyQueues::field(OpBuilder &b, Location l, Value thread, Value slot,
                             RecordField which) {
  return memref::LoadOp::create(
      b, l, records, ValueRange{thread, slot, indexConstant(b, l, which)});
}

void AsyncCopyQueues::setField(OpBuilder &b, Location l, Value thread,
                               Value slot, RecordField which, Value value) {
  memref::StoreOp::create(b, l, value, records,
                          ValueRange{thread, slot, indexConstant(b, l, which)});
}

void AsyncCopyQueues::reset() {
  Block &body = launch.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&body);
  Location l = launch.getLoc();
  Value thread = gpu::ThreadIdOp::create(b, l, gpu::Dimension::x);
  Value zero = indexConstant(b, l, 0);
  for (QueueCounter which : {kLanded, kIssued, kCommitted})
    setCounter(b, l, thread, which, zero);
}

void AsyncCopyQueues::land(OpBuilder &b, Location l, Value thread, Value slot) {
  Value address = field(b, l, thread, slot, kAddress);
  Value size = field(b, l, thread, slot, kSize);
  Value zero = indexConstant(b, l, 0);
  Value one = indexConstant(b, l, 1);
  scf::ForOp::create(
      b, l, zero, size, one, ValueRange{},
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
  int64_t bytesPerElement = elementBytes(copy.getDst());
  Type word = b.getIntegerType(8 * bytesPerElement);
  Value thread = gpu::ThreadIdOp::create(b, l, gpu::Dimension::x);
  Value capacity = indexConstant(b, l, kQueueCapacity);
  Value landed = counter(b, l, thread, kLanded);
  Value issued = counter(b, l, thread, kIssued);
  Value pending = arith::SubIOp::create(b, l, issued, landed);
  Value full =
      arith::CmpIOp::create(b, l, arith::CmpIPredicate::uge, pending, capacity);
  scf::IfOp::create(b, l, full, [&](OpBuilder &tb, Location tl) {
    land(tb, tl, thread, arith::RemUIOp::create(tb, tl, landed, capacity));
    increment(tb, tl, thread, kLanded, landed);
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
        nb, nl, e, arith::ConstantIndexOp::create(nb, nl, bytesPerElement));
    for (int64_t i = 0; i < bytesPerElement; ++i) {
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
  int64_t size = copy.getDstElements().getZExtValue() * bytesPerElement;
  setField(
      b, l, thread, slot, kAddress,
      sharedByteOffset(b, l, sharedBase, copy.getDst(), copy.getDstIndices()));
  setField(b, l, thread, slot, kSize, indexConstant(b, l, size));
  setField(b, l, thread, slot, kGroup, counter(b, l, thread, kCommitted));
  increment(b, l, thread, kIssued, issued);
}

void AsyncCopyQueues::commit(nvgpu::DeviceAsyncCreateGroupOp group) {
  OpBuilder b(group);
  Location l = group.getLoc();
  Value thread = gpu::ThreadIdOp::create(b, l, gpu::Dimension::x);
  increment(b, l, thread, kCommitted, counter(b, l, thread, kCommitted));
}

void AsyncCopyQueues::wait(nvgpu::DeviceAsyncWaitOp wait) {
  OpBuilder b(wait);
  Location l = wait.getLoc();
  Value thread = gpu::ThreadIdOp::create(b, l, gpu::Dimension::x);
  Value newest = indexConstant(b, l, wait.getNumGroups().value_or(0));
  Value capacity = indexConstant(b, l, kQueueCapacity);
  Value landed = counter(b, l, thread, kLanded);
  Value issued = counter(b, l, thread, kIssued);
  Value committed = counter(b, l, thread, kCommitted);
  // A record lands if its group is older than the newest N committed.
  auto loop = scf::ForOp::create(
      b, l, landed, issued, indexConstant(b, l, 1), ValueRange{landed},
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
        Value next =
            arith::AddIOp::create(nb, nl, record, indexConstant(nb, nl, 1));
        Value count =
            arith::SelectOp::create(nb, nl, retired, next, carried.front());
        scf::YieldOp::create(nb, nl, count);
      });
  setCounter(b, l, thread, kLanded, loop.getResult(0));
}

namespace {
/// The wgmmas a warpgroup may have unchecked before its oldest is checked.
constexpr int64_t kWgmmaRecords = 16;

/// The warpgroup counters of the wgmma check.
enum WgmmaCounter : int64_t {
  kWgmmasIssued = 0,
  kWgmmasChecked = 1,
  kWgmmaGroupsCommitted = 2,
  kWgmmaGroupsRetired = 3
};

/// The fields of a wgmma record, all i64.
enum WgmmaField : int64_t {
  kDescriptorA = 0,
  kDescriptorB = 1,
  kColumns = 2,
  kAKMajor = 3,
  kBKMajor = 4,
  kHash = 5,
  kWgmmaGroup = 6,
  kWgmmaFields = 7
};
} // namespace

WgmmaReadCheck::WgmmaReadCheck(gpu::LaunchOp launch, int64_t numThreads,
                               Value halves)
    : launch(launch), halves(halves) {
  OpBuilder b(launch);
  Location l = launch.getLoc();
  int64_t warpgroups = numThreads / kThreadsPerWarpgroup;
  counters = allocateBefore(launch, {warpgroups, 4}, b.getIndexType());
  records = allocateBefore(launch, {warpgroups, kWgmmaRecords, kWgmmaFields},
                           b.getI64Type());
  changed = allocateBefore(launch, {1}, b.getIndexType());
  Value zero = indexConstant(b, l, 0);
  memref::StoreOp::create(b, l, zero, changed, ValueRange{zero});
}

Value WgmmaReadCheck::counter(OpBuilder &b, Location l, Value warpgroup,
                              int64_t which) {
  return memref::LoadOp::create(
      b, l, counters, ValueRange{warpgroup, indexConstant(b, l, which)});
}

void WgmmaReadCheck::setCounter(OpBuilder &b, Location l, Value warpgroup,
                                int64_t which, Value value) {
  memref::StoreOp::create(b, l, value, counters,
                          ValueRange{warpgroup, indexConstant(b, l, which)});
}

void WgmmaReadCheck::instrument() {
  // Each warpgroup's counters, kept by its first thread.
  auto forWarpgroup =
      [&](Operation *op,
          function_ref<void(OpBuilder &, Location, Value)> body) {
        OpBuilder b(op);
        Location l = op->getLoc();
        Value thread = gpu::ThreadIdOp::create(b, l, gpu::Dimension::x);
        Value size = indexConstant(b, l, kThreadsPerWarpgroup);
        Value lane = arith::RemUIOp::create(b, l, thread, size);
        Value first = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                            lane, indexConstant(b, l, 0));
        scf::IfOp::create(b, l, first, [&](OpBuilder &tb, Location tl) {
          body(tb, tl, arith::DivUIOp::create(tb, tl, thread, size));
          scf::YieldOp::create(tb, tl);
        });
      };
  Block &body = launch.getBody().front();
  forWarpgroup(&body.front(), [&](OpBuilder &b, Location l, Value group) {
    Value zero = indexConstant(b, l, 0);
    for (int64_t which : {kWgmmasIssued, kWgmmasChecked, kWgmmaGroupsCommitted,
                          kWgmmaGroupsRetired})
      setCounter(b, l, group, which, zero);
  });
  SmallVector<Operation *> commits, waits;
  launch.getBody().walk([&](Operation *op) {
    if (isa<NVVM::WgmmaGroupSyncAlignedOp>(op))
      commits.push_back(op);
    else if (isa<NVVM::WgmmaWaitGroupSyncOp>(op))
      waits.push_back(op);
  });
  for (Operation *commit : commits) {
    forWarpgroup(commit, [&](OpBuilder &b, Location l, Value group) {
      Value committed = counter(b, l, group, kWgmmaGroupsCommitted);
      Value one = indexConstant(b, l, 1);
      setCounter(b, l, group, kWgmmaGroupsCommitted,
                 arith::AddIOp::create(b, l, committed, one));
    });
    commit->erase();
  }
  for (Operation *wait : waits) {
    int64_t newest = cast<NVVM::WgmmaWaitGroupSyncOp>(wait).getGroup();
    forWarpgroup(wait, [&](OpBuilder &b, Location l, Value group) {
      // Every group but the newest N: max(committed - N, 0) of them.
      Value committed = counter(b, l, group, kWgmmaGroupsCommitted);
      Value retired = counter(b, l, group, kWgmmaGroupsRetired);
      Value keep = indexConstant(b, l, newest);
      Value older = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ugt,
                                          committed, keep);
      Value difference = arith::SubIOp::create(b, l, committed, keep);
      Value now = arith::SelectOp::create(b, l, older, difference,
                                          indexConstant(b, l, 0));
      setCounter(b, l, group, kWgmmaGroupsRetired,
                 arith::MaxUIOp::create(b, l, retired, now));
    });
    wait->erase();
  }
}

Value WgmmaReadCheck::hashOperands(OpBuilder &b, Location l, Value descriptorA,
                                   Value descriptorB, Value n, Value aKMajor,
                                   Value bKMajor) {
  Type i64 = b.getI64Type();
  Value zero = indexConstant(b, l, 0);
  Value one = indexConstant(b, l, 1);
  Value multiplier = arith::ConstantIntOp::create(b, l, i64, 1000003);
  // h * 1000003 + the element's bits, over (mn, k) in order, wrapping; the
  // operand's majorness picks the index math once, outside the loops.
  auto hashOperand = [&](Value hash, Value descriptor, Value rows,
                         Value kMajor) {
    auto hashAs = [&](OpBuilder &hb, Location hl, bool major) {
      auto outer = scf::ForOp::create(
          hb, hl, zero, rows, one, ValueRange{hash},
          [&](OpBuilder &ob, Location ol, Value mn, ValueRange outerHash) {
            Value sixteen = indexConstant(ob, ol, 16);
            auto inner = scf::ForOp::create(
                ob, ol, zero, sixteen, one, ValueRange{outerHash},
                [&](OpBuilder &ib, Location il, Value k, ValueRange innerHash) {
                  Value at =
                      buildWgmmaOperandIndex(ib, il, descriptor, mn, k, major);
                  Value x =
                      memref::LoadOp::create(ib, il, halves, ValueRange{at});
                  Value bits =
                      arith::BitcastOp::create(ib, il, ib.getI16Type(), x);
                  Value wide = arith::ExtUIOp::create(ib, il, i64, bits);
                  Value scaled = arith::MulIOp::create(
                      ib, il, innerHash.front(), multiplier);
                  Value next = arith::AddIOp::create(ib, il, scaled, wide);
                  scf::YieldOp::create(ib, il, next);
                });
            scf::YieldOp::create(ob, ol, inner.getResult(0));
          });
      scf::YieldOp::create(hb, hl, outer.getResult(0));
    };
    auto byMajorness = scf::IfOp::create(
        b, l, kMajor, [&](OpBuilder &tb, Location tl) { hashAs(tb, tl, true); },
        [&](OpBuilder &eb, Location el) { hashAs(eb, el, false); });
    return byMajorness.getResult(0);
  };
  Value start = arith::ConstantIntOp::create(b, l, i64, 0);
  Value afterA =
      hashOperand(start, descriptorA, indexConstant(b, l, 64), aKMajor);
  return hashOperand(afterA, descriptorB, n, bKMajor);
}

void WgmmaReadCheck::issue(OpBuilder &b, Location l, Value warpgroup,
                           Value descriptorA, Value descriptorB, int64_t n,
                           bool aKMajor, bool bKMajor) {
  Type i64 = b.getI64Type();
  Value capacity = indexConstant(b, l, kWgmmaRecords);
  Value issued = counter(b, l, warpgroup, kWgmmasIssued);
  Value checked = counter(b, l, warpgroup, kWgmmasChecked);
  // A full ring checks its oldest record early: still running, it must
  // read what it read when issued.
  Value unchecked = arith::SubIOp::create(b, l, issued, checked);
  Value full = arith::CmpIOp::create(b, l, arith::CmpIPredicate::uge, unchecked,
                                     capacity);
  scf::IfOp::create(b, l, full, [&](OpBuilder &tb, Location tl) {
    checkRecord(tb, tl, warpgroup,
                arith::RemUIOp::create(tb, tl, checked, capacity));
    Value one = indexConstant(tb, tl, 1);
    setCounter(tb, tl, warpgroup, kWgmmasChecked,
               arith::AddIOp::create(tb, tl, checked, one));
    scf::YieldOp::create(tb, tl);
  });
  Value slot = arith::RemUIOp::create(b, l, issued, capacity);
  auto flag = [&](bool value) {
    return arith::ConstantIntOp::create(b, l, b.getI1Type(), value).getResult();
  };
  auto wide = [&](int64_t value) {
    return arith::ConstantIntOp::create(b, l, i64, value).getResult();
  };
  Value columns = indexConstant(b, l, n);
  Value aFlag = flag(aKMajor);
  Value bFlag = flag(bKMajor);
  Value hash =
      hashOperands(b, l, descriptorA, descriptorB, columns, aFlag, bFlag);
  Value group = arith::IndexCastUIOp::create(
      b, l, i64, counter(b, l, warpgroup, kWgmmaGroupsCommitted));
  std::pair<WgmmaField, Value> fields[] = {
      {kDescriptorA, descriptorA}, {kDescriptorB, descriptorB},
      {kColumns, wide(n)},         {kAKMajor, wide(aKMajor)},
      {kBKMajor, wide(bKMajor)},   {kHash, hash},
      {kWgmmaGroup, group}};
  for (auto [field, value] : fields)
    memref::StoreOp::create(
        b, l, value, records,
        ValueRange{warpgroup, slot, indexConstant(b, l, field)});
  Value one = indexConstant(b, l, 1);
  setCounter(b, l, warpgroup, kWgmmasIssued,
             arith::AddIOp::create(b, l, issued, one));
}

void WgmmaReadCheck::checkRecord(OpBuilder &b, Location l, Value warpgroup,
                                 Value slot) {
  auto field = [&](WgmmaField which) {
    return memref::LoadOp::create(
               b, l, records,
               ValueRange{warpgroup, slot, indexConstant(b, l, which)})
        .getResult();
  };
  Type i64 = b.getI64Type();
  Value zero = arith::ConstantIntOp::create(b, l, i64, 0);
  auto isSet = [&](Value value) {
    return arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, value, zero)
        .getResult();
  };
  Value columns =
      arith::IndexCastUIOp::create(b, l, b.getIndexType(), field(kColumns));
  Value aKMajor = isSet(field(kAKMajor));
  Value bKMajor = isSet(field(kBKMajor));
  Value descriptorA = field(kDescriptorA);
  Value descriptorB = field(kDescriptorB);
  Value now =
      hashOperands(b, l, descriptorA, descriptorB, columns, aKMajor, bKMajor);
  Value recorded = field(kHash);
  Value differs =
      arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, now, recorded);
  scf::IfOp::create(b, l, differs, [&](OpBuilder &tb, Location tl) {
    Value at = indexConstant(tb, tl, 0);
    Value count = memref::LoadOp::create(tb, tl, changed, ValueRange{at});
    Value one = indexConstant(tb, tl, 1);
    memref::StoreOp::create(tb, tl, arith::AddIOp::create(tb, tl, count, one),
                            changed, ValueRange{at});
    scf::YieldOp::create(tb, tl);
  });
}

void WgmmaReadCheck::check(OpBuilder &b, Location l, bool all) {
  auto type = cast<MemRefType>(counters.getType());
  Value zero = indexConstant(b, l, 0);
  Value one = indexConstant(b, l, 1);
  Value warpgroups = indexConstant(b, l, type.getDimSize(0));
  scf::ForOp::create(
      b, l, zero, warpgroups, one, ValueRange{},
      [&](OpBuilder &gb, Location gl, Value warpgroup, ValueRange) {
        Value issued = counter(gb, gl, warpgroup, kWgmmasIssued);
        Value checked = counter(gb, gl, warpgroup, kWgmmasChecked);
        Value retired = counter(gb, gl, warpgroup, kWgmmaGroupsRetired);
        Value capacity = indexConstant(gb, gl, kWgmmaRecords);
        // The records in order of their groups: the retired ones first.
        auto loop = scf::ForOp::create(
            gb, gl, checked, issued, one, ValueRange{checked},
            [&](OpBuilder &rb, Location rl, Value record, ValueRange count) {
              Value slot = arith::RemUIOp::create(rb, rl, record, capacity);
              Value group = memref::LoadOp::create(
                  rb, rl, records,
                  ValueRange{warpgroup, slot,
                             indexConstant(rb, rl, kWgmmaGroup)});
              Value groupIndex = arith::IndexCastUIOp::create(
                  rb, rl, rb.getIndexType(), group);
              Value due =
                  arith::ConstantIntOp::create(rb, rl, rb.getI1Type(), true);
              if (!all)
                due = arith::CmpIOp::create(rb, rl, arith::CmpIPredicate::ult,
                                            groupIndex, retired);
              scf::IfOp::create(rb, rl, due, [&](OpBuilder &tb, Location tl) {
                checkRecord(tb, tl, warpgroup, slot);
                scf::YieldOp::create(tb, tl);
              });
              Value next = arith::AddIOp::create(rb, rl, record, one);
              Value counted =
                  arith::SelectOp::create(rb, rl, due, next, count.front());
              scf::YieldOp::create(rb, rl, counted);
            });
        setCounter(gb, gl, warpgroup, kWgmmasChecked, loop.getResult(0));
        scf::YieldOp::create(gb, gl);
      });
}

/// The declaration of C function `name` of `type` in `module`.
static LLVM::LLVMFuncOp declareFunction(ModuleOp module, StringRef name,
                                        LLVM::LLVMFunctionType type) {
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  return LLVM::LLVMFuncOp::create(b, module.getLoc(), name, type);
}

/// The name of the function `launch` is in, for messages.
static std::string enclosingFunctionName(gpu::LaunchOp launch) {
  if (auto parent = launch->getParentOfType<FunctionOpInterface>())
    return parent.getName().str();
  return "?";
}

void mlir::gs::buildAbortIfSet(OpBuilder &b, Location l, gpu::LaunchOp launch,
                               Value flag, StringRef what, StringRef symbol) {
  std::string message = "gs-emulate-gpu: in @" + enclosingFunctionName(launch) +
                        ", " + what.str() + "\n";
  auto module = launch->getParentOfType<ModuleOp>();
  MLIRContext *context = b.getContext();
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto pointer = LLVM::LLVMPointerType::get(context);
  LLVM::LLVMFuncOp write = declareFunction(
      module, "write", LLVM::LLVMFunctionType::get(i64, {i32, pointer, i64}));
  LLVM::LLVMFuncOp abort = declareFunction(
      module, "abort",
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context), {}));
  // Made apart, then inserted under a name of its own.
  OpBuilder detached(context);
  auto text = LLVM::GlobalOp::create(
      detached, l, LLVM::LLVMArrayType::get(b.getI8Type(), message.size()),
      /*isConstant=*/true, LLVM::Linkage::Internal, symbol,
      b.getStringAttr(message));
  SymbolTable(module).insert(text);

  Value zero = indexConstant(b, l, 0);
  Value count = memref::LoadOp::create(b, l, flag, ValueRange{zero});
  Value any =
      arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, count, zero);
  scf::IfOp::create(b, l, any, [&](OpBuilder &tb, Location tl) {
    Value stderrFd = arith::ConstantIntOp::create(tb, tl, i32, 2);
    Value address = LLVM::AddressOfOp::create(tb, tl, text);
    Value size = arith::ConstantIntOp::create(tb, tl, i64, message.size());
    LLVM::CallOp::create(tb, tl, write, ValueRange{stderrFd, address, size});
    LLVM::CallOp::create(tb, tl, abort, ValueRange{});
    scf::YieldOp::create(tb, tl);
  });
}

void WgmmaReadCheck::assertUnchanged(OpBuilder &b, Location l) {
  buildAbortIfSet(b, l, launch, changed,
                  "shared memory a wgmma.mma_async reads changed before "
                  "every warpgroup was past the wgmma.wait_group that "
                  "retires it and a barrier",
                  "gs_wgmma_read_changed");
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
