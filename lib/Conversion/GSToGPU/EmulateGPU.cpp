//===- EmulateGPU.cpp - Run gpu.launch kernels on the CPU ------*- C++ -*-===//
//
// The CPU execution of a GPU kernel, for testing the kernels on machines
// without a GPU. Thread blocks run one after another. Inside a block, the
// warp-level operations (mma.sync, ldmatrix, shuffles) and barriers split
// the kernel into phases; each phase between them becomes a loop over the
// block's threads, a value a thread carries from one phase to another goes
// through a per-thread buffer, and each warp-level operation becomes a loop
// over the 32 lanes that gathers their registers with the fragment layouts
// (FragmentLayout.h) and computes what the PTX ISA defines.
// wgmma.mma_async runs likewise over the 128 threads of each warpgroup,
// reading its operands from shared memory through its matrix descriptors
// (WgmmaDescriptor.h) as the ISA's canonical layouts place them; its fences
// are no-ops here. cp.async completes as late as its waits let it, and what
// a wgmma reads is checked until it is retired (EmulateAsyncOps.h); with
// check-races, a shadow of shared memory finds the barriers a kernel lacks
// (EmulateSharedRaces.h).
//
// Shared memory is one buffer, as on the GPU: the launch's workgroup
// attributions lie in it at 16-byte aligned addresses from 16 (not at a
// 1024-byte boundary, so that a kernel that needs one must align itself),
// then its dynamic shared memory, and a
// memref.extract_aligned_pointer_as_index of one gives its address.
//
// The warp-level operations and barriers must be reached by every thread:
// they may be nested in scf.for loops with uniform bounds and in scf.ifs
// marked gs.block_uniform (whose condition, alike in every thread, is
// taken from thread 0), not in other control flow. Memory barriers
// (nvvm.memory.barrier) are no-ops: the blocks run one after another.
// Values alike in every thread of a block (views at the block's offsets)
// are computed once per block, before its phases.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/GSToGPU/EmulateAsyncOps.h"
#include "gs/Conversion/GSToGPU/EmulateSharedRaces.h"
#include "gs/Conversion/GSToGPU/FragmentLayout.h"
#include "gs/Conversion/GSToGPU/KernelParts.h"
#include "gs/Conversion/GSToGPU/LastBlock.h"
#include "gs/Conversion/GSToGPU/WgmmaDescriptor.h"
#include "gs/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::gs {
#define GEN_PASS_DEF_EMULATEGPU
#include "gs/Conversion/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::tensorcore;

namespace {
bool isWarpLevel(Operation *op) {
  return isa<gpu::BarrierOp, gpu::ShuffleOp, nvgpu::LdMatrixOp,
             nvgpu::MmaSyncOp, NVVM::WgmmaMmaAsyncOp>(op);
}

/// The fields of a value that crosses phases as an LLVM struct of one
/// scalar type (wgmma's accumulator): their number and type.
std::optional<std::pair<int64_t, Type>> structFields(Type type) {
  auto structType = dyn_cast<LLVM::LLVMStructType>(type);
  if (!structType || structType.getBody().empty())
    return std::nullopt;
  Type element = structType.getBody().front();
  if (!element.isIntOrFloat() ||
      llvm::any_of(structType.getBody(),
                   [&](Type field) { return field != element; }))
    return std::nullopt;
  return std::make_pair(static_cast<int64_t>(structType.getBody().size()),
                        element);
}

/// Thread `thread`'s value of `type` in a per-thread buffer.
Value loadThreadValue(OpBuilder &b, Location l, Value buffer, Type type,
                      Value thread) {
  std::optional<std::pair<int64_t, Type>> fields = structFields(type);
  if (!fields)
    return memref::LoadOp::create(b, l, buffer, ValueRange{thread});
  Value result = LLVM::PoisonOp::create(b, l, type);
  for (int64_t i = 0; i < fields->first; ++i) {
    Value field = arith::ConstantIndexOp::create(b, l, i);
    Value element =
        memref::LoadOp::create(b, l, buffer, ValueRange{thread, field});
    result = LLVM::InsertValueOp::create(b, l, result, element,
                                         ArrayRef<int64_t>{i});
  }
  return result;
}

void storeThreadValue(OpBuilder &b, Location l, Value value, Value buffer,
                      Value thread) {
  std::optional<std::pair<int64_t, Type>> fields =
      structFields(value.getType());
  if (!fields) {
    memref::StoreOp::create(b, l, value, buffer, ValueRange{thread});
    return;
  }
  for (int64_t i = 0; i < fields->first; ++i) {
    Value element =
        LLVM::ExtractValueOp::create(b, l, value, ArrayRef<int64_t>{i});
    Value field = arith::ConstantIndexOp::create(b, l, i);
    memref::StoreOp::create(b, l, element, buffer, ValueRange{thread, field});
  }
}

/// An scf.if without results whose condition is the same in every thread
/// of a block (marked so by the pass that built it).
bool isBlockUniformIf(Operation *op) {
  auto ifOp = dyn_cast<scf::IfOp>(op);
  return ifOp && ifOp->hasAttr(gs::kBlockUniformAttrName) &&
         ifOp.getNumResults() == 0;
}

bool containsWarpLevel(Operation *op) {
  return op
      ->walk([](Operation *nested) {
        return isWarpLevel(nested) ? WalkResult::interrupt()
                                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Whether `op` may be computed ahead of where it is, once for all the
/// threads whose operands are alike: no regions, no memory effects,
/// speculatable (it may leave a condition that guarded it), not a
/// terminator nor a gpu or nvgpu op (the ids, the warp-level ops).
bool isHoistable(Operation *op) {
  return op->getNumRegions() == 0 && isPure(op) &&
         !op->hasTrait<OpTrait::IsTerminator>() &&
         !isa<gpu::GPUDialect, nvgpu::NVGPUDialect>(op->getDialect());
}

class LaunchEmulator {
public:
  LaunchEmulator(gpu::LaunchOp launch, bool deferAsync, bool checkRaces)
      : launch(launch), b(launch), deferAsync(deferAsync),
        checkRaces(checkRaces) {}

  LogicalResult run();

private:
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc(), v); }
  Location loc() { return launch.getLoc(); }

  LogicalResult checkStructure();
  void hoistUniformValues();
  /// Moves the values alike in a block's threads (hoistable ops of the
  /// block's ids and of values from before the launch: a grouped kernel's
  /// views of its group's channels) into blockUniformOps, computed once per
  /// block before its phases.
  void hoistBlockUniformValues();
  LogicalResult demoteLoopCarriedValues(scf::ForOp loop);
  /// Demotes the loop-carried values of the loops with warp-level
  /// operations in `block` and in its block-uniform scf.ifs.
  LogicalResult demoteLoopsIn(Block &block);
  LogicalResult emulateBlock(Block *block);
  /// Emulates the block-uniform `ifOp` as taken where thread 0 takes it;
  /// `condition` is its condition before its phase was flushed.
  LogicalResult emulateUniformIf(scf::IfOp ifOp, Value condition);
  LogicalResult flushPhase(ArrayRef<Operation *> phase);
  /// Emulates `op` and erases it; returns the op that followed it.
  FailureOr<Operation *> emulateWarpLevel(Operation *op);
  void emulateShuffle(gpu::ShuffleOp op);
  void emulateLdMatrix(nvgpu::LdMatrixOp op);
  void emulateMma(nvgpu::MmaSyncOp op);
  void emulateWgmma(NVVM::WgmmaMmaAsyncOp op);
  /// An f32 rows x cols matrix on the stack of the launch's function.
  Value scratchMatrix(int64_t rows, int64_t cols, Location l);
  /// D = A B (+ D where `accumulate`) for A rows x depth, B depth x cols,
  /// D rows x cols in scratch matrices: one f32 fma per product, in k
  /// order, as the Tensor Core instructions' emulations compute.
  void buildProduct(Value a, Value bMatrix, Value d, int64_t rows, int64_t cols,
                    int64_t depth, bool accumulate, Location l);
  /// Lays the workgroup attributions and then the dynamic shared memory out
  /// in one buffer, and gives each memref.extract_aligned_pointer_as_index
  /// of one its address.
  void layOutSharedMemory();
  void rehomeSharedView(Value shared, Value host, Value address);

  /// A buffer of one `type` per thread, on the stack of the launch's
  /// function.
  FailureOr<Value> threadBuffer(Type type, Operation *definer);
  /// `value` as seen by thread `thread`.
  Value valueOfThread(Value value, Value thread);
  /// Stores each thread's result of a warp-level op; its other users load
  /// it back.
  Value resultBuffer(Value result);
  /// Loads `value` from its buffer before each user that is not
  /// warp-level, except users inside `inside`, which still see `value`
  /// itself; the warp-level users read the buffer when emulated.
  void loadBeforeUsers(Value value, Value buffer,
                       Operation *inside = nullptr);
  /// Redirects the warp-level users of `value` to a placeholder that
  /// stands for `buffer`.
  void redirectWarpLevelUsers(Value value, Value buffer);
  /// The loops over the warps and the lanes of each.
  void forEachLane(function_ref<void(Value warp, Value lane, Value thread)>
                       body);

  gpu::LaunchOp launch;
  OpBuilder b;
  bool deferAsync;
  bool checkRaces;
  int64_t numThreads = 0;
  int64_t grid[3] = {1, 1, 1};
  DenseMap<Value, Value> buffers;
  SmallVector<Operation *> placeholders;
  Block blockUniformOps;
  /// Shared memory: its bytes, and each attribution's view of them.
  Value sharedMemory;
  SmallVector<Value> attributionViews;
  /// The launch's dynamic shared memory, after the attributions.
  int64_t dynamicSharedBytes = 0;
  /// Whether the launch has wgmmas, and then shared memory as f16.
  bool hasWgmma = false;
  Value halves;
  /// Deferred, with wgmmas: the check of what they read.
  std::optional<WgmmaReadCheck> readCheck;
  /// With check-races: the shadow of shared memory.
  std::optional<SharedRaceCheck> raceCheck;
};
} // namespace

LogicalResult LaunchEmulator::checkStructure() {
  auto constant = [](Value v) { return getConstantIntValue(v); };
  gpu::KernelDim3 gridSize = launch.getGridSizeOperandValues();
  gpu::KernelDim3 blockSize = launch.getBlockSizeOperandValues();
  std::optional<int64_t> sizes[] = {
      constant(gridSize.x),  constant(gridSize.y),  constant(gridSize.z),
      constant(blockSize.x), constant(blockSize.y), constant(blockSize.z)};
  if (Value dynamic = launch.getDynamicSharedMemorySize()) {
    std::optional<int64_t> bytes = constant(dynamic);
    if (!bytes || *bytes < 0)
      return launch.emitOpError("is emulated only with a constant dynamic "
                                "shared memory size");
    dynamicSharedBytes = *bytes;
  }
  if (llvm::any_of(sizes, [](auto s) { return !s; }))
    return launch.emitOpError("is emulated only with constant grid and block "
                              "sizes");
  if (*sizes[4] != 1 || *sizes[5] != 1)
    return launch.emitOpError("is emulated only with one-dimensional thread "
                              "blocks");
  if (launch.hasClusterSize() || launch.getAsyncToken() ||
      !launch.getPrivateAttributions().empty())
    return launch.emitOpError("is emulated only without clusters, async "
                              "tokens and private attributions");
  for (int i = 0; i < 3; ++i)
    grid[i] = *sizes[i];
  numThreads = *sizes[3];
  // A barrier is one of any number of threads; the other warp-level
  // operations take whole warps.
  bool lanesTogether = launch.getBody()
                           .walk([](Operation *op) {
                             return isWarpLevel(op) && !isa<gpu::BarrierOp>(op)
                                        ? WalkResult::interrupt()
                                        : WalkResult::advance();
                           })
                           .wasInterrupted();
  if (lanesTogether && numThreads % kLanesPerWarp != 0)
    return launch.emitOpError("uses warp-level operations with ")
           << numThreads << " threads per block, not whole warps";
  hasWgmma =
      launch.getBody()
          .walk([](NVVM::WgmmaMmaAsyncOp) { return WalkResult::interrupt(); })
          .wasInterrupted();
  if (hasWgmma && numThreads % kThreadsPerWarpgroup != 0)
    return launch.emitOpError("uses wgmma with ")
           << numThreads << " threads per block, not whole warpgroups";

  WalkResult result = launch.getBody().walk([&](Operation *op) {
    // What the emulation knows of the gpu and nvgpu dialects.
    StringRef dialect = op->getDialect() ? op->getDialect()->getNamespace()
                                         : StringRef();
    if ((dialect == "gpu" &&
         !isa<gpu::ThreadIdOp, gpu::BlockIdOp, gpu::BlockDimOp, gpu::GridDimOp,
              gpu::LaneIdOp, gpu::BarrierOp, gpu::ShuffleOp,
              gpu::DynamicSharedMemoryOp, gpu::TerminatorOp>(op)) ||
        (dialect == "nvgpu" &&
         !isa<nvgpu::LdMatrixOp, nvgpu::MmaSyncOp, nvgpu::DeviceAsyncCopyOp,
              nvgpu::DeviceAsyncCreateGroupOp, nvgpu::DeviceAsyncWaitOp>(op)) ||
        (dialect == "nvvm" &&
         !isa<NVVM::WgmmaMmaAsyncOp, NVVM::WgmmaFenceAlignedOp,
              NVVM::WgmmaGroupSyncAlignedOp, NVVM::WgmmaWaitGroupSyncOp,
              NVVM::FenceProxyOp, NVVM::MembarOp>(op))) {
      op->emitOpError("has no CPU emulation");
      return WalkResult::interrupt();
    }
    if (!isWarpLevel(op))
      return WalkResult::advance();
    for (Operation *parent = op->getParentOp(); parent != launch;
         parent = parent->getParentOp()) {
      if (!isa<scf::ForOp>(parent) && !isBlockUniformIf(parent)) {
        op->emitOpError("is emulated only where every thread reaches it: "
                        "nested in scf.for loops and block-uniform scf.ifs, "
                        "not in '")
            << parent->getName() << "'";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// Values every thread computes alike (constants, views of the kernel's
/// arguments: hoistable ops of values from before the launch) are computed
/// once before it, where every phase sees them.
void LaunchEmulator::hoistUniformValues() {
  SmallVector<Operation *> candidates;
  launch.getBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isHoistable(op))
      candidates.push_back(op);
  });
  Region &body = launch.getBody();
  for (Operation *op : candidates) {
    bool uniform = llvm::none_of(op->getOperands(), [&](Value operand) {
      return body.isAncestor(operand.getParentRegion());
    });
    if (uniform)
      op->moveBefore(launch);
  }
}

void LaunchEmulator::hoistBlockUniformValues() {
  Region &body = launch.getBody();
  gpu::KernelDim3 ids = launch.getBlockIds();
  DenseSet<Value> blockUniform = {ids.x, ids.y, ids.z};
  SmallVector<Operation *> hoisted;
  launch.getBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    bool candidate = isa<gpu::BlockIdOp>(op) || isHoistable(op);
    if (!candidate || !llvm::all_of(op->getOperands(), [&](Value operand) {
          return blockUniform.contains(operand) ||
                 !body.isAncestor(operand.getParentRegion());
        }))
      return;
    blockUniform.insert(op->result_begin(), op->result_end());
    hoisted.push_back(op);
  });
  for (Operation *op : hoisted) {
    op->remove();
    blockUniformOps.push_back(op);
  }
}

FailureOr<Value> LaunchEmulator::threadBuffer(Type type, Operation *definer) {
  OpBuilder ab(launch);
  if (std::optional<std::pair<int64_t, Type>> fields = structFields(type)) {
    Value buffer = memref::AllocaOp::create(
        ab, loc(),
        MemRefType::get({numThreads, fields->first}, fields->second));
    return buffer;
  }
  if (!type.isIntOrIndexOrFloat() && !isa<VectorType>(type))
    return definer->emitOpError("is emulated only if the values that cross a "
                                "barrier or warp-level operation are scalars, "
                                "vectors or structs of one scalar type, not ")
           << type;
  Value buffer = memref::AllocaOp::create(
      ab, loc(), MemRefType::get({numThreads}, type));
  return buffer;
}

Value LaunchEmulator::valueOfThread(Value value, Value thread) {
  auto it = buffers.find(value);
  if (it == buffers.end())
    return value; // uniform
  return loadThreadValue(b, loc(), it->second, value.getType(), thread);
}

void LaunchEmulator::redirectWarpLevelUsers(Value value, Value buffer) {
  Value placeholder;
  for (OpOperand &use : llvm::make_early_inc_range(value.getUses())) {
    if (!isWarpLevel(use.getOwner()))
      continue;
    if (!placeholder) {
      OpBuilder pb(launch);
      auto cast = UnrealizedConversionCastOp::create(
          pb, loc(), value.getType(), ValueRange{});
      placeholders.push_back(cast);
      placeholder = cast.getResult(0);
      buffers[placeholder] = buffer;
    }
    use.set(placeholder);
  }
}

void LaunchEmulator::loadBeforeUsers(Value value, Value buffer,
                                     Operation *inside) {
  redirectWarpLevelUsers(value, buffer);
  for (OpOperand &use : llvm::make_early_inc_range(value.getUses())) {
    Operation *user = use.getOwner();
    if (inside && inside->isProperAncestor(user))
      continue;
    OpBuilder ub(user);
    Value thread = gpu::ThreadIdOp::create(ub, user->getLoc(),
                                           gpu::Dimension::x);
    Value loaded =
        loadThreadValue(ub, user->getLoc(), buffer, value.getType(), thread);
    use.set(loaded);
  }
}

Value LaunchEmulator::resultBuffer(Value result) {
  // The types of warp-level results are scalars and vectors.
  Value buffer = *threadBuffer(result.getType(), result.getDefiningOp());
  buffers[result] = buffer;
  return buffer;
}

/// A loop-carried value of a loop with warp-level operations lives in a
/// per-thread buffer instead, so that the loop body can be split.
LogicalResult LaunchEmulator::demoteLoopCarriedValues(scf::ForOp loop) {
  for (Operation &op : *loop.getBody())
    if (auto inner = dyn_cast<scf::ForOp>(op))
      if (containsWarpLevel(inner) && failed(demoteLoopCarriedValues(inner)))
        return failure();
  if (loop.getNumRegionIterArgs() == 0)
    return success();
  Location l = loop.getLoc();
  SmallVector<Value> slots;
  for (Value init : loop.getInitArgs()) {
    FailureOr<Value> slot = threadBuffer(init.getType(), loop);
    if (failed(slot))
      return failure();
    slots.push_back(*slot);
  }
  OpBuilder lb(loop);
  Value thread = gpu::ThreadIdOp::create(lb, l, gpu::Dimension::x);
  for (auto [init, slot] : llvm::zip_equal(loop.getInitArgs(), slots))
    storeThreadValue(lb, l, init, slot, thread);
  auto demoted = scf::ForOp::create(lb, l, loop.getLowerBound(),
                                    loop.getUpperBound(), loop.getStep());
  Block *body = demoted.getBody();
  OpBuilder bb = OpBuilder::atBlockBegin(body);
  Value bodyThread = gpu::ThreadIdOp::create(bb, l, gpu::Dimension::x);
  SmallVector<Value> carried;
  for (auto [slot, init] : llvm::zip_equal(slots, loop.getInitArgs()))
    carried.push_back(loadThreadValue(bb, l, slot, init.getType(), bodyThread));
  Block *old = loop.getBody();
  loop.getInductionVar().replaceAllUsesWith(demoted.getInductionVar());
  for (auto [arg, value] : llvm::zip_equal(loop.getRegionIterArgs(), carried))
    arg.replaceAllUsesWith(value);
  auto yield = cast<scf::YieldOp>(old->getTerminator());
  OpBuilder yb(yield);
  Value yieldThread = gpu::ThreadIdOp::create(yb, l, gpu::Dimension::x);
  for (auto [value, slot] : llvm::zip_equal(yield.getOperands(), slots))
    storeThreadValue(yb, l, value, slot, yieldThread);
  yield.erase();
  body->getOperations().splice(std::prev(body->end()), old->getOperations());
  OpBuilder ab(loop);
  ab.setInsertionPointAfter(loop);
  Value afterThread = gpu::ThreadIdOp::create(ab, l, gpu::Dimension::x);
  for (auto [result, slot] : llvm::zip_equal(loop.getResults(), slots))
    result.replaceAllUsesWith(
        loadThreadValue(ab, l, slot, result.getType(), afterThread));
  loop.erase();
  return success();
}

LogicalResult LaunchEmulator::demoteLoopsIn(Block &block) {
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      if (containsWarpLevel(loop) && failed(demoteLoopCarriedValues(loop)))
        return failure();
    } else if (isBlockUniformIf(&op)) {
      if (failed(demoteLoopsIn(*cast<scf::IfOp>(op).thenBlock())))
        return failure();
    }
  }
  return success();
}

/// Wraps `phase` (consecutive ops of one block) in a loop over the threads.
LogicalResult LaunchEmulator::flushPhase(ArrayRef<Operation *> phase) {
  if (phase.empty())
    return success();
  b.setInsertionPoint(phase.front());
  Location l = phase.front()->getLoc();
  Value lower = index(0);
  Value upper = index(numThreads);
  Value step = index(1);
  auto loop = scf::ForOp::create(b, l, lower, upper, step);
  Block *body = loop.getBody();
  for (Operation *op : phase)
    op->moveBefore(body->getTerminator());
  Value thread = loop.getInductionVar();

  // A thread id used after the phase is read again there.
  for (Operation *op : phase)
    if (isa<gpu::ThreadIdOp, gpu::LaneIdOp>(op))
      for (OpOperand &use : llvm::make_early_inc_range(op->getUses())) {
        if (loop->isProperAncestor(use.getOwner()))
          continue;
        OpBuilder ub(use.getOwner());
        use.set(ub.clone(*op)->getResult(0));
      }

  // Values used after the phase go through a per-thread buffer.
  for (Operation *op : phase)
    for (Value result : op->getResults()) {
      bool escapes = llvm::any_of(result.getUsers(), [&](Operation *user) {
        return !loop->isProperAncestor(user);
      });
      if (!escapes)
        continue;
      FailureOr<Value> buffer = threadBuffer(result.getType(), op);
      if (failed(buffer))
        return failure();
      OpBuilder sb(op);
      sb.setInsertionPointAfter(op);
      storeThreadValue(sb, op->getLoc(), result, *buffer, thread);
      buffers[result] = *buffer;
      loadBeforeUsers(result, *buffer, loop);
    }

  // Each thread id of the phase is the loop's.
  SmallVector<Operation *> ids;
  loop.walk([&](Operation *op) {
    if (isa<gpu::ThreadIdOp, gpu::LaneIdOp>(op))
      ids.push_back(op);
  });
  for (Operation *op : ids) {
    OpBuilder ib(op);
    Value replacement = thread;
    if (auto id = dyn_cast<gpu::ThreadIdOp>(op)) {
      if (id.getDimension() != gpu::Dimension::x)
        replacement = arith::ConstantIndexOp::create(ib, op->getLoc(), 0);
    } else {
      Value lanes = arith::ConstantIndexOp::create(ib, op->getLoc(),
                                                   kLanesPerWarp);
      replacement = arith::RemUIOp::create(ib, op->getLoc(), thread, lanes);
    }
    op->getResult(0).replaceAllUsesWith(replacement);
    op->erase();
  }
  return success();
}

LogicalResult LaunchEmulator::emulateBlock(Block *block) {
  SmallVector<Operation *> phase;
  Operation *cursor = &block->front();
  while (cursor != block->getTerminator()) {
    Operation *next = cursor->getNextNode();
    if (!isWarpLevel(cursor) && !containsWarpLevel(cursor)) {
      phase.push_back(cursor);
      cursor = next;
      continue;
    }
    // Before the phase is flushed: its condition may get a buffer then.
    Value condition = isBlockUniformIf(cursor)
                          ? cast<scf::IfOp>(cursor).getCondition()
                          : nullptr;
    if (failed(flushPhase(phase)))
      return failure();
    phase.clear();
    if (condition) {
      if (failed(emulateUniformIf(cast<scf::IfOp>(cursor), condition)))
        return failure();
      cursor = next;
      continue;
    }
    if (auto loop = dyn_cast<scf::ForOp>(cursor)) {
      for (Value bound :
           {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()})
        if (launch.getBody().isAncestor(bound.getParentRegion()) &&
            !isa<BlockArgument>(bound))
          return loop.emitOpError("is emulated only with bounds uniform over "
                                  "the thread block");
      if (failed(emulateBlock(loop.getBody())))
        return failure();
      cursor = next;
      continue;
    }
    // The loads of its results that emulation adds before its users come
    // next, in the following phase.
    FailureOr<Operation *> after = emulateWarpLevel(cursor);
    if (failed(after))
      return failure();
    cursor = *after;
  }
  return flushPhase(phase);
}

LogicalResult LaunchEmulator::emulateUniformIf(scf::IfOp ifOp,
                                               Value condition) {
  b.setInsertionPoint(ifOp);
  Value threadZeros = valueOfThread(condition, index(0));
  // The load that flushing the phase put before the if, at a thread id
  // outside any phase, is replaced.
  Operation *perThread = ifOp.getCondition().getDefiningOp();
  ifOp.getConditionMutable().assign(threadZeros);
  if (perThread && perThread != threadZeros.getDefiningOp() &&
      isa<memref::LoadOp>(perThread) && perThread->use_empty()) {
    SmallVector<Operation *> ids;
    for (Value operand : perThread->getOperands())
      if (auto id = operand.getDefiningOp<gpu::ThreadIdOp>())
        ids.push_back(id);
    perThread->erase();
    for (Operation *id : ids)
      if (id->use_empty())
        id->erase();
  }
  return emulateBlock(ifOp.thenBlock());
}

void LaunchEmulator::forEachLane(
    function_ref<void(Value warp, Value lane, Value thread)> body) {
  Value zero = index(0);
  Value one = index(1);
  Value warps = index(numThreads / kLanesPerWarp);
  Value lanes = index(kLanesPerWarp);
  Value warpSize = index(kLanesPerWarp);
  auto warpLoop = scf::ForOp::create(b, loc(), zero, warps, one);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(warpLoop.getBody()->getTerminator());
  Value warp = warpLoop.getInductionVar();
  auto laneLoop = scf::ForOp::create(b, loc(), zero, lanes, one);
  b.setInsertionPoint(laneLoop.getBody()->getTerminator());
  Value lane = laneLoop.getInductionVar();
  Value base = arith::MulIOp::create(b, loc(), warp, warpSize);
  Value thread = arith::AddIOp::create(b, loc(), base, lane);
  body(warp, lane, thread);
}

FailureOr<Operation *> LaunchEmulator::emulateWarpLevel(Operation *op) {
  b.setInsertionPoint(op);
  if (isa<gpu::BarrierOp>(op)) {
    // The phases already end at it; every warpgroup is past its waits.
    if (readCheck)
      readCheck->check(b, loc(), /*all=*/false);
    if (raceCheck)
      raceCheck->barrier(b, loc());
  } else if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
    std::optional<int64_t> width = getConstantIntValue(shuffle.getWidth());
    if (!width || *width != kLanesPerWarp)
      return shuffle.emitOpError("is emulated only over the whole warp "
                                 "(width 32)");
    emulateShuffle(shuffle);
  } else if (auto load = dyn_cast<nvgpu::LdMatrixOp>(op)) {
    if (!load.getRes().getType().getElementType().isF16())
      return load.emitOpError("is emulated only for f16 matrices");
    emulateLdMatrix(load);
  } else if (auto mma = dyn_cast<nvgpu::MmaSyncOp>(op)) {
    std::array<int64_t, 3> shape = mma.getMmaShapeAsArray();
    if (shape != std::array<int64_t, 3>{16, 8, 16} ||
        !mma.getMatrixA().getType().getElementType().isF16() ||
        !mma.getMatrixC().getType().getElementType().isF32())
      return mma.emitOpError("is emulated only as m16n8k16 with f16 operands "
                             "and f32 accumulators");
    emulateMma(mma);
  } else if (auto wgmma = dyn_cast<NVVM::WgmmaMmaAsyncOp>(op)) {
    NVVM::MMAShapeAttr shape = wgmma.getShape();
    if (shape.getM() != 64 || shape.getK() != 16 ||
        wgmma.getTypeA() != NVVM::WGMMATypes::f16 ||
        wgmma.getTypeB() != NVVM::WGMMATypes::f16 ||
        wgmma.getTypeD() != NVVM::WGMMATypes::f32 ||
        wgmma.getScaleA() != NVVM::WGMMAScaleIn::one ||
        wgmma.getScaleB() != NVVM::WGMMAScaleIn::one)
      return wgmma.emitOpError("is emulated only as m64nNk16 with f16 "
                               "operands, not negated, and f32 accumulators");
    emulateWgmma(wgmma);
  }
  Operation *next = op->getNextNode();
  op->erase();
  return next;
}

/// shfl.sync over 32 lanes: the source lane of each mode, or the lane
/// itself (and valid = false) outside the warp.
void LaunchEmulator::emulateShuffle(gpu::ShuffleOp op) {
  Value valueBuffer = resultBuffer(op.getShuffleResult());
  Value validBuffer = resultBuffer(op.getValid());
  Type i32 = b.getI32Type();
  forEachLane([&](Value warp, Value lane, Value thread) {
    Location l = op.getLoc();
    Value offset = valueOfThread(op.getOffset(), thread);
    Value laneBits = arith::IndexCastOp::create(b, l, i32, lane);
    Value source;
    switch (op.getMode()) {
    case gpu::ShuffleMode::XOR:
      source = arith::XOrIOp::create(b, l, laneBits, offset);
      break;
    case gpu::ShuffleMode::DOWN:
      source = arith::AddIOp::create(b, l, laneBits, offset);
      break;
    case gpu::ShuffleMode::UP:
      source = arith::SubIOp::create(b, l, laneBits, offset);
      break;
    case gpu::ShuffleMode::IDX:
      source = offset;
      break;
    }
    Value zero = arith::ConstantIntOp::create(b, l, i32, 0);
    Value size = arith::ConstantIntOp::create(b, l, i32, kLanesPerWarp);
    Value notNegative =
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, source, zero);
    Value inside =
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, source, size);
    Value valid = arith::AndIOp::create(b, l, notNegative, inside);
    Value chosen = arith::SelectOp::create(b, l, valid, source, laneBits);
    Value sourceLane =
        arith::IndexCastOp::create(b, l, b.getIndexType(), chosen);
    Value warpSize = arith::ConstantIndexOp::create(b, l, kLanesPerWarp);
    Value base = arith::MulIOp::create(b, l, warp, warpSize);
    Value sourceThread = arith::AddIOp::create(b, l, base, sourceLane);
    Value value = valueOfThread(op.getValue(), sourceThread);
    memref::StoreOp::create(b, l, value, valueBuffer, ValueRange{thread});
    memref::StoreOp::create(b, l, valid, validBuffer, ValueRange{thread});
  });
  loadBeforeUsers(op.getShuffleResult(), valueBuffer);
  loadBeforeUsers(op.getValid(), validBuffer);
}

/// ldmatrix: lane 8m + r gives the address of row r of matrix m; each lane
/// receives element e of matrix m at the coordinate ldmatrixFragment gives.
void LaunchEmulator::emulateLdMatrix(nvgpu::LdMatrixOp op) {
  VectorType type = op.getRes().getType();
  Value resultBuf = resultBuffer(op.getRes());
  const FragmentLayout &fragment = ldmatrixFragment(op.getTranspose());
  int64_t numTiles = op.getNumTiles();
  Value zero = arith::ConstantOp::create(b, op.getLoc(), b.getZeroAttr(type));
  forEachLane([&](Value warp, Value lane, Value thread) {
    Location l = op.getLoc();
    Value warpSize = arith::ConstantIndexOp::create(b, l, kLanesPerWarp);
    Value base = arith::MulIOp::create(b, l, warp, warpSize);
    Value result = zero;
    for (int64_t m = 0; m < numTiles; ++m)
      for (int64_t e = 0; e < fragment.elementsPerRegister; ++e) {
        Value row = fragment.row.build(b, l, lane, 0, e);
        Value col = fragment.col.build(b, l, lane, 0, e);
        Value first = arith::ConstantIndexOp::create(
            b, l, ldmatrixAddressLane(m, 0));
        Value addressLane = arith::AddIOp::create(b, l, first, row);
        Value addressThread = arith::AddIOp::create(b, l, base, addressLane);
        SmallVector<Value> at;
        for (Value i : op.getIndices())
          at.push_back(valueOfThread(i, addressThread));
        at.back() = arith::AddIOp::create(b, l, at.back(), col);
        if (raceCheck)
          raceCheck->read(b, l, op.getSrcMemref(), at, addressThread);
        Value element = memref::LoadOp::create(b, l, op.getSrcMemref(), at);
        result = vector::InsertOp::create(b, l, element, result,
                                          ArrayRef<int64_t>{m, e});
      }
    memref::StoreOp::create(b, l, result, resultBuf, ValueRange{thread});
  });
  loadBeforeUsers(op.getRes(), resultBuf);
}

/// mma.sync.m16n8k16: gathers the warp's A, B and C fragments into
/// matrices, D = A B + C with one f32 fma per product in k order, and
/// scatters D back to the lanes.
Value LaunchEmulator::scratchMatrix(int64_t rows, int64_t cols, Location l) {
  OpBuilder ab(launch);
  Value matrix = memref::AllocaOp::create(
      ab, l, MemRefType::get({rows, cols}, ab.getF32Type()));
  return matrix;
}

void LaunchEmulator::buildProduct(Value a, Value bMatrix, Value d, int64_t rows,
                                  int64_t cols, int64_t depth, bool accumulate,
                                  Location l) {
  Value zero = index(0), one = index(1);
  Value rowCount = index(rows), colCount = index(cols);
  Value depthCount = index(depth);
  Value zeroSum = arith::ConstantOp::create(b, l, b.getF32FloatAttr(0.0f));
  scf::ForOp::create(
      b, l, zero, rowCount, one, ValueRange{},
      [&](OpBuilder &ib, Location il, Value i, ValueRange) {
        scf::ForOp::create(
            ib, il, zero, colCount, one, ValueRange{},
            [&](OpBuilder &jb, Location jl, Value j, ValueRange) {
              Value init = accumulate ? memref::LoadOp::create(jb, jl, d,
                                                               ValueRange{i, j})
                                            .getResult()
                                      : zeroSum;
              auto dot = scf::ForOp::create(
                  jb, jl, zero, depthCount, one, ValueRange{init},
                  [&](OpBuilder &kb, Location kl, Value k, ValueRange acc) {
                    Value x =
                        memref::LoadOp::create(kb, kl, a, ValueRange{i, k});
                    Value y = memref::LoadOp::create(kb, kl, bMatrix,
                                                     ValueRange{k, j});
                    Value sum = math::FmaOp::create(kb, kl, x, y, acc[0]);
                    scf::YieldOp::create(kb, kl, sum);
                  });
              memref::StoreOp::create(jb, jl, dot.getResult(0), d,
                                      ValueRange{i, j});
              scf::YieldOp::create(jb, jl);
            });
        scf::YieldOp::create(ib, il);
      });
}

void LaunchEmulator::emulateMma(nvgpu::MmaSyncOp op) {
  Location l = op.getLoc();
  Type f32 = b.getF32Type();
  Value a = scratchMatrix(16, 16, l), bMatrix = scratchMatrix(16, 8, l),
        d = scratchMatrix(16, 8, l);
  Value resultBuf = resultBuffer(op.getRes());
  VectorType resultType = op.getRes().getType();
  Value zeroResult =
      arith::ConstantOp::create(b, l, b.getZeroAttr(resultType));
  Value zero = index(0), one = index(1),
        warps = index(numThreads / kLanesPerWarp);
  auto warpLoop = scf::ForOp::create(b, l, zero, warps, one);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(warpLoop.getBody()->getTerminator());
  Value warp = warpLoop.getInductionVar();
  Value warpSize = index(kLanesPerWarp);
  Value base = arith::MulIOp::create(b, l, warp, warpSize);
  auto laneLoop = [&](function_ref<void(Value lane, Value thread)> body) {
    Value lanes = index(kLanesPerWarp);
    auto loop = scf::ForOp::create(b, l, zero, lanes, one);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    Value lane = loop.getInductionVar();
    Value thread = arith::AddIOp::create(b, l, base, lane);
    body(lane, thread);
  };
  auto gather = [&](Value fragment, const FragmentLayout &layout,
                    Value matrix, Value lane, Value thread) {
    Value registers = valueOfThread(fragment, thread);
    for (int64_t r = 0; r < layout.numRegisters; ++r)
      for (int64_t e = 0; e < layout.elementsPerRegister; ++e) {
        Value element = vector::ExtractOp::create(b, l, registers,
                                                  ArrayRef<int64_t>{r, e});
        if (element.getType() != f32)
          element = arith::ExtFOp::create(b, l, f32, element);
        Value row = layout.row.build(b, l, lane, r, e);
        Value col = layout.col.build(b, l, lane, r, e);
        memref::StoreOp::create(b, l, element, matrix, ValueRange{row, col});
      }
  };
  laneLoop([&](Value lane, Value thread) {
    gather(op.getMatrixA(), mmaM16N8K16OperandA(), a, lane, thread);
    gather(op.getMatrixB(), mmaM16N8K16OperandB(), bMatrix, lane, thread);
    gather(op.getMatrixC(), mmaM16N8K16Accumulator(), d, lane, thread);
  });
  buildProduct(a, bMatrix, d, 16, 8, 16, /*accumulate=*/true, l);
  laneLoop([&](Value lane, Value thread) {
    const FragmentLayout &layout = mmaM16N8K16Accumulator();
    Value result = zeroResult;
    for (int64_t r = 0; r < layout.numRegisters; ++r)
      for (int64_t e = 0; e < layout.elementsPerRegister; ++e) {
        Value row = layout.row.build(b, l, lane, r, e);
        Value col = layout.col.build(b, l, lane, r, e);
        Value element = memref::LoadOp::create(b, l, d, ValueRange{row, col});
        result = vector::InsertOp::create(b, l, element, result,
                                          ArrayRef<int64_t>{r, e});
      }
    memref::StoreOp::create(b, l, result, resultBuf, ValueRange{thread});
  });
  loadBeforeUsers(op.getRes(), resultBuf);
}

/// wgmma.mma_async.m64nNk16, per warpgroup: the accumulator gathered from
/// its 128 threads, A (64 x 16) and B (16 x N) read from shared memory at
/// the addresses the descriptors give, D = A B (+ C with scale-d) with one
/// f32 fma per product in k order, scattered back.
void LaunchEmulator::emulateWgmma(NVVM::WgmmaMmaAsyncOp op) {
  Location l = op.getLoc();
  Type f32 = b.getF32Type();
  int64_t n = op.getShape().getN();
  FragmentLayout accumulator = wgmmaM64NK16Accumulator(n);
  Value a = scratchMatrix(64, 16, l), bMatrix = scratchMatrix(16, n, l),
        d = scratchMatrix(64, n, l);
  Value zeroIndex = index(0);
  Value resultBuf = resultBuffer(op.getResult());
  Type resultType = op.getResult().getType();
  bool accumulate = op.getScaleD() == NVVM::WGMMAScaleOut::one;
  // A row-major is K-major, B column-major is K-major.
  bool aKMajor = op.getLayoutA() == NVVM::MMALayout::row;
  bool bKMajor = op.getLayoutB() == NVVM::MMALayout::col;

  Value one = index(1);
  Value groups = index(numThreads / kThreadsPerWarpgroup);
  auto groupLoop = scf::ForOp::create(b, l, zeroIndex, groups, one);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(groupLoop.getBody()->getTerminator());
  Value groupSize = index(kThreadsPerWarpgroup);
  Value base =
      arith::MulIOp::create(b, l, groupLoop.getInductionVar(), groupSize);
  // The descriptors are the same in every thread of the warpgroup.
  Value descriptorA = valueOfThread(op.getDescriptorA(), base);
  Value descriptorB = valueOfThread(op.getDescriptorB(), base);

  if (readCheck)
    readCheck->issue(b, l, groupLoop.getInductionVar(), descriptorA,
                     descriptorB, n, aKMajor, bKMajor);
  auto elementIndex = [&](Value descriptor, Value mn, Value k, bool kMajor) {
    return buildWgmmaOperandIndex(b, l, descriptor, mn, k, kMajor);
  };
  auto forRange = [&](int64_t count, function_ref<void(Value)> body) {
    auto loop = scf::ForOp::create(b, l, zeroIndex, index(count), one);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    body(loop.getInductionVar());
  };

  forRange(kThreadsPerWarpgroup, [&](Value lane) {
    Value thread = arith::AddIOp::create(b, l, base, lane);
    Value registers = valueOfThread(op.getInouts(), thread);
    for (int64_t r = 0; r < accumulator.numRegisters; ++r) {
      Value element =
          LLVM::ExtractValueOp::create(b, l, registers, ArrayRef<int64_t>{r});
      Value row = accumulator.row.build(b, l, lane, r, 0);
      Value col = accumulator.col.build(b, l, lane, r, 0);
      memref::StoreOp::create(b, l, element, d, ValueRange{row, col});
    }
  });
  forRange(64, [&](Value m) {
    forRange(16, [&](Value k) {
      Value at = elementIndex(descriptorA, m, k, aKMajor);
      Value x = memref::LoadOp::create(b, l, halves, ValueRange{at});
      Value wide = arith::ExtFOp::create(b, l, f32, x);
      memref::StoreOp::create(b, l, wide, a, ValueRange{m, k});
    });
  });
  forRange(16, [&](Value k) {
    forRange(n, [&](Value col) {
      Value at = elementIndex(descriptorB, col, k, bKMajor);
      Value x = memref::LoadOp::create(b, l, halves, ValueRange{at});
      Value wide = arith::ExtFOp::create(b, l, f32, x);
      memref::StoreOp::create(b, l, wide, bMatrix, ValueRange{k, col});
    });
  });
  buildProduct(a, bMatrix, d, 64, n, 16, accumulate, l);
  forRange(kThreadsPerWarpgroup, [&](Value lane) {
    Value thread = arith::AddIOp::create(b, l, base, lane);
    Value result = LLVM::PoisonOp::create(b, l, resultType);
    for (int64_t r = 0; r < accumulator.numRegisters; ++r) {
      Value row = accumulator.row.build(b, l, lane, r, 0);
      Value col = accumulator.col.build(b, l, lane, r, 0);
      Value element = memref::LoadOp::create(b, l, d, ValueRange{row, col});
      result = LLVM::InsertValueOp::create(b, l, result, element,
                                           ArrayRef<int64_t>{r});
    }
    storeThreadValue(b, l, result, resultBuf, thread);
  });
  loadBeforeUsers(op.getResult(), resultBuf);
}

/// Moves the users of `shared` (a view of workgroup memory) to `host` (the
/// same bytes in the default memory space) at shared-memory `address`:
/// views of it become views of `host`, and its aligned pointer the address.
void LaunchEmulator::rehomeSharedView(Value shared, Value host, Value address) {
  for (OpOperand &use : llvm::make_early_inc_range(shared.getUses())) {
    Operation *user = use.getOwner();
    OpBuilder ub(user);
    if (auto view = dyn_cast<memref::ViewOp>(user)) {
      MemRefType type = view.getType();
      Value rehomed = memref::ViewOp::create(
          ub, view.getLoc(),
          MemRefType::get(type.getShape(), type.getElementType()), host,
          view.getByteShift(), view.getSizes());
      Value shifted = arith::AddIOp::create(ub, view.getLoc(), address,
                                            view.getByteShift());
      rehomeSharedView(view.getResult(), rehomed, shifted);
      view.erase();
    } else if (auto pointer =
                   dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(user)) {
      pointer.replaceAllUsesWith(address);
      pointer.erase();
    } else {
      use.set(host);
    }
  }
}

void LaunchEmulator::layOutSharedMemory() {
  // 16-byte aligned, from 16.
  constexpr int64_t kAlignment = 16;
  SmallVector<int64_t> addresses;
  int64_t end = kAlignment;
  for (BlockArgument attribution : launch.getWorkgroupAttributions()) {
    addresses.push_back(end);
    int64_t bytes = getBufferBytes(cast<MemRefType>(attribution.getType()));
    end += (bytes + kAlignment - 1) / kAlignment * kAlignment;
  }
  int64_t dynamicAddress = end;
  end += (dynamicSharedBytes + kAlignment - 1) / kAlignment * kAlignment;
  OpBuilder ab(launch);
  sharedMemory = memref::AllocaOp::create(
      ab, loc(), MemRefType::get({end}, ab.getI8Type()));
  // gpu.dynamic_shared_memory: the bytes after the attributions, and the
  // views of them in the default memory space too.
  SmallVector<gpu::DynamicSharedMemoryOp> dynamics;
  launch.getBody().walk(
      [&](gpu::DynamicSharedMemoryOp op) { dynamics.push_back(op); });
  for (gpu::DynamicSharedMemoryOp op : dynamics) {
    OpBuilder db(op);
    Value address =
        arith::ConstantIndexOp::create(db, op.getLoc(), dynamicAddress);
    Value size =
        arith::ConstantIndexOp::create(db, op.getLoc(), dynamicSharedBytes);
    Value bytes = memref::ViewOp::create(
        db, op.getLoc(),
        MemRefType::get({ShapedType::kDynamic}, db.getI8Type()), sharedMemory,
        address, ValueRange{size});
    rehomeSharedView(op.getResult(), bytes, address);
    op.erase();
  }
  for (auto [attribution, address] :
       llvm::zip_equal(launch.getWorkgroupAttributions(), addresses)) {
    auto type = cast<MemRefType>(attribution.getType());
    Value shift = arith::ConstantIndexOp::create(ab, loc(), address);
    attributionViews.push_back(memref::ViewOp::create(
        ab, loc(), MemRefType::get(type.getShape(), type.getElementType()),
        sharedMemory, shift, ValueRange{}));
    SmallVector<memref::ExtractAlignedPointerAsIndexOp> pointers;
    for (Operation *user : attribution.getUsers())
      if (auto pointer = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(user))
        pointers.push_back(pointer);
    for (auto pointer : pointers) {
      OpBuilder pb(pointer);
      pointer.replaceAllUsesWith(
          arith::ConstantIndexOp::create(pb, pointer.getLoc(), address)
              .getResult());
      pointer.erase();
    }
  }
}

LogicalResult LaunchEmulator::run() {
  if (failed(checkStructure()))
    return failure();
  layOutSharedMemory();
  hoistUniformValues();
  hoistBlockUniformValues();
  if (hasWgmma) {
    // The f16 view of shared memory wgmma's operands are read through.
    OpBuilder ab(launch);
    int64_t bytes = cast<MemRefType>(sharedMemory.getType()).getNumElements();
    Value start = arith::ConstantIndexOp::create(ab, loc(), 0);
    halves = memref::ViewOp::create(
        ab, loc(), MemRefType::get({bytes / 2}, ab.getF16Type()), sharedMemory,
        start, ValueRange{});
  }
  if (deferAsync && hasWgmma) {
    readCheck.emplace(launch, numThreads, halves);
    readCheck->instrument();
  }
  if (failed(emulateAsyncCopies(launch, numThreads, sharedMemory, deferAsync)))
    return failure();
  if (checkRaces) {
    raceCheck.emplace(launch, sharedMemory, halves);
    raceCheck->instrument();
  }

  // Thread ids as ops, which each phase replaces by its own.
  Block &body = launch.getBody().front();
  gpu::KernelDim3 threadArgs = launch.getThreadIds();
  gpu::Dimension dimensions[] = {gpu::Dimension::x, gpu::Dimension::y,
                                 gpu::Dimension::z};
  Value threadValues[] = {threadArgs.x, threadArgs.y, threadArgs.z};
  for (auto [value, dimension] : llvm::zip_equal(threadValues, dimensions))
    for (OpOperand &use : llvm::make_early_inc_range(value.getUses())) {
      OpBuilder ub(use.getOwner());
      use.set(gpu::ThreadIdOp::create(ub, use.getOwner()->getLoc(), dimension));
    }

  if (failed(demoteLoopsIn(body)) || failed(emulateBlock(&body))) {
    body.getOperations().splice(body.begin(), blockUniformOps.getOperations());
    return failure();
  }
  if (readCheck) {
    b.setInsertionPoint(body.getTerminator());
    readCheck->check(b, loc(), /*all=*/true);
  }

  // The blocks, one after another.
  b.setInsertionPoint(launch);
  Value zero = index(0), one = index(1);
  SmallVector<Value> blockIds;
  Block *innermost = nullptr;
  scf::ForOp outer;
  for (int i = 2; i >= 0; --i) {
    Value count = index(grid[i]);
    auto loop = scf::ForOp::create(b, loc(), zero, count, one);
    if (!outer)
      outer = loop;
    blockIds.insert(blockIds.begin(), loop.getInductionVar());
    innermost = loop.getBody();
    b.setInsertionPoint(innermost->getTerminator());
  }
  gpu::KernelDim3 blockArgs = launch.getBlockIds();
  gpu::KernelDim3 gridArgs = launch.getGridSize();
  gpu::KernelDim3 sizeArgs = launch.getBlockSize();
  blockArgs.x.replaceAllUsesWith(blockIds[0]);
  blockArgs.y.replaceAllUsesWith(blockIds[1]);
  blockArgs.z.replaceAllUsesWith(blockIds[2]);
  Value dims[] = {gridArgs.x, gridArgs.y, gridArgs.z};
  for (int i = 0; i < 3; ++i)
    dims[i].replaceAllUsesWith(index(grid[i]));
  sizeArgs.x.replaceAllUsesWith(index(numThreads));
  sizeArgs.y.replaceAllUsesWith(one);
  sizeArgs.z.replaceAllUsesWith(one);
  // Shared memory is reused by the blocks in turn.
  for (auto [attribution, buffer] :
       llvm::zip_equal(launch.getWorkgroupAttributions(), attributionViews)) {
    Value argument = attribution;
    argument.replaceAllUsesWith(buffer);
  }
  innermost->getOperations().splice(innermost->getTerminator()->getIterator(),
                                    body.getOperations(), body.begin(),
                                    std::prev(body.end()));
  innermost->getOperations().splice(innermost->begin(),
                                    blockUniformOps.getOperations());
  if (raceCheck) {
    // A block starts with no access of the one before unordered.
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(innermost);
    raceCheck->barrier(b, loc());
  }
  outer.walk([&](gpu::BlockIdOp id) {
    id.replaceAllUsesWith(blockIds[static_cast<int>(id.getDimension())]);
  });
  outer.walk([&](gpu::BlockIdOp id) { id.erase(); });
  SmallVector<Operation *> sizes;
  outer.walk([&](Operation *op) {
    if (isa<gpu::GridDimOp, gpu::BlockDimOp>(op))
      sizes.push_back(op);
  });
  for (Operation *op : sizes) {
    OpBuilder sb(op);
    int64_t value = 1;
    if (auto dim = dyn_cast<gpu::GridDimOp>(op))
      value = grid[static_cast<int>(dim.getDimension())];
    else if (cast<gpu::BlockDimOp>(op).getDimension() == gpu::Dimension::x)
      value = numThreads;
    op->getResult(0).replaceAllUsesWith(
        arith::ConstantIndexOp::create(sb, op->getLoc(), value).getResult());
    op->erase();
  }
  b.setInsertionPointAfter(outer);
  if (readCheck)
    readCheck->assertUnchanged(b, loc());
  if (raceCheck)
    raceCheck->assertNoRace(b, loc());
  for (Operation *placeholder : placeholders)
    placeholder->erase();
  launch.erase();
  return success();
}

namespace {
struct EmulateGPUPass : gs::impl::EmulateGPUBase<EmulateGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation()->walk([&](gpu::LaunchOp op) { launches.push_back(op); });
    for (gpu::LaunchOp launch : launches)
      if (failed(LaunchEmulator(launch, deferAsync, checkRaces).run()))
        return signalPassFailure();
  }
};
} // namespace
