//===- Passes.td - Passes of the GradScale pipelines -------*- tablegen -*-===//
//
// Small passes on upstream dialects that the pipelines need between
// upstream's own passes.
//
//===----------------------------------------------------------------------===//

#ifndef GS_PIPELINES_PASSES_TD
#define GS_PIPELINES_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertStridedCopyToLinalg : Pass<"convert-strided-copy-to-linalg"> {
  let summary = "Turn memref.copy between non-contiguous buffers into "
                "linalg.copy";
  let description = [{
    The LLVM lowering of `memref.copy` emits a `memcpy` when both buffers
    are contiguous and otherwise calls `memrefCopy` from MLIR's C runner
    utilities library. This pass rewrites the second kind (copies into or
    out of subviews, as bufferized padding and concatenation produce) into
    `linalg.copy`, which lowers to loops, so that compiled code needs no
    runtime library.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def SeparateReturnedBuffers
    : Pass<"separate-returned-buffers", "::mlir::func::FuncOp"> {
  let summary = "Give every memref a function returns a buffer of its own";
  let description = [{
    When a `func.return` returns one buffer at several positions (a model
    whose outputs are the same value, or empty tensors that CSE merged),
    each position after the first gets a fresh copy. Callers then own one
    buffer per result, and `buffer-results-to-out-params` with
    `hoist-static-allocs` (which in LLVM 22 crashes on a buffer returned
    twice, llvm-project#219492) sees distinct allocations.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

#endif // GS_PIPELINES_PASSES_TD
