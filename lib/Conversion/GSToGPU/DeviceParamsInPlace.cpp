//===- DeviceParamsInPlace.cpp - Kernels on parameters in place -*- C++ -*-===//
//
// After bufferization, a GPU step reads a parameter by copying its memref
// global into a new buffer and writes one by copying a kernel's output
// buffer into the global: device-to-device copies, two or more for each
// parameter in every step (the gs-write-params-in-place of the CPU
// pipeline works on linalg ops, which are kernels here). This pass lets
// the kernels work on the globals instead, where the launches' bodies show
// that the result is the same:
//
// - a kernel writes the global itself where the buffer it wrote is only
//   copied there, and nothing between the launch and the copy touches the
//   global (and a result's out-parameter so);
// - a kernel reads the global itself where the copy it read is read only
//   (loaded, or copied to shared memory) before the global is next
//   written, or by the kernel that writes it if
//   that kernel reads each element at the indices where the same thread
//   stores it (gs.per_thread_outputs: no other thread stores it).
//
// Such a kernel loads and stores one buffer through two of its arguments,
// which the NVVM lowering leaves without noalias (train-step-ptxas.test
// checks that no kernel reads through the non-coherent cache).
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/GSToGPU/DeviceMemory.h"
#include "gs/Conversion/GSToGPU/KernelParts.h"
#include "gs/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::gs {
#define GEN_PASS_DEF_DEVICEPARAMSINPLACE
#include "gs/Conversion/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;

namespace {
/// How a kernel accesses one of its launch's buffers.
struct KernelAccess {
  SmallVector<memref::LoadOp> loads;
  SmallVector<memref::StoreOp> stores;
  /// Other uses, which only read it (a GEMM's asynchronous copies of a
  /// tile to shared memory, loads through a view).
  bool otherReads = false;
  /// Other uses, some of which may write it.
  bool other = false;

  bool onlyReads() const { return !other && stores.empty(); }
  bool onlyStores() const { return !other && !otherReads && loads.empty(); }
};

/// Whether `op` reshapes a buffer: a view of all of it, element for
/// element in row-major order.
bool isReshape(Operation *op) {
  return isa_and_present<memref::CollapseShapeOp, memref::ExpandShapeOp>(op);
}

/// Adds the uses of `value` inside `kernel` (a gpu.launch or gpu.func) to
/// `access`.
void addUses(Value value, Operation *kernel, KernelAccess &access) {
  bool otherUses = false;
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (!kernel->isProperAncestor(user))
      continue;
    if (auto load = dyn_cast<memref::LoadOp>(user))
      access.loads.push_back(load);
    else if (auto store = dyn_cast<memref::StoreOp>(user);
             store && store.getMemRef() == value)
      access.stores.push_back(store);
    else
      otherUses = true;
  }
  if (otherUses) {
    bool reads = gs::kernelOnlyReads(value, kernel);
    access.otherReads |= reads;
    access.other |= !reads;
  }
}

/// `value` with the reshapes that define it looked through.
Value throughReshapes(Value value) {
  while (isReshape(value.getDefiningOp()))
    value = value.getDefiningOp()->getOperand(0);
  return value;
}

/// The reshape that undoes `reshape`, built on `value` (of its result's
/// type) at `b`.
Value undoReshape(OpBuilder &b, Operation *reshape, Value value) {
  if (auto collapse = dyn_cast<memref::CollapseShapeOp>(reshape))
    return memref::ExpandShapeOp::create(b, reshape->getLoc(),
                                         collapse.getSrcType(), value,
                                         collapse.getReassociationIndices());
  auto expand = cast<memref::ExpandShapeOp>(reshape);
  return memref::CollapseShapeOp::create(b, reshape->getLoc(), value,
                                         expand.getReassociationIndices());
}

/// Memory that outlives a step's host code: a global (each
/// memref.get_global of it a value of its own) or a function argument (an
/// out-parameter).
struct Memory {
  Attribute global;
  Value argument;

  bool operator==(const Memory &other) const {
    return global == other.global && argument == other.argument;
  }
  bool operator!=(const Memory &other) const { return !(*this == other); }
};

/// The global or argument that `value` is, or a view of; none otherwise.
Memory memoryOf(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto get = dyn_cast<memref::GetGlobalOp>(def))
      return {get.getNameAttr(), Value()};
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      return {};
    value = view.getViewSource();
  }
  return {Attribute(), value};
}

/// The launches and copies of one block of host code, rewritten one copy
/// at a time.
class HostBlock {
public:
  HostBlock(Block &block, SymbolTableCollection &symbols)
      : block(block), symbols(symbols) {}

  /// Makes the kernel that computes the buffer `copy` copies into a global
  /// (or an out-parameter) compute it there; fails where it cannot.
  LogicalResult forwardWrite(Operation *copy);
  /// Makes the readers of the buffer `copy` copies a global into read the
  /// global; fails where they cannot.
  LogicalResult elideRead(Operation *copy);

private:
  /// How the kernel that `launch` runs accesses its operand `buffer`.
  KernelAccess accessOf(Operation *launch, Value buffer);
  /// Whether `op`, or an op in it, uses `memory` or a view of it, other
  /// than to make a view.
  bool usesMemory(Operation *op, Memory memory);
  /// Whether `op` may write `memory`.
  bool mayWrite(Operation *op, Memory memory);
  /// Whether the launch `writer`, whose kernel stores into the global
  /// `global`, may read `copies` (a copy of that global and reshapes of it)
  /// from the global: it accesses all of them and the global's reshapes it
  /// has, of one contiguous type, in one block at the same indices, loads
  /// first, a thread only its own elements.
  bool readsInPlace(Operation *writer, ArrayRef<Value> copies, Memory global);
  /// The kernel operands of a launch (gpu.launch captures its buffers: all
  /// operands of ops inside it).
  SmallVector<Value> buffersOf(Operation *launch);
  /// Whether the kernel of `launch` is marked gs.per_thread_outputs.
  bool isPerThread(Operation *launch);
  /// The gpu.func that `launch` runs, or null.
  gpu::GPUFuncOp kernelOf(gpu::LaunchFuncOp launch) {
    return symbols.lookupNearestSymbolFrom<gpu::GPUFuncOp>(launch,
                                                           launch.getKernel());
  }

  Block &block;
  SymbolTableCollection &symbols;
};

KernelAccess HostBlock::accessOf(Operation *launch, Value buffer) {
  KernelAccess access;
  if (isa<gpu::LaunchOp>(launch)) {
    addUses(buffer, launch, access);
    return access;
  }
  auto outlined = cast<gpu::LaunchFuncOp>(launch);
  gpu::GPUFuncOp kernel = kernelOf(outlined);
  if (!kernel || kernel.isExternal()) {
    access.other = true;
    return access;
  }
  for (auto [index, operand] : llvm::enumerate(outlined.getKernelOperands()))
    if (operand == buffer)
      addUses(kernel.getArgument(index), kernel, access);
  return access;
}

SmallVector<Value> HostBlock::buffersOf(Operation *launch) {
  if (auto outlined = dyn_cast<gpu::LaunchFuncOp>(launch))
    return llvm::to_vector(outlined.getKernelOperands());
  SetVector<Value> captured;
  getUsedValuesDefinedAbove(launch->getRegion(0), captured);
  return llvm::filter_to_vector(
      captured, [](Value value) { return isa<MemRefType>(value.getType()); });
}

bool HostBlock::isPerThread(Operation *launch) {
  if (isa<gpu::LaunchOp>(launch))
    return launch->hasAttr(gs::kPerThreadOutputsAttrName);
  gpu::GPUFuncOp kernel = kernelOf(cast<gpu::LaunchFuncOp>(launch));
  return kernel && kernel->hasAttr(gs::kPerThreadOutputsAttrName);
}

bool HostBlock::usesMemory(Operation *op, Memory memory) {
  // A view accesses nothing; its users use the global.
  if (isa<ViewLikeOpInterface>(op) || isReshape(op))
    return false;
  return op
      ->walk([&](Operation *inner) {
        return llvm::any_of(inner->getOperands(),
                            [&](Value v) { return memoryOf(v) == memory; })
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

bool HostBlock::mayWrite(Operation *op, Memory memory) {
  if (!usesMemory(op, memory))
    return false;
  if (std::optional<std::pair<Value, Value>> ends = gs::getBufferCopy(op))
    return memoryOf(ends->second) == memory;
  if (!isa<gpu::LaunchOp, gpu::LaunchFuncOp>(op))
    return true;
  return llvm::any_of(buffersOf(op), [&](Value buffer) {
    return memoryOf(buffer) == memory && !accessOf(op, buffer).onlyReads();
  });
}

bool HostBlock::readsInPlace(Operation *writer, ArrayRef<Value> copies,
                             Memory global) {
  if (!isa<gpu::LaunchOp, gpu::LaunchFuncOp>(writer) || !isPerThread(writer))
    return false;
  SmallVector<Operation *> loads, stores;
  Type type;
  for (Value buffer : buffersOf(writer)) {
    bool copied = llvm::is_contained(copies, buffer);
    if (!copied && memoryOf(buffer) != global)
      continue;
    // The same element at the same indices: one contiguous type, each
    // buffer the whole global or copy, reshaped.
    auto memref = cast<MemRefType>(buffer.getType());
    if ((type && memref != type) || !memref.getLayout().isIdentity() ||
        (!copied &&
         !throughReshapes(buffer).getDefiningOp<memref::GetGlobalOp>()))
      return false;
    type = memref;
    KernelAccess access = accessOf(writer, buffer);
    if (access.other || access.otherReads || (copied && !access.stores.empty()))
      return false;
    loads.append(access.loads.begin(), access.loads.end());
    stores.append(access.stores.begin(), access.stores.end());
  }
  if (stores.empty())
    return false;
  auto indicesOf = [](Operation *op) -> ValueRange {
    if (auto load = dyn_cast<memref::LoadOp>(op))
      return load.getIndices();
    return cast<memref::StoreOp>(op).getIndices();
  };
  ValueRange indices = indicesOf(stores.front());
  Block *body = stores.front()->getBlock();
  for (Operation *op : llvm::concat<Operation *>(loads, stores))
    if (op->getBlock() != body || !llvm::equal(indicesOf(op), indices))
      return false;
  return llvm::all_of(loads, [&](Operation *load) {
    return llvm::all_of(
        stores, [&](Operation *store) { return load->isBeforeInBlock(store); });
  });
}

LogicalResult HostBlock::forwardWrite(Operation *copy) {
  auto [source, target] = *gs::getBufferCopy(copy);
  // A global, or an argument of the function (an out-parameter).
  auto get = target.getDefiningOp<memref::GetGlobalOp>();
  auto argument = dyn_cast<BlockArgument>(target);
  if (argument && argument.getOwner() != &block)
    argument = nullptr;
  if ((!get && !argument) || source.getType() != target.getType())
    return failure();
  // The copied buffer: an allocation, maybe reshaped, each reshape used
  // once.
  SmallVector<Operation *> reshapes;
  Value buffer = source;
  while (isReshape(buffer.getDefiningOp())) {
    if (!buffer.hasOneUse())
      return failure();
    reshapes.push_back(buffer.getDefiningOp());
    buffer = reshapes.back()->getOperand(0);
  }
  auto alloc = buffer.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != &block)
    return failure();
  // One launch writes it; the copy (or first reshape) is its other use.
  Operation *copied = reshapes.empty() ? copy : reshapes.back();
  Operation *writer = nullptr;
  for (Operation *user : buffer.getUsers()) {
    if (user == copied)
      continue;
    Operation *ancestor = block.findAncestorOpInBlock(*user);
    if (!ancestor || (writer && writer != ancestor) ||
        !isa<gpu::LaunchOp, gpu::LaunchFuncOp>(ancestor))
      return failure();
    writer = ancestor;
  }
  Memory memory = memoryOf(target);
  if (!writer || !writer->isBeforeInBlock(copy) ||
      !accessOf(writer, buffer).onlyStores() || usesMemory(writer, memory))
    return failure();
  for (Operation *op = writer->getNextNode(); op != copy;
       op = op->getNextNode())
    if (usesMemory(op, memory))
      return failure();
  // The target, reshaped back to the buffer's type.
  OpBuilder b(writer);
  Value destination = argument
                          ? Value(argument)
                          : Value(memref::GetGlobalOp::create(
                                b, get.getLoc(), get.getType(), get.getName()));
  for (Operation *reshape : reshapes)
    destination = undoReshape(b, reshape, destination);
  buffer.replaceUsesWithIf(destination, [&](OpOperand &use) {
    return writer->isAncestor(use.getOwner());
  });
  copy->erase();
  for (Operation *reshape : reshapes)
    reshape->erase();
  alloc->erase();
  if (get && get->use_empty())
    get->erase();
  return success();
}

LogicalResult HostBlock::elideRead(Operation *copy) {
  auto [source, target] = *gs::getBufferCopy(copy);
  auto get = source.getDefiningOp<memref::GetGlobalOp>();
  auto alloc = target.getDefiningOp<memref::AllocOp>();
  if (!get || !alloc || alloc->getBlock() != &block ||
      source.getType() != target.getType())
    return failure();
  Memory global = memoryOf(source);
  Operation *firstWrite = nullptr;
  for (Operation *op = copy->getNextNode(); op && !firstWrite;
       op = op->getNextNode())
    if (mayWrite(op, global))
      firstWrite = op;
  // The copy and its reshapes; every other use must read them.
  SmallVector<Value> copies = {target};
  for (size_t i = 0; i < copies.size(); ++i)
    for (Operation *user : copies[i].getUsers())
      if (isReshape(user) && user->getBlock() == &block)
        copies.push_back(user->getResult(0));
  for (Value handle : copies) {
    for (Operation *user : handle.getUsers()) {
      if (user == copy || (isReshape(user) && user->getBlock() == &block))
        continue;
      Operation *reader = block.findAncestorOpInBlock(*user);
      if (!reader || !copy->isBeforeInBlock(reader))
        return failure();
      if (std::optional<std::pair<Value, Value>> ends =
              gs::getBufferCopy(reader)) {
        if (ends->first != handle || ends->second == handle)
          return failure();
      } else if (!isa<gpu::LaunchOp, gpu::LaunchFuncOp>(reader) ||
                 !accessOf(reader, handle).onlyReads()) {
        return failure();
      }
      if (firstWrite && !reader->isBeforeInBlock(firstWrite) &&
          (reader != firstWrite || !readsInPlace(reader, copies, global)))
        return failure();
    }
  }
  target.replaceAllUsesExcept(source, copy);
  copy->erase();
  alloc->erase();
  return success();
}

struct DeviceParamsInPlacePass
    : gs::impl::DeviceParamsInPlaceBase<DeviceParamsInPlacePass> {
  void runOnOperation() override {
    SymbolTableCollection symbols;
    getOperation().walk([&](func::FuncOp function) {
      if (function.isExternal())
        return;
      for (Block &block : function.getBody()) {
        HostBlock host(block, symbols);
        // The writes first: a kernel then writes the global it read a copy
        // of, and the copy can go where the kernel reads it in place.
        SmallVector<Operation *> copies;
        for (Operation &op : block)
          if (gs::getBufferCopy(&op))
            copies.push_back(&op);
        SmallVector<Operation *> left;
        for (Operation *copy : copies)
          if (failed(host.forwardWrite(copy)))
            left.push_back(copy);
        for (Operation *copy : left)
          (void)host.elideRead(copy);
      }
    });
  }
};
} // namespace
