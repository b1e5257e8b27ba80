//===- Passes.td - Transformations of the gs dialect -------*- tablegen -*-===//

#ifndef GS_DIALECT_GS_TRANSFORMS_PASSES_TD
#define GS_DIALECT_GS_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TrainStep : Pass<"gs-train-step", "::mlir::ModuleOp"> {
  let summary = "Build the train-step function of each gs.training";
  let description = [{
    Turns a `gs.training` configuration into a train-step function: a copy
    of the forward function followed by a `gs.backward` request for the
    gradient of the loss with respect to every trainable parameter, one
    `gs.update` per parameter with its optimizer state (new `state`
    parameters, zero-initialized) and the step counter (`@gs.step`,
    incremented after the updates). `gs-autodiff` fills the request; the
    passes that change the forward ops (`gs-mixed-precision`) run between
    the two, so that the backward region is built once, from the forward
    ops it differentiates.
  }];
  let options = [
    Option<"stepName", "name", "std::string", /*default=*/"\"train_step\"",
           "Name of the train-step function to create">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def Autodiff : Pass<"gs-autodiff", "::mlir::ModuleOp"> {
  let summary = "Build the backward pass of each gradient request";
  let description = [{
    Fills every empty `gs.backward` region (a train step's request from
    `gs-train-step`, the ONNX `Gradient` operator) with the gradient
    computation: one block whose argument is the seed, the gradient of the
    differentiated value. It is built once; the passes after this one
    transform the region rather than rebuild it.

    The gradient computation is one reverse walk over the forward ops, each
    contributing its vector-Jacobian product through
    `DifferentiableOpInterface`. A value with several uses gets its gradient
    contributions summed by one `gs.add_n`: the branch points the
    gradient-scaling pass looks for. Integer values, frozen parameters and
    values that do not reach the loss get no gradient.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def MixedPrecision : Pass<"gs-mixed-precision", "::mlir::ModuleOp"> {
  let summary = "FP16 activations and gradients, FP32 master weights";
  let description = [{
    Puts the forward ops of every function with a `gs.backward` request in
    mixed precision, before `gs-autodiff` builds the backward region from
    them. GEMMs, matmuls and convolutions take FP16 operands (an FP32
    master weight gets an FP16 copy, one `gs.cast` per step) and produce
    FP16 activations with FP32 accumulation; elementwise, pooling, shape
    and dropout ops follow their operands (FP16 from FP16 operands,
    constants and scalars; an op mixing FP16 with another FP32 value widens to FP32); batch and layer norm keep FP32
    statistics, scale and bias around an FP16 input; softmax, log_softmax,
    the losses, the reductions and the `fp32-ops` run in FP32, their
    operands cast up. Each precision boundary is a `gs.cast`, so the
    backward region gets its cast in the other direction (the backward of
    the FP16->FP32 cast before the loss is the FP32->FP16 cast of the loss
    gradient). FP64 values are left alone. A region differentiated already
    is an error: its gradients would be of the old forward ops.
  }];
  let options = [
    ListOption<"fp32Ops", "fp32-ops", "std::string",
               "gs ops kept in FP32 besides softmax, log_softmax, the "
               "losses and the reductions (e.g. gs.sigmoid,gs.exp)">,
  ];
}

def WidenWeightGradients : Pass<"gs-widen-weight-gradients"> {
  let summary = "Weight-gradient contractions write FP32";
  let description = [{
    In every differentiated `gs.backward` region, a contraction or a sum
    whose FP16 result is only cast to FP32 (a weight or bias gradient of
    a mixed-precision step), possibly through single-use transposes,
    reshapes and slices, produces FP32 directly: FP32 accumulation without
    an FP16 rounding in between.
  }];
}

def FP16WeightCopies : Pass<"gs-fp16-weight-copies", "::mlir::ModuleOp"> {
  let summary = "FP16 copies of the weights, written by their updates";
  let description = [{
    A mixed-precision step rounds each FP32 master weight to FP16 for its
    GEMMs and convolutions (`gs.cast` of a `gs.param.read`), every step.
    This pass gives each such trainable weight `@W` a parameter
    `gs.param copy @W.fp16 of @W` holding that rounding, initially of
    `@W`'s initial value: the casts read the copy instead, and every
    `gs.update` and `gs.param.write` of `@W` is followed by the write of
    the new weight's rounding to the copy. The step computes the same
    values; the rounding moves from the forward pass into the update
    (one elementwise kernel with it after lowering), so the forward pass
    reads 2 bytes per weight where it read 4 and wrote 2.

    Only casts before any write of the weight in their function read the
    copy; weights whose initial value is neither a dense nor an FP32
    `dense_resource` attribute keep their casts.
  }];
}

def LossScaling : Pass<"gs-loss-scaling", "::mlir::ModuleOp"> {
  let summary = "Fixed or dynamic loss scaling (the baselines)";
  let description = [{
    Seeds each differentiated `gs.backward` region with the gradient `S`
    of the (scalar) loss instead of 1 (multiplying a seed it has), and
    divides each parameter gradient by `S` (`gs.unscale`, FP32) before its
    update.

    * `mode=fixed`: `S` is `scale` (the paper's baseline used 128).
    * `mode=dynamic`: PyTorch's GradScaler. `S` is the training state
      `@gs.loss_scale`, initially `init-scale`. A step whose scaled
      gradients hold an inf or NaN skips its updates and its step count and
      multiplies `S` by `backoff-factor`; after `growth-interval` clean
      steps in a row `S` is multiplied by `growth-factor`. The state
      `@gs.loss_scale.good_steps` counts the clean steps,
      `@gs.skipped_steps` the skipped ones.
    * `mode=none`: no scaling (the telemetry only).

    With `skip-non-finite` (default), fixed and none skip a train step's
    updates and step count when a gradient holds an inf or NaN, as
    GradScaler does, and count it in `@gs.skipped_steps`: one overflow does
    not turn every weight into NaN for good.

    With `telemetry` (default), every FP32->FP16 rounding of a gradient
    records per step its scale and the counts of gs.cast_stats in the state
    `@gs.scaling.cast<i>`, numbered as gs-gradient-scaling numbers them.
  }];
  let options = [
    Option<"mode", "mode", "::mlir::gs::LossScalingMode",
           /*default=*/"::mlir::gs::LossScalingMode::Dynamic",
           "Which loss scale", [{::llvm::cl::values(
             clEnumValN(::mlir::gs::LossScalingMode::None, "none",
                        "no scaling (the telemetry only)"),
             clEnumValN(::mlir::gs::LossScalingMode::Fixed, "fixed",
                        "the constant `scale`"),
             clEnumValN(::mlir::gs::LossScalingMode::Dynamic, "dynamic",
                        "PyTorch's GradScaler rule"))}]>,
    Option<"scale", "scale", "double", /*default=*/"128.0",
           "The loss scale of mode=fixed">,
    Option<"initScale", "init-scale", "double", /*default=*/"65536.0",
           "The initial loss scale of mode=dynamic">,
    Option<"growthFactor", "growth-factor", "double", /*default=*/"2.0",
           "mode=dynamic: the scale's factor after growth-interval clean "
           "steps">,
    Option<"backoffFactor", "backoff-factor", "double", /*default=*/"0.5",
           "mode=dynamic: the scale's factor after a non-finite gradient">,
    Option<"growthInterval", "growth-interval", "int64_t",
           /*default=*/"2000",
           "mode=dynamic: clean steps in a row before the scale grows">,
    Option<"skipNonFinite", "skip-non-finite", "bool", /*default=*/"true",
           "mode=fixed and none: skip the updates (and the step count) of a "
           "step whose gradients hold an inf or NaN, counted in "
           "@gs.skipped_steps (mode=dynamic always does)">,
    Option<"telemetry", "telemetry", "bool", /*default=*/"true",
           "Record, at every FP32->FP16 rounding of a gradient, the scale "
           "and what the rounding did (gs.scaling.cast<i> state)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def InlineBackward : Pass<"gs-inline-backward"> {
  let summary = "Inline the differentiated gs.backward regions";
  let description = [{
    Moves the body of every differentiated `gs.backward` region in front of
    the op and replaces the op's results with the gradients its `gs.yield`
    returns. The regions keep the backward pass apart from the forward ops
    for the passes that transform it (gs-mixed-precision, the scaling
    passes); after them it is ordinary code, ready for lowering. A region
    not yet differentiated is left alone (the lowering rejects it).
  }];
}

def OverlapCollectives : Pass<"gs-overlap-collectives"> {
  let summary = "Start each all-reduce as soon as its input is computed";
  let description = [{
    Moves every `gs.all_reduce` (with the unscaling, casts, reshapes and
    concatenations that only build its input) up its block, to just after
    the op computing the last of its operands. Its lowering starts the
    collective there and waits for it only before the first use of its
    result (docs/Distributed.md): a gradient's all-reduce then runs while
    the backward pass computes the gradients of earlier layers, and those
    of the scaling statistics while the rest of the step goes on. The
    all-reduces move alike on every rank, so every rank still issues them
    in the same order. Run after gs-inline-backward.
  }];
}

def FuseEpilogues : Pass<"gs-fuse-epilogues"> {
  let summary = "Fuse each backward contraction with its scale, cast, "
                "statistics and ReLU mask";
  let description = [{
    Where gs-gradient-scaling left a contraction into FP32 (`gs.gemm`
    without C, alpha or beta, `gs.matmul`, `gs.conv` or `gs.conv_transpose`
    without a bias) whose only user is a `gs.rescale` by the scale it chose,
    rescaled values that only a `gs.cast` to FP16 and `gs.cast_stats` read,
    the four become one `gs.scaled_contraction` holding the contraction,
    whose statistics also replace the `gs.grad_stats` of the cast's result.
    Where the result's only user is a ReLU's backward, `gs.where(gs.compare
    gt %h, 0, result, +0)` with an f16 `%h` of the result's shape (what the
    GPU kernel reads), `%h` becomes the op's `relu_mask` (the statistics
    stay those before the mask).
    The numbers do not change; a target that computes the contraction in
    one kernel (convert-gs-to-gpu) then computes the rest in its epilogue.
  }];
}

def DataParallel : Pass<"gs-data-parallel", "::mlir::ModuleOp"> {
  let summary = "Train steps whose replicas on several ranks train as one";
  let description = [{
    Makes each train step (a function with a differentiated `gs.backward`)
    a replica of a data-parallel step over `gs.world_size` ranks, each
    with its own shard of the global batch, that computes what one process
    would compute on the whole global batch (docs/Distributed.md):

    * the backward seed is divided by the world size, so that each rank's
      gradients are its share of the global batch mean;
    * the statistics every scale decision reads (the incoming gradient's
      and the other operand's `gs.grad_stats` and the
      `gs.exponent_histogram` at `gs.compute_scale`, the parts' statistics
      at `gs.unify_scales`) are summed over the
      ranks (`gs.all_reduce`) just before it, so that every rank chooses
      the scales the global batch's gradients call for, and the same;
    * the counts of `gs.cast_stats` (telemetry) are summed likewise;
    * the parameter gradients are summed over the ranks before the
      non-finite check and the updates, so every rank skips the same
      steps and makes the same update. In the order the backward pass
      computes them (the last layer's first), those smaller than
      `bucket-bytes` go together, flattened and concatenated into buckets
      of at most that many bytes, one all-reduce each (the sums,
      elementwise, are the same), so that gs-overlap-collectives can start
      each bucket as soon as its gradients are computed;
    * the step's f32 scalar results (the loss and its parts) and the
      buffers it writes (batch-norm running statistics) become their mean
      over the ranks.

    Run after gs-gradient-scaling or gs-loss-scaling.
  }];
  let options = [
    Option<"bucketBytes", "bucket-bytes", "int64_t", /*default=*/"1 << 20",
           "Gradients smaller than this many bytes are summed together, "
           "in buckets of at most this size (0: each alone)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def GradientScaling : Pass<"gs-gradient-scaling", "::mlir::ModuleOp"> {
  let summary = "Per-tensor power-of-two gradient scales from an underflow model";
  let description = [{
    The method of Zhao et al. (IJCAI 2020), docs/GradientScaling.md.
    Transforms each differentiated `gs.backward` region so that every
    gradient carries a scale `alpha` (an f32 SSA value, 1 at the seed):

    * fG, a contraction with an FP16 result (a data gradient): statistics
      of the incoming gradient and the weight, `gs.compute_scale` with the
      half-normal model (`accum_length` the contraction's true length,
      `relu_mask` where the incoming gradient is a ReLU's masked select,
      whose statistics are taken before the mask), the result computed in
      FP32, rescaled, then cast: `alpha *= beta`;
    * fT, a gs.cast of a gradient from FP32 to FP16: the log-normal model,
      rescale before the cast: `alpha *= beta`;
    * an op whose gradient operands carry different scales (branch sums,
      concats): `gs.unify_scales` and a rescale of each part;
    * every other op passes the scale through; each yielded gradient is
      unscaled (`gs.unscale`, FP32).

    A train step skips its updates (and its step count) on a non-finite
    gradient and counts the skip in `@gs.skipped_steps`. With `interval`
    K > 1 the scales are recomputed every K steps (and right after a
    skipped step) and reused from the telemetry state in between.
  }];
  let options = [
    Option<"threshold", "threshold", "double", /*default=*/"1e-3",
           "The underflow rate gamma' the scales aim under">,
    Option<"interval", "interval", "int64_t", /*default=*/"1",
           "Recompute the scales every this many steps">,
    Option<"underflowRounding", "underflow-rounding", "::mlir::gs::Rounding",
           /*default=*/"::mlir::gs::Rounding::up",
           "Power-of-two rounding of the underflow scale", [{::mlir::gs::roundingValues()}]>,
    Option<"overflowRounding", "overflow-rounding", "::mlir::gs::Rounding",
           /*default=*/"::mlir::gs::Rounding::down",
           "Power-of-two rounding of the overflow cap", [{::mlir::gs::roundingValues()}]>,
    Option<"minScale", "min-scale", "double", /*default=*/"1.0",
           "No scale below this unless the overflow cap demands it">,
    Option<"maxScale", "max-scale", "double", /*default=*/"0.0",
           "Upper bound of each scale (0: none)">,
    Option<"maxAccumScale", "max-accum-scale", "double", /*default=*/"0.0",
           "Upper bound of each accumulated scale alpha (0: none)">,
    Option<"gemmModel", "gemm-model", "::mlir::gs::ScaleModel",
           /*default=*/"::mlir::gs::ScaleModel::half_normal",
           "Model at contractions",
           [{::mlir::gs::scaleModelValues(/*withHalfNormal=*/true)}]>,
    Option<"castModel", "cast-model", "::mlir::gs::ScaleModel",
           /*default=*/"::mlir::gs::ScaleModel::log_normal",
           "Model at FP32->FP16 casts",
           [{::mlir::gs::scaleModelValues(/*withHalfNormal=*/false)}]>,
    Option<"reluMask", "relu-mask", "::mlir::gs::ReluMaskRule",
           /*default=*/"::mlir::gs::ReluMaskRule::Structural",
           "Where the half-normal model halves the variance",
           [{::mlir::gs::reluMaskValues()}]>,
    Option<"telemetry", "telemetry", "bool", /*default=*/"true",
           "Record, at every FP32->FP16 rounding of a gradient, the scale, "
           "the model's underflow estimate and what the rounding did "
           "(gs.scaling.cast<i> state)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // GS_DIALECT_GS_TRANSFORMS_PASSES_TD
