//===- GSScalingOps.td - Gradient-scaling operations -------*- tablegen -*-===//
//
// The operations the gradient-scaling pass inserts (see docs/GradientScaling.md):
// statistics of a gradient, a scale from a statistical model of its FP16
// underflow rate, exact power-of-two rescaling, and the rules at branches
// and weight updates. Scales are f32 scalars.
//
//===----------------------------------------------------------------------===//

#ifndef GS_DIALECT_GS_IR_GSSCALINGOPS_TD
#define GS_DIALECT_GS_IR_GSSCALINGOPS_TD

// tensor<256xi64>: counts per FP32 biased exponent.
def GS_ExponentHistogram : 1DTensorOf<[I64]>, BuildableType<
    "::mlir::RankedTensorType::get({256}, $_builder.getI64Type())">;

def GS_GradStatsOp : GS_Op<"grad_stats", [Pure]> {
  let summary = "one-pass statistics of a gradient tensor";
  let description = [{
    Gathers, in one pass, the element count, sum, sum of squares and max
    |x| of `input`, and over its nonzero elements their count and the sum
    and sum of squares of ln|x| (the log-moments of the log-normal model).

    ```mlir
    %s = gs.grad_stats %dy : tensor<32x10xf32>
    ```
  }];
  let arguments = (ins GS_FloatTensor:$input);
  let results = (outs GS_StatsType:$stats);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def GS_ExponentHistogramOp : GS_Op<"exponent_histogram", [Pure]> {
  let summary = "counts of a gradient's nonzeros per binary exponent";
  let description = [{
    `tensor<256xi64>`: bin `b` counts the nonzero elements of `input` whose
    magnitude, rounded to FP32, has the biased exponent `b` (`2^(b-127) <=
    |x| < 2^(b-126)`; FP32 subnormals count in bin 0, inf and NaN in bin
    255). What the `exponent_histogram` model of gs.compute_scale reads.

    ```mlir
    %h = gs.exponent_histogram %dy : tensor<32x10xf32>
    ```
  }];
  let arguments = (ins GS_FloatTensor:$input);
  let results = (outs GS_ExponentHistogram:$counts);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def GS_ComputeScaleOp : GS_Op<"compute_scale", [Pure,
    AttrSizedOperandSegments]> {
  let summary = "power-of-two scale from a model of the FP16 underflow rate";
  let description = [{
    Chooses the scale `beta` for one cast or GEMM of the backward pass.

    * `half_normal` (a GEMM producing an FP16 data gradient, case fG):
      `sigma = sqrt(accum_length) * rms(grad) * rms(weight)`, times
      `sqrt(1/2)` with `relu_mask`; `beta_uf = 2^-24 / (sqrt(2) * sigma *
      erfinv(threshold))`; overflow cap `beta_of = 65504 / (accum_length *
      max|grad| * max|weight|)`. Needs `weight_stats` and `accum_length`.
    * `log_normal` (an FP32 to FP16 cast of a gradient, case fT): with
      `ln|grad| ~ N(mu, s^2)` over the nonzeros, `beta_uf = exp(ln 2^-24 -
      mu - s * sqrt(2) * erfinv(2 * threshold - 1))`; `beta_of = 65504 /
      max|grad|`.
    * `exponent_histogram` (not the paper's: no distribution assumed):
      from `histogram`, the gs.exponent_histogram of the gradient,
      `beta_uf` is the smallest power of two at which at most `threshold`
      of the nonzeros fall to 2^-25 or below (flush to 0); `beta_of` as
      for `log_normal`.

    Then `beta = min(max(beta_uf, min_scale), beta_of)`, capped by
    `max_scale` and by `max_accum_scale / alpha` when given, and rounded to
    a power of two: `beta_uf` by `underflow_rounding` (default up, so the
    modelled rate stays under the threshold) and `beta_of` by
    `overflow_rounding` (default down). A scale below `min_scale` (default
    1) appears only when the overflow cap demands it.

    The second result is the model's underflow rate at `beta` (Theorem 1:
    `erf(2^-24 / (sqrt(2) beta sigma))`; Theorem 2: `Phi((ln 2^-24 - mu -
    ln beta) / s)`; the histogram's fraction below 2^-25 / beta), 0 for a
    gradient without nonzeros: telemetry to set beside the measured rate
    (gs.cast_stats).

    ```mlir
    %beta, %rate = gs.compute_scale %sdy, %sw {model = #gs.scale_model<half_normal>, accum_length = 256 : i64, relu_mask}
    ```
  }];
  let arguments = (ins GS_StatsType:$grad_stats,
                   Optional<GS_StatsType>:$weight_stats,
                   Optional<GS_ExponentHistogram>:$histogram,
                   Optional<F32>:$alpha,
                   GS_ScaleModelAttr:$model,
                   DefaultValuedAttr<F64Attr, "1e-3">:$threshold,
                   OptionalAttr<I64Attr>:$accum_length,
                   UnitAttr:$relu_mask,
                   DefaultValuedAttr<F64Attr, "1.0">:$min_scale,
                   OptionalAttr<F64Attr>:$max_scale,
                   OptionalAttr<F64Attr>:$max_accum_scale,
                   DefaultValuedAttr<GS_RoundingAttr,
                       "::mlir::gs::Rounding::up">:$underflow_rounding,
                   DefaultValuedAttr<GS_RoundingAttr,
                       "::mlir::gs::Rounding::down">:$overflow_rounding);
  let results = (outs F32:$scale, F64:$underflow_estimate);
  let assemblyFormat = [{
    $grad_stats (`,` $weight_stats^)? (`histogram` `(` $histogram^ `)`)?
    (`alpha` `(` $alpha^ `)`)? attr-dict
  }];
  let hasVerifier = 1;
}

def GS_RescaleOp : GS_Op<"rescale", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "multiply a tensor by a scale";
  let description = [{
    `input * scale`, exact when `scale` is a power of two and the result
    stays in range.

    ```mlir
    %dy_s = gs.rescale %dy, %beta : tensor<32x10xf16>
    ```
  }];
  let arguments = (ins GS_FloatTensor:$input, F32:$scale);
  let results = (outs GS_FloatTensor:$result);
  let assemblyFormat = "$input `,` $scale attr-dict `:` type($input)";
  let hasFolder = 1;
}

def GS_UnscaleOp : GS_Op<"unscale", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "divide a parameter gradient by its accumulated scale";
  let description = [{
    `input / alpha` in FP32, the last step before a weight update.

    `power_of_two` states that `alpha` is a power of two (or its negation,
    zero or infinite) no smaller in magnitude than 2^-126, as the scales of
    gradient scaling and of loss scaling by powers of two are: its
    reciprocal is then exact, and the division is lowered to a
    multiplication by it, which gives the same bits at a fraction of the
    cost (a division's throughput is a tenth of a multiplication's).

    ```mlir
    %dw = gs.unscale %dw_s, %alpha : tensor<10x256xf32>
    %dv = gs.unscale %dv_s, %alpha power_of_two : tensor<10x256xf32>
    ```
  }];
  let arguments = (ins StaticShapeTensorOf<[F32]>:$input, F32:$alpha,
                   UnitAttr:$power_of_two);
  let results = (outs StaticShapeTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $input `,` $alpha (`power_of_two` $power_of_two^)? attr-dict `:`
    type($input)
  }];
  let hasFolder = 1;
}

def GS_UnifyScalesOp : GS_Op<"unify_scales", [Pure,
    AttrSizedOperandSegments]> {
  let summary = "common scale for a sum of differently scaled gradients";
  let description = [{
    At a branch the gradients `dX_i` arrive with scales `alpha_i`. Returns
    the first `beta` among the `alpha_j` in descending order with
    `beta * max|dX_i| / alpha_i < 65504` for every `i`; if none fits, the
    smallest is halved until one does. The sum is then
    `sum_i rescale(dX_i, beta / alpha_i)` and carries `beta`.

    ```mlir
    %beta = gs.unify_scales %a1, %a2 stats %s1, %s2
    ```
  }];
  let arguments = (ins Variadic<F32>:$alphas, Variadic<GS_StatsType>:$stats);
  let results = (outs F32:$scale);
  let assemblyFormat = "$alphas `stats` $stats attr-dict";
  let hasVerifier = 1;
}

def GS_CastStatsOp : GS_Op<"cast_stats", [Pure, InferTypeOpAdaptor]> {
  let summary = "what a cast to FP16 does to a tensor's values";
  let description = [{
    Counts, over the elements of `input` rounded to FP16 (nearest even):
    the nonzero elements, those that became 0 (underflow), those left
    subnormal (nonzero and below 2^-14 in magnitude: bits of precision
    lost) and those that became inf (overflow, or were inf). The result is
    `tensor<4xi64>` in that order: the measured side of the scaling
    telemetry.

    ```mlir
    %counts = gs.cast_stats %dx : tensor<32x256xf32>
    ```
  }];
  let arguments = (ins StaticShapeTensorOf<[F32, F64]>:$input);
  let results = (outs StaticShapeTensorOf<[I64]>:$counts);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def GS_AllFiniteOp : GS_Op<"all_finite", [Pure]> {
  let summary = "true when no element of any operand is inf or NaN";
  let description = [{
    Guards weight updates: on a non-finite gradient the step is skipped.

    ```mlir
    %ok = gs.all_finite %g1, %g2 : tensor<256x784xf32>, tensor<10x256xf32>
    ```
  }];
  let arguments = (ins Variadic<GS_FloatTensor>:$inputs);
  let results = (outs I1:$result);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs)";
  let hasVerifier = 1;
}

// tensor<4xi64>: the counts of gs.cast_stats.
def GS_CastCounts : 1DTensorOf<[I64]>, BuildableType<
    "::mlir::RankedTensorType::get({::mlir::gs::telemetry::NumCastCounts}, "
    "$_builder.getI64Type())">;

def GS_ScaledContractionOp : GS_Op<"scaled_contraction", [
    RecursiveMemoryEffects, RecursivelySpeculatable, NoRegionArguments]> {
  let summary = "a contraction with its scale, rounding and statistics";
  let description = [{
    `result = round(scale * product)`, where `product` is the FP32 result
    of the one contraction its region computes and yields (`gs.gemm`
    without C, alpha or beta, `gs.matmul`, or `gs.conv` /
    `gs.conv_transpose` without a bias), rounded once to the result type
    (f16 or f32). Also returns the `gs.grad_stats` of the result and the
    `gs.cast_stats` counts of `scale * product`'s rounding to FP16.

    With `relu_mask` (a tensor of the result's shape: a ReLU's forward
    input or output), the result is +0 where `relu_mask` is not greater
    than 0 (NaN included), as a ReLU's backward `gs.where(gs.compare gt
    relu_mask, 0, x, 0)` makes it; the statistics are those of the values
    before, which the next scale is decided from.

    What gs-fuse-epilogues makes of a backward contraction, the rescale by
    the scale gs-gradient-scaling chose for it, the cast to FP16, the
    statistics of both and the ReLU backward after them: convert-gs-to-gpu
    computes it in one Tensor Core kernel with all of that in the epilogue;
    the CPU lowering rebuilds what was fused.

    ```mlir
    %dx, %stats, %counts = gs.scaled_contraction scale %beta relu_mask(%h : tensor<32x256xf16>) : tensor<32x256xf16> {
      %p = gs.gemm %dy, %w : tensor<32x10xf16>, tensor<10x256xf16> -> tensor<32x256xf32>
      gs.yield %p : tensor<32x256xf32>
    }
    ```
  }];
  let arguments = (ins F32:$scale,
                   Optional<StaticShapeTensorOf<[F16, F32]>>:$relu_mask);
  let results = (outs StaticShapeTensorOf<[F16, F32]>:$result,
                 GS_StatsType:$stats, GS_CastCounts:$cast_counts);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `scale` $scale (`relu_mask` `(` $relu_mask^ `:` type($relu_mask) `)`)?
    attr-dict `:` type($result) $body
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The contraction the region computes (valid once the op verifies).
    ::mlir::Operation *getContraction() {
      return &getBody().front().front();
    }
    /// Whether the region may hold `op`: gs.gemm without C, alpha or beta,
    /// gs.matmul, gs.conv or gs.conv_transpose without a bias.
    static bool canHold(::mlir::Operation *op);
  }];
}

#endif // GS_DIALECT_GS_IR_GSSCALINGOPS_TD
