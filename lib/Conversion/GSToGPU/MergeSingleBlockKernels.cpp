//===- MergeSingleBlockKernels.cpp - Small kernels as one launch -*- C++ -*-=//
//
// A train step's scalar bookkeeping runs as many tiny kernels of one block
// each (the last sums of a split reduction, scale decisions, statistics
// records, the skip guard's flags, small parameters' updates), each a
// launch whose cost is the launch itself. Kernels launched one after
// another on one stream run one after another anyway, so a run of
// single-block launches with nothing between them but host code that
// touches no existing memory runs as well as one launch of one block: each
// kernel's body in turn, on the threads its own block had, a barrier
// between two bodies (which orders global memory within the block as the
// stream ordered it between the launches).
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <array>

namespace mlir::gs {
#define GEN_PASS_DEF_MERGESINGLEBLOCKKERNELS
#include "gs/Conversion/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;

namespace {
/// A single-block kernel launch that can run as part of a larger block.
struct Part {
  /// The gpu.launch or gpu.launch_func.
  Operation *launch;
  /// The kernel's body: the gpu.launch's region or the gpu.func's, one
  /// block.
  Block *body;
  /// For a gpu.func, the host values its arguments are.
  SmallVector<Value> arguments;
  /// The block's size in x, y, z.
  std::array<int64_t, 3> threads;

  int64_t numThreads() const { return threads[0] * threads[1] * threads[2]; }
};

/// The constant values of `sizes`, if all are constants.
std::optional<std::array<int64_t, 3>> constantSizes(gpu::KernelDim3 sizes) {
  std::optional<int64_t> x = getConstantIntValue(sizes.x);
  std::optional<int64_t> y = getConstantIntValue(sizes.y);
  std::optional<int64_t> z = getConstantIntValue(sizes.z);
  if (!x || !y || !z)
    return std::nullopt;
  return std::array<int64_t, 3>{*x, *y, *z};
}

/// Whether `body` computes the same on any thread block that has its
/// threads among others: no barriers, warp-level or shared-memory ops, no
/// GPU ops but the thread and block indices and sizes (which the merged
/// kernel gives it), and no symbols, which a kernel's module would have to
/// carry.
bool runsInLargerBlock(Block &body) {
  WalkResult result = body.walk([&](Operation *op) {
    if (op == body.getTerminator())
      return WalkResult::advance();
    if (isa<gpu::ThreadIdOp, gpu::BlockIdOp, gpu::BlockDimOp, gpu::GridDimOp>(
            op))
      return WalkResult::advance();
    if (isa_and_present<gpu::GPUDialect, NVVM::NVVMDialect, nvgpu::NVGPUDialect,
                        LLVM::LLVMDialect>(op->getDialect()))
      return WalkResult::interrupt();
    for (NamedAttribute attr : op->getAttrs())
      if (isa<SymbolRefAttr>(attr.getValue()))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// `op` as a part of a merged kernel, if it launches one block of a kernel
/// that can be one.
std::optional<Part> partOf(Operation *op, SymbolTableCollection &symbols) {
  if (auto launch = dyn_cast<gpu::LaunchOp>(op)) {
    if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
        launch.hasClusterSize() || launch.getDynamicSharedMemorySize() ||
        launch.getNumWorkgroupAttributions() ||
        launch.getNumPrivateAttributions() || !launch.getBody().hasOneBlock())
      return std::nullopt;
    std::optional<std::array<int64_t, 3>> grid =
        constantSizes(launch.getGridSizeOperandValues());
    std::optional<std::array<int64_t, 3>> block =
        constantSizes(launch.getBlockSizeOperandValues());
    if (!grid || *grid != std::array<int64_t, 3>{1, 1, 1} || !block ||
        !runsInLargerBlock(launch.getBody().front()))
      return std::nullopt;
    return Part{op, &launch.getBody().front(), {}, *block};
  }
  auto launch = dyn_cast<gpu::LaunchFuncOp>(op);
  if (!launch || launch.getAsyncToken() ||
      !launch.getAsyncDependencies().empty() || launch.hasClusterSize() ||
      launch.getDynamicSharedMemorySize())
    return std::nullopt;
  auto kernel = symbols.lookupNearestSymbolFrom<gpu::GPUFuncOp>(
      launch, launch.getKernel());
  if (!kernel || kernel.isExternal() || !kernel.getBody().hasOneBlock() ||
      kernel.getNumWorkgroupAttributions() ||
      kernel.getNumPrivateAttributions())
    return std::nullopt;
  std::optional<std::array<int64_t, 3>> grid =
      constantSizes(launch.getGridSizeOperandValues());
  std::optional<std::array<int64_t, 3>> block =
      constantSizes(launch.getBlockSizeOperandValues());
  if (!grid || *grid != std::array<int64_t, 3>{1, 1, 1} || !block ||
      !runsInLargerBlock(kernel.getBody().front()))
    return std::nullopt;
  return Part{op, &kernel.getBody().front(),
              llvm::to_vector(launch.getKernelOperands()), *block};
}

/// Whether host code may run after the kernels launched before it instead
/// of before: it has no effect on memory but allocating new buffers.
bool commutesWithKernels(Operation &op) {
  if (isPure(&op))
    return true;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  return effects && op.getNumRegions() == 0 &&
         effects.hasEffect<MemoryEffects::Allocate>() &&
         !effects.hasEffect<MemoryEffects::Read>() &&
         !effects.hasEffect<MemoryEffects::Write>() &&
         !effects.hasEffect<MemoryEffects::Free>();
}

struct MergeSingleBlockKernelsPass
    : gs::impl::MergeSingleBlockKernelsBase<MergeSingleBlockKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;
    SymbolTable &table = symbols.getSymbolTable(module);
    SmallVector<SmallVector<Part>> runs;
    module.walk([&](FunctionOpInterface function) {
      if (isa<gpu::GPUFuncOp>(function) || function.isExternal())
        return;
      for (Block &block : function.getFunctionBody()) {
        SmallVector<Part> run;
        auto endRun = [&] {
          if (run.size() > 1)
            runs.push_back(std::move(run));
          run.clear();
        };
        for (Operation &op : block) {
          if (std::optional<Part> part = partOf(&op, symbols)) {
            run.push_back(std::move(*part));
            continue;
          }
          if (!commutesWithKernels(op))
            endRun();
        }
        endRun();
      }
    });
    // The kernel modules of merged launches, to erase once unused.
    llvm::SetVector<Operation *> kernelModules;
    unsigned index = 0;
    for (ArrayRef<Part> run : runs) {
      for (const Part &part : run)
        if (isa<gpu::LaunchFuncOp>(part.launch))
          kernelModules.insert(part.body->getParentOp()->getParentOp());
      std::string name;
      do {
        name = "gs_sequence_" + std::to_string(index++);
      } while (table.lookup(name) || table.lookup(name + "_kernel"));
      merge(run, name);
    }
    for (Operation *kernelModule : kernelModules)
      if (SymbolTable::symbolKnownUseEmpty(kernelModule, module))
        kernelModule->erase();
  }

  /// Launches the bodies of `run` one after another in one block, where
  /// its last launch was, as the kernel `name`; erases the launches.
  void merge(ArrayRef<Part> run, StringRef name) {
    Operation *last = run.back().launch;
    Location loc = last->getLoc();
    int64_t numThreads = 0;
    for (const Part &part : run)
      numThreads = std::max(numThreads, part.numThreads());
    OpBuilder b(last);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value size = arith::ConstantIndexOp::create(b, loc, numThreads);
    StringAttr kernelName = b.getStringAttr(name + "_kernel");
    auto merged = gpu::LaunchOp::create(
        b, loc, one, one, one, size, one, one,
        /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
        /*asyncDependencies=*/{}, /*workgroupAttributions=*/{},
        /*privateAttributions=*/{}, /*clusterSizeX=*/nullptr,
        /*clusterSizeY=*/nullptr, /*clusterSizeZ=*/nullptr,
        FlatSymbolRefAttr::get(kernelName), FlatSymbolRefAttr::get(kernelName));
    Block &body = merged.getBody().front();
    b.setInsertionPointToEnd(&body);
    Value thread = merged.getThreadIds().x;
    for (auto [i, part] : llvm::enumerate(run)) {
      if (i)
        gpu::BarrierOp::create(b, loc);
      OpBuilder::InsertionGuard guard(b);
      if (part.numThreads() < numThreads) {
        Value count = arith::ConstantIndexOp::create(b, loc, part.numThreads());
        Value inPart = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                             thread, count);
        auto ifOp = scf::IfOp::create(b, loc, inPart, /*withElseRegion=*/false);
        b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
      }
      cloneBody(b, part, thread);
    }
    gpu::TerminatorOp::create(b, loc);
    for (const Part &part : run)
      part.launch->erase();
  }

  /// Clones `part`'s body at `b`, run by the threads below its block's size
  /// whose linear index in the merged block is `thread`.
  void cloneBody(OpBuilder &b, const Part &part, Value thread) {
    Location loc = part.launch->getLoc();
    auto constant = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(b, loc, value);
    };
    Value zero = constant(0);
    Value one = constant(1);
    std::array<Value, 3> blockSizes = {constant(part.threads[0]),
                                       constant(part.threads[1]),
                                       constant(part.threads[2])};
    // The part's own thread indices, from the linear one.
    std::array<Value, 3> threadIds = {thread, zero, zero};
    if (part.threads[1] * part.threads[2] > 1) {
      Value yz = arith::DivUIOp::create(b, loc, thread, blockSizes[0]);
      threadIds[0] = arith::RemUIOp::create(b, loc, thread, blockSizes[0]);
      threadIds[1] = arith::RemUIOp::create(b, loc, yz, blockSizes[1]);
      threadIds[2] = arith::DivUIOp::create(b, loc, yz, blockSizes[1]);
    }

    IRMapping mapping;
    if (auto launch = dyn_cast<gpu::LaunchOp>(part.launch)) {
      gpu::KernelDim3 blockIds = launch.getBlockIds();
      gpu::KernelDim3 threads = launch.getThreadIds();
      gpu::KernelDim3 grid = launch.getGridSize();
      gpu::KernelDim3 block = launch.getBlockSize();
      for (unsigned d = 0; d < 3; ++d) {
        auto pick = [d](gpu::KernelDim3 dims) {
          return d == 0 ? dims.x : d == 1 ? dims.y : dims.z;
        };
        mapping.map(pick(blockIds), zero);
        mapping.map(pick(threads), threadIds[d]);
        mapping.map(pick(grid), one);
        mapping.map(pick(block), blockSizes[d]);
      }
    } else {
      mapping.map(part.body->getArguments(), part.arguments);
    }
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
        else if (isa<gpu::BlockIdOp>(inner))
          replacement = zero;
        else if (isa<gpu::GridDimOp>(inner))
          replacement = one;
        if (!replacement)
          return;
        inner->getResult(0).replaceAllUsesWith(replacement);
        inner->erase();
      });
    }
  }
};
} // namespace
