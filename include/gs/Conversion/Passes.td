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
    "::mlir::tensor::TensorDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect", "::mlir::func::FuncDialect"
  ];
  let options = [
    Option<"deviceCollectives", "device-collectives", "bool",
           /*default=*/"false",
           "gs.all_reduce reduces device buffers (gs_device_all_reduce_*, "
           "a GPU transport such as NCCL): statistics records as a sum and "
           "a max all-reduce merged by a linalg.generic, for lack of "
           "custom reductions there">
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
    parameter and its optimizer state, `gs.optimizer_step`, and writes. A
    read that follows a write of its parameter in the same block, with no
    region, call or update between them, reads the value written. The
    `gs.training` configuration, which has served autodiff by then, is
    dropped.

    With `updates-only`, only `gs.update` is expanded (and `gs.training`
    dropped): the parameters stay gs ops, for a pipeline that computes the
    update on the device before the runtime decides where they live.
  }];
  let options = [
    Option<"updatesOnly", "updates-only", "bool", /*default=*/"false",
           "Expand gs.update only; keep gs.param and its accesses">
  ];
  let dependentDialects = [
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect", "::mlir::tensor::TensorDialect",
    "::mlir::linalg::LinalgDialect"
  ];
}

def ConvertGSToGPU : Pass<"convert-gs-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Compute the FP16 GEMMs and convolutions in fused Tensor "
                "Core kernels, the scale decisions in device kernels";
  let description = [{
    Rewrites every contraction with FP16 operands that the fused Tensor
    Core GEMM kernel computes into a call of that kernel
    (gs-gpu-gemm-kernel's, built once per shape and epilogue and named
    after them): `gs.gemm` with alpha and beta 1 and no C or a bias of one
    value per column; `gs.matmul` of two matrices; `gs.conv` and
    `gs.conv_transpose` without groups (forward convolutions, their weight
    gradients and their data gradients) as implicit GEMMs, which gather
    their operands from the input and weight as the tiles fill and scatter
    the result into the output, summing in the CPU lowering's order; and a
    `gs.scaled_contraction` of any of these, with its scale, rounding and
    both statistics in the kernel's epilogue. The call stays at the tensor
    level, through the kernel's entry function (tensors in and out, the
    buffers inside), so that bufferization sees what each call reads; the
    statistics come back as the lowered `!gs.stats` (tensor<7xf64>,
    through an unrealized cast that convert-gs-to-linalg resolves). A
    kernel gathers statistics only where a result reads them.

    Every `gs.compute_scale` and `gs.unify_scales` becomes a call of a
    kernel of one thread (one per distinct decision, e.g.
    `gs_scale_half_normal_k10_relu`) that reads the statistics from device
    memory, where the epilogues left them, and writes the scale where the
    GEMM kernel that applies it reads it, with no host round trip between a
    step's kernels. The kernels run the scalar code of the CPU lowering
    (include/gs/Conversion/ScaleDecision.h says how close a GPU's scales
    are). Statistics computed by host code reach these
    kernels through the same kind of cast.

    With `wgmma`, the kernels of contractions of at least 64 rows (m: a
    GEMM's rows, a convolution's output channels) run on Hopper's wgmma
    (sm_90a only), the others on mma.sync.

    The rest of the step is left to convert-gs-to-linalg. The kernels'
    gpu.launch ops become CUDA kernels through gs-outline-gpu-kernels and the
    NVVM pipeline, or CPU code through gs-emulate-gpu, which is how the
    tests run a whole train step on its GPU kernels (docs/GPU.md).
  }];
  let options = [
    Option<"wgmma", "wgmma", "bool", "false",
           "Contractions of at least 64 rows on wgmma.mma_async (sm_90a "
           "only)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::gpu::GPUDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::nvgpu::NVGPUDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect", "::mlir::vector::VectorDialect"
  ];
}

def GPUGemmKernel : Pass<"gs-gpu-gemm-kernel", "::mlir::ModuleOp"> {
  let summary = "Add a fused FP16 Tensor Core GEMM kernel to the module";
  let description = [{
    Adds the function `@<name>` that computes C = epilogue(scale * op(A)
    op(B)) for row-major f16 A (m x k, or k x m with `trans-a`) and B (k x
    n, or n x k with `trans-b`) on mma.sync.m16n8k16 with f32 accumulators,
    rounded once to C's type (f16 or f32), as gpu.launch ops: thread-block tiles chosen for the shape
    (128 x 128 of 8 warps for m, n >= 1024; 64 x 64 of 4 warps, or 32 wide
    where m or n <= 32, otherwise), a multi-stage pipeline of cp.async
    (16-byte rows) or guarded copies into padded shared memory, ldmatrix
    fragments (the 128 x 128 tiles ask for two blocks per multiprocessor
    where ptxas fits them in 128 registers). The epilogue, on the accumulator registers,
    scales, adds the bias, rounds to C's type and stores C with the ReLU
    mask applied. It also gathers the statistics of gs.grad_stats of C and
    those of gs.cast_stats of the values it rounds, both before the mask,
    reduced through warp shuffles and shared memory to one partial per
    thread block and summed in a fixed order by a second, one-warp launch,
    so that the result is deterministic. With `wgmma`, the main loop runs
    on Hopper's wgmma.mma_async (sm_90a only): warpgroups of 64 rows,
    both operands read through matrix descriptors from shared memory in
    the PTX ISA's swizzled canonical layouts. See docs/GPU.md.

    With `entry`, also `@<name>_entry`, a tensor-level function calling it,
    that gs-run can execute once gs-emulate-gpu has made the kernel CPU code.
  }];
  let options = [
    Option<"kernelName", "name", "std::string", "\"gemm\"",
           "Name of the kernel function">,
    Option<"m", "m", "int64_t", "0", "Rows of A and C">,
    Option<"n", "n", "int64_t", "0", "Columns of B and C">,
    Option<"k", "k", "int64_t", "0", "Columns of A, rows of B">,
    Option<"transA", "trans-a", "bool", "false",
           "A is stored transposed (k x m)">,
    Option<"transB", "trans-b", "bool", "false",
           "B is stored transposed (n x k)">,
    Option<"output", "output", "::mlir::gs::tensorcore::ElementType",
           "::mlir::gs::tensorcore::ElementType::F16",
           "C's element type",
           [{::mlir::gs::tensorcore::elementTypeValues()}]>,
    Option<"bias", "bias", "bool", "false",
           "Add a per-column bias (memref<n x bias-type>)">,
    Option<"biasType", "bias-type", "::mlir::gs::tensorcore::ElementType",
           "::mlir::gs::tensorcore::ElementType::F32",
           "The bias's element type",
           [{::mlir::gs::tensorcore::elementTypeValues()}]>,
    Option<"reluMask", "relu-mask", "bool", "false",
           "Zero C where a forward ReLU output (memref<m x n x f16>) is "
           "<= 0 (after the statistics)">,
    Option<"statistics", "statistics", "bool", "true",
           "Gather the statistics (off: the same GEMM without them)">,
    Option<"entry", "entry", "bool", "false",
           "Also add the tensor-level @<name>_entry">,
    Option<"blockM", "block-m", "int64_t", "0",
           "Rows of C per thread block (0: chosen for the shape)">,
    Option<"blockN", "block-n", "int64_t", "0",
           "Columns of C per thread block (0: chosen for the shape)">,
    Option<"blockK", "block-k", "int64_t", "0",
           "k per pipeline stage (0: 32)">,
    Option<"warpsM", "warps-m", "int64_t", "0",
           "Warps along m per block (0: chosen for the shape)">,
    Option<"warpsN", "warps-n", "int64_t", "0",
           "Warps along n per block (0: chosen for the shape)">,
    Option<"stages", "stages", "int64_t", "0",
           "k tiles in shared memory at once, >= 2 (0: chosen for the "
           "shape)">,
    Option<"minBlocksPerSM", "min-blocks-per-sm", "int64_t", "0",
           "Thread blocks a multiprocessor should hold at once "
           "(nvvm.minctasm; 1: no hint; 0: chosen for the shape)">,
    Option<"wgmma", "wgmma", "bool", "false",
           "Hopper's wgmma.mma_async (sm_90a only) instead of mma.sync: "
           "warpgroups of 64 rows reading swizzled shared memory through "
           "matrix descriptors">,
    Option<"wgmmaInFlight", "wgmma-in-flight", "int64_t", "0",
           "With wgmma, the groups of a k tile's wgmmas left running while "
           "the next tile's are issued: 0 or 1 (the copies then run "
           "stages - 2 tiles ahead; 3 stages at least)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::gpu::GPUDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::nvgpu::NVGPUDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def EmulateGPU : Pass<"gs-emulate-gpu", "::mlir::ModuleOp"> {
  let summary = "Run gpu.launch kernels on the CPU, warp-level operations "
                "emulated";
  let description = [{
    Rewrites every gpu.launch into CPU code with the same results: thread
    blocks one after another; inside a block, the code between barriers and
    warp-level operations as loops over the threads, with per-thread
    buffers for the values that cross them; nvgpu.mma.sync (m16n8k16, f16 x
    f16 -> f32), nvgpu.ldmatrix and gpu.shuffle as loops over the 32 lanes
    of each warp that gather and scatter registers by the fragment layouts
    of the PTX ISA. mma.sync accumulates with one f32 fma per product in k
    order. cp.async completes as late as the PTX ISA lets it: its
    destination holds NaN (integers: all ones) until a
    cp.async.wait_group of the issuing thread retires its group. What a
    wgmma.mma_async reads must not change until its warpgroup has waited
    for it and every thread has passed a barrier since: where it does,
    the program writes so to stderr and aborts after the launch. A kernel
    that does not wait long enough thus fails here instead of computing
    the right values by chance (`defer-async=false`: each copy completes
    where it is issued, no wgmma is checked).

    With `check-races`, a shadow of shared memory records the last thread
    to write each byte and the threads that read it since the last
    barrier: two threads accessing the same byte between two barriers, one
    of them writing it, is a race the order of the emulation's threads may
    hide, and the program writes so to stderr and aborts after the launch.

    Barriers and warp-level operations must be reached by every thread of
    the block (nested only in scf.for loops with uniform bounds and in
    scf.ifs without results marked `gs.block_uniform`, whose condition is
    the same in every thread: thread 0's is taken); thread blocks must be
    one-dimensional with constant sizes. Memory barriers
    (nvvm.memory.barrier) are no-ops, as the blocks run one at a time.
  }];
  let options = [
    Option<"deferAsync", "defer-async", "bool", "true",
           "Complete each cp.async at the wait that retires its group (its "
           "destination NaN until then) and check that what each "
           "wgmma.mma_async reads stays unchanged until it is retired "
           "(false: copies complete where issued, wgmmas unchecked)">,
    Option<"checkRaces", "check-races", "bool", "false",
           "Stop the program after a launch in which two threads accessed "
           "the same shared memory, one writing it, with no barrier between "
           "them (slower)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def DumpGPUBinaries : Pass<"gs-dump-gpu-binaries", "::mlir::ModuleOp"> {
  let summary = "Write the objects of each gpu.binary to files";
  let description = [{
    Writes each object of each `gpu.binary` (from gpu-module-to-binary) to
    `<output-dir>/<binary>.<chip>.<ptx|cubin|fatbin|bc>` (a file that cannot
    be written completely is removed), for ptxas, cuobjdump or a host
    program. The IR is left as it is.
  }];
  let options = [
    Option<"outputDir", "output-dir", "std::string", "\".\"",
           "Directory for the files (must exist)">
  ];
}


def SlicesToLinalg : Pass<"gs-slices-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Static tensor slices as linalg.generic, for "
                "gs-linalg-to-gpu";
  let description = [{
    On a GPU, the slices of a tensor (`tensor.extract_slice`, from gs.split
    and gs.slice) and the updates of one (`tensor.insert_slice`, from
    gs.concat: a bucket of gradients, a Concat of the model) would
    bufferize to copies between parts of buffers, which the device's
    copies (between whole, contiguous buffers) do not do. This pass
    rewrites those of static offsets, sizes and strides in host code into
    `linalg.generic` ops, which gs-linalg-to-gpu puts in kernels:

    - an insert_slice becomes a generic over the destination that keeps
      each element outside the slice and reads the others from the
      inserted tensor (`tensor.extract` at the index clamped into it, so
      that no read is out of bounds, then selected);
    - an extract_slice becomes a generic over the slice that reads each
      element of the source at offset + index * stride.

    Dropped unit dimensions (rank-reducing slices) are mapped back.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def DeviceScalars : Pass<"gs-device-scalars", "::mlir::ModuleOp"> {
  let summary = "Move a step's scalar code on tensor data, and its skip "
                "guard, onto tensors for gs-linalg-to-gpu";
  let description = [{
    After convert-gs-to-linalg a step still computes scalars on the host
    from values its kernels produce: the statistics records, the
    all-finite flag, the step counters. On a GPU each is a read of device
    memory that waits for the device. This pass rewrites that host code
    (outside gpu.launch and linalg bodies) into linalg on tensors:

    - an `scf.if` without results or else branch whose block has no
      effects but `gs.param.read` and `gs.param.write` (the skip guard
      around the optimizer update) runs unconditionally, and each
      parameter it writes gets `select(condition, new, old)`, old read
      before the block: skipping a step rewrites every parameter with its
      own value;
    - each arith or math op with a scalar result and an operand read from
      a tensor (`tensor.extract`) becomes a 0-d `linalg.generic`, its
      result read back with `tensor.extract`, so that its users qualify in
      turn; operands read from 0-d tensors become the generic's inputs,
      others are used from above;
    - `tensor.from_elements` of such scalars becomes a generic that
      selects each element by its index.

    gs-linalg-to-gpu then computes all of it in kernels, which read the
    scalars they use from device memory.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def ConvertLinalgToGPU : Pass<"gs-linalg-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Compute a step's linalg ops on tensors in device kernels";
  let description = [{
    Rewrites every linalg op on tensors (named ops generalized first) into
    a call of a kernel, through its tensor-level entry like
    convert-gs-to-gpu's kernels: one thread per point of the op's parallel
    loops (256 per block), which reads its inputs through their indexing
    maps, runs the op's reduction loops in their order with the outputs
    carried, and stores the outputs. The order of every sum is the CPU
    lowering's, so the kernels compute its values bit for bit. Tensors the
    body reads elements of (`tensor.extract`, e.g. a gather by class
    index) become kernel arguments; so do scalars taken from tensors at
    constant indices (the tensor, read on the device); constants are
    rebuilt in the kernel; other scalars come in one-element tensors.
    Kernels are named `gs_map_<loop sizes>` (no reductions) or
    `gs_reduce_<loop sizes>` and shared by the ops that compute the same
    thing. An op with dynamic loop bounds, or whose body uses a tensor
    from above other than through tensor.extract, stays on the host (the
    `on-host` statistic). A reduction over at least 4096 points whose
    outputs all combine exactly in any order (and, or, integer sums, max,
    min) is split across a block's threads instead, a block per parallel
    point, with the sequential result bit for bit. Any other reduction
    over at least 32 points with 65536 threads or more to spare (the eval
    step's FP32 convolutions and GEMMs) computes a register block of 2-4
    points per thread along up to two parallel loops that some input does
    not vary along, points `size / factor` apart (a warp's loads as
    coalesced as before): each output still summed in its own order, and
    that input loaded once for all of them (`register-blocks`). A
    `tensor.pad` of static shape (a convolution's zero border outside the
    kernels of convert-gs-to-gpu) becomes a generic that gathers each
    point from its source or takes the padding value, and so a kernel
    too.

    Runs after convert-gs-to-gpu and convert-gs-to-linalg (the
    `gs-lower-to-gpu-kernels` pipeline); what it leaves is host code:
    scalar arithmetic, reshapes, slices, the step's control flow.
  }];
  let options = [
    Option<"registerBlocks", "register-blocks", "bool", /*default=*/"true",
           "Compute several points of a long reduction per thread where an "
           "input is the same for them (false: one point per thread)">
  ];
  let statistics = [
    Statistic<"numOnDevice", "on-device", "linalg ops computed in kernels">,
    Statistic<"numOnHost", "on-host", "linalg ops left to the host">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::gpu::GPUDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect"
  ];
}

def OutlineGPUKernels : Pass<"gs-outline-gpu-kernels", "::mlir::ModuleOp"> {
  let summary = "gpu-kernel-outlining that keeps each launch's NVVM kernel "
                "attributes";
  let description = [{
    Outlines every gpu.launch into a gpu.func of its own gpu.module, as
    gpu-kernel-outlining does, and moves the launch's `nvvm.*` attributes
    (e.g. `nvvm.minctasm`, the blocks a multiprocessor should hold at
    once, which caps the registers ptxas may give a thread) onto that
    gpu.func, where the NVVM lowering turns them into PTX directives, and
    `gs.per_thread_outputs` (gs-device-params-in-place reads it there).
    gpu-kernel-outlining alone drops them.
  }];
}

def DeviceParamsInPlace
    : Pass<"gs-device-params-in-place", "::mlir::ModuleOp"> {
  let summary = "Let a bufferized GPU step's kernels read and write the "
                "parameters' globals instead of copies";
  let description = [{
    Runs on a step's host code after bufferization and inlining, before
    gs-device-memory, where a parameter's read is a copy of its memref
    global into a new buffer and its write a copy of a kernel's output
    buffer into the global (gs-write-params-in-place, which does this for
    the CPU, works on linalg ops, which are kernels here). Each such copy
    would be a device-to-device copy in every step; this pass removes those
    it can show to be unneeded from the launches' bodies (gpu.launch, or
    gpu.launch_func and its gpu.func):

    - a write: the buffer copied into the global (or into an argument of
      the function: a result's out-parameter) is stored to, and only
      stored to, by one kernel, and nothing between that launch and the
      copy uses the global: the kernel stores into the global;
    - a read: the copy is read, and only read (loads; or as a copy's
      source), by ops before the next op that may write the global, or by
      that op itself where it is a launch marked `gs.per_thread_outputs`
      (each thread stores its own elements) whose kernel loads the copy and
      loads and stores the global in one block, every access at the same
      indices, loads first: each thread then reads every element it
      overwrites before it overwrites it, and no other thread's. The
      readers read the global.

    An optimizer update, one elementwise kernel per parameter, then reads
    and writes the parameter and its momentum where they are.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def MergeIndependentKernels
    : Pass<"gs-merge-independent-kernels", "::mlir::ModuleOp"> {
  let summary = "Launch each run of adjacent kernels that share no written "
                "buffer as one kernel, their blocks side by side";
  let description = [{
    Runs on a GPU step's host code after bufferization and inlining, before
    gs-merge-single-block-kernels and gs-device-memory. Kernels launched
    one after another that share no buffer but for reading it (the
    forward's casts of the parameters to FP16, the optimizer's update of
    each parameter) compute the same side by side. Each run of them
    (gpu.launch or gpu.launch_func, constant sizes, with nothing between
    them but pure host ops and allocations) becomes one launch: its grid
    is the kernels' blocks laid end to end (one dimension), its blocks as
    large as the largest of theirs, and each block runs the body of the
    kernel it belongs to, on the threads below that kernel's block size,
    with that kernel's own block and thread indices and sizes.

    A kernel's buffers are known by the memory they view: a global, an
    allocation or an argument of the host function (distinct ones are
    distinct memory: the runtime passes a step distinct buffers); a kernel
    writes one where a use in its body, through views, may write it. Two
    kernels are independent where neither writes memory the other
    accesses; a kernel that uses a buffer of unknown memory is not merged,
    nor is one with barriers, shared memory, warp-level or other GPU ops
    besides the thread and block indices and sizes, or symbols. Runs of
    single-block kernels only are left to gs-merge-single-block-kernels,
    which puts dependent ones in one block too. The merged launch is named
    `gs_parallel_<i>_kernel` for outlining.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def MergeSingleBlockKernels
    : Pass<"gs-merge-single-block-kernels", "::mlir::ModuleOp"> {
  let summary = "Launch each run of adjacent single-block kernels as one "
                "kernel of one block";
  let description = [{
    Runs on a GPU step's host code after bufferization and inlining, before
    gs-device-memory. A train step's scalar bookkeeping (the last sums of
    split reductions, scale decisions, statistics records, the skip
    guard's flags, small parameters' updates) runs as kernels of one block,
    each costing a launch. Launches on one stream run one after another,
    so a run of them (gpu.launch or gpu.launch_func, a grid of 1 x 1 x 1)
    runs as well as one launch of one block with as many threads as the
    largest of them: each kernel's body in turn, run by the threads whose
    linear index is below its own block's size (the thread's indices in
    its own block computed from it, block indices 0, grid sizes 1), a
    gpu.barrier between two bodies, which orders their global memory
    accesses within the block as the stream ordered the launches.

    A run goes on past a launch that accesses no memory the run's kernels
    write and writes none they access (memory: a global, an allocation or
    an argument of the host function, through views), and is broken by
    any other op with an effect on memory other than allocating a new
    buffer (a copy, a call, a dependent launch); pure host ops and
    allocations between its launches are left where they are, and the
    merged launch is put where the run's last launch was. A kernel
    that works across its block (gpu.barrier, gpu.shuffle,
    gpu.subgroup_reduce, gpu.lane_id, nvgpu's asynchronous copies, or
    workgroup memory) joins a run only if its block size is the run's
    largest: it then runs on every thread of the merged block, outside any
    condition. The bodies' workgroup memory becomes the merged launch's,
    side by side, at most 48 KiB. Kernels with other GPU ops besides the
    thread and block indices and sizes, dynamic shared memory, private
    attributions or symbols are not merged. The merged launch is named
    `gs_sequence_<i>_kernel` for outlining.

    A run that follows a kernel of several blocks with nothing between
    but pure host ops and allocations (a split reduction's partial sums,
    then its last sum and the scale decision on it) and that skipped no
    launch runs in that kernel's last block to finish, where it fits: the
    kernel has at most 128 blocks (all resident at once, so the run's
    registers cost it no occupancy), the run's whole-block kernels have
    the kernel's block size, the others no more threads, and all the
    shared memory fits. After the kernel's body every thread fences its
    writes at the GPU's scope (`nvvm.memory.barrier`), thread 0 of each
    block takes a ticket from a counter of the merged kernel's (a
    zero-initialized `memref.global` marked `gs.kernel_state`, which the
    last block resets), and the block that takes the last one runs the
    run's bodies, as above, in an `scf.if` marked `gs.block_uniform`.
    This saves the run's launch; the merged launch is named
    `<kernel>_then_<i>_kernel`, its counter `<kernel>_then_<i>_ticket`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def ConstantsInKernels
    : Pass<"gs-constants-in-kernels", "::mlir::ModuleOp"> {
  let summary = "Let a bufferized GPU step's kernels read the constants "
                "they use themselves, instead of uploads from the host";
  let description = [{
    Runs on a step's host code after bufferization, before gs-device-memory,
    which copies a constant global that host code reads into a new device
    buffer, in every call. Where kernels only read such a constant (a tensor
    constant before bufferization: the GEMMs' scale of 1, a one-hot's
    iota), this pass gives it to the kernels instead:

    - a gpu.launch reads the global inside its body;
    - a gpu.func whose every gpu.launch_func passes the same constant as
      one argument reads a copy of the global in its gpu.module, which the
      NVVM lowering makes constant data of the kernel's binary, and the
      argument is removed from the gpu.func and its launches.

    Host reads of the constant left without users are erased. Constants of
    more than `max-bytes` are left to the host, since each kernel module
    that reads one would carry a copy.
  }];
  let options = [
    Option<"maxBytes", "max-bytes", "int64_t", /*default=*/"65536",
           "The largest constant, in bytes, that a kernel keeps">,
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def DeviceMemory : Pass<"gs-device-memory", "::mlir::ModuleOp"> {
  let summary = "A bufferized step's memory on the GPU: parameters passed "
                "in, buffers and copies as gpu ops";
  let description = [{
    Runs on a step after bufferization and kernel outlining, where host code
    allocates buffers, copies between them, reads and writes the
    parameters' memref globals and launches kernels. On a GPU all of that
    memory is the device's:

    - each public function takes the module's parameters (its mutable
      memref globals, but those marked `gs.kernel_state`, which only
      kernels use) as leading arguments, in module order, each marked
      `gs.param = @name`: the runtime keeps them on the device and passes
      them in; its other arguments are device buffers too;
    - `memref.alloc` and `memref.alloca` become `gpu.alloc`, freed by a
      `gpu.dealloc` after the last use of the buffer or a view of it;
    - a constant global is copied to a device buffer where it is read;
    - `memref.copy` and `linalg.copy` between contiguous buffers become
      `gpu.memcpy`.

    The host code must be straight-line and must not read or write memory
    itself (gs-device-scalars makes it so); any other op that does is an
    error naming it.

    With `queue`, every gpu op of a function is then queued after the
    previous one (one async token threaded from a `gpu.wait async` at the
    start) and nothing waits at the end: the caller synchronizes before it
    reads a result, as GradScale's runtime does, so a step's host code
    never waits for the device. Kernels must be outlined (launch_func).
    Without it, gpu-async-region can queue the ops, waiting at the end.
  }];
  let options = [
    Option<"queue", "queue", "bool", /*default=*/"false",
           "Queue the gpu ops on one stream with no wait at the end">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

#endif // GS_CONVERSION_PASSES_TD
