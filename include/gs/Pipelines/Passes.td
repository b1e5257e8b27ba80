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

def WriteParamsInPlace
    : Pass<"gs-write-params-in-place", "::mlir::func::FuncOp"> {
  let summary = "Compute a parameter's new value in the parameter's buffer";
  let description = [{
    gs-params-to-memref writes a parameter's new value (an optimizer
    update's weights and state) by copying it into the parameter's memref
    global (`bufferization.materialize_in_destination`), after computing it
    into a buffer of its own. Where a linalg op computes the value into an
    empty tensor and nothing touches that global between the op and the
    write, the op computes into the global instead (its init becomes the
    global, writable), and the copy goes: one pass over the weights and
    each optimizer state less per step. Reads of the old value are safe:
    gs-params-to-memref copies every read that a later write would change,
    where it reads. Such a copy then goes where every op reading it runs
    before the write (in the function's block) or is the op writing the
    global in place, reading each element through the map it writes it
    with (an elementwise update): they read the global itself.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
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

def FuseElementwise : Pass<"gs-fuse-elementwise"> {
  let summary = "Fuse elementwise linalg ops, leaving contractions whole";
  let description = [{
    Fuses chains of elementwise `linalg.generic` ops into one (bias, batch
    normalization and activation after a GEMM become a single pass over the
    data) and moves reshapes out of the way by expanding elementwise ops.
    Unlike upstream's `linalg-fuse-elementwise-ops`, it never folds a
    reshape into a contraction: a GEMM behind a flatten stays a GEMM with
    one reduction dimension, which the kernel schedule can block, instead of
    a contraction over the flattened dimensions.

    With `multi-result`, an elementwise op with several results, each used
    once by an elementwise op, is fused into each of them (computed again
    in each, as upstream's fusion does with a producer of other users):
    an optimizer update (new weight and new momentum) and the two selects
    its skip guard became on the GPU (gs-device-scalars) become two ops
    that `gs-fuse-siblings same-loops=true` then merges into one,
    computing the update once, a kernel that reads and writes each
    parameter once. Off by default: the CPU pipeline has no such selects.

    With `transposes`, a `linalg.transpose` whose one user is a generic
    other than a contraction is fused into it, which then reads the
    transpose's input through the permuted map: on a GPU a kernel and a
    round trip through memory fewer (the partial sums of a weight gradient
    split over its images, moved part first to be summed). Off by
    default: the CPU's kernel schedule tiles a transpose into vectorized
    blocks of register shuffles, which a strided read in its user would
    lose.
  }];
  let options = [
    Option<"multiResult", "multi-result", "bool", /*default=*/"false",
           "Fuse an elementwise op with several results into their users, "
           "elementwise ops using one each">,
    Option<"transposes", "transposes", "bool", /*default=*/"false",
           "Fuse a linalg.transpose into its one user, a generic that is "
           "not a contraction">,
  ];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"
  ];
}

def FuseSiblings : Pass<"gs-fuse-siblings"> {
  let summary = "Fuse elementwise ops and reductions that read the same "
                "tensor into one loop nest";
  let description = [{
    Two `linalg.generic` ops on static tensors in the same block, over the
    same loops, that read a common tensor at every point the same way
    (identity maps) become one generic computing both ops' results: the
    tensor is read once, and what both compute from it is computed once
    (`eliminateCommonSubExpressions` on the fused body). A loop either op
    reduces along is a reduction loop of the fused op; an elementwise op's
    output may then be indexed by it, and is still written once per point,
    the loops running in the same order: the results are the same bits.
    The fused op goes where the later op was if nothing between them reads
    the earlier one's results, else where the earlier one was if the later
    one's operands and the values its body uses are there (empty tensors,
    constants and fills of them move up); otherwise the two stay apart (a
    rescale by a scale decided from the other op's statistics).

    In a gradient-scaling step: the rounding of a gradient to FP16 and
    `gs.cast_stats`' counting of it, batch normalization's two backward
    sums over the same gradient, and the statistics and rounding that each
    recomputed the batch normalization backward from its inputs, had each
    been a pass over memory of their own.

    Only ops that read their operands in loop order (no transpose, window
    or gather) and whose bodies are arithmetic LLVM vectorizes (no libm
    call, which would keep the fused loop scalar) fuse. Meant for after the
    kernel schedule, whose GEMMs are loops by then and which matches single
    ops around them.

    With `same-loops`, for gs-linalg-to-gpu's kernels: only ops over the
    same loops, parallel and reduction alike, fuse (a kernel runs a
    reduction's loops in one thread per output, which an elementwise op
    joining it would serialize), whatever their bodies (a kernel calls
    libdevice as readily as it computes arithmetic); and a reduction a
    kernel may split across a block's threads (every output combined
    exactly in any order) only with another such.
  }];
  let options = [
    Option<"sameLoops", "same-loops", "bool", /*default=*/"false",
           "Fuse only ops over the same parallel and reduction loops, of "
           "any body">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def FuseTileConsumers : Pass<"gs-fuse-tile-consumers"> {
  let summary = "Compute the elementwise ops and statistics that read a "
                "tile loop's result in that loop, a tile at a time";
  let description = [{
    A `linalg.generic` that reads the result of a tile loop (an `scf.for`
    each of whose iterations computes a block of the result that no other
    iteration touches, the blocks covering it: a GEMM's loop over panels
    or a convolution's over groups of images) through a permutation map
    is computed in that loop: after each tile, over the tile's iterations,
    reading the tile while it is still in the cache. The loop carries the
    consumer's outputs; a reduction's running value goes from tile to
    tile. The CPU twin of a GPU kernel's epilogue: a gradient's rescale,
    rounding to FP16 and underflow counts, a ReLU mask and batch
    normalization's backward product, had each read the whole result
    back from memory.

    Fused where the consumer's outputs are elementwise, or small
    reductions (at most 4096 elements, which every tile reads and writes)
    whose result is the same in any order (integer counts, max, min), or
    floating-point sums where the tiles run along the consumer's outermost
    loop, which keeps every point's place in the loops' order: the results
    are the same bits. The consumer's other operands must be defined
    before the loop, or be empty tensors, constants or fills, which move
    up. Tiles of fewer than 512 elements are left alone (a loop nest per
    tile would cost more than the pass it saves). Where nothing else reads
    the loop's result and it starts empty or filled, each iteration then
    computes its tile into a tensor of its own, empty or filled likewise,
    and the loop stops carrying the whole result.

    A peeled loop counts too: tiles up to a multiple of their size, then
    an edge tile after the loop, inserted into its result (AVX2's panels
    of 24 columns over a GEMM's 128), where the consumer is the whole
    result's one reader, so that it is never written. The consumer runs
    over the edge after the loop, from the outputs the loop carries, and
    the edge starts from the loop's initial value, which the loop leaves
    there.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def CollapseInnerLoops : Pass<"gs-collapse-inner-loops"> {
  let summary = "Merge the innermost parallel loops of elementwise and "
                "reduction ops into one loop";
  let description = [{
    A `linalg.generic` on static tensors (not a contraction or convolution)
    whose innermost parallel loops are contiguous in every operand becomes
    a generic with those loops merged into one, its operands collapsed
    alike (`linalg::collapseOpIterationDims`): the same elements in the
    same order, so the same results. LLVM fully unrolls an innermost loop
    of a few constant iterations (a row of 7, 14 or 28 elements) and then
    vectorizes the loop around it with gathers and scatters at the row
    stride; over the merged rows it vectorizes along memory. ResNet-18's
    batch-normalization sums over the batch (per channel and position,
    into f64 lanes) ran 3x faster so. The innermost reduction loops merge
    likewise where every output's reduction is the same in any order
    (integer counts, and, or, max, min) or is written at every point (an
    elementwise op's, fused by `gs-fuse-siblings`): LLVM vectorizes those,
    over the merged loop along memory; floating-point sums it keeps in
    order and scalar either way, and they stay as they are. Loops along
    which an operand's buffer will not be contiguous (a strided slice, a
    slice of part of each row, or an op computing into one: the strides
    are traced through slices, destinations, loops and reshapes) stay:
    collapsing such an operand bufferizes into a copy of it. An input broadcast along
    unit dimensions by constant indices (a 1 x C x 1 x 1 bias read at
    (0, c, 0, 0)) is read through a collapse_shape without them first.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"
  ];
}

def UnrollRegisterBlockSteps : Pass<"gs-unroll-register-block-steps"> {
  let summary = "Have LLVM unroll the reduction steps of the register blocks";
  let description = [{
    After the kernel schedule and loop-invariant-subset-hoisting, a
    register block is a loop over the reduction steps whose iteration
    arguments are its accumulator rows (vectors) and whose body broadcasts
    A, loads a row of B and multiplies-adds (`vector.fma`). LLVM leaves
    such a large loop body rolled; this pass marks the loop for LLVM to
    unroll 4 times (`llvm.loop_annotation`, which
    `gs-loop-annotations-to-llvm` carries over to the lowered loop's
    branch), so that the counter, compare and branch, competing with the
    FMAs for ports, run once per four steps. LLVM unrolls it late, where unrolling it here cost 2 s of
    ResNet-18's MLIR lowering. Only blocks of 8 accumulators or more: the
    narrow edge blocks are many (one per peeled edge of every GEMM) and
    run little of the time.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def LoopAnnotationsToLLVM : Pass<"gs-loop-annotations-to-llvm"> {
  let summary = "Carry loops' llvm.loop_annotation over to their LLVM branches";
  let description = [{
    `convert-scf-to-cf` moves an `scf.for`'s `llvm.loop_annotation`
    attribute to the branch that closes the loop, and
    `convert-cf-to-llvm` keeps it there as an attribute that translation
    to LLVM IR ignores (LLVM 22): this pass, after both, makes it the
    `loop_annotation` of the `llvm.br` or `llvm.cond_br`, which becomes
    the branch's `!llvm.loop` metadata.
  }];
}

def PrefetchBlockOutputs : Pass<"gs-prefetch-block-outputs"> {
  let summary = "Prefetch the outputs the next panel's register block loads";
  let description = [{
    On bufferized code, before the steps of each register block (as
    gs-unroll-register-block-steps finds them), prefetches into the L2
    cache (`memref.prefetch`, locality 2) the output rows that the block at
    the same rows of the next panel will load as its accumulators: each
    accumulator row read again, one block width further along the row, one
    prefetch per cache line, resolved through the subviews to the buffer
    they view and kept within its rows (the last panel prefetches its own).
    A large GEMM's output does not stay in the caches between the passes
    of its reduction slabs, and a block's first steps waited for its rows
    from memory (11% of a 2048^3 GEMM in its load instructions, 5% with
    the prefetches); the next panel's block at the same rows runs 8 blocks
    later, time enough.
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::memref::MemRefDialect"
  ];
}

def SplitReductions : Pass<"gs-split-reductions"> {
  let summary = "Sum large floating-point reductions in lanes, then the lanes";
  let description = [{
    A floating-point sum depends on its order, so a target may not split it
    across threads or vector lanes on its own. This pass fixes an order that
    both can run in parallel, for every target alike: a `linalg.generic`
    that reduces at least `min-points` points, each of its outputs combined
    by `arith.addf` or `arith.mulf` (or by an op exact in any order), becomes

    1. the same generic with its innermost reduction loops (at most
       `max-lanes` points, leaving at least one reduction loop) made
       parallel: a partial result per lane, each combined from the
       combiner's identity over the remaining reduction loops in order;
    2. a generic that combines each output's initial value with its lanes'
       partials in row-major order.

    The batch-normalization and gradient statistics of a convolutional
    network (tens of thousands to millions of points per output) then run
    as one thread per lane on a GPU and as vector lanes on the CPU, and the
    two compute the same bits. Contractions and convolutions are left to
    their kernels, but not a sum of an elementwise product (its inputs all
    read through one indexing map, as batch normalization's backward sum
    of dy * x-hat per channel), which no GEMM kernel computes, nor a
    grouped convolution (`linalg.conv_2d_ngchw_gfchw`) of too few filters a
    group for a GEMM at dilation 1 (a depthwise layer's weight gradient),
    which is generalized first. A reduction of whole tensors into scalars whose
    innermost loops would make too few lanes (a 3x3 convolution weight of
    512 input channels: 9 lanes, as 9 x 512 exceeds `max-lanes`; a single
    loop: none) reads its inputs as (points / lanes) x lanes matrices
    first, the most lanes that divide the points (at most `max-lanes`, each
    of at least 8 points), and is split so; other ops without enough lanes
    are left as they are.
  }];
  let options = [
    Option<"minPoints", "min-points", "int64_t", /*default=*/"1024",
           "Split reductions over at least this many points">,
    Option<"maxLanes", "max-lanes", "int64_t", /*default=*/"4096",
           "The most partial results per output point">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def AddEvalStep : Pass<"gs-add-eval-step", "::mlir::ModuleOp"> {
  let summary = "Add eval_step: forward returning its class scores too";
  let description = [{
    Adds `eval_step`, a copy of `forward` that also returns the class scores
    (batch x classes) its loss is computed from (the logits of a softmax
    cross-entropy, the log-probabilities of a negative log-likelihood), so
    that a runtime can count correct predictions. It changes no parameter:
    the `gs.param.write`s of `forward` (batch-norm running statistics,
    random-number state) are left out. A module without `forward`, with an
    `eval_step` already, or whose `forward` returns no such loss is an
    error at the op concerned.
  }];
}

def CPUKernelSchedule : Pass<"gs-cpu-kernel-schedule", "::mlir::ModuleOp"> {
  let summary = "Tile and vectorize contractions for the host CPU";
  let description = [{
    Blocks the GEMMs of linalg-on-tensors IR for SIMD registers. 2-D
    convolutions become an im2col gather and a GEMM; grouped ones a loop
    of such convolutions, one a group, where a group has 4 filters and 16
    reduction steps or more, and one generic otherwise (depthwise ones,
    with the output positions inside the reductions where the windows move
    by 1 along the rows). Every contraction with
    one reduction dimension (matmuls, batched matmuls, the im2col products)
    is tiled into panels of `nr` columns and `kc` = 256 reduction steps, and
    those into register blocks of `mr x nr` outputs updated one reduction
    step at a time; peeling gives the full blocks and the edge blocks static
    shapes of their own, so no masks are needed. Each block is vectorized
    and unrolled into one vector per SIMD register, and its contraction
    lowered to broadcast-and-FMA outer products; the pipeline then hoists
    the accumulators out of the reduction loop. The block follows the SIMD
    width: 8 x 32 floats with 512-bit vectors, 4 x 24 with 256-bit ones,
    so that the accumulators, one row of B and a broadcast fit the register
    file. Matrix-vector products and other contractions stay as they are.

    `schedule-file` replaces the built-in schedule by the
    `@__transform_main` named sequence of a transform-dialect file, for
    experiments.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"0",
           "SIMD register width in bits (0: the host CPU's)">,
    Option<"scheduleFile", "schedule-file", "std::string", /*default=*/"",
           "Transform-dialect file whose @__transform_main to apply instead "
           "of the built-in schedule">,
  ];
  let dependentDialects = [
    "::mlir::transform::TransformDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
    "::mlir::tensor::TensorDialect", "::mlir::arith::ArithDialect"
  ];
}

def OutlineKernels : Pass<"gs-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "Give every loop nest of a step a function of its own";
  let description = [{
    Moves each outermost loop nest of the module's functions (a linalg op
    or an `scf` loop, on buffers) into a private function that the step
    calls, so that LLVM optimizes and compiles many small functions instead
    of one with thousands of loops: several of its passes (induction
    variable simplification, loop strength reduction) take time that grows
    with the size of the function around each loop, which made a ResNet-18
    step take minutes to compile.

    A kernel takes the buffers and values it uses from outside as
    arguments; constants and views (subviews, casts, reshapes) are
    recomputed inside it, so that it takes the buffers they view. Kernels
    that are the same but for their arguments (the repeated blocks of a
    network, a forward pass in both the train and the eval step) share one
    function. Kernels are `noinline` and internal. When every buffer a
    kernel takes is an allocation or a global of its own, the kernel is
    marked `gs.distinct_buffers`, which `gs-mark-distinct-buffers-noalias`
    turns into `noalias` on its pointers after the lowering to LLVM: LLVM
    then knows, as it did of the allocations when the loops were inline,
    that a loop's stores do not reach its loads.
  }];
  let dependentDialects = [
    "::mlir::func::FuncDialect", "::mlir::LLVM::LLVMDialect"
  ];
}

def MarkDistinctBuffersNoAlias
    : Pass<"gs-mark-distinct-buffers-noalias", "::mlir::LLVM::LLVMFuncOp"> {
  let summary = "noalias on the pointers of kernels given distinct buffers";
  let description = [{
    On an `llvm.func` marked `gs.distinct_buffers` by `gs-outline-kernels`
    (every buffer it takes is an allocation or a global no other argument
    reaches), puts `llvm.noalias` on every pointer argument and drops the
    mark. The lowering of `func.func` to `llvm.func` drops argument
    attributes of buffers, whose descriptors become several arguments, so
    this runs after it.
  }];
}

def FillPadFrames : Pass<"gs-fill-pad-frames"> {
  let summary = "Pad by filling the frame and inserting the source";
  let description = [{
    A `tensor.pad` by a constant, of static shapes, becomes an empty tensor
    whose frame is filled with the constant (for each padded side of each
    dimension, one slab: the dimensions before it restricted to the
    interior, so no element is filled twice) and the source inserted into
    its interior. `tensor.pad` itself bufferizes into a fill of the whole
    padded buffer and a copy into its interior, writing every interior
    element twice: a convolution's padded 8x64x58x58 input filled 6.9 MB
    for a frame of 0.5 MB. Where the last dimension is padded (its slabs
    are columns, an element per row) and leading dimensions are not (images
    and channels), it is done a plane at a time (an `scf.for` nest over
    the leading dimensions, planes of at most 512 KiB), so that the column
    fills find the rows the plane's copy has just written in the cache.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect"
  ];
}

def MarkAllocationsNoAlias
    : Pass<"gs-mark-allocations-noalias", "::mlir::LLVM::LLVMFuncOp"> {
  let summary = "noalias on the results of the generic allocation functions";
  let description = [{
    Puts `llvm.noalias` on the result of the declarations of MLIR's generic
    allocation functions (`_mlir_memref_to_llvm_alloc` and
    `_mlir_memref_to_llvm_aligned_alloc`, which `finalize-memref-to-llvm`
    calls with `use-generic-functions`; the runtime's buffer cache defines
    them): each returns a block no other pointer reaches, as LLVM knows
    `aligned_alloc` does by its name. Without it LLVM could not move a
    copy's loads past its stores, and left copies and short elementwise
    loops scalar.
  }];
}

#endif // GS_PIPELINES_PASSES_TD
