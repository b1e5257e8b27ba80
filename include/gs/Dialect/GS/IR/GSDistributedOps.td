//===- GSDistributedOps.td - Data-parallel training ops ----*- tablegen -*-===//
//
// What gs-data-parallel inserts into a train step so that replicas of it on
// several processes (ranks) train as one: the sum of every rank's gradients
// and scaling statistics, and the number of ranks. They lower to calls of
// the runtime's collectives (include/gs/Runtime/Collectives.h), which MPI
// or NCCL carry; run alone, a step is its own single replica.
//
//===----------------------------------------------------------------------===//

#ifndef GS_DIALECT_GS_IR_GSDISTRIBUTEDOPS_TD
#define GS_DIALECT_GS_IR_GSDISTRIBUTEDOPS_TD

def GS_AllReduceOp : GS_Op<"all_reduce", [AllTypesMatch<["input", "result"]>]> {
  let summary = "combine a value across the replicas of a train step";
  let description = [{
    Every replica (rank) passes its `input`; each gets the elementwise
    `reduction` (`sum` or `max`) over all ranks. On `!gs.stats` (the
    `reduction` must be `sum`) the result is the statistics of the
    concatenation of every rank's tensor: counts and sums add, the maximum
    magnitude is the largest. Every rank reaches the same all_reduce ops in
    the same order: the op communicates, so it is neither reordered nor
    removed.
    ```mlir
    %g = gs.all_reduce sum %dw : tensor<10x256xf32>
    %s = gs.all_reduce sum %stats : !gs.stats
    ```
  }];
  let arguments = (ins AnyTypeOf<[StaticShapeTensorOf<[F32, F64, I64]>,
                                  GS_StatsType]>:$input,
                   GS_CollectiveReduction:$reduction);
  let results = (outs AnyTypeOf<[StaticShapeTensorOf<[F32, F64, I64]>,
                                 GS_StatsType]>:$result);
  let assemblyFormat = "$reduction $input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def GS_WorldSizeOp : GS_Op<"world_size", [Pure]> {
  let summary = "the number of replicas of the train step";
  let description = [{
    How many ranks run the train step together (1 when it runs alone), as
    the runtime's communicator says.
    ```mlir
    %n = gs.world_size : i64
    ```
  }];
  let results = (outs I64:$size);
  let assemblyFormat = "attr-dict `:` type($size)";
}

#endif // GS_DIALECT_GS_IR_GSDISTRIBUTEDOPS_TD
