//===- Passes.td - GradScale conversion passes -------------*- tablegen -*-===//

#ifndef GS_CONVERSION_PASSES_TD
#define GS_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertGSToLinalg : Pass<"convert-gs-to-linalg"> {
  let summary = "Lower gs tensor operations to linalg, tensor, arith and math";
  let description = [{
    Rewrites every gs tensor operation (and gs.optimizer_step, gs.rescale,
    gs.unscale) nested in the operation it runs on into linalg operations on tensors, with
    tensor, arith and math for the rest. Contractions become named linalg
    ops (matmul, conv) that the CPU kernel schedule tiles and vectorizes;
    elementwise ops broadcasting linalg.generic ops built from a per-op
    scalar table. FP16 contractions accumulate in f32 and round once;
    transcendental functions of f16 values are evaluated in f32.

    The training structure (gs.param reads and writes, gs.update) is
    lowered by `convert-gs-params-to-memref`; gs.backward regions must be
    differentiated (gs-autodiff) and inlined (gs-inline-backward) first.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def ConvertGSParamsToMemRef
    : Pass<"convert-gs-params-to-memref", "::mlir::ModuleOp"> {
  let summary = "Lower gs.param state to mutable memref globals";
  let description = [{
    Each `gs.param` becomes a public, mutable `memref.global` holding its
    initial value (so that a runtime can find, checkpoint and restore it by
    name); `gs.param.read` becomes `memref.get_global` seen as a tensor, and
    `gs.param.write` a `bufferization.materialize_in_destination` into the
    global. A read in a function that later writes the same parameter is
    copied first, so that the write cannot change what the read saw.
    `gs.update` is first expanded into what it is defined as: reads of the
    parameter and its optimizer state, `gs.optimizer_step`, and writes. The
    `gs.training` configuration, which has served autodiff by then, is
    dropped.
  }];
  let dependentDialects = [
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect", "::mlir::tensor::TensorDialect",
    "::mlir::linalg::LinalgDialect"
  ];
}

#endif // GS_CONVERSION_PASSES_TD
