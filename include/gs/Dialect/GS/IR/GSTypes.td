//===- GSTypes.td - GradScale types ------------------------*- tablegen -*-===//

#ifndef GS_DIALECT_GS_IR_GSTYPES_TD
#define GS_DIALECT_GS_IR_GSTYPES_TD

include "gs/Dialect/GS/IR/GSBase.td"

def GS_StatsType : TypeDef<GS_Dialect, "Stats"> {
  let mnemonic = "stats";
  let summary = "statistics of one gradient tensor";
  let description = [{
    What `gs.grad_stats` gathers in one pass over a tensor: element count,
    sum, sum of squares, max |x|, and over the nonzero elements their count
    and the first two moments of ln|x|. `gs.compute_scale` turns statistics
    into a scale. Lowered to a small f64 vector (counts beyond 2^24 and
    sums over millions of elements need double precision).

    ```mlir
    %s = gs.grad_stats %dy : tensor<64x10xf16>
    ```
  }];
}

#endif // GS_DIALECT_GS_IR_GSTYPES_TD
