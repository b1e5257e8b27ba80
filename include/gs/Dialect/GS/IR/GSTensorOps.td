//===- GSTensorOps.td - Forward tensor operations ----------*- tablegen -*-===//
//
// The model operations: value semantics on statically shaped tensors, with
// the ONNX semantics of the operator each one is imported from.
//
//===----------------------------------------------------------------------===//

#ifndef GS_DIALECT_GS_IR_GSTENSOROPS_TD
#define GS_DIALECT_GS_IR_GSTENSOROPS_TD

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

/// GEMM-like ops print their result type: an FP16 GEMM may produce an FP32
/// result (FP32 accumulation without a final rounding to FP16).
class GS_ContractionOp<string mnemonic, list<Trait> traits = []>
    : GS_Op<mnemonic, !listconcat(traits,
          [Pure, InferTypeOpAdaptorWithIsCompatible])> {
  let hasVerifier = 1;
}

def GS_GemmOp : GS_ContractionOp<"gemm"> {
  let summary = "general matrix multiplication (ONNX Gemm)";
  let description = [{
    `result = alpha * op(a) * op(b) + beta * c` where `op` transposes its
    operand when `transA` / `transB` is set. `a` is MxK (KxM transposed), `b`
    is KxN (NxK transposed), and the optional `c` broadcasts to MxN. Products
    accumulate in FP32; an FP16 GEMM rounds once, when it writes the result,
    unless its result type is f32.

    ```mlir
    %y = gs.gemm %x, %w, %b {transB} : tensor<32x784xf16>, tensor<256x784xf16>, tensor<256xf16> -> tensor<32x256xf16>
    ```
  }];
  let arguments = (ins GS_FloatTensor:$a, GS_FloatTensor:$b,
                   Optional<GS_FloatTensor>:$c,
                   UnitAttr:$transA, UnitAttr:$transB,
                   DefaultValuedAttr<F32Attr, "1.0f">:$alpha,
                   DefaultValuedAttr<F32Attr, "1.0f">:$beta);
  let results = (outs GS_FloatTensor:$result);
  let assemblyFormat = [{
    $a `,` $b (`,` $c^)? attr-dict `:` type($a) `,` type($b) (`,` type($c)^)?
    `->` type($result)
  }];
}

def GS_MatMulOp : GS_ContractionOp<"matmul"> {
  let summary = "NumPy matrix product with batch broadcasting (ONNX MatMul)";
  let description = [{
    `numpy.matmul` semantics: a 1-D left operand is a row vector and a 1-D
    right operand a column vector (the added dimension is dropped from the
    result); leading batch dimensions broadcast.

    ```mlir
    %y = gs.matmul %a, %b : tensor<8x16x32xf32>, tensor<32x64xf32> -> tensor<8x16x64xf32>
    ```
  }];
  let arguments = (ins GS_FloatTensor:$lhs, GS_FloatTensor:$rhs);
  let results = (outs GS_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
}

def GS_ConvOp : GS_ContractionOp<"conv"> {
  let summary = "grouped, strided, padded, dilated convolution (ONNX Conv)";
  let description = [{
    Input `N x C x D1 x ... x Dk`, weight `M x C/group x K1 x ... x Kk`,
    optional bias `M`; one to three spatial dimensions. `pads` holds the
    begin paddings of every spatial dimension followed by the end paddings
    (ONNX order). Output spatial size:
    `floor((D + pad_begin + pad_end - dilation * (K - 1) - 1) / stride) + 1`.
    The accumulation length of each output element is `C/group * K1*...*Kk`.

    ```mlir
    %y = gs.conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32> -> tensor<8x16x32x32xf32>
    ```
  }];
  let arguments = (ins GS_FloatTensor:$input, GS_FloatTensor:$weight,
                   Optional<GS_FloatTensor>:$bias,
                   OptionalAttr<DenseI64ArrayAttr>:$strides,
                   OptionalAttr<DenseI64ArrayAttr>:$pads,
                   OptionalAttr<DenseI64ArrayAttr>:$dilations,
                   DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs GS_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,`
    type($weight) (`,` type($bias)^)? `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// Spatial geometry with the defaults (stride 1, no padding, dilation 1)
    /// filled in; valid once the op verifies.
    ::mlir::gs::WindowGeometry getGeometry();
  }];
}

def GS_ConvTransposeOp : GS_ContractionOp<"conv_transpose"> {
  let summary = "transposed convolution (ONNX ConvTranspose)";
  let description = [{
    Input `N x C x D1 x ... x Dk`, weight `C x M/group x K1 x ... x Kk`,
    optional bias `M`. Output spatial size:
    `stride * (D - 1) + output_padding + dilation * (K - 1) + 1 - pad_begin - pad_end`.
    ONNX's `output_shape` is resolved into `pads` by the importer.

    ```mlir
    %y = gs.conv_transpose %x, %w {strides = array<i64: 2, 2>} : tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32> -> tensor<1x2x7x7xf32>
    ```
  }];
  let arguments = (ins GS_FloatTensor:$input, GS_FloatTensor:$weight,
                   Optional<GS_FloatTensor>:$bias,
                   OptionalAttr<DenseI64ArrayAttr>:$strides,
                   OptionalAttr<DenseI64ArrayAttr>:$pads,
                   OptionalAttr<DenseI64ArrayAttr>:$dilations,
                   OptionalAttr<DenseI64ArrayAttr>:$output_padding,
                   DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs GS_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,`
    type($weight) (`,` type($bias)^)? `->` type($result)
  }];
  let extraClassDeclaration = [{
    ::mlir::gs::WindowGeometry getGeometry();
  }];
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

def GS_AddOp : GS_BinaryOp<"add", GS_NumericTensor, [Commutative]> {
  let summary = "elementwise addition with broadcasting";
  let description = [{
    ```mlir
    %y = gs.add %x, %b : tensor<32x10xf32>, tensor<10xf32>
    ```
  }];
}
def GS_SubOp : GS_BinaryOp<"sub", GS_NumericTensor> {
  let summary = "elementwise subtraction with broadcasting";
  let description = [{
    ```mlir
    %y = gs.sub %a, %b : tensor<4x3xf32>
    ```
  }];
}
def GS_MulOp : GS_BinaryOp<"mul", GS_NumericTensor, [Commutative]> {
  let summary = "elementwise multiplication with broadcasting";
  let description = [{
    ```mlir
    %y = gs.mul %a, %b : tensor<4x3xf16>, tensor<1x3xf16>
    ```
  }];
}
def GS_DivOp : GS_BinaryOp<"div", GS_NumericTensor> {
  let summary = "elementwise division with broadcasting";
  let description = [{
    Integer division truncates toward zero, unsigned for unsigned types.
    Division by zero gives 0 and the signed `MIN / -1` wraps to `MIN`
    (NumPy's results), so no input traps.

    ```mlir
    %y = gs.div %a, %b : tensor<4x3xf32>, tensor<f32>
    ```
  }];
}
def GS_MaxOp : GS_BinaryOp<"max", GS_NumericTensor, [Commutative]> {
  let summary = "elementwise maximum with broadcasting";
  let description = [{
    NaN in either operand gives NaN. Unsigned types order as unsigned.

    ```mlir
    %y = gs.max %a, %b : tensor<4x3xf32>
    ```
  }];
}
def GS_MinOp : GS_BinaryOp<"min", GS_NumericTensor, [Commutative]> {
  let summary = "elementwise minimum with broadcasting";
  let description = [{
    NaN in either operand gives NaN. Unsigned types order as unsigned.

    ```mlir
    %y = gs.min %a, %b : tensor<4x3xf32>
    ```
  }];
}
def GS_PowOp : GS_BinaryOp<"pow", GS_FloatTensor> {
  let summary = "elementwise power with broadcasting";
  let description = [{
    ```mlir
    %y = gs.pow %x, %e : tensor<4x3xf32>, tensor<f32>
    ```
  }];
}

def GS_AddNOp : GS_Op<"add_n", [Pure, SameOperandsAndResultType]> {
  let summary = "sum of same-typed tensors";
  let description = [{
    Adds any number of tensors of one type. Autodiff emits it wherever a
    forward value has several uses, so the gradient-scaling pass finds every
    branch point as one op.

    ```mlir
    %g = gs.add_n %g1, %g2, %g3 : tensor<8x16xf16>
    ```
  }];
  let arguments = (ins Variadic<GS_NumericTensor>:$inputs);
  let results = (outs GS_NumericTensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` type($result)";
  let hasFolder = 1;
}

def GS_NegOp : GS_UnaryOp<"neg", [Involution]> {
  let summary = "elementwise negation";
  let description = [{
    ```mlir
    %y = gs.neg %x : tensor<4xf32>
    ```
  }];
}
def GS_AbsOp : GS_UnaryOp<"abs", [Idempotent]> {
  let summary = "elementwise absolute value";
  let description = [{
    ```mlir
    %y = gs.abs %x : tensor<4xf32>
    ```
  }];
}
def GS_ReluOp : GS_UnaryOp<"relu", [Idempotent]> {
  let summary = "rectified linear unit, max(x, 0)";
  let description = [{
    ```mlir
    %y = gs.relu %x : tensor<32x256xf16>
    ```
  }];
}
def GS_LeakyReluOp : GS_UnaryOp<"leaky_relu"> {
  let summary = "leaky rectified linear unit";
  let description = [{
    `x` where `x >= 0`, `alpha * x` elsewhere.

    ```mlir
    %y = gs.leaky_relu %x {alpha = 1.000000e-01 : f32} : tensor<4xf32>
    ```
  }];
  let arguments = (ins GS_FloatTensor:$input,
                   DefaultValuedAttr<F32Attr, "0.01f">:$alpha);
}
def GS_SigmoidOp : GS_UnaryOp<"sigmoid"> {
  let summary = "logistic function 1 / (1 + exp(-x))";
  let description = [{
    ```mlir
    %y = gs.sigmoid %x : tensor<4xf32>
    ```
  }];
}
def GS_TanhOp : GS_UnaryOp<"tanh"> {
  let summary = "hyperbolic tangent";
  let description = [{
    ```mlir
    %y = gs.tanh %x : tensor<4xf32>
    ```
  }];
}
def GS_ExpOp : GS_UnaryOp<"exp"> {
  let summary = "natural exponential";
  let description = [{
    ```mlir
    %y = gs.exp %x : tensor<4xf32>
    ```
  }];
}
def GS_LogOp : GS_UnaryOp<"log"> {
  let summary = "natural logarithm";
  let description = [{
    ```mlir
    %y = gs.log %x : tensor<4xf32>
    ```
  }];
}
def GS_SqrtOp : GS_UnaryOp<"sqrt"> {
  let summary = "square root";
  let description = [{
    ```mlir
    %y = gs.sqrt %x : tensor<4xf32>
    ```
  }];
}
def GS_ErfOp : GS_UnaryOp<"erf"> {
  let summary = "Gauss error function";
  let description = [{
    ```mlir
    %y = gs.erf %x : tensor<4xf32>
    ```
  }];
}

def GS_CompareOp : GS_Op<"compare", [Pure, InferTypeOpAdaptor,
    AllElementTypesMatch<["lhs", "rhs"]>]> {
  let summary = "elementwise comparison with broadcasting (ONNX Equal, Less, "
                "Greater, LessOrEqual, GreaterOrEqual)";
  let description = [{
    A boolean tensor of the operands' broadcast shape. A comparison with a
    NaN is false, except `ne`, which is true (IEEE 754). Signless integers
    compare as signed, unsigned ones and booleans as unsigned.

    ```mlir
    %m = gs.compare lt, %a, %b : tensor<4x3xf32>, tensor<3xf32>
    ```
  }];
  let arguments = (ins GS_ComparePredicate:$predicate, GS_Tensor:$lhs,
                   GS_Tensor:$rhs);
  let results = (outs GS_MaskTensor:$result);
  let assemblyFormat = [{
    $predicate `,` $lhs `,` $rhs attr-dict `:`
    custom<BinaryOperandTypes>(type($lhs), type($rhs))
  }];
  let hasVerifier = 1;
}

def GS_AndOp : GS_BinaryOp<"and", GS_MaskTensor, [Commutative]> {
  let summary = "elementwise logical and with broadcasting";
  let description = [{
    ```mlir
    %m = gs.and %a, %b : tensor<4x3xi1>, tensor<3xi1>
    ```
  }];
}
def GS_OrOp : GS_BinaryOp<"or", GS_MaskTensor, [Commutative]> {
  let summary = "elementwise logical or with broadcasting";
  let description = [{
    ```mlir
    %m = gs.or %a, %b : tensor<4x3xi1>
    ```
  }];
}
def GS_XorOp : GS_BinaryOp<"xor", GS_MaskTensor, [Commutative]> {
  let summary = "elementwise logical exclusive or with broadcasting";
  let description = [{
    ```mlir
    %m = gs.xor %a, %b : tensor<4x3xi1>
    ```
  }];
}
def GS_NotOp : GS_Op<"not", [Pure, SameOperandsAndResultType,
    ElementwiseMappable]> {
  let summary = "elementwise logical negation";
  let description = [{
    ```mlir
    %m = gs.not %a : tensor<4x3xi1>
    ```
  }];
  let arguments = (ins GS_MaskTensor:$input);
  let results = (outs GS_MaskTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def GS_WhereOp : GS_Op<"where", [Pure, InferTypeOpAdaptor,
    AllElementTypesMatch<["x", "y", "result"]>]> {
  let summary = "elementwise choice with broadcasting (ONNX Where)";
  let description = [{
    `result = condition ? x : y`, with the three operands broadcast
    NumPy-style.

    ```mlir
    %y = gs.where %m, %a, %b : tensor<4x3xi1>, tensor<4x3xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins GS_MaskTensor:$condition, GS_Tensor:$x, GS_Tensor:$y);
  let results = (outs GS_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $x `,` $y attr-dict `:` type($condition) `,` type($x) `,`
    type($y)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

def GS_BatchNormOp : GS_Op<"batch_norm", [Pure, InferTypeOpAdaptor,
    AllTypesMatch<["scale", "bias"]>]> {
  let summary = "batch normalization in training mode";
  let description = [{
    Normalizes `input` (`N x C x ...`) per channel with the statistics of the
    batch, then applies `scale` and `bias` (shape `C`). Also returns the
    batch mean and the biased batch variance (shape `C`, element type of
    `scale`), from which the importer updates the running statistics as
    ONNX's `BatchNormalization(training_mode=1)` defines.

    ```mlir
    %y, %mean, %var = gs.batch_norm %x, %gamma, %beta {epsilon = 1.0e-05 : f32} : tensor<8x16x4x4xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins GS_FloatTensor:$input, GS_FloatTensor:$scale,
                   GS_FloatTensor:$bias,
                   DefaultValuedAttr<F32Attr, "1e-5f">:$epsilon);
  let results = (outs GS_FloatTensor:$result, GS_FloatTensor:$batch_mean,
                  GS_FloatTensor:$batch_var);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias attr-dict `:` type($input) `,` type($scale)
  }];
  let hasVerifier = 1;
}

def GS_BatchNormInferenceOp : GS_Op<"batch_norm_inference", [Pure,
    InferTypeOpAdaptor, AllTypesMatch<["scale", "bias", "mean", "variance"]>]> {
  let summary = "batch normalization with given statistics";
  let description = [{
    `(x - mean) / sqrt(variance + epsilon) * scale + bias` per channel.

    ```mlir
    %y = gs.batch_norm_inference %x, %gamma, %beta, %mean, %var : tensor<8x16x4x4xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins GS_FloatTensor:$input, GS_FloatTensor:$scale,
                   GS_FloatTensor:$bias, GS_FloatTensor:$mean,
                   GS_FloatTensor:$variance,
                   DefaultValuedAttr<F32Attr, "1e-5f">:$epsilon);
  let results = (outs GS_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias `,` $mean `,` $variance attr-dict `:`
    type($input) `,` type($scale)
  }];
  let hasVerifier = 1;
}

def GS_LayerNormOp : GS_Op<"layer_norm", [Pure, InferTypeOpAdaptor]> {
  let summary = "layer normalization (ONNX LayerNormalization)";
  let description = [{
    Normalizes over the dimensions `axis..rank-1`; `scale` and the optional
    `bias` have exactly those trailing dimensions. Statistics are computed
    in FP32 (FP64 for FP64 data); `mean` and `inv_std_dev` keep the leading
    dimensions and have size 1 in the normalized ones.

    ```mlir
    %y, %mean, %inv = gs.layer_norm %x, %g, %b <{axis = 2 : i64}> : tensor<4x8x32xf32>, tensor<32xf32>, tensor<32xf32>
    ```
  }];
  let arguments = (ins GS_FloatTensor:$input, GS_FloatTensor:$scale,
                   Optional<GS_FloatTensor>:$bias, I64Attr:$axis,
                   DefaultValuedAttr<F32Attr, "1e-5f">:$epsilon);
  let results = (outs GS_FloatTensor:$result, GS_FloatTensor:$mean,
                  GS_FloatTensor:$inv_std_dev);
  let assemblyFormat = [{
    $input `,` $scale (`,` $bias^)? prop-dict attr-dict `:` type($input) `,`
    type($scale) (`,` type($bias)^)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

def GS_MaxPoolOp : GS_Op<"max_pool", [Pure, InferTypeOpAdaptor]> {
  let summary = "max pooling (ONNX MaxPool)";
  let description = [{
    Sliding-window maximum over the spatial dimensions of `N x C x ...`
    (of floats or integers, as ONNX's MaxPool-12 allows). Padding never
    wins the maximum. With `ceil_mode` the output size rounds
    up (ONNX's formula up to opset 17, which keeps a last window that starts
    in the end padding).

    ```mlir
    %y = gs.max_pool %x <{kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : tensor<8x16x28x28xf32>
    ```
  }];
  let arguments = (ins GS_NumericTensor:$input,
                   DenseI64ArrayAttr:$kernel_shape,
                   OptionalAttr<DenseI64ArrayAttr>:$strides,
                   OptionalAttr<DenseI64ArrayAttr>:$pads,
                   OptionalAttr<DenseI64ArrayAttr>:$dilations,
                   UnitAttr:$ceil_mode);
  let results = (outs GS_NumericTensor:$result);
  let assemblyFormat = "$input prop-dict attr-dict `:` type($input)";
  let extraClassDeclaration = [{
    ::mlir::gs::WindowGeometry getGeometry();
  }];
  let hasVerifier = 1;
}

def GS_AvgPoolOp : GS_Op<"avg_pool", [Pure, InferTypeOpAdaptor]> {
  let summary = "average pooling (ONNX AveragePool)";
  let description = [{
    Sliding-window mean over the spatial dimensions. Padded positions count
    in the divisor only with `count_include_pad`.

    ```mlir
    %y = gs.avg_pool %x <{count_include_pad, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>}> : tensor<1x3x32x32xf32>
    ```
  }];
  let arguments = (ins GS_FloatTensor:$input,
                   DenseI64ArrayAttr:$kernel_shape,
                   OptionalAttr<DenseI64ArrayAttr>:$strides,
                   OptionalAttr<DenseI64ArrayAttr>:$pads,
                   UnitAttr:$ceil_mode, UnitAttr:$count_include_pad);
  let results = (outs GS_FloatTensor:$result);
  let assemblyFormat = "$input prop-dict attr-dict `:` type($input)";
  let extraClassDeclaration = [{
    ::mlir::gs::WindowGeometry getGeometry();
  }];
  let hasVerifier = 1;
}

def GS_GlobalAvgPoolOp : GS_Op<"global_avg_pool", [Pure, InferTypeOpAdaptor]> {
  let summary = "mean over all spatial dimensions (ONNX GlobalAveragePool)";
  let description = [{
    `N x C x D1 x ... x Dk` to `N x C x 1 x ... x 1`.

    ```mlir
    %y = gs.global_avg_pool %x : tensor<8x512x7x7xf32>
    ```
  }];
  let arguments = (ins GS_FloatTensor:$input);
  let results = (outs GS_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def GS_MaxPoolGradOp : GS_Op<"max_pool_grad", [Pure,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "gradient of max pooling";
  let description = [{
    The vector-Jacobian product of `gs.max_pool` with the same attributes:
    each element of `grad` (shaped like the pooling's result) goes to the
    first position of its window, in row-major window order, that holds the
    window's maximum (as PyTorch chooses); every other position gets zero,
    and positions in several windows sum what they receive. Padding never
    receives a gradient.

    ```mlir
    %dx = gs.max_pool_grad %x, %dy <{kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : tensor<8x16x28x28xf32>, tensor<8x16x14x14xf32>
    ```
  }];
  let arguments = (ins GS_FloatTensor:$input, GS_FloatTensor:$grad,
                   DenseI64ArrayAttr:$kernel_shape,
                   OptionalAttr<DenseI64ArrayAttr>:$strides,
                   OptionalAttr<DenseI64ArrayAttr>:$pads,
                   OptionalAttr<DenseI64ArrayAttr>:$dilations,
                   UnitAttr:$ceil_mode);
  let results = (outs GS_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $grad prop-dict attr-dict `:` type($input) `,` type($grad)
  }];
  let extraClassDeclaration = [{
    ::mlir::gs::WindowGeometry getGeometry();
  }];
  let hasVerifier = 1;
}

def GS_AvgPoolGradOp : GS_Op<"avg_pool_grad", [Pure]> {
  let summary = "gradient of average pooling";
  let description = [{
    The vector-Jacobian product of `gs.avg_pool` with the same attributes:
    each element of `grad` (shaped like the pooling's result), divided by
    its window's divisor, is added to every input position of its window.
    The result has the shape of the pooling's input.

    ```mlir
    %dx = gs.avg_pool_grad %dy <{kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : tensor<8x16x14x14xf32> -> tensor<8x16x28x28xf32>
    ```
  }];
  let arguments = (ins GS_FloatTensor:$grad,
                   DenseI64ArrayAttr:$kernel_shape,
                   OptionalAttr<DenseI64ArrayAttr>:$strides,
                   OptionalAttr<DenseI64ArrayAttr>:$pads,
                   UnitAttr:$ceil_mode, UnitAttr:$count_include_pad);
  let results = (outs GS_FloatTensor:$result);
  let assemblyFormat = [{
    $grad prop-dict attr-dict `:` type($grad) `->` type($result)
  }];
  let extraClassDeclaration = [{
    ::mlir::gs::WindowGeometry getGeometry();
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

def GS_ReshapeOp : GS_Op<"reshape", [Pure, SameOperandsAndResultElementType]> {
  let summary = "reinterpret a tensor with another static shape";
  let description = [{
    Row-major reshape; the element counts must agree.

    ```mlir
    %y = gs.reshape %x : tensor<8x16x4x4xf32> -> tensor<8x256xf32>
    ```
  }];
  let arguments = (ins GS_Tensor:$input);
  let results = (outs GS_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def GS_TransposeOp : GS_Op<"transpose", [Pure, InferTypeOpAdaptor]> {
  let summary = "permute the dimensions of a tensor";
  let description = [{
    Result dimension `i` is input dimension `permutation[i]`.

    ```mlir
    %y = gs.transpose %x, [1, 0] : tensor<32x64xf32>
    ```
  }];
  let arguments = (ins GS_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs GS_Tensor:$result);
  let assemblyFormat = "$input `,` $permutation attr-dict `:` type($input)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
  let hasVerifier = 1;
}

def GS_ConcatOp : GS_Op<"concat", [Pure, InferTypeOpAdaptor,
    SameOperandsAndResultElementType]> {
  let summary = "join tensors along one axis";
  let description = [{
    ```mlir
    %y = gs.concat %a, %b <{axis = 1 : i64}> : tensor<2x3xf32>, tensor<2x5xf32>
    ```
  }];
  let arguments = (ins Variadic<GS_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs GS_Tensor:$result);
  let assemblyFormat = "$inputs prop-dict attr-dict `:` type($inputs)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def GS_SplitOp : GS_Op<"split", [Pure]> {
  let summary = "cut a tensor into consecutive pieces along one axis";
  let description = [{
    The sizes of the pieces are those of the result types.

    ```mlir
    %a, %b = gs.split %x {axis = 1 : i64} : tensor<2x8xf32> -> tensor<2x3xf32>, tensor<2x5xf32>
    ```
  }];
  let arguments = (ins GS_Tensor:$input, I64Attr:$axis);
  let results = (outs Variadic<GS_Tensor>:$results);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def GS_SliceOp : GS_Op<"slice", [Pure, InferTypeOpAdaptor]> {
  let summary = "strided slice with clamped bounds (ONNX Slice)";
  let description = [{
    Per dimension, elements `start, start + step, ...` stopping before
    `end`. Bounds are already clamped as ONNX clamps them: for a positive
    step `0 <= start, end <= dim`; for a negative step `0 <= start < dim`
    and `-1 <= end < dim`. The result size is `max(0, ceil((end - start) /
    step))`.

    ```mlir
    %y = gs.slice %x <{ends = array<i64: 2, 4>, starts = array<i64: 0, 1>, steps = array<i64: 1, 2>}> : tensor<2x5xf32>
    ```
  }];
  let arguments = (ins GS_Tensor:$input, DenseI64ArrayAttr:$starts,
                   DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$steps);
  let results = (outs GS_Tensor:$result);
  let assemblyFormat = "$input prop-dict attr-dict `:` type($input)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def GS_GatherOp : GS_Op<"gather", [Pure, InferTypeOpAdaptor,
    AllElementTypesMatch<["data", "result"]>]> {
  let summary = "take slices of a tensor along an axis (ONNX Gather)";
  let description = [{
    Slice `indices[j...]` of `data` along `axis` for every position `j...`
    of `indices`: the result shape is `data.shape[:axis] + indices.shape +
    data.shape[axis+1:]`. A negative index counts from the end. Indices
    outside `[-size, size)`, which ONNX leaves undefined, are clamped into
    range, so that no index reads outside `data`.

    ```mlir
    %y = gs.gather %table, %ids <{axis = 0 : i64}> : tensor<100x16xf32>, tensor<8x4xi64>
    ```
  }];
  let arguments = (ins GS_Tensor:$data, GS_IndexTensor:$indices,
                   I64Attr:$axis);
  let results = (outs GS_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices prop-dict attr-dict `:` type($data) `,` type($indices)
  }];
  let hasVerifier = 1;
}

def GS_GatherElementsOp : GS_Op<"gather_elements", [Pure, InferTypeOpAdaptor,
    AllElementTypesMatch<["data", "result"]>]> {
  let summary = "take elements of a tensor along an axis (ONNX "
                "GatherElements)";
  let description = [{
    `result[i_0, ..., i_k, ...] = data[i_0, ..., indices[i_0, ..., i_k, ...],
    ...]` with the index replacing position `axis` (`numpy.take_along_axis`).
    `indices` has the rank of `data` and, off `axis`, no dimension larger
    than `data`'s; the result has its shape. Negative and out-of-range
    indices are treated as by `gs.gather`.

    ```mlir
    %y = gs.gather_elements %logp, %t <{axis = 1 : i64}> : tensor<8x10xf32>, tensor<8x1xi64>
    ```
  }];
  let arguments = (ins GS_Tensor:$data, GS_IndexTensor:$indices,
                   I64Attr:$axis);
  let results = (outs GS_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices prop-dict attr-dict `:` type($data) `,` type($indices)
  }];
  let hasVerifier = 1;
}

def GS_FlattenOp : GS_Op<"flatten", [Pure, InferTypeOpAdaptor]> {
  let summary = "collapse to two dimensions at an axis (ONNX Flatten)";
  let description = [{
    Result shape `(d0 * ... * d(axis-1)) x (d(axis) * ... * d(rank-1))`;
    `axis` is in `[0, rank]`. Canonicalizes to `gs.reshape`.

    ```mlir
    %y = gs.flatten %x <{axis = 1 : i64}> : tensor<8x16x4x4xf32>
    ```
  }];
  let arguments = (ins GS_Tensor:$input, I64Attr:$axis);
  let results = (outs GS_Tensor:$result);
  let assemblyFormat = "$input prop-dict attr-dict `:` type($input)";
  let hasCanonicalizer = 1;
  let hasVerifier = 1;
}

def GS_SqueezeOp : GS_Op<"squeeze", [Pure, InferTypeOpAdaptor]> {
  let summary = "drop unit dimensions";
  let description = [{
    Removes the listed dimensions, each of size 1. Canonicalizes to
    `gs.reshape`.

    ```mlir
    %y = gs.squeeze %x <{axes = array<i64: 0, 2>}> : tensor<1x3x1x5xf32>
    ```
  }];
  let arguments = (ins GS_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs GS_Tensor:$result);
  let assemblyFormat = "$input prop-dict attr-dict `:` type($input)";
  let hasCanonicalizer = 1;
  let hasVerifier = 1;
}

def GS_UnsqueezeOp : GS_Op<"unsqueeze", [Pure, InferTypeOpAdaptor]> {
  let summary = "insert unit dimensions";
  let description = [{
    `axes` index the result: each listed result dimension has size 1.
    Canonicalizes to `gs.reshape`.

    ```mlir
    %y = gs.unsqueeze %x <{axes = array<i64: 0, 3>}> : tensor<3x5xf32>
    ```
  }];
  let arguments = (ins GS_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs GS_Tensor:$result);
  let assemblyFormat = "$input prop-dict attr-dict `:` type($input)";
  let hasCanonicalizer = 1;
  let hasVerifier = 1;
}

def GS_ExpandOp : GS_Op<"expand", [Pure, SameOperandsAndResultElementType]> {
  let summary = "broadcast a tensor to a larger shape (ONNX Expand)";
  let description = [{
    NumPy broadcasting of `input` to the result shape.

    ```mlir
    %y = gs.expand %x : tensor<3x1xf32> -> tensor<2x3x4xf32>
    ```
  }];
  let arguments = (ins GS_Tensor:$input);
  let results = (outs GS_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class GS_ReduceOp<string mnemonic, string what>
    : GS_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let summary = what # " over a set of axes";
  let arguments = (ins GS_NumericTensor:$input, DenseI64ArrayAttr:$axes,
                   UnitAttr:$keepdims);
  let results = (outs GS_NumericTensor:$result);
  let assemblyFormat = "$input prop-dict attr-dict `:` type($input)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def GS_ReduceSumOp : GS_ReduceOp<"reduce_sum", "sum"> {
  let description = [{
    `axes` are sorted, distinct and in range; an empty list reduces nothing.
    With `keepdims` the reduced dimensions stay with size 1.

    ```mlir
    %s = gs.reduce_sum %x <{axes = array<i64: 0>, keepdims}> : tensor<32x10xf32>
    ```
  }];
}
def GS_ReduceMeanOp : GS_ReduceOp<"reduce_mean", "arithmetic mean"> {
  let description = [{
    ```mlir
    %m = gs.reduce_mean %x <{axes = array<i64: 2, 3>}> : tensor<8x16x4x4xf32>
    ```
  }];
}
def GS_ReduceMaxOp : GS_ReduceOp<"reduce_max", "maximum"> {
  let description = [{
    ```mlir
    %m = gs.reduce_max %x <{axes = array<i64: 1>, keepdims}> : tensor<8x10xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Softmax and losses
//===----------------------------------------------------------------------===//

class GS_SoftmaxBaseOp<string mnemonic> : GS_Op<mnemonic,
    [Pure, SameOperandsAndResultType]> {
  let arguments = (ins GS_FloatTensor:$input, I64Attr:$axis);
  let results = (outs GS_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def GS_SoftmaxOp : GS_SoftmaxBaseOp<"softmax"> {
  let summary = "softmax along one axis (ONNX Softmax, opset 13)";
  let description = [{
    ```mlir
    %p = gs.softmax %x {axis = 1 : i64} : tensor<32x10xf32>
    ```
  }];
}
def GS_LogSoftmaxOp : GS_SoftmaxBaseOp<"log_softmax"> {
  let summary = "log of softmax along one axis (ONNX LogSoftmax, opset 13)";
  let description = [{
    ```mlir
    %lp = gs.log_softmax %x {axis = 1 : i64} : tensor<32x10xf32>
    ```
  }];
}

def GS_SoftmaxCrossEntropyOp : GS_Op<"softmax_cross_entropy",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "softmax cross-entropy loss (ONNX SoftmaxCrossEntropyLoss)";
  let description = [{
    `scores` is `N x C x d1 x ... x dk`, `labels` `N x d1 x ... x dk` class
    indices, `weights` an optional per-class weight of shape `C`. Returns
    the loss (a scalar for `sum` and `mean`, shape `N x d1 x ... x dk` for
    `none`) and the log-probabilities. Targets equal to `ignore_index`
    contribute nothing; `mean` divides by the sum of the weights of the
    counted targets.

    ```mlir
    %loss, %logp = gs.softmax_cross_entropy %logits, %t <{reduction = #gs.reduction<mean>}> : tensor<32x10xf32>, tensor<32xi64>
    ```
  }];
  let arguments = (ins GS_FloatTensor:$scores, GS_IndexTensor:$labels,
                   Optional<GS_FloatTensor>:$weights,
                   GS_ReductionAttr:$reduction,
                   OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs GS_FloatTensor:$loss, GS_FloatTensor:$log_prob);
  let assemblyFormat = [{
    $scores `,` $labels (`,` $weights^)? prop-dict attr-dict `:` type($scores) `,`
    type($labels) (`,` type($weights)^)?
  }];
  let hasVerifier = 1;
}

def GS_NLLLossOp : GS_Op<"nll_loss", [Pure, InferTypeOpAdaptor]> {
  let summary = "negative log-likelihood loss (ONNX NegativeLogLikelihoodLoss)";
  let description = [{
    `input` holds log-probabilities `N x C x d1 x ... x dk`; the other
    operands and attributes are those of `gs.softmax_cross_entropy`.

    ```mlir
    %loss = gs.nll_loss %logp, %t <{ignore_index = -1 : i64, reduction = #gs.reduction<sum>}> : tensor<32x10xf32>, tensor<32xi64>
    ```
  }];
  let arguments = (ins GS_FloatTensor:$input, GS_IndexTensor:$target,
                   Optional<GS_FloatTensor>:$weights,
                   GS_ReductionAttr:$reduction,
                   OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs GS_FloatTensor:$loss);
  let assemblyFormat = [{
    $input `,` $target (`,` $weights^)? prop-dict attr-dict `:` type($input) `,`
    type($target) (`,` type($weights)^)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Cast, dropout, constants
//===----------------------------------------------------------------------===//

def GS_CastOp : GS_Op<"cast", [Pure]> {
  let summary = "element type conversion (ONNX Cast)";
  let description = [{
    Float narrowing rounds to nearest even with subnormals (IEEE 754), so
    f32 to f16 turns `|x| < 2^-25` into zero and `|x| >= 65520` into
    infinity. Float to integer truncates toward zero; integer to bool is
    `x != 0`; integers widen by their source's signedness and narrow by
    dropping high bits. Mixed precision makes every precision boundary such a cast.

    ```mlir
    %h = gs.cast %x : tensor<32x784xf32> to tensor<32x784xf16>
    ```
  }];
  let arguments = (ins GS_Tensor:$input);
  let results = (outs GS_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def GS_DropoutOp : GS_Op<"dropout", [Pure, InferTypeOpAdaptor]> {
  let summary = "random dropout in training mode (ONNX Dropout)";
  let description = [{
    In `training` mode each element is kept with probability `1 - ratio`
    and scaled by `1 / (1 - ratio)`; `mask` tells which were kept. The mask
    is a counter-based random function of `seed`, the optional `offset`
    (the training step, so that every step draws a new mask) and the
    element index; the backward pass reuses the forward `mask`. Outside
    training mode, or with ratio 0, it is the identity with an all-true
    mask.

    ```mlir
    %y, %mask = gs.dropout %x offset %step {ratio = 5.000000e-01 : f32, seed = 7 : i64, training} : tensor<32x256xf32>
    ```
  }];
  let arguments = (ins GS_FloatTensor:$input, Optional<I64>:$offset,
                   DefaultValuedAttr<F32Attr, "0.5f">:$ratio,
                   DefaultValuedAttr<I64Attr, "0">:$seed,
                   UnitAttr:$training);
  let results = (outs GS_FloatTensor:$result, GS_MaskTensor:$mask);
  let assemblyFormat = "$input (`offset` $offset^)? attr-dict `:` type($input)";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def GS_ConstantOp : GS_Op<"constant", [ConstantLike, Pure,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "constant tensor";
  let description = [{
    Holds any elements attribute, including `dense_resource` blobs for
    large tensors.

    ```mlir
    %c = gs.constant dense<[1.0, 2.0]> : tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs GS_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let builders = [
    OpBuilder<(ins "::mlir::ElementsAttr":$value), [{
      build($_builder, $_state, value.getType(), value);
    }]>
  ];
  let hasFolder = 1;
}

#endif // GS_DIALECT_GS_IR_GSTENSOROPS_TD
