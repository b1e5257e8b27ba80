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
// stream ordered it between the launches). A body that works across its
// block (barriers, shuffles, shared memory: the last stage of a
// reduction, a GEMM's statistics) must run on all threads of a block of
// its own size: the merged block is its size, and the bodies' shared
// memory sits side by side, up to the 48 KiB a kernel has without asking.
// A run goes on past a kernel that accesses no memory its members write
// and writes none they access (a GEMM beside the bookkeeping of another
// one): the merged kernel runs where the run's last launch was, after it.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/GSToGPU/KernelEntry.h"
#include "gs/Conversion/GSToGPU/KernelParts.h"
#include "gs/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::gs {
#define GEN_PASS_DEF_MERGESINGLEBLOCKKERNELS
#include "gs/Conversion/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;

namespace {
struct MergeSingleBlockKernelsPass
    : gs::impl::MergeSingleBlockKernelsBase<MergeSingleBlockKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;
    SmallVector<SmallVector<gs::KernelPart>> runs;
    module.walk([&](FunctionOpInterface function) {
      if (isa<gpu::GPUFuncOp>(function) || function.isExternal())
        return;
      for (Block &block : function.getFunctionBody()) {
        SmallVector<gs::KernelPart> run;
        // The memory the run's kernels access, if all of it is known.
        std::optional<gs::KernelAccesses> accessed = gs::KernelAccesses();
        auto endRun = [&] {
          if (run.size() > 1)
            runs.push_back(std::move(run));
          run.clear();
          accessed = gs::KernelAccesses();
        };
        for (Operation &op : block) {
          std::optional<gs::KernelPart> part = gs::getKernelPart(&op, symbols);
          std::optional<gs::KernelAccesses> accesses =
              gs::getKernelAccesses(&op, symbols);
          if (part && part->numBlocks() == 1) {
            if (!fits(run, *part))
              endRun();
            run.push_back(std::move(*part));
            if (accessed && accesses)
              for (auto [memory, writes] : *accesses)
                (*accessed)[memory] |= writes;
            else
              accessed.reset();
            continue;
          }
          // The run's kernels may run after a kernel independent of them.
          if (accessed && accesses && gs::areIndependent(*accesses, *accessed))
            continue;
          if (!gs::commutesWithKernels(op))
            endRun();
        }
        endRun();
      }
    });
    SymbolTable &table = symbols.getSymbolTable(module);
    unsigned next = 0;
    for (ArrayRef<gs::KernelPart> run : runs) {
      merge(run, gs::getUnusedKernelName(table, "gs_sequence", next));
      gs::eraseKernelParts(run, table);
    }
  }

  /// The bytes of `part`'s shared memory.
  static int64_t sharedBytes(const gs::KernelPart &part) {
    int64_t bytes = 0;
    for (BlockArgument attribution : part.workgroup) {
      auto type = cast<MemRefType>(attribution.getType());
      bytes += type.getNumElements() *
               llvm::divideCeil(type.getElementTypeBitWidth(), 8);
    }
    return bytes;
  }

  /// Whether `part` may join `run` in one block: every whole-block part
  /// of them has the largest block size, and their shared memory fits.
  static bool fits(ArrayRef<gs::KernelPart> run, const gs::KernelPart &part) {
    int64_t numThreads = part.numThreads();
    int64_t bytes = sharedBytes(part);
    for (const gs::KernelPart &member : run) {
      numThreads = std::max(numThreads, member.numThreads());
      bytes += sharedBytes(member);
    }
    auto runsWhole = [&](const gs::KernelPart &member) {
      return !member.wholeBlock || member.numThreads() == numThreads;
    };
    return bytes <= gs::kMaxStaticSharedBytes && runsWhole(part) &&
           llvm::all_of(run, runsWhole);
  }

  /// Launches the bodies of `run` one after another in one block, where
  /// its last launch was, as the kernel `name`.
  void merge(ArrayRef<gs::KernelPart> run, StringRef name) {
    Operation *last = run.back().launch;
    Location loc = last->getLoc();
    int64_t numThreads = 0;
    SmallVector<Type> workgroup;
    for (const gs::KernelPart &part : run) {
      numThreads = std::max(numThreads, part.numThreads());
      for (BlockArgument attribution : part.workgroup)
        workgroup.push_back(attribution.getType());
    }
    OpBuilder b(last);
    gpu::LaunchOp merged = gs::createMergedLaunch(b, loc, /*numBlocks=*/1,
                                                  numThreads, name, workgroup);
    Value block = merged.getBlockIds().x;
    Value thread = merged.getThreadIds().x;
    ArrayRef<BlockArgument> memory = merged.getWorkgroupAttributions();
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
      gs::cloneKernelPart(b, part, block, thread,
                          memory.take_front(part.workgroup.size()));
      memory = memory.drop_front(part.workgroup.size());
    }
    gpu::TerminatorOp::create(b, loc);
  }
};
} // namespace
