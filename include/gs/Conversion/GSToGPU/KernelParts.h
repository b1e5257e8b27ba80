//===- KernelParts.h - Kernels run as parts of a larger kernel --*- C++ -*-===//
//
// What gs-merge-single-block-kernels and gs-merge-independent-kernels share:
// a kernel launch (gpu.launch, or gpu.launch_func and its gpu.func) seen as
// a body that a larger launch can run on some of its blocks and threads,
// and the memory a kernel reads and writes.
//
//===----------------------------------------------------------------------===//

#ifndef GS_CONVERSION_GSTOGPU_KERNELPARTS_H
#define GS_CONVERSION_GSTOGPU_KERNELPARTS_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"

#include <array>
#include <optional>

namespace mlir::gs {

/// A kernel launch of constant grid and block sizes whose body computes the
/// same when run on some blocks and threads of a larger launch.
struct KernelPart {
  /// The gpu.launch or gpu.launch_func.
  Operation *launch;
  /// The kernel's body, one block: the gpu.launch's or the gpu.func's.
  Block *body;
  /// For a gpu.func, the host values its arguments are.
  SmallVector<Value> arguments;
  /// The grid's and the block's sizes in x, y, z.
  std::array<int64_t, 3> grid;
  std::array<int64_t, 3> threads;
  /// The body's workgroup (shared) memory attributions.
  SmallVector<BlockArgument> workgroup;
  /// Whether the body works across its block's threads (barriers,
  /// warp-level ops, shared memory): it must then run on a block of
  /// exactly its own threads, all of them.
  bool wholeBlock = false;

  int64_t numBlocks() const { return grid[0] * grid[1] * grid[2]; }
  int64_t numThreads() const { return threads[0] * threads[1] * threads[2]; }
};

/// `op` as a kernel part, if it is a launch (synchronous, no clusters,
/// dynamic shared memory or private attributions) of constant sizes whose
/// body is one block with no symbol uses and no GPU ops but the thread and
/// block indices and sizes and, for a whole-block part, barriers, shuffles
/// and asynchronous copies to shared memory.
std::optional<KernelPart> getKernelPart(Operation *op,
                                        SymbolTableCollection &symbols);

/// A launch of `numBlocks` blocks of `numThreads` threads (one dimension
/// each) with the workgroup memory `workgroup` at `b`, to be outlined as
/// the kernel `name`, and `b` at the end of its body, which has no
/// terminator yet.
gpu::LaunchOp createMergedLaunch(OpBuilder &b, Location loc, int64_t numBlocks,
                                 int64_t numThreads, StringRef name,
                                 TypeRange workgroup = {});

/// Clones `part`'s body (without its terminator) at `b`, as run by the
/// thread of linear index `thread` (below the part's block size) of the
/// part's block of linear index `block`: the body's thread and block
/// indices and the grid's and block's sizes are the part's own, and its
/// workgroup memory is `workgroup` (of the part's attributions' types).
void cloneKernelPart(OpBuilder &b, const KernelPart &part, Value block,
                     Value thread, ValueRange workgroup = {});

/// Erases the launches of `parts`, and the gpu.modules of their kernels
/// that nothing in `table`'s op uses any more.
void eraseKernelParts(ArrayRef<KernelPart> parts, SymbolTable &table);

/// A name for a new kernel, `<prefix>_<i>_kernel` for the first i from
/// `next` on that neither it nor `<prefix>_<i>` names in `table`.
std::string getUnusedKernelName(SymbolTable &table, StringRef prefix,
                                unsigned &next);

/// The bytes a buffer of the statically shaped `type` occupies, each
/// element in whole bytes (an i1 in one), as the LLVM lowering lays it out.
int64_t getBufferBytes(MemRefType type);

/// Whether host code may run after kernels launched before it instead of
/// before them: it has no effect on memory but allocating new buffers.
bool commutesWithKernels(Operation &op);

/// Whether every use of the buffer `value` inside `kernel` (a gpu.launch or
/// gpu.func), through views, only reads it.
bool kernelOnlyReads(Value value, Operation *kernel);

/// The memory a kernel accesses (a global's name, an allocation, a host
/// function's argument), and whether it writes it. Distinct memory does
/// not overlap: the runtime passes a step distinct buffers.
using KernelAccesses = llvm::DenseMap<const void *, bool>;

/// The memory the synchronous launch `op` (gpu.launch, or gpu.launch_func
/// of a gpu.func) accesses; nullopt for another op, or where a buffer it
/// uses is not known memory.
std::optional<KernelAccesses> getKernelAccesses(Operation *op,
                                                SymbolTableCollection &symbols);

/// Whether kernels that access `a` and `b` may run in either order or side
/// by side: neither writes what the other accesses.
bool areIndependent(const KernelAccesses &a, const KernelAccesses &b);

} // namespace mlir::gs

#endif // GS_CONVERSION_GSTOGPU_KERNELPARTS_H
