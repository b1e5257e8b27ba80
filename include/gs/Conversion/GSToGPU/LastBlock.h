//===- LastBlock.h - Work a kernel's last block finishes --------*- C++ -*-===//
//
// A kernel of several blocks can finish what would be a second launch (the
// last sum of its partial sums, bookkeeping on it) in whichever of its
// blocks finishes last: each block fences its writes at the GPU's scope and
// takes a ticket from a counter of the kernel's; the block that takes the
// last ticket sees every block's writes, resets the counter for the next
// launch and runs the rest (the "last block" reduction of CUDA's
// threadFenceReduction sample). gs-merge-single-block-kernels and the GEMM
// kernels' statistics use it.
//
//===----------------------------------------------------------------------===//

#ifndef GS_CONVERSION_GSTOGPU_LASTBLOCK_H
#define GS_CONVERSION_GSTOGPU_LASTBLOCK_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::gs {

/// Marks an scf.if in a kernel whose condition every thread of a block
/// computes alike, so that it may hold barriers (the last block of a
/// kernel finishing a computation): gs-emulate-gpu then takes thread 0's.
constexpr llvm::StringLiteral kBlockUniformAttrName = "gs.block_uniform";

/// Marks a memref.global that only kernels use (a kernel's ticket
/// counter): memory of the kernels' own, not a parameter of the step.
constexpr llvm::StringLiteral kKernelStateAttrName = "gs.kernel_state";

/// The workgroup memory through which thread 0 tells its block that it
/// took the last ticket: memref<1xi32> in the workgroup address space.
MemRefType getLastBlockFlagType(MLIRContext *context);
constexpr int64_t kLastBlockFlagBytes = 4;

/// A kernel's ticket counter: a zero-initialized i32 `memref.global`,
/// marked `gs.kernel_state`, named `name` (renamed if taken), inserted into
/// `symbols` at `at`.
memref::GlobalOp createTicketCounter(Location loc, StringRef name,
                                     SymbolTable &symbols, Block::iterator at);

/// Builds at `b`, after a kernel's body (every thread of the block reaches
/// it), the ticket protocol of a launch of `numBlocks` blocks: each thread
/// fences its writes, thread 0 takes a ticket of `counter` and tells the
/// block through `flag` (of getLastBlockFlagType) whether it was the last,
/// in which case it resets the counter. Returns the block-uniform scf.if
/// the last block enters, after a fence, with `b` in it.
scf::IfOp buildLastBlockIf(OpBuilder &b, Location loc, Value thread,
                           int64_t numBlocks, memref::GlobalOp counter,
                           Value flag);

} // namespace mlir::gs

#endif // GS_CONVERSION_GSTOGPU_LASTBLOCK_H
