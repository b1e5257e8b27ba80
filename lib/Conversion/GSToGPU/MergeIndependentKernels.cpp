//===- MergeIndependentKernels.cpp - Kernels side by side -------*- C++ -*-===//
//
// Kernels launched one after another that share no buffer but for reading
// it (the forward's casts of the parameters to FP16, the optimizer's
// update of each parameter) compute the same side by side: one launch
// whose grid is their blocks laid end to end, each block running the body
// of the kernel it belongs to with that kernel's own block and thread
// indices. A step then pays one launch for them instead of one each.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/GSToGPU/KernelParts.h"
#include "gs/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <limits>

namespace mlir::gs {
#define GEN_PASS_DEF_MERGEINDEPENDENTKERNELS
#include "gs/Conversion/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;
using namespace mlir::gs;

namespace {
struct MergeIndependentKernelsPass
    : gs::impl::MergeIndependentKernelsBase<MergeIndependentKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;
    SmallVector<SmallVector<KernelPart>> runs;
    module.walk([&](FunctionOpInterface function) {
      if (isa<gpu::GPUFuncOp>(function) || function.isExternal())
        return;
      for (Block &block : function.getFunctionBody())
        collectRuns(block, symbols, runs);
    });
    SymbolTable &table = symbols.getSymbolTable(module);
    unsigned next = 0;
    for (ArrayRef<KernelPart> run : runs) {
      merge(run, getUnusedKernelName(table, "gs_parallel", next));
      eraseKernelParts(run, table);
    }
  }

  /// Adds to `runs` the runs of `block`'s launches that may run side by
  /// side: adjacent but for host code that commutes with them, and
  /// pairwise independent. Runs of single-block kernels only are left to
  /// gs-merge-single-block-kernels, which puts dependent ones in one
  /// block too.
  void collectRuns(Block &block, SymbolTableCollection &symbols,
                   SmallVectorImpl<SmallVector<KernelPart>> &runs) {
    SmallVector<KernelPart> run;
    KernelAccesses accessed;
    // A grid's x size is at most 2^31 - 1.
    int64_t numBlocks = 0;
    constexpr int64_t kMaxBlocks = std::numeric_limits<int32_t>::max();
    auto endRun = [&] {
      if (run.size() > 1 && llvm::any_of(run, [](const KernelPart &part) {
            return part.numBlocks() > 1;
          }))
        runs.push_back(std::move(run));
      run.clear();
      accessed.clear();
      numBlocks = 0;
    };
    for (Operation &op : block) {
      std::optional<KernelPart> part = getKernelPart(&op, symbols);
      std::optional<KernelAccesses> accesses;
      // Blocks side by side run the largest block size.
      if (part && !part->wholeBlock)
        accesses = getKernelAccesses(part->launch, symbols);
      if (!accesses) {
        if (!commutesWithKernels(op))
          endRun();
        continue;
      }
      if (!areIndependent(*accesses, accessed) ||
          numBlocks + part->numBlocks() > kMaxBlocks)
        endRun();
      for (auto [memory, writes] : *accesses)
        accessed[memory] |= writes;
      numBlocks += part->numBlocks();
      run.push_back(std::move(*part));
    }
    endRun();
  }

  /// Launches the bodies of `run` side by side, each on blocks of its own,
  /// where its last launch was, as the kernel `name`.
  void merge(ArrayRef<KernelPart> run, StringRef name) {
    Operation *last = run.back().launch;
    Location loc = last->getLoc();
    int64_t numBlocks = 0, numThreads = 0;
    for (const KernelPart &part : run) {
      numBlocks += part.numBlocks();
      numThreads = std::max(numThreads, part.numThreads());
    }
    OpBuilder b(last);
    auto constant = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(b, loc, value);
    };
    gpu::LaunchOp merged =
        createMergedLaunch(b, loc, numBlocks, numThreads, name);
    Value block = merged.getBlockIds().x;
    Value thread = merged.getThreadIds().x;
    int64_t first = 0;
    for (const KernelPart &part : run) {
      OpBuilder::InsertionGuard guard(b);
      // This part's blocks, and its threads in them.
      Value start = constant(first);
      Value end = constant(first + part.numBlocks());
      Value afterStart = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::uge, block, start);
      Value beforeEnd =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, block, end);
      Value inPart = arith::AndIOp::create(b, loc, afterStart, beforeEnd);
      if (part.numThreads() < numThreads) {
        Value count = constant(part.numThreads());
        Value inBlock = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                              thread, count);
        inPart = arith::AndIOp::create(b, loc, inPart, inBlock);
      }
      auto ifOp = scf::IfOp::create(b, loc, inPart, /*withElseRegion=*/false);
      b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
      Value partBlock = arith::SubIOp::create(b, loc, block, start);
      cloneKernelPart(b, part, partBlock, thread);
      first += part.numBlocks();
    }
    gpu::TerminatorOp::create(b, loc);
  }
};
} // namespace
