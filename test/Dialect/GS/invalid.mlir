// RUN: gs-opt %s -split-input-file -verify-diagnostics

// Every diagnostic of the gs dialect's verifiers. diagnostics.test checks
// that each message emitted in lib/Dialect/GS/IR appears here.

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

func.func @gemm_rank(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'gs.gemm' op expects 2-D operands a and b, got 2x3x4 and 4x5}}
  %0 = gs.gemm %a, %b : tensor<2x3x4xf32>, tensor<4x5xf32> -> tensor<2x5xf32>
  return
}

// -----

func.func @gemm_contraction(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{contraction dimensions disagree: op(a) is 2x3 and op(b) is 4x5}}
  %0 = gs.gemm %a, %b : tensor<2x3xf32>, tensor<4x5xf32> -> tensor<2x5xf32>
  return
}

// -----

func.func @gemm_transposed_contraction(%a: tensor<3x2xf32>, %b: tensor<5x4xf32>) {
  // expected-error @+1 {{contraction dimensions disagree: op(a) is 2x3 and op(b) is 4x5}}
  %0 = gs.gemm %a, %b {transA, transB} : tensor<3x2xf32>, tensor<5x4xf32> -> tensor<2x5xf32>
  return
}

// -----

func.func @gemm_bias(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{expects c to broadcast to 2x5, got 3}}
  %0 = gs.gemm %a, %b, %c : tensor<2x3xf32>, tensor<3x5xf32>, tensor<3xf32> -> tensor<2x5xf32>
  return
}

// -----

func.func @gemm_result(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+1 {{'gs.gemm' op result type(s) tensor<5x2xf32> differ from the inferred tensor<2x5xf32>}}
  %0 = gs.gemm %a, %b : tensor<2x3xf32>, tensor<3x5xf32> -> tensor<5x2xf32>
  return
}

// -----

func.func @gemm_narrowing_result(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) {
  // An f32 GEMM cannot round to an f16 result; only f16 -> f32 widens.
  // expected-error @+1 {{result type(s) tensor<2x5xf16> differ from the inferred tensor<2x5xf32>}}
  %0 = gs.gemm %a, %b : tensor<2x3xf32>, tensor<3x5xf32> -> tensor<2x5xf16>
  return
}

// -----

func.func @gemm_mixed_operands(%a: tensor<2x3xf16>, %b: tensor<3x5xf32>) {
  // expected-error @+1 {{expects operands of one element type, got 'f16' and 'f32'}}
  %0 = gs.gemm %a, %b : tensor<2x3xf16>, tensor<3x5xf32> -> tensor<2x5xf16>
  return
}

// -----

func.func @gemm_bias_type(%a: tensor<2x3xf16>, %b: tensor<3x5xf16>, %c: tensor<5xf16>) {
  // expected-error @+1 {{expects a bias of the result element type 'f32', got 'f16'}}
  %0 = gs.gemm %a, %b, %c : tensor<2x3xf16>, tensor<3x5xf16>, tensor<5xf16> -> tensor<2x5xf32>
  return
}

// -----

func.func @matmul_scalar(%a: tensor<f32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{expects operands of rank >= 1}}
  %0 = gs.matmul %a, %b : tensor<f32>, tensor<3xf32> -> tensor<f32>
  return
}

// -----

func.func @matmul_contraction(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{contraction dimensions disagree: lhs 2x3 and rhs 4}}
  %0 = gs.matmul %a, %b : tensor<2x3xf32>, tensor<4xf32> -> tensor<2xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x2x3xf32>, %b: tensor<5x3x4xf32>) {
  // expected-error @+1 {{batch dimensions do not broadcast: lhs 2x2x3 and rhs 5x3x4}}
  %0 = gs.matmul %a, %b : tensor<2x2x3xf32>, tensor<5x3x4xf32> -> tensor<5x2x4xf32>
  return
}

// -----

func.func @conv_rank(%x: tensor<8x3xf32>, %w: tensor<4x3xf32>) {
  // expected-error @+1 {{expects an input of rank 3 to 5 (N x C x 1-3 spatial dims), got 8x3}}
  %0 = gs.conv %x, %w : tensor<8x3xf32>, tensor<4x3xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @conv_weight_rank(%x: tensor<8x3x5x5xf32>, %w: tensor<4x3x3xf32>) {
  // expected-error @+1 {{expects a weight of the input's rank 4, got 4x3x3}}
  %0 = gs.conv %x, %w : tensor<8x3x5x5xf32>, tensor<4x3x3xf32> -> tensor<8x4x3x3xf32>
  return
}

// -----

func.func @conv_strides(%x: tensor<8x3x5x5xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{expects 2 'strides' values for 2 spatial dimensions, got 1}}
  %0 = gs.conv %x, %w {strides = array<i64: 2>} : tensor<8x3x5x5xf32>, tensor<4x3x3x3xf32> -> tensor<8x4x2x2xf32>
  return
}

// -----

func.func @conv_pads_count(%x: tensor<8x3x5x5xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{expects 4 'pads' values for 2 spatial dimensions, got 2}}
  %0 = gs.conv %x, %w {pads = array<i64: 1, 1>} : tensor<8x3x5x5xf32>, tensor<4x3x3x3xf32> -> tensor<8x4x5x5xf32>
  return
}

// -----

func.func @conv_stride_value(%x: tensor<8x3x5x5xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{expects strides >= 1}}
  %0 = gs.conv %x, %w {strides = array<i64: 0, 1>} : tensor<8x3x5x5xf32>, tensor<4x3x3x3xf32> -> tensor<8x4x3x3xf32>
  return
}

// -----

func.func @conv_dilation_value(%x: tensor<8x3x5x5xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{expects dilations >= 1}}
  %0 = gs.conv %x, %w {dilations = array<i64: 1, 0>} : tensor<8x3x5x5xf32>, tensor<4x3x3x3xf32> -> tensor<8x4x3x3xf32>
  return
}

// -----

func.func @conv_pad_value(%x: tensor<8x3x5x5xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{expects pads >= 0}}
  %0 = gs.conv %x, %w {pads = array<i64: 0, 0, -1, 0>} : tensor<8x3x5x5xf32>, tensor<4x3x3x3xf32> -> tensor<8x4x3x3xf32>
  return
}

// -----

func.func @conv_group_value(%x: tensor<8x3x5x5xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'gs.conv' op expects group >= 1, got 0}}
  %0 = gs.conv %x, %w {group = 0 : i64} : tensor<8x3x5x5xf32>, tensor<4x3x3x3xf32> -> tensor<8x4x3x3xf32>
  return
}

// -----

func.func @conv_channels(%x: tensor<8x4x5x5xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+1 {{input channels (4) must equal weight dimension 1 (3) times group (1)}}
  %0 = gs.conv %x, %w : tensor<8x4x5x5xf32>, tensor<6x3x3x3xf32> -> tensor<8x6x3x3xf32>
  return
}

// -----

func.func @conv_group(%x: tensor<8x4x5x5xf32>, %w: tensor<5x2x3x3xf32>) {
  // expected-error @+1 {{output channels (5) must be a multiple of group (2)}}
  %0 = gs.conv %x, %w {group = 2 : i64} : tensor<8x4x5x5xf32>, tensor<5x2x3x3xf32> -> tensor<8x5x3x3xf32>
  return
}

// -----

func.func @conv_bias(%x: tensor<8x3x5x5xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{expects a bias of shape 4, got 3}}
  %0 = gs.conv %x, %w, %b : tensor<8x3x5x5xf32>, tensor<4x3x3x3xf32>, tensor<3xf32> -> tensor<8x4x3x3xf32>
  return
}

// -----

func.func @conv_kernel_too_large(%x: tensor<8x3x5x5xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{dilated kernel (7) exceeds the input (5) padded by (0, 0) in spatial dimension 0}}
  %0 = gs.conv %x, %w {dilations = array<i64: 3, 1>} : tensor<8x3x5x5xf32>, tensor<4x3x3x3xf32> -> tensor<8x4x1x3xf32>
  return
}

// -----

func.func @conv_shape_arithmetic(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) {
  // (32 + 2 - 3) / 2 + 1 = 16, not 15.
  // expected-error @+1 {{result type(s) tensor<8x16x15x15xf32> differ from the inferred tensor<8x16x16x16xf32>}}
  %0 = gs.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32> -> tensor<8x16x15x15xf32>
  return
}

// -----

func.func @conv_transpose_output_padding(%x: tensor<1x1x3x3xf32>, %w: tensor<1x2x3x3xf32>) {
  // expected-error @+1 {{expects 2 'output_padding' values, got 1}}
  %0 = gs.conv_transpose %x, %w {output_padding = array<i64: 1>} : tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32> -> tensor<1x2x5x5xf32>
  return
}

// -----

func.func @conv_transpose_group(%x: tensor<1x1x3x3xf32>, %w: tensor<1x2x3x3xf32>) {
  // expected-error @+1 {{'gs.conv_transpose' op expects group >= 1, got -1}}
  %0 = gs.conv_transpose %x, %w {group = -1 : i64} : tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32> -> tensor<1x2x5x5xf32>
  return
}

// -----

func.func @conv_transpose_channels(%x: tensor<1x2x3x3xf32>, %w: tensor<1x2x3x3xf32>) {
  // expected-error @+1 {{input channels (2) must equal weight dimension 0 (1)}}
  %0 = gs.conv_transpose %x, %w : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32> -> tensor<1x2x5x5xf32>
  return
}

// -----

func.func @conv_transpose_group_channels(%x: tensor<1x3x3x3xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error @+1 {{input channels (3) must be a multiple of group (2)}}
  %0 = gs.conv_transpose %x, %w {group = 2 : i64} : tensor<1x3x3x3xf32>, tensor<3x2x3x3xf32> -> tensor<1x4x5x5xf32>
  return
}

// -----

func.func @conv_transpose_bias(%x: tensor<1x1x3x3xf32>, %w: tensor<1x2x3x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{expects a bias of shape 2, got 3}}
  %0 = gs.conv_transpose %x, %w, %b : tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32>, tensor<3xf32> -> tensor<1x2x5x5xf32>
  return
}

// -----

func.func @conv_transpose_output_padding_value(%x: tensor<1x1x3x3xf32>, %w: tensor<1x2x3x3xf32>) {
  // expected-error @+1 {{output_padding 2 must be >= 0 and smaller than the stride or the dilation}}
  %0 = gs.conv_transpose %x, %w {strides = array<i64: 2, 2>, output_padding = array<i64: 2, 0>} : tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32> -> tensor<1x2x9x7xf32>
  return
}

// -----

func.func @conv_transpose_pads(%x: tensor<1x1x3x3xf32>, %w: tensor<1x2x3x3xf32>) {
  // expected-error @+1 {{pads leave no output in spatial dimension 0}}
  %0 = gs.conv_transpose %x, %w {pads = array<i64: 3, 0, 2, 0>} : tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32> -> tensor<1x2x1x5xf32>
  return
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// -----

func.func @broadcast(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{'gs.add' op operand shapes 2x3 and 4x3 are not broadcast-compatible}}
  %0 = gs.add %a, %b : tensor<2x3xf32>, tensor<4x3xf32>
  return
}

// -----

func.func @broadcast_generic(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'gs.mul' op result type(s) tensor<3xf32> differ from the inferred tensor<2x3xf32>}}
  %0 = "gs.mul"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @binary_element_types(%a: tensor<3xf32>, %b: tensor<3xf16>) {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = "gs.sub"(%a, %b) : (tensor<3xf32>, tensor<3xf16>) -> tensor<3xf32>
  return
}

// -----

func.func @add_n_empty() {
  // expected-error @+1 {{'gs.add_n' op expected 1 or more operands, but found 0}}
  %0 = gs.add_n : tensor<3xf32>
  return
}

// -----

func.func @dynamic_shape(%a: tensor<?x3xf32>) {
  // expected-error @+1 {{must be statically shaped tensor of 16-bit float or 32-bit float or 64-bit float values}}
  %0 = gs.relu %a : tensor<?x3xf32>
  return
}

//===----------------------------------------------------------------------===//
// Normalization and pooling
//===----------------------------------------------------------------------===//

// -----

func.func @batch_norm_rank(%x: tensor<8xf32>, %c: tensor<8xf32>) {
  // expected-error @+1 {{'gs.batch_norm' op expects an input of rank >= 2, got 8}}
  %y, %m, %v = gs.batch_norm %x, %c, %c : tensor<8xf32>, tensor<8xf32>
  return
}

// -----

func.func @batch_norm_channels(%x: tensor<8x16x4x4xf32>, %c: tensor<8xf32>) {
  // expected-error @+1 {{expects scale of shape 16 (the channel dimension of the input), got 8}}
  %y, %m, %v = gs.batch_norm %x, %c, %c : tensor<8x16x4x4xf32>, tensor<8xf32>
  return
}

// -----

func.func @batch_norm_inference_rank(%x: tensor<8xf32>, %c: tensor<8xf32>) {
  // expected-error @+1 {{'gs.batch_norm_inference' op expects an input of rank >= 2, got 8}}
  %y = gs.batch_norm_inference %x, %c, %c, %c, %c : tensor<8xf32>, tensor<8xf32>
  return
}

// -----

func.func @layer_norm_axis(%x: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'gs.layer_norm' op axis 2 is out of range [0, 1] for rank 2}}
  %y, %m, %i = gs.layer_norm %x, %g <{axis = 2 : i64}> : tensor<4x8xf32>, tensor<8xf32>
  return
}

// -----

func.func @layer_norm_scale(%x: tensor<4x8xf32>, %g: tensor<4x8xf32>) {
  // expected-error @+1 {{expects scale of shape 8 (the normalized dimensions), got 4x8}}
  %y, %m, %i = gs.layer_norm %x, %g <{axis = 1 : i64}> : tensor<4x8xf32>, tensor<4x8xf32>
  return
}

// -----

func.func @layer_norm_bias(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{expects bias of shape 8, got 4}}
  %y, %m, %i = gs.layer_norm %x, %g, %b <{axis = 1 : i64}> : tensor<4x8xf32>, tensor<8xf32>, tensor<4xf32>
  return
}

// -----

func.func @pool_rank(%x: tensor<8x3xf32>) {
  // expected-error @+1 {{'gs.max_pool' op expects an input of rank >= 3 (N x C x spatial dims), got 8x3}}
  %0 = gs.max_pool %x <{kernel_shape = array<i64: 2>}> : tensor<8x3xf32>
  return
}

// -----

func.func @pool_kernel_count(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{expects 2 'kernel_shape' values, got 1}}
  %0 = gs.avg_pool %x <{kernel_shape = array<i64: 2>}> : tensor<1x3x8x8xf32>
  return
}

// -----

func.func @pool_kernel_value(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{expects kernel_shape values >= 1}}
  %0 = gs.max_pool %x <{kernel_shape = array<i64: 2, 0>}> : tensor<1x3x8x8xf32>
  return
}

// -----

func.func @pool_window(%x: tensor<1x3x2x8xf32>) {
  // expected-error @+1 {{window exceeds the padded input in spatial dimension 0}}
  %0 = gs.max_pool %x <{kernel_shape = array<i64: 3, 3>}> : tensor<1x3x2x8xf32>
  return
}

// -----

func.func @pool_pads(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'gs.avg_pool' op expects 4 'pads' values for 2 spatial dimensions, got 3}}
  %0 = gs.avg_pool %x <{kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1>}> : tensor<1x3x8x8xf32>
  return
}

// -----

func.func @global_pool_rank(%x: tensor<8x3xf32>) {
  // expected-error @+1 {{'gs.global_avg_pool' op expects an input of rank >= 3 (N x C x spatial dims), got 8x3}}
  %0 = gs.global_avg_pool %x : tensor<8x3xf32>
  return
}

//===----------------------------------------------------------------------===//
// Shape manipulation and reductions
//===----------------------------------------------------------------------===//

// -----

func.func @reshape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{cannot reshape 2x3 (6 elements) to 7 (7 elements)}}
  %0 = gs.reshape %x : tensor<2x3xf32> -> tensor<7xf32>
  return
}

// -----

func.func @transpose_rank(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{expects a permutation of 2 dimensions, got 3}}
  %0 = gs.transpose %x, [0, 1, 2] : tensor<2x3xf32>
  return
}

// -----

func.func @transpose_permutation(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{expects a permutation of [0, 2), got [1x1]}}
  %0 = gs.transpose %x, [1, 1] : tensor<2x3xf32>
  return
}

// -----

func.func @concat_empty() {
  // expected-error @+1 {{'gs.concat' op expected 1 or more operands, but found 0}}
  %0 = "gs.concat"() <{axis = 0 : i64}> : () -> tensor<2xf32>
  return
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'gs.concat' op axis 2 is out of range [0, 1] for rank 2}}
  %0 = gs.concat %a, %a <{axis = 2 : i64}> : tensor<2x3xf32>, tensor<2x3xf32>
  return
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<6xf32>) {
  // expected-error @+1 {{expects inputs of one rank; input 1 is 6}}
  %0 = gs.concat %a, %b <{axis = 0 : i64}> : tensor<2x3xf32>, tensor<6xf32>
  return
}

// -----

func.func @concat_shape(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+1 {{input 1 (2x4) differs from input 0 (2x3) outside the concatenation axis}}
  %0 = gs.concat %a, %b <{axis = 0 : i64}> : tensor<2x3xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @split_axis(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'gs.split' op axis -1 is out of range [0, 1] for rank 2}}
  %0:2 = gs.split %x {axis = -1 : i64} : tensor<2x6xf32> -> tensor<2x3xf32>, tensor<2x3xf32>
  return
}

// -----

func.func @split_none(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'gs.split' op expects at least one result}}
  "gs.split"(%x) {axis = 1 : i64} : (tensor<2x6xf32>) -> ()
  return
}

// -----

func.func @split_shape(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{result 1 ('tensor<3x3xf32>') must match the input outside the split axis}}
  %0:2 = gs.split %x {axis = 1 : i64} : tensor<2x6xf32> -> tensor<2x3xf32>, tensor<3x3xf32>
  return
}

// -----

func.func @split_sizes(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{result sizes along axis 1 add up to 5, but the input has 6}}
  %0:2 = gs.split %x {axis = 1 : i64} : tensor<2x6xf32> -> tensor<2x3xf32>, tensor<2x2xf32>
  return
}

// -----

func.func @slice_count(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{expects one start, end and step per dimension (2)}}
  %0 = gs.slice %x <{starts = array<i64: 0>, ends = array<i64: 2>, steps = array<i64: 1>}> : tensor<2x6xf32>
  return
}

// -----

func.func @slice_step(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{step of dimension 1 is zero}}
  %0 = gs.slice %x <{starts = array<i64: 0, 0>, ends = array<i64: 2, 6>, steps = array<i64: 1, 0>}> : tensor<2x6xf32>
  return
}

// -----

func.func @slice_bounds(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{bounds [0, 7) with step 1 of dimension 1 are not clamped to its size 6}}
  %0 = gs.slice %x <{starts = array<i64: 0, 0>, ends = array<i64: 2, 7>, steps = array<i64: 1, 1>}> : tensor<2x6xf32>
  return
}

// -----

func.func @slice_negative_step_bounds(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{bounds [6, -1) with step -1 of dimension 1 are not clamped to its size 6}}
  %0 = gs.slice %x <{starts = array<i64: 0, 6>, ends = array<i64: 2, -1>, steps = array<i64: 1, -1>}> : tensor<2x6xf32>
  return
}

// -----

func.func @flatten_axis(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'gs.flatten' op axis 3 is out of range [0, 2] for rank 2}}
  %0 = gs.flatten %x <{axis = 3 : i64}> : tensor<2x6xf32>
  return
}

// -----

func.func @squeeze_axis(%x: tensor<1x6xf32>) {
  // expected-error @+1 {{'gs.squeeze' op axes 2 is out of range [0, 1] for rank 2}}
  %0 = gs.squeeze %x <{axes = array<i64: 2>}> : tensor<1x6xf32>
  return
}

// -----

func.func @squeeze_size(%x: tensor<1x6xf32>) {
  // expected-error @+1 {{cannot squeeze dimension 1 of size 6}}
  %0 = gs.squeeze %x <{axes = array<i64: 1>}> : tensor<1x6xf32>
  return
}

// -----

func.func @unsqueeze_axes(%x: tensor<6xf32>) {
  // expected-error @+1 {{'gs.unsqueeze' op axes must be sorted and free of duplicates}}
  %0 = gs.unsqueeze %x <{axes = array<i64: 1, 0>}> : tensor<6xf32>
  return
}

// -----

func.func @expand(%x: tensor<3x2xf32>) {
  // expected-error @+1 {{cannot broadcast 3x2 to 3x4}}
  %0 = gs.expand %x : tensor<3x2xf32> -> tensor<3x4xf32>
  return
}

// -----

func.func @reduce_axes(%x: tensor<3x2xf32>) {
  // expected-error @+1 {{'gs.reduce_sum' op axes must be sorted and free of duplicates}}
  %0 = gs.reduce_sum %x <{axes = array<i64: 1, 1>}> : tensor<3x2xf32>
  return
}

// -----

func.func @reduce_axis_range(%x: tensor<3x2xf32>) {
  // expected-error @+1 {{'gs.reduce_max' op axes 2 is out of range [0, 1] for rank 2}}
  %0 = gs.reduce_max %x <{axes = array<i64: 2>}> : tensor<3x2xf32>
  return
}

//===----------------------------------------------------------------------===//
// Softmax and losses
//===----------------------------------------------------------------------===//

// -----

func.func @softmax_axis(%x: tensor<3x2xf32>) {
  // expected-error @+1 {{'gs.softmax' op axis 2 is out of range [0, 1] for rank 2}}
  %0 = gs.softmax %x {axis = 2 : i64} : tensor<3x2xf32>
  return
}

// -----

func.func @log_softmax_axis(%x: tensor<3x2xf32>) {
  // expected-error @+1 {{'gs.log_softmax' op axis -1 is out of range [0, 1] for rank 2}}
  %0 = gs.log_softmax %x {axis = -1 : i64} : tensor<3x2xf32>
  return
}

// -----

func.func @sce_rank(%s: tensor<10xf32>, %t: tensor<i64>) {
  // expected-error @+1 {{'gs.softmax_cross_entropy' op expects scores of rank >= 2 (N x C x ...), got 10}}
  %l, %p = gs.softmax_cross_entropy %s, %t <{reduction = #gs.reduction<mean>}> : tensor<10xf32>, tensor<i64>
  return
}

// -----

func.func @sce_labels(%s: tensor<4x10xf32>, %t: tensor<10xi64>) {
  // expected-error @+1 {{expects labels of shape 4 for scores 4x10, got 10}}
  %l, %p = gs.softmax_cross_entropy %s, %t <{reduction = #gs.reduction<mean>}> : tensor<4x10xf32>, tensor<10xi64>
  return
}

// -----

func.func @nll_weights(%s: tensor<4x10xf32>, %t: tensor<4xi64>, %w: tensor<4xf32>) {
  // expected-error @+1 {{'gs.nll_loss' op expects weights of shape 10 (one per class), got 4}}
  %l = gs.nll_loss %s, %t, %w <{reduction = #gs.reduction<sum>}> : tensor<4x10xf32>, tensor<4xi64>, tensor<4xf32>
  return
}

// -----

func.func @nll_weight_type(%s: tensor<4x10xf32>, %t: tensor<4xi64>, %w: tensor<10xf16>) {
  // expected-error @+1 {{expects weights of the scores' element type}}
  %l = gs.nll_loss %s, %t, %w <{reduction = #gs.reduction<sum>}> : tensor<4x10xf32>, tensor<4xi64>, tensor<10xf16>
  return
}

// -----

func.func @sce_label_type(%s: tensor<4x10xf32>, %t: tensor<4xf32>) {
  // expected-error @+1 {{must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values}}
  %l, %p = gs.softmax_cross_entropy %s, %t <{reduction = #gs.reduction<mean>}> : tensor<4x10xf32>, tensor<4xf32>
  return
}

//===----------------------------------------------------------------------===//
// Cast and dropout
//===----------------------------------------------------------------------===//

// -----

func.func @cast_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{expects the result shape to equal the input shape 4, got 2x2}}
  %0 = gs.cast %x : tensor<4xf32> to tensor<2x2xf16>
  return
}

// -----

func.func @dropout_ratio(%x: tensor<4xf32>) {
  // expected-error @+1 {{expects a ratio in [0, 1), got 1}}
  %y, %m = gs.dropout %x {ratio = 1.0 : f32, training} : tensor<4xf32>
  return
}

//===----------------------------------------------------------------------===//
// Training structure
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{'gs.param' op expects a statically shaped tensor initial value, got 'vector<4xf32>'}}
gs.param trainable @w = dense<1.0> : vector<4xf32>

// -----

// expected-error @+1 {{trainable parameters must be f16 or f32, got 'i64'}}
gs.param trainable @w = dense<1> : tensor<4xi64>

// -----

gs.param trainable @w = dense<1.0> : tensor<4xf32>
// expected-error @+1 {{names the weight it copies ('of') if and only if it is a copy}}
gs.param state @w.fp16 of @w = dense<1.0> : tensor<4xf16>

// -----

// expected-error @+1 {{names the weight it copies ('of') if and only if it is a copy}}
gs.param copy @w.fp16 = dense<1.0> : tensor<4xf16>

// -----

gs.param state @w = dense<1.0> : tensor<4xf32>
// expected-error @+1 {{copies @w, which is not a trainable gs.param}}
gs.param copy @w.fp16 of @w = dense<1.0> : tensor<4xf16>

// -----

gs.param trainable @w = dense<1.0> : tensor<4xf32>
// expected-error @+1 {{must be the FP16 copy of an FP32 weight of its shape, got 'tensor<2xf16>' for 'tensor<4xf32>'}}
gs.param copy @w.fp16 of @w = dense<1.0> : tensor<2xf16>

// -----

// expected-error @+1 {{expected parameter kind 'trainable', 'buffer' or 'state', got 'weight'}}
gs.param weight @w = dense<1.0> : tensor<4xf32>

// -----

func.func @read_missing() {
  // expected-error @+1 {{'gs.param.read' op refers to @missing, which is not a gs.param}}
  %0 = gs.param.read @missing : tensor<4xf32>
  return
}

// -----

gs.param trainable @w = dense<1.0> : tensor<4xf32>
func.func @read_type() {
  // expected-error @+1 {{'gs.param.read' op type 'tensor<2xf32>' differs from the type 'tensor<4xf32>' of @w}}
  %0 = gs.param.read @w : tensor<2xf32>
  return
}

// -----

gs.param buffer @mean = dense<0.0> : tensor<4xf32>
func.func @write_type(%v: tensor<4xf16>) {
  // expected-error @+1 {{'gs.param.write' op type 'tensor<4xf16>' differs from the type 'tensor<4xf32>' of @mean}}
  gs.param.write %v, @mean : tensor<4xf16>
  return
}

// -----

// expected-error @+1 {{'gs.training' op refers to @missing, which is not a func.func}}
gs.training @missing {learning_rate = 0.1 : f32, optimizer = #gs.sgd<>}

// -----

func.func @two_results() -> (tensor<f32>, tensor<f32>) {
  %c = gs.constant dense<0.0> : tensor<f32>
  return %c, %c : tensor<f32>, tensor<f32>
}
// expected-error @+1 {{'gs.training' op loss index 2 is out of range for @two_results with 2 results}}
gs.training @two_results {loss = 2 : i64, learning_rate = 0.1 : f32, optimizer = #gs.sgd<>}

// -----

func.func @vector_loss() -> tensor<3xf32> {
  %c = gs.constant dense<0.0> : tensor<3xf32>
  return %c : tensor<3xf32>
}
// expected-error @+1 {{loss must be a float scalar tensor, got 'tensor<3xf32>'}}
gs.training @vector_loss {learning_rate = 0.1 : f32, optimizer = #gs.sgd<>}

// -----

func.func @scalar_loss() -> tensor<f32> {
  %c = gs.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
// expected-error @+1 {{learning rate must be positive}}
gs.training @scalar_loss {learning_rate = 0.0 : f32, optimizer = #gs.sgd<>}

// -----

func.func @backward_nothing(%l: tensor<f32>) {
  // expected-error @+1 {{'gs.backward' op expects at least one value to differentiate against}}
  "gs.backward"(%l) <{operandSegmentSizes = array<i32: 1, 0, 0>}> ({}) : (tensor<f32>) -> ()
  return
}

// -----

func.func @backward_terminator(%l: tensor<f32>, %w: tensor<3xf32>) {
  // expected-error @+1 {{'gs.backward' op expects its region to end in gs.yield}}
  %g = gs.backward %l wrt %w : tensor<f32>, tensor<3xf32> {
  ^bb0(%seed: tensor<f32>):
    llvm.unreachable
  }
  return
}

// -----

func.func @backward_yield(%l: tensor<f32>, %w: tensor<3xf32>) {
  // expected-error @+1 {{'gs.backward' op yields 1 gradients whose types differ from the results' types}}
  %g = gs.backward %l wrt %w : tensor<f32>, tensor<3xf32> {
  ^bb0(%seed: tensor<f32>):
    %c = gs.constant dense<0.0> : tensor<4xf32>
    gs.yield %c : tensor<4xf32>
  }
  return
}

// -----

func.func @backward_no_seed(%l: tensor<f32>, %w: tensor<3xf32>) {
  // expected-error @+1 {{'gs.backward' op expects its region to take one argument, the seed, of type 'tensor<f32>'}}
  %g = gs.backward %l wrt %w : tensor<f32>, tensor<3xf32> {
    gs.yield %w : tensor<3xf32>
  }
  return
}

// -----

func.func @backward_seed_type(%l: tensor<f32>, %w: tensor<3xf32>) {
  // expected-error @+1 {{'gs.backward' op expects its region to take one argument, the seed, of type 'tensor<f32>'}}
  %g = gs.backward %l wrt %w : tensor<f32>, tensor<3xf32> {
  ^bb0(%seed: tensor<f16>):
    gs.yield %w : tensor<3xf32>
  }
  return
}

// -----

func.func @backward_seed_operand(%l: tensor<f32>, %w: tensor<3xf32>, %s: tensor<f16>) {
  // expected-error @+1 {{'gs.backward' op failed to verify that the seed has the type of `of`}}
  %g = "gs.backward"(%l, %w, %s) <{operandSegmentSizes = array<i32: 1, 1, 1>}> ({}) : (tensor<f32>, tensor<3xf32>, tensor<f16>) -> tensor<3xf32>
  return
}

// -----

func.func @yield_parent(%w: tensor<3xf32>) {
  // expected-error @+1 {{'gs.yield' op expects parent op to be one of 'gs.backward, gs.scaled_contraction'}}
  gs.yield %w : tensor<3xf32>
}

// -----

gs.param buffer @mean = dense<0.0> : tensor<4xf32>
func.func @update_frozen(%g: tensor<4xf32>, %lr: f32, %t: i64) {
  // expected-error @+1 {{'gs.update' op updates @mean, which is not trainable}}
  gs.update @mean, %g, lr %lr, step %t {optimizer = #gs.sgd<>} : tensor<4xf32>
  return
}

// -----

gs.param trainable @w = dense<0.0> : tensor<4xf32>
func.func @update_type(%g: tensor<2xf32>, %lr: f32, %t: i64) {
  // expected-error @+1 {{'gs.update' op type 'tensor<2xf32>' differs from the type 'tensor<4xf32>' of @w}}
  gs.update @w, %g, lr %lr, step %t {optimizer = #gs.sgd<>} : tensor<2xf32>
  return
}

// -----

gs.param trainable @w = dense<0.0> : tensor<4xf32>
func.func @update_state_count(%g: tensor<4xf32>, %lr: f32, %t: i64) {
  // expected-error @+1 {{'gs.update' op optimizer keeps 1 state tensors per parameter, but 0 are given}}
  gs.update @w, %g, lr %lr, step %t {optimizer = #gs.momentum<>} : tensor<4xf32>
  return
}

// -----

gs.param trainable @w = dense<0.0> : tensor<4xf32>
gs.param buffer @v = dense<0.0> : tensor<4xf32>
func.func @update_state_kind(%g: tensor<4xf32>, %lr: f32, %t: i64) {
  // expected-error @+1 {{optimizer state @v must be a 'state' parameter}}
  gs.update @w, %g, lr %lr, step %t state [@v] {optimizer = #gs.momentum<>} : tensor<4xf32>
  return
}

// -----

func.func @optimizer_step_count(%r: f32, %t: i64, %x: tensor<2xf32>, %g: tensor<2xf32>, %v: tensor<2xf32>) {
  // expected-error @+1 {{'gs.optimizer_step' op optimizer keeps 2 state tensors per parameter, but 1 are given}}
  %0:2 = gs.optimizer_step %r, %t, %x, %g, %v {optimizer = #gs.adam<>} : tensor<2xf32>, tensor<2xf32>
  return
}

// -----

func.func @optimizer_step_state_type(%r: f32, %t: i64, %x: tensor<2xf32>, %g: tensor<2xf32>, %v: tensor<3xf32>) {
  // expected-error @+1 {{expects optimizer state of the parameter's type 'tensor<2xf32>', got 'tensor<3xf32>'}}
  %0:2 = gs.optimizer_step %r, %t, %x, %g, %v {optimizer = #gs.momentum<>} : tensor<2xf32>, tensor<3xf32>
  return
}

//===----------------------------------------------------------------------===//
// Gradient scaling
//===----------------------------------------------------------------------===//

// -----

func.func @scale_threshold(%s: !gs.stats) {
  // expected-error @+1 {{'gs.compute_scale' op threshold must be in (0, 1), got 1}}
  %0:2 = gs.compute_scale %s {model = #gs.scale_model<log_normal>, threshold = 1.0 : f64}
  return
}

// -----

func.func @scale_half_normal_weight(%s: !gs.stats) {
  // expected-error @+1 {{half_normal model needs the weight's statistics}}
  %0:2 = gs.compute_scale %s {model = #gs.scale_model<half_normal>, accum_length = 8 : i64}
  return
}

// -----

func.func @scale_half_normal_length(%s: !gs.stats) {
  // expected-error @+1 {{half_normal model needs accum_length >= 1}}
  %0:2 = gs.compute_scale %s, %s {model = #gs.scale_model<half_normal>, accum_length = 0 : i64}
  return
}

// -----

func.func @scale_log_normal_weight(%s: !gs.stats) {
  // expected-error @+1 {{log_normal model takes neither weight statistics nor accum_length}}
  %0:2 = gs.compute_scale %s, %s {model = #gs.scale_model<log_normal>}
  return
}

// -----

func.func @scale_log_normal_relu(%s: !gs.stats) {
  // expected-error @+1 {{relu_mask applies to the half_normal model only}}
  %0:2 = gs.compute_scale %s {model = #gs.scale_model<log_normal>, relu_mask}
  return
}

// -----

func.func @scale_histogram_missing(%s: !gs.stats) {
  // expected-error @+1 {{takes a histogram with the exponent_histogram model, and only then}}
  %0:2 = gs.compute_scale %s {model = #gs.scale_model<exponent_histogram>}
  return
}

// -----

func.func @scale_histogram_bins(%s: !gs.stats, %h: tensor<8xi64>) {
  // expected-error @+1 {{histogram must have 256 bins}}
  %0:2 = "gs.compute_scale"(%s, %h) <{model = #gs.scale_model<exponent_histogram>, operandSegmentSizes = array<i32: 1, 0, 1, 0>}> : (!gs.stats, tensor<8xi64>) -> (f32, f64)
  return
}

// -----

func.func @scale_min(%s: !gs.stats) {
  // expected-error @+1 {{min_scale must be positive, got 0}}
  %0:2 = gs.compute_scale %s {model = #gs.scale_model<log_normal>, min_scale = 0.0 : f64}
  return
}

// -----

func.func @scale_max(%s: !gs.stats) {
  // expected-error @+1 {{max_scale must be >= min_scale}}
  %0:2 = gs.compute_scale %s {model = #gs.scale_model<log_normal>, max_scale = 0.5 : f64}
  return
}

// -----

func.func @scale_accum(%s: !gs.stats) {
  // expected-error @+1 {{max_accum_scale bounds alpha * scale and needs the incoming alpha}}
  %0:2 = gs.compute_scale %s {model = #gs.scale_model<log_normal>, max_accum_scale = 65504.0 : f64}
  return
}

// -----

func.func @scaled_two_ops(%a: tensor<32x10xf16>, %b: tensor<10x256xf16>, %s: f32) {
  // expected-error @+1 {{'gs.scaled_contraction' op expects its region to compute one contraction (gs.gemm, gs.matmul, gs.conv or gs.conv_transpose) and yield its result}}
  %0:3 = gs.scaled_contraction scale %s : tensor<32x256xf16> {
    %p = gs.gemm %a, %b : tensor<32x10xf16>, tensor<10x256xf16> -> tensor<32x256xf32>
    %q = gs.relu %p : tensor<32x256xf32>
    gs.yield %q : tensor<32x256xf32>
  }
  return
}

// -----

func.func @scaled_with_c(%a: tensor<32x10xf16>, %b: tensor<10x256xf16>, %c: tensor<256xf32>, %s: f32) {
  // expected-error @+1 {{'gs.scaled_contraction' op expects a contraction without C, alpha, beta or bias: the scale is the epilogue's}}
  %0:3 = gs.scaled_contraction scale %s : tensor<32x256xf16> {
    %p = gs.gemm %a, %b, %c : tensor<32x10xf16>, tensor<10x256xf16>, tensor<256xf32> -> tensor<32x256xf32>
    gs.yield %p : tensor<32x256xf32>
  }
  return
}

// -----

func.func @scaled_product_type(%a: tensor<32x10xf16>, %b: tensor<10x256xf16>, %s: f32) {
  // expected-error @+1 {{'gs.scaled_contraction' op expects an FP32 product of the result's shape, got 'tensor<32x256xf16>'}}
  %0:3 = gs.scaled_contraction scale %s : tensor<32x256xf16> {
    %p = gs.gemm %a, %b : tensor<32x10xf16>, tensor<10x256xf16> -> tensor<32x256xf16>
    gs.yield %p : tensor<32x256xf16>
  }
  return
}

// -----

func.func @scaled_relu_mask_shape(%a: tensor<32x10xf16>, %b: tensor<10x256xf16>, %m: tensor<32x128xf16>, %s: f32) {
  // expected-error @+1 {{'gs.scaled_contraction' op expects a ReLU mask of the result's shape, got 'tensor<32x128xf16>'}}
  %0:3 = gs.scaled_contraction scale %s relu_mask(%m : tensor<32x128xf16>) : tensor<32x256xf16> {
    %p = gs.gemm %a, %b : tensor<32x10xf16>, tensor<10x256xf16> -> tensor<32x256xf32>
    gs.yield %p : tensor<32x256xf32>
  }
  return
}

// -----

func.func @unify_empty(%s: !gs.stats) {
  // expected-error @+1 {{'gs.unify_scales' op expects at least one incoming scale}}
  %0 = gs.unify_scales stats %s
  return
}

// -----

func.func @unify_count(%a: f32, %s: !gs.stats) {
  // expected-error @+1 {{expects one statistics value per incoming scale, got 2 scales and 1 statistics}}
  %0 = gs.unify_scales %a, %a stats %s
  return
}

// -----

func.func @all_finite_empty() {
  // expected-error @+1 {{'gs.all_finite' op expects at least one operand}}
  %0 = "gs.all_finite"() : () -> i1
  return
}

// -----

func.func @unscale_type(%g: tensor<4xf16>, %a: f32) {
  // expected-error @+1 {{must be statically shaped tensor of 32-bit float values}}
  %0 = gs.unscale %g, %a : tensor<4xf16>
  return
}

// -----

func.func @compare_shapes(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'gs.compare' op operand shapes 2x3 and 4 are not broadcast-compatible}}
  %0 = gs.compare eq, %a, %b : tensor<2x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @compare_result(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{result type(s) tensor<3xi1> differ from the inferred tensor<2x3xi1>}}
  %0 = "gs.compare"(%a, %a) <{predicate = 0 : i32}> : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<3xi1>
  return
}

// -----

func.func @where_shapes(%m: tensor<2x3xi1>, %a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{operand shapes 2x3, 2x3 and 4 are not broadcast-compatible}}
  %0 = gs.where %m, %a, %b : tensor<2x3xi1>, tensor<2x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @gather_scalar(%d: tensor<f32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{'gs.gather' op expects data of rank >= 1}}
  %0 = gs.gather %d, %i <{axis = 0 : i64}> : tensor<f32>, tensor<2xi64>
  return
}

// -----

func.func @gather_axis(%d: tensor<2x3xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{'gs.gather' op axis 2 is out of range [0, 1] for rank 2}}
  %0 = gs.gather %d, %i <{axis = 2 : i64}> : tensor<2x3xf32>, tensor<2xi64>
  return
}

// -----

func.func @gather_empty_axis(%d: tensor<0x3xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{'gs.gather' op cannot gather from the empty axis 0}}
  %0 = gs.gather %d, %i <{axis = 0 : i64}> : tensor<0x3xf32>, tensor<2xi64>
  return
}

// -----

func.func @gather_elements_scalar(%d: tensor<f32>, %i: tensor<i64>) {
  // expected-error @+1 {{'gs.gather_elements' op expects data of rank >= 1}}
  %0 = gs.gather_elements %d, %i <{axis = 0 : i64}> : tensor<f32>, tensor<i64>
  return
}

// -----

func.func @gather_elements_rank(%d: tensor<2x3xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{'gs.gather_elements' op expects indices of the rank of data (2), got rank 1}}
  %0 = gs.gather_elements %d, %i <{axis = 0 : i64}> : tensor<2x3xf32>, tensor<2xi64>
  return
}

// -----

func.func @gather_elements_empty_axis(%d: tensor<2x0xf32>, %i: tensor<2x1xi64>) {
  // expected-error @+1 {{'gs.gather_elements' op cannot gather from the empty axis 1}}
  %0 = gs.gather_elements %d, %i <{axis = 1 : i64}> : tensor<2x0xf32>, tensor<2x1xi64>
  return
}

// -----

func.func @gather_elements_shape(%d: tensor<2x3xf32>, %i: tensor<3x1xi64>) {
  // expected-error @+1 {{'gs.gather_elements' op indices shape 3x1 exceeds the data shape 2x3 in dimension 0}}
  %0 = gs.gather_elements %d, %i <{axis = 1 : i64}> : tensor<2x3xf32>, tensor<3x1xi64>
  return
}

// -----

func.func @max_pool_grad_shape(%x: tensor<1x3x8x8xf32>, %g: tensor<1x3x3x4xf32>) {
  // expected-error @+1 {{'gs.max_pool_grad' op expects a gradient of the pooling's result shape 1x3x4x4, got 1x3x3x4}}
  %0 = gs.max_pool_grad %x, %g <{kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : tensor<1x3x8x8xf32>, tensor<1x3x3x4xf32>
  return
}

// -----

func.func @avg_pool_grad_element_type(%g: tensor<1x3x4x4xf16>) {
  // expected-error @+1 {{'gs.avg_pool_grad' op expects the gradient and the result to have one element type}}
  %0 = gs.avg_pool_grad %g <{kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : tensor<1x3x4x4xf16> -> tensor<1x3x8x8xf32>
  return
}

// -----

func.func @avg_pool_grad_window(%g: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{'gs.avg_pool_grad' op window exceeds the padded input in spatial dimension 0}}
  %0 = gs.avg_pool_grad %g <{kernel_shape = array<i64: 3, 3>}> : tensor<1x3x4x4xf32> -> tensor<1x3x2x8xf32>
  return
}

// -----

func.func @all_reduce_stats_max(%s: !gs.stats) -> !gs.stats {
  // expected-error @+1 {{combines statistics by their sum (counts and sums add, maxima take the largest): the reduction must be sum}}
  %r = gs.all_reduce max %s : !gs.stats
  return %r : !gs.stats
}
