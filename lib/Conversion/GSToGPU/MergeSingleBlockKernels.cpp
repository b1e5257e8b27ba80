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
// A run right after a kernel of several blocks (a split reduction's
// partial sums, whose last sum and scale decision the run is) need not be
// a launch at all: the kernel's last block to finish runs it. Each block
// fences its writes at the GPU's scope and takes a ticket from a counter;
// the one that takes the last ticket sees every block's writes, resets the
// counter for the next launch and runs the run's bodies.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/GSToGPU/KernelEntry.h"
#include "gs/Conversion/GSToGPU/KernelParts.h"
#include "gs/Conversion/GSToGPU/LastBlock.h"
#include "gs/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::gs {
#define GEN_PASS_DEF_MERGESINGLEBLOCKKERNELS
#include "gs/Conversion/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;

namespace {
/// The most blocks of a kernel whose last block may run a run: blocks that
/// all run at once on a data-center GPU (A100: 108 SMs, H100: 132), so
/// that the registers the run needs cost the kernel no occupancy.
constexpr int64_t kMaxHostBlocks = 128;

/// A run of single-block kernels, and the kernel of several blocks whose
/// last block runs it, if it has one.
struct Run {
  std::optional<gs::KernelPart> host;
  SmallVector<gs::KernelPart> parts;
};

struct MergeSingleBlockKernelsPass
    : gs::impl::MergeSingleBlockKernelsBase<MergeSingleBlockKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;
    SmallVector<Run, 0> runs;
    module.walk([&](FunctionOpInterface function) {
      if (isa<gpu::GPUFuncOp>(function) || function.isExternal())
        return;
      for (Block &block : function.getFunctionBody()) {
        SmallVector<gs::KernelPart> run;
        // The memory the run's kernels access, if all of it is known.
        std::optional<gs::KernelAccesses> accessed = gs::KernelAccesses();
        // The kernel of several blocks right before the run, and whether
        // the run went on past a launch (then it cannot move before it).
        std::optional<gs::KernelPart> host;
        bool skippedLaunch = false;
        auto endRun = [&] {
          if (host && !skippedLaunch && !run.empty() &&
              fitsLastBlock(*host, run))
            runs.push_back({std::move(host), std::move(run)});
          else if (run.size() > 1)
            runs.push_back({std::nullopt, std::move(run)});
          run.clear();
          accessed = gs::KernelAccesses();
          host.reset();
          skippedLaunch = false;
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
          if (run.empty()) {
            // A candidate host for the next run, or host code between.
            if (part)
              host = std::move(part);
            else if (accesses || !gs::commutesWithKernels(op))
              host.reset();
            continue;
          }
          // The run's kernels may run after a kernel independent of them.
          if (accessed && accesses &&
              gs::areIndependent(*accesses, *accessed)) {
            skippedLaunch = true;
            continue;
          }
          if (!gs::commutesWithKernels(op))
            endRun();
          // A kernel that ended the run may be the next one's host.
          if (run.empty() && part)
            host = std::move(part);
        }
        endRun();
      }
    });
    SymbolTable &table = symbols.getSymbolTable(module);
    unsigned next = 0;
    // Per kernel, the next index of a run in its last block.
    llvm::StringMap<unsigned> nextOfHost;
    for (Run &run : runs) {
      if (run.host) {
        mergeIntoLastBlock(*run.host, run.parts, table, nextOfHost);
        run.parts.push_back(std::move(*run.host));
      } else {
        merge(run.parts, gs::getUnusedKernelName(table, "gs_sequence", next));
      }
      gs::eraseKernelParts(run.parts, table);
    }
  }

  /// The bytes of `part`'s shared memory.
  static int64_t sharedBytes(const gs::KernelPart &part) {
    int64_t bytes = 0;
    for (BlockArgument attribution : part.workgroup)
      bytes += gs::getBufferBytes(cast<MemRefType>(attribution.getType()));
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

  /// Whether `run` fits in the last block of `host`: the host has few
  /// blocks, the run's whole-block parts have its block size, the others
  /// no more threads, and all the shared memory with the ticket's fits.
  static bool fitsLastBlock(const gs::KernelPart &host,
                            ArrayRef<gs::KernelPart> run) {
    if (host.numBlocks() > kMaxHostBlocks)
      return false;
    int64_t bytes = sharedBytes(host) + gs::kLastBlockFlagBytes;
    for (const gs::KernelPart &part : run) {
      if (part.numThreads() > host.numThreads() ||
          (part.wholeBlock && part.numThreads() != host.numThreads()))
        return false;
      bytes += sharedBytes(part);
    }
    return bytes <= gs::kMaxStaticSharedBytes;
  }

  /// Appends the types of the workgroup memory of `parts`, in order.
  static void appendWorkgroupTypes(ArrayRef<gs::KernelPart> parts,
                                   SmallVectorImpl<Type> &types) {
    for (const gs::KernelPart &part : parts)
      for (BlockArgument attribution : part.workgroup)
        types.push_back(attribution.getType());
  }

  /// The bodies of `run` one after another, each on the threads below its
  /// block size, a barrier between two, at `b` in a block of `numThreads`;
  /// `block` is 0, the index of each part's one block.
  static void cloneRun(OpBuilder &b, Location loc, ArrayRef<gs::KernelPart> run,
                       int64_t numThreads, Value block, Value thread,
                       ArrayRef<BlockArgument> memory) {
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
  }

  /// The name of the kernel that `part` launches.
  static StringRef kernelName(const gs::KernelPart &part) {
    if (auto launch = dyn_cast<gpu::LaunchFuncOp>(part.launch))
      return launch.getKernelName().getValue();
    auto launch = cast<gpu::LaunchOp>(part.launch);
    if (std::optional<StringRef> name = launch.getFunction())
      return *name;
    return "gs_launch_kernel";
  }

  /// Launches `host` and then, in its last block to finish, the bodies of
  /// `run`, where the run's last launch was.
  static void mergeIntoLastBlock(const gs::KernelPart &host,
                                 ArrayRef<gs::KernelPart> run,
                                 SymbolTable &table,
                                 llvm::StringMap<unsigned> &nextOfHost) {
    Operation *last = run.back().launch;
    Location loc = last->getLoc();
    MLIRContext *context = last->getContext();
    StringRef base = kernelName(host);
    base.consume_back("_kernel");
    std::string name = gs::getUnusedKernelName(table, (base + "_then").str(),
                                               nextOfHost[base]);
    StringRef stem = StringRef(name).drop_back(StringRef("kernel").size());

    // The ticket counter, zero before and after each launch.
    memref::GlobalOp counter =
        gs::createTicketCounter(loc, (stem + "ticket").str(), table,
                                table.getOp()->getRegion(0).front().begin());

    SmallVector<Type> workgroup{gs::getLastBlockFlagType(context)};
    appendWorkgroupTypes(host, workgroup);
    appendWorkgroupTypes(run, workgroup);

    OpBuilder b(last);
    int64_t numBlocks = host.numBlocks();
    int64_t numThreads = host.numThreads();
    gpu::LaunchOp merged =
        gs::createMergedLaunch(b, loc, numBlocks, numThreads, name, workgroup);
    Value block = merged.getBlockIds().x;
    Value thread = merged.getThreadIds().x;
    ArrayRef<BlockArgument> memory = merged.getWorkgroupAttributions();
    Value flag = memory.front();
    memory = memory.drop_front();
    gs::cloneKernelPart(b, host, block, thread,
                        memory.take_front(host.workgroup.size()));
    memory = memory.drop_front(host.workgroup.size());

    {
      OpBuilder::InsertionGuard guard(b);
      gs::buildLastBlockIf(b, loc, thread, numBlocks, counter, flag);
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      cloneRun(b, loc, run, numThreads, zero, thread, memory);
    }
    gpu::TerminatorOp::create(b, loc);
  }

  /// Launches the bodies of `run` one after another in one block, where
  /// its last launch was, as the kernel `name`.
  void merge(ArrayRef<gs::KernelPart> run, StringRef name) {
    Operation *last = run.back().launch;
    Location loc = last->getLoc();
    int64_t numThreads = 0;
    for (const gs::KernelPart &part : run)
      numThreads = std::max(numThreads, part.numThreads());
    SmallVector<Type> workgroup;
    appendWorkgroupTypes(run, workgroup);
    OpBuilder b(last);
    gpu::LaunchOp merged = gs::createMergedLaunch(b, loc, /*numBlocks=*/1,
                                                  numThreads, name, workgroup);
    cloneRun(b, loc, run, numThreads, merged.getBlockIds().x,
             merged.getThreadIds().x, merged.getWorkgroupAttributions());
    gpu::TerminatorOp::create(b, loc);
  }
};
} // namespace
