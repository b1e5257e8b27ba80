//===- KernelParts.cpp - Kernels run as parts of a larger kernel -*- C++ -*-=//

#include "gs/Conversion/GSToGPU/KernelParts.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::gs;

namespace {
/// The constant values of `sizes`, if all are constants.
std::optional<std::array<int64_t, 3>> constantSizes(gpu::KernelDim3 sizes) {
  std::optional<int64_t> x = getConstantIntValue(sizes.x);
  std::optional<int64_t> y = getConstantIntValue(sizes.y);
  std::optional<int64_t> z = getConstantIntValue(sizes.z);
  if (!x || !y || !z)
    return std::nullopt;
  return std::array<int64_t, 3>{*x, *y, *z};
}

/// Where `body` computes the same when run in a larger launch that gives
/// it its indices and sizes.
enum class Placement {
  /// Nowhere: it has other GPU ops, or symbols, which a kernel's module
  /// would have to carry.
  None,
  /// On any blocks and threads.
  AnyThreads,
  /// On a whole block of its own block size: it has barriers, warp-level
  /// ops or copies to shared memory.
  WholeBlock,
};

Placement placementOf(Block &body) {
  Placement placement = Placement::AnyThreads;
  WalkResult result = body.walk([&](Operation *op) {
    if (op == body.getTerminator())
      return WalkResult::advance();
    for (NamedAttribute attr : op->getAttrs())
      if (isa<SymbolRefAttr>(attr.getValue()))
        return WalkResult::interrupt();
    if (isa<gpu::ThreadIdOp, gpu::BlockIdOp, gpu::BlockDimOp, gpu::GridDimOp>(
            op))
      return WalkResult::advance();
    if (isa<gpu::BarrierOp, gpu::ShuffleOp, gpu::SubgroupReduceOp,
            gpu::LaneIdOp, nvgpu::DeviceAsyncCopyOp,
            nvgpu::DeviceAsyncCreateGroupOp, nvgpu::DeviceAsyncWaitOp>(op)) {
      placement = Placement::WholeBlock;
      return WalkResult::advance();
    }
    if (isa_and_present<gpu::GPUDialect, NVVM::NVVMDialect, nvgpu::NVGPUDialect,
                        LLVM::LLVMDialect>(op->getDialect()))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted() ? Placement::None : placement;
}

/// Index `d` (0, 1, 2: x, y, z) of `dims`.
Value pick(gpu::KernelDim3 dims, unsigned d) {
  return d == 0 ? dims.x : d == 1 ? dims.y : dims.z;
}

/// The x, y, z indices of linear index `linear` in a box of `sizes`.
std::array<Value, 3> delinearize(OpBuilder &b, Location loc, Value linear,
                                 std::array<Value, 3> sizes,
                                 std::array<int64_t, 3> constantSizes,
                                 Value zero) {
  if (constantSizes[1] * constantSizes[2] == 1)
    return {linear, zero, zero};
  Value yz = arith::DivUIOp::create(b, loc, linear, sizes[0]);
  return {arith::RemUIOp::create(b, loc, linear, sizes[0]),
          arith::RemUIOp::create(b, loc, yz, sizes[1]),
          arith::DivUIOp::create(b, loc, yz, sizes[1])};
}
} // namespace

std::optional<KernelPart>
mlir::gs::getKernelPart(Operation *op, SymbolTableCollection &symbols) {
  // The body and its arguments' host values (none for a gpu.launch).
  Block *body = nullptr;
  SmallVector<Value> arguments;
  SmallVector<BlockArgument> workgroup;
  gpu::KernelDim3 gridSizes, blockSizes;
  if (auto launch = dyn_cast<gpu::LaunchOp>(op)) {
    if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
        launch.hasClusterSize() || launch.getDynamicSharedMemorySize() ||
        launch.getNumPrivateAttributions() || !launch.getBody().hasOneBlock())
      return std::nullopt;
    body = &launch.getBody().front();
    workgroup = llvm::to_vector(launch.getWorkgroupAttributions());
    gridSizes = launch.getGridSizeOperandValues();
    blockSizes = launch.getBlockSizeOperandValues();
  } else if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
    if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
        launch.hasClusterSize() || launch.getDynamicSharedMemorySize())
      return std::nullopt;
    auto kernel = symbols.lookupNearestSymbolFrom<gpu::GPUFuncOp>(
        launch, launch.getKernel());
    if (!kernel || kernel.isExternal() || !kernel.getBody().hasOneBlock() ||
        kernel.getNumPrivateAttributions())
      return std::nullopt;
    body = &kernel.getBody().front();
    workgroup = llvm::to_vector(kernel.getWorkgroupAttributions());
    arguments = llvm::to_vector(launch.getKernelOperands());
    gridSizes = launch.getGridSizeOperandValues();
    blockSizes = launch.getBlockSizeOperandValues();
  } else {
    return std::nullopt;
  }
  std::optional<std::array<int64_t, 3>> grid = constantSizes(gridSizes);
  std::optional<std::array<int64_t, 3>> block = constantSizes(blockSizes);
  Placement placement = placementOf(*body);
  if (!grid || !block || placement == Placement::None)
    return std::nullopt;
  bool wholeBlock = placement == Placement::WholeBlock || !workgroup.empty();
  return KernelPart{op,        body,   std::move(arguments),
                    *grid,     *block, std::move(workgroup),
                    wholeBlock};
}

gpu::LaunchOp mlir::gs::createMergedLaunch(OpBuilder &b, Location loc,
                                           int64_t numBlocks,
                                           int64_t numThreads, StringRef name,
                                           TypeRange workgroup) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value gridSize =
      numBlocks == 1 ? one : arith::ConstantIndexOp::create(b, loc, numBlocks);
  Value blockSize = arith::ConstantIndexOp::create(b, loc, numThreads);
  auto kernelName = FlatSymbolRefAttr::get(b.getStringAttr(name));
  auto launch = gpu::LaunchOp::create(
      b, loc, gridSize, one, one, blockSize, one, one,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, workgroup,
      /*privateAttributions=*/{}, /*clusterSizeX=*/nullptr,
      /*clusterSizeY=*/nullptr, /*clusterSizeZ=*/nullptr, kernelName,
      kernelName);
  b.setInsertionPointToEnd(&launch.getBody().front());
  return launch;
}

void mlir::gs::cloneKernelPart(OpBuilder &b, const KernelPart &part,
                               Value block, Value thread,
                               ValueRange workgroup) {
  Location loc = part.launch->getLoc();
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  Value zero = constant(0);
  std::array<Value, 3> gridSizes = {
      constant(part.grid[0]), constant(part.grid[1]), constant(part.grid[2])};
  std::array<Value, 3> blockSizes = {constant(part.threads[0]),
                                     constant(part.threads[1]),
                                     constant(part.threads[2])};
  std::array<Value, 3> blockIds =
      delinearize(b, loc, block, gridSizes, part.grid, zero);
  std::array<Value, 3> threadIds =
      delinearize(b, loc, thread, blockSizes, part.threads, zero);

  IRMapping mapping;
  if (auto launch = dyn_cast<gpu::LaunchOp>(part.launch)) {
    for (unsigned d = 0; d < 3; ++d) {
      mapping.map(pick(launch.getBlockIds(), d), blockIds[d]);
      mapping.map(pick(launch.getThreadIds(), d), threadIds[d]);
      mapping.map(pick(launch.getGridSize(), d), gridSizes[d]);
      mapping.map(pick(launch.getBlockSize(), d), blockSizes[d]);
    }
  } else {
    mapping.map(part.body->getArguments().take_front(part.arguments.size()),
                part.arguments);
  }
  for (auto [attribution, memory] : llvm::zip_equal(part.workgroup, workgroup))
    mapping.map(attribution, memory);
  SmallVector<Operation *> cloned;
  for (Operation &op : part.body->without_terminator())
    cloned.push_back(b.clone(op, mapping));
  // The indices and sizes the body reads through ops.
  auto dimension = [](gpu::Dimension d) { return static_cast<unsigned>(d); };
  for (Operation *op : cloned) {
    op->walk([&](Operation *inner) {
      Value replacement;
      if (auto id = dyn_cast<gpu::ThreadIdOp>(inner))
        replacement = threadIds[dimension(id.getDimension())];
      else if (auto size = dyn_cast<gpu::BlockDimOp>(inner))
        replacement = blockSizes[dimension(size.getDimension())];
      else if (auto id = dyn_cast<gpu::BlockIdOp>(inner))
        replacement = blockIds[dimension(id.getDimension())];
      else if (auto size = dyn_cast<gpu::GridDimOp>(inner))
        replacement = gridSizes[dimension(size.getDimension())];
      if (!replacement)
        return;
      inner->getResult(0).replaceAllUsesWith(replacement);
      inner->erase();
    });
  }
}

void mlir::gs::eraseKernelParts(ArrayRef<KernelPart> parts,
                                SymbolTable &table) {
  llvm::SetVector<Operation *> kernelModules;
  for (const KernelPart &part : parts) {
    if (isa<gpu::LaunchFuncOp>(part.launch))
      kernelModules.insert(part.body->getParentOp()->getParentOp());
    part.launch->erase();
  }
  for (Operation *kernelModule : kernelModules)
    if (SymbolTable::symbolKnownUseEmpty(kernelModule, table.getOp()))
      table.erase(kernelModule);
}

int64_t mlir::gs::getBufferBytes(MemRefType type) {
  return type.getNumElements() *
         llvm::divideCeil(type.getElementTypeBitWidth(), 8);
}

std::string mlir::gs::getUnusedKernelName(SymbolTable &table, StringRef prefix,
                                          unsigned &next) {
  std::string name;
  do {
    name = (prefix + "_" + Twine(next++)).str();
  } while (table.lookup(name) || table.lookup(name + "_kernel"));
  return name + "_kernel";
}

bool mlir::gs::kernelOnlyReads(Value value, Operation *kernel) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (!kernel->isProperAncestor(user))
      continue;
    if (auto view = dyn_cast<ViewLikeOpInterface>(user);
        view && view.getViewSource() == value) {
      if (!llvm::all_of(user->getResults(), [&](Value result) {
            return kernelOnlyReads(result, kernel);
          }))
        return false;
      continue;
    }
    // A write or free of this buffer, or of memory the op does not name.
    auto effects = dyn_cast<MemoryEffectOpInterface>(user);
    if (!effects)
      return false;
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &instance : instances)
      if (isa<MemoryEffects::Write, MemoryEffects::Free>(
              instance.getEffect()) &&
          (!instance.getValue() || instance.getValue() == value))
        return false;
  }
  return true;
}

bool mlir::gs::commutesWithKernels(Operation &op) {
  if (isPure(&op))
    return true;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  return effects && op.getNumRegions() == 0 &&
         effects.hasEffect<MemoryEffects::Allocate>() &&
         !effects.hasEffect<MemoryEffects::Read>() &&
         !effects.hasEffect<MemoryEffects::Write>() &&
         !effects.hasEffect<MemoryEffects::Free>();
}

/// The memory that the host buffer `value` is all or part of: a global
/// (its name), an allocation or a host function's argument (the value);
/// null where it is none of these.
static const void *memoryOf(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto read = dyn_cast<memref::GetGlobalOp>(def))
      return read.getNameAttr().getAsOpaquePointer();
    if (isa<memref::AllocOp, memref::AllocaOp, gpu::AllocOp>(def))
      return value.getAsOpaquePointer();
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      return nullptr;
    value = view.getViewSource();
  }
  return value.getAsOpaquePointer();
}

std::optional<KernelAccesses>
mlir::gs::getKernelAccesses(Operation *op, SymbolTableCollection &symbols) {
  // The host buffers and the values the kernel sees them as.
  SmallVector<std::pair<Value, Value>> buffers;
  Operation *kernel = nullptr;
  if (auto launch = dyn_cast<gpu::LaunchOp>(op)) {
    if (launch.getAsyncToken())
      return std::nullopt;
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(launch.getBody(), captured);
    for (Value value : captured)
      buffers.push_back({value, value});
    kernel = launch;
  } else if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
    auto function = symbols.lookupNearestSymbolFrom<gpu::GPUFuncOp>(
        launch, launch.getKernel());
    if (launch.getAsyncToken() || !function || function.isExternal())
      return std::nullopt;
    ValueRange operands = launch.getKernelOperands();
    for (auto [host, argument] : llvm::zip_equal(
             operands, function.getArguments().take_front(operands.size())))
      buffers.push_back({host, argument});
    kernel = function;
  } else {
    return std::nullopt;
  }
  KernelAccesses accesses;
  for (auto [host, inKernel] : buffers) {
    if (!isa<BaseMemRefType>(host.getType()))
      continue;
    const void *memory = memoryOf(host);
    if (!memory)
      return std::nullopt;
    accesses[memory] |= !kernelOnlyReads(inKernel, kernel);
  }
  return accesses;
}

bool mlir::gs::areIndependent(const KernelAccesses &a,
                              const KernelAccesses &b) {
  for (auto [memory, writes] : a) {
    auto found = b.find(memory);
    if (found != b.end() && (writes || found->second))
      return false;
  }
  return true;
}
