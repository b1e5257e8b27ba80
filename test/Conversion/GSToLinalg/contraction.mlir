// RUN: gs-opt %s --split-input-file --convert-gs-to-linalg | FileCheck %s

// Contraction.cpp: GEMMs and ungrouped convolutions become named linalg
// ops accumulating into a zero-filled accumulator (f32 for f16 operands:
// the named ops extend their inputs to the accumulator type), followed by
// one epilogue generic that applies alpha, beta * C or the bias and rounds
// to the result type. 2-D grouped convolutions are named ops too; other
// grouped ones and batched / vector matmuls are linalg.generic
// contractions.

// A plain f32 GEMM is the matmul alone: no epilogue.
// CHECK-LABEL: func.func @gemm_f32(
// CHECK-SAME:      %[[A:.*]]: tensor<8x16xf32>, %[[B:.*]]: tensor<16x4xf32>)
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<8x4xf32>
// CHECK:         %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<8x16xf32>, tensor<16x4xf32>) outs(%[[ACC]] : tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[MM]] : tensor<8x4xf32>
func.func @gemm_f32(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %0 = gs.gemm %a, %b : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// transA / transB transpose the operands first; the epilogue computes
// alpha * AB + beta * C with C broadcast NumPy-style.
// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @gemm_transposed_alpha_beta(
// CHECK-SAME:      %[[A:.*]]: tensor<16x8xf32>, %[[B:.*]]: tensor<4x16xf32>, %[[C:.*]]: tensor<4xf32>)
// CHECK:         %[[AT:.*]] = linalg.transpose ins(%[[A]] : tensor<16x8xf32>) outs(%{{.*}} : tensor<8x16xf32>) permutation = [1, 0]
// CHECK:         %[[BT:.*]] = linalg.transpose ins(%[[B]] : tensor<4x16xf32>) outs(%{{.*}} : tensor<16x4xf32>) permutation = [1, 0]
// CHECK:         %[[ACC:.*]] = linalg.fill
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%[[AT]], %[[BT]] : tensor<8x16xf32>, tensor<16x4xf32>) outs(%[[ACC]] : tensor<8x4xf32>)
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$ROW]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:        ins(%[[MM]], %[[C]] : tensor<8x4xf32>, tensor<4xf32>)
// CHECK-NEXT:    ^bb0(%[[P:.*]]: f32, %[[CV:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[ALPHA:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      %[[PA:.*]] = arith.mulf %[[P]], %[[ALPHA]] : f32
// CHECK-NEXT:      %[[BETA:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:      %[[CB:.*]] = arith.mulf %[[CV]], %[[BETA]] : f32
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[PA]], %[[CB]] : f32
// CHECK-NEXT:      linalg.yield %[[SUM]] : f32
// CHECK:         return %[[R]]
func.func @gemm_transposed_alpha_beta(%a: tensor<16x8xf32>, %b: tensor<4x16xf32>,
                                      %c: tensor<4xf32>) -> tensor<8x4xf32> {
  %0 = gs.gemm %a, %b, %c {transA, transB, alpha = 0.5 : f32, beta = 2.0 : f32}
      : tensor<16x8xf32>, tensor<4x16xf32>, tensor<4xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// FP16 GEMM: f16 operands, an f32 accumulator, and one rounding to f16 in
// the epilogue, after adding the (extended) bias.
// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @gemm_f16(
// CHECK-SAME:      %[[A:.*]]: tensor<8x16xf16>, %[[B:.*]]: tensor<4x16xf16>, %[[C:.*]]: tensor<4xf16>)
// CHECK:         %[[BT:.*]] = linalg.transpose ins(%[[B]] : tensor<4x16xf16>) outs(%{{.*}} : tensor<16x4xf16>) permutation = [1, 0]
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<8x4xf32>
// CHECK:         %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<8x4xf32>)
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%[[A]], %[[BT]] : tensor<8x16xf16>, tensor<16x4xf16>) outs(%[[ACC]] : tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$ROW]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:        ins(%[[MM]], %[[C]] : tensor<8x4xf32>, tensor<4xf16>) outs(%{{.*}} : tensor<8x4xf16>)
// CHECK-NEXT:    ^bb0(%[[P:.*]]: f32, %[[CV:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT:      %[[CW:.*]] = arith.extf %[[CV]] : f16 to f32
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[P]], %[[CW]] : f32
// CHECK-NEXT:      %[[H:.*]] = arith.truncf %[[SUM]] : f32 to f16
// CHECK-NEXT:      linalg.yield %[[H]] : f16
// CHECK:         return %[[R]] : tensor<8x4xf16>
func.func @gemm_f16(%a: tensor<8x16xf16>, %b: tensor<4x16xf16>, %c: tensor<4xf16>) -> tensor<8x4xf16> {
  %0 = gs.gemm %a, %b, %c {transB} : tensor<8x16xf16>, tensor<4x16xf16>, tensor<4xf16> -> tensor<8x4xf16>
  return %0 : tensor<8x4xf16>
}

// -----

// An FP16 GEMM with an f32 result keeps the f32 accumulator: no rounding.
// CHECK-LABEL: func.func @gemm_f16_to_f32(
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x16xf16>, tensor<16x4xf16>) outs(%{{.*}} : tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK-NOT:     arith.truncf
// CHECK:         return %[[MM]] : tensor<8x4xf32>
func.func @gemm_f16_to_f32(%a: tensor<8x16xf16>, %b: tensor<16x4xf16>) -> tensor<8x4xf32> {
  %0 = gs.gemm %a, %b : tensor<8x16xf16>, tensor<16x4xf16> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// A column bias (M x 1) broadcasts along the rows.
// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$COL:.+]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @gemm_f16_to_f32_column_bias(
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x16xf16>, tensor<16x4xf16>) outs(%{{.*}} : tensor<8x4xf32>)
// CHECK:         linalg.generic {indexing_maps = [#[[$ID2]], #[[$COL]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:        ins(%[[MM]], %{{.*}} : tensor<8x4xf32>, tensor<8x1xf32>)
// CHECK-NEXT:    ^bb0(%[[P:.*]]: f32, %[[CV:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[P]], %[[CV]] : f32
// CHECK-NEXT:      linalg.yield %[[SUM]] : f32
func.func @gemm_f16_to_f32_column_bias(%a: tensor<8x16xf16>, %b: tensor<16x4xf16>,
                                       %c: tensor<8x1xf32>) -> tensor<8x4xf32> {
  %0 = gs.gemm %a, %b, %c : tensor<8x16xf16>, tensor<16x4xf16>, tensor<8x1xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_2d(
// CHECK-SAME:      %[[A:.*]]: tensor<8x16xf32>, %[[B:.*]]: tensor<16x4xf32>)
// CHECK:         %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8x4xf32>)
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<8x16xf32>, tensor<16x4xf32>) outs(%[[ACC]] : tensor<8x4xf32>)
// CHECK-NEXT:    return %[[MM]]
func.func @matmul_2d(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %0 = gs.matmul %a, %b : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @matmul_f16(
// CHECK:         %[[MM0:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x16xf16>, tensor<16x4xf16>) outs(%{{.*}} : tensor<8x4xf32>)
// CHECK:         %[[R0:.*]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:        ins(%[[MM0]] : tensor<8x4xf32>) outs(%{{.*}} : tensor<8x4xf16>)
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %{{.*}}: f16):
// CHECK-NEXT:      %[[H:.*]] = arith.truncf %[[V]] : f32 to f16
// CHECK-NEXT:      linalg.yield %[[H]] : f16
// CHECK:         %[[MM1:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x16xf16>, tensor<16x4xf16>) outs(%{{.*}} : tensor<8x4xf32>)
// CHECK-NEXT:    return %[[R0]], %[[MM1]]
func.func @matmul_f16(%a: tensor<8x16xf16>, %b: tensor<16x4xf16>) -> (tensor<8x4xf16>, tensor<8x4xf32>) {
  %0 = gs.matmul %a, %b : tensor<8x16xf16>, tensor<16x4xf16> -> tensor<8x4xf16>
  %1 = gs.matmul %a, %b : tensor<8x16xf16>, tensor<16x4xf16> -> tensor<8x4xf32>
  return %0, %1 : tensor<8x4xf16>, tensor<8x4xf32>
}

// -----

// Batch dimensions broadcast NumPy-style: loops (b0, b1, m, n, k); the lhs
// batch dimension of size 1 reads index 0.
// CHECK-DAG: #[[$LHS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d2, d4)>
// CHECK-DAG: #[[$RHS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4, d3)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @matmul_batched_broadcast(
// CHECK-SAME:      %[[A:.*]]: tensor<2x1x8x16xf32>, %[[B:.*]]: tensor<3x16x4xf32>)
// CHECK:         %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x3x8x4xf32>)
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[$LHS]], #[[$RHS]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME:        ins(%[[A]], %[[B]] : tensor<2x1x8x16xf32>, tensor<3x16x4xf32>) outs(%[[ACC]] : tensor<2x3x8x4xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[O:.*]]: f32):
// CHECK-NEXT:      %[[PR:.*]] = arith.mulf %[[X]], %[[Y]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[O]], %[[PR]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK:         return %[[R]]
func.func @matmul_batched_broadcast(%a: tensor<2x1x8x16xf32>, %b: tensor<3x16x4xf32>) -> tensor<2x3x8x4xf32> {
  %0 = gs.matmul %a, %b : tensor<2x1x8x16xf32>, tensor<3x16x4xf32> -> tensor<2x3x8x4xf32>
  return %0 : tensor<2x3x8x4xf32>
}

// -----

// Batched matrix times vector in f16: the generic extends both operands
// and accumulates in f32; an epilogue rounds.
// CHECK-DAG: #[[$LHS:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$RHS:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @matmul_matrix_vector_f16(
// CHECK:         %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<5x8xf32>)
// CHECK:         %[[P:.*]] = linalg.generic {indexing_maps = [#[[$LHS]], #[[$RHS]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME:        outs(%[[ACC]] : tensor<5x8xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f16, %[[Y:.*]]: f16, %[[O:.*]]: f32):
// CHECK-NEXT:      %[[XW:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK-NEXT:      %[[YW:.*]] = arith.extf %[[Y]] : f16 to f32
// CHECK-NEXT:      %[[PR:.*]] = arith.mulf %[[XW]], %[[YW]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[O]], %[[PR]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%[[P]] : tensor<5x8xf32>) outs(%{{.*}} : tensor<5x8xf16>)
// CHECK:           arith.truncf %{{.*}} : f32 to f16
func.func @matmul_matrix_vector_f16(%a: tensor<5x8x16xf16>, %v: tensor<16xf16>) -> tensor<5x8xf16> {
  %0 = gs.matmul %a, %v : tensor<5x8x16xf16>, tensor<16xf16> -> tensor<5x8xf16>
  return %0 : tensor<5x8xf16>
}

// -----

// Vector times matrix (loops n, k) and vector times vector (a rank-0
// result, loop k only).
// CHECK-DAG: #[[$VM_L:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$VM_R:.+]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[$VM_O:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[$VV:.+]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[$VV_O:.+]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @matmul_vectors(
// CHECK:         linalg.generic {indexing_maps = [#[[$VM_L]], #[[$VM_R]], #[[$VM_O]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME:        ins(%{{.*}}, %{{.*}} : tensor<16xf32>, tensor<16x4xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<f32>)
// CHECK:         linalg.generic {indexing_maps = [#[[$VV]], #[[$VV]], #[[$VV_O]]], iterator_types = ["reduction"]}
// CHECK-SAME:        ins(%{{.*}}, %{{.*}} : tensor<16xf32>, tensor<16xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
func.func @matmul_vectors(%v: tensor<16xf32>, %b: tensor<16x4xf32>, %w: tensor<16xf32>)
    -> (tensor<4xf32>, tensor<f32>) {
  %0 = gs.matmul %v, %b : tensor<16xf32>, tensor<16x4xf32> -> tensor<4xf32>
  %1 = gs.matmul %v, %w : tensor<16xf32>, tensor<16xf32> -> tensor<f32>
  return %0, %1 : tensor<4xf32>, tensor<f32>
}

// -----

// Padding is an explicit tensor.pad with zeros; the bias is laid along the
// channel dimension (M x 1 x 1) and added in the epilogue.
// CHECK-DAG: #[[$ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$CHAN:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
// CHECK-LABEL: func.func @conv2d_bias_stride_pad(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK:         %[[PADV:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[PADDED:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:           tensor.yield %[[PADV]] : f32
// CHECK:         } : tensor<2x3x8x8xf32> to tensor<2x3x10x10xf32>
// CHECK:         %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x4x4x4xf32>)
// CHECK:         %[[CONV:.*]] = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
// CHECK-SAME:        ins(%[[PADDED]], %[[W]] : tensor<2x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%[[ACC]] : tensor<2x4x4x4xf32>)
// CHECK:         %[[BIAS:.*]] = tensor.expand_shape %[[B]] {{\[}}[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$CHAN]], #[[$ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME:        ins(%[[CONV]], %[[BIAS]] : tensor<2x4x4x4xf32>, tensor<4x1x1xf32>)
// CHECK:           arith.addf
// CHECK:         return %[[R]]
func.func @conv2d_bias_stride_pad(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>,
                                  %b: tensor<4xf32>) -> tensor<2x4x4x4xf32> {
  %0 = gs.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}
      : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<2x4x4x4xf32>
  return %0 : tensor<2x4x4x4xf32>
}

// -----

// No padding, no bias: the convolution result is returned as is.
// CHECK-LABEL: func.func @conv2d_dilated(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>)
// CHECK-NOT:     tensor.pad
// CHECK:         %[[CONV:.*]] = linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
// CHECK-SAME:        ins(%[[X]], %[[W]] : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>)
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[CONV]]
func.func @conv2d_dilated(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x4x4xf32> {
  %0 = gs.conv %x, %w {dilations = array<i64: 2, 2>} : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x4x4xf32>
  return %0 : tensor<2x4x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @conv1d_f16(
// CHECK:         %[[CONV:.*]] = linalg.conv_1d_ncw_fcw {dilations = dense<1> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>}
// CHECK-SAME:        ins(%{{.*}}, %{{.*}} : tensor<2x3x8xf16>, tensor<4x3x3xf16>) outs(%{{.*}} : tensor<2x4x6xf32>)
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%[[CONV]] : tensor<2x4x6xf32>) outs(%{{.*}} : tensor<2x4x6xf16>)
// CHECK:           arith.truncf %{{.*}} : f32 to f16
func.func @conv1d_f16(%x: tensor<2x3x8xf16>, %w: tensor<4x3x3xf16>) -> tensor<2x4x6xf16> {
  %0 = gs.conv %x, %w : tensor<2x3x8xf16>, tensor<4x3x3xf16> -> tensor<2x4x6xf16>
  return %0 : tensor<2x4x6xf16>
}

// -----

// CHECK-LABEL: func.func @conv3d(
// CHECK:         linalg.conv_3d_ncdhw_fcdhw {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>}
// CHECK-SAME:        ins(%{{.*}}, %{{.*}} : tensor<1x2x4x4x4xf32>, tensor<3x2x2x2x2xf32>) outs(%{{.*}} : tensor<1x3x3x3x3xf32>)
func.func @conv3d(%x: tensor<1x2x4x4x4xf32>, %w: tensor<3x2x2x2x2xf32>) -> tensor<1x3x3x3x3xf32> {
  %0 = gs.conv %x, %w : tensor<1x2x4x4x4xf32>, tensor<3x2x2x2x2xf32> -> tensor<1x3x3x3x3xf32>
  return %0 : tensor<1x3x3x3x3xf32>
}

// -----

// FP16 convolution with a bias: f32 accumulation, bias extended, one
// rounding.
// CHECK-LABEL: func.func @conv2d_f16_bias(
// CHECK:         %[[CONV:.*]] = linalg.conv_2d_nchw_fchw
// CHECK-SAME:        ins(%{{.*}}, %{{.*}} : tensor<1x2x4x4xf16>, tensor<2x2x3x3xf16>) outs(%{{.*}} : tensor<1x2x2x2xf32>)
// CHECK:         %[[BIAS:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1, 2]] output_shape [2, 1, 1] : tensor<2xf16> into tensor<2x1x1xf16>
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%[[CONV]], %[[BIAS]] : tensor<1x2x2x2xf32>, tensor<2x1x1xf16>) outs(%{{.*}} : tensor<1x2x2x2xf16>)
// CHECK-NEXT:    ^bb0(%[[P:.*]]: f32, %[[BV:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT:      %[[BW:.*]] = arith.extf %[[BV]] : f16 to f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[P]], %[[BW]] : f32
// CHECK-NEXT:      %[[H:.*]] = arith.truncf %[[S]] : f32 to f16
// CHECK-NEXT:      linalg.yield %[[H]] : f16
func.func @conv2d_f16_bias(%x: tensor<1x2x4x4xf16>, %w: tensor<2x2x3x3xf16>,
                           %b: tensor<2xf16>) -> tensor<1x2x2x2xf16> {
  %0 = gs.conv %x, %w, %b : tensor<1x2x4x4xf16>, tensor<2x2x3x3xf16>, tensor<2xf16> -> tensor<1x2x2x2xf16>
  return %0 : tensor<1x2x2x2xf16>
}

// -----

// A 2-D grouped convolution: channels split into (group, C/group) views,
// convolved by linalg.conv_2d_ngchw_gfchw (which the CPU kernel schedule
// turns into a GEMM per group) with the strides and dilations.
// CHECK-LABEL: func.func @conv2d_grouped(
// CHECK-SAME:      %[[X:.*]]: tensor<1x4x9x9xf32>, %[[W:.*]]: tensor<6x2x3x3xf32>)
// CHECK:         %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x6x3x3xf32>)
// CHECK:         %[[GX:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 9, 9] : tensor<1x4x9x9xf32> into tensor<1x2x2x9x9xf32>
// CHECK:         %[[GW:.*]] = tensor.expand_shape %[[W]] {{\[}}[0, 1], [2], [3], [4]] output_shape [2, 3, 2, 3, 3] : tensor<6x2x3x3xf32> into tensor<2x3x2x3x3xf32>
// CHECK:         %[[GACC:.*]] = tensor.expand_shape %[[ACC]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 3, 3, 3] : tensor<1x6x3x3xf32> into tensor<1x2x3x3x3xf32>
// CHECK:         %[[G:.*]] = linalg.conv_2d_ngchw_gfchw {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
// CHECK-SAME:        ins(%[[GX]], %[[GW]] : tensor<1x2x2x9x9xf32>, tensor<2x3x2x3x3xf32>) outs(%[[GACC]] : tensor<1x2x3x3x3xf32>)
// CHECK:         %[[R:.*]] = tensor.collapse_shape %[[G]] {{\[}}[0], [1, 2], [3], [4]] : tensor<1x2x3x3x3xf32> into tensor<1x6x3x3xf32>
// CHECK:         return %[[R]]
func.func @conv2d_grouped(%x: tensor<1x4x9x9xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x3x3xf32> {
  %0 = gs.conv %x, %w {group = 2 : i64, strides = array<i64: 2, 2>, dilations = array<i64: 2, 2>}
      : tensor<1x4x9x9xf32>, tensor<6x2x3x3xf32> -> tensor<1x6x3x3xf32>
  return %0 : tensor<1x6x3x3xf32>
}

// -----

// A strided transposed convolution: one GEMM gives each input element's
// contribution at every kernel position (weights as M*KH*KW x C, times the
// input as C x H*W per image), then each kernel position's contributions
// add in place into its phase of an accumulator of the output's stride
// phases (out[.., 2a + p, 2b + q] is phases[.., p, q, a, b]: 2 x 2 planes
// of 4 x 4) at unit strides (col2im: the first position at the origin of
// phase (0, 0), the second, one column on, in phase (0, 1), the third, two
// columns on, one plane column on in phase (0, 0)); the phases then
// interleave into the output rounded up to whole strides (8 x 8), cut to
// its 7 x 7 for the bias.
// CHECK-DAG: #[[$A:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-DAG: #[[$B:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[$C:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[$ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$CHAN:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
// CHECK-LABEL: func.func @conv_transpose_stride2_bias(
// CHECK-SAME:      %[[X:.*]]: tensor<1x1x3x3xf32>, %[[W:.*]]: tensor<1x2x3x3xf32>, %[[B:.*]]: tensor<2xf32>)
// CHECK:         %[[WM:.*]] = tensor.collapse_shape %[[W]] {{\[}}[0], [1, 2, 3]] : tensor<1x2x3x3xf32> into tensor<1x18xf32>
// CHECK:         %[[WT:.*]] = linalg.transpose ins(%[[WM]] : tensor<1x18xf32>) outs(%{{.*}} : tensor<18x1xf32>) permutation = [1, 0]
// CHECK:         %[[XM:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0], [1], [2, 3]] : tensor<1x1x3x3xf32> into tensor<1x1x9xf32>
// CHECK:         %[[COLS:.*]] = linalg.generic {indexing_maps = [#[[$A]], #[[$B]], #[[$C]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME:        ins(%[[WT]], %[[XM]] : tensor<18x1xf32>, tensor<1x1x9xf32>) outs(%{{.*}} : tensor<1x18x9xf32>)
// CHECK:         %[[PER:.*]] = tensor.expand_shape %[[COLS]] {{\[}}[0], [1, 2, 3], [4, 5]] output_shape [1, 2, 3, 3, 3, 3]
// CHECK:         %[[PHASES:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x2x2x2x4x4xf32>)
// CHECK:         %[[K0:.*]] = tensor.extract_slice %[[PER]][0, 0, 0, 0, 0, 0] [1, 2, 1, 1, 3, 3] [1, 1, 1, 1, 1, 1] : tensor<1x2x3x3x3x3xf32> to tensor<1x2x3x3xf32>
// CHECK:         %[[T0:.*]] = tensor.extract_slice %[[PHASES]][0, 0, 0, 0, 0, 0] [1, 2, 1, 1, 3, 3] [1, 1, 1, 1, 1, 1] : tensor<1x2x2x2x4x4xf32> to tensor<1x2x3x3xf32>
// CHECK:         %[[S0:.*]] = linalg.generic {{.*}} ins(%[[K0]] : tensor<1x2x3x3xf32>) outs(%[[T0]] : tensor<1x2x3x3xf32>)
// CHECK-NEXT:      ^bb0(%[[C0:.*]]: f32, %[[O0:.*]]: f32):
// CHECK-NEXT:        arith.addf %[[O0]], %[[C0]]
// CHECK:         %[[ACC1:.*]] = tensor.insert_slice %[[S0]] into %[[PHASES]][0, 0, 0, 0, 0, 0] [1, 2, 1, 1, 3, 3] [1, 1, 1, 1, 1, 1]
// CHECK:         tensor.extract_slice %[[PER]][0, 0, 0, 1, 0, 0] [1, 2, 1, 1, 3, 3]
// CHECK:         tensor.extract_slice %[[ACC1]][0, 0, 0, 1, 0, 0] [1, 2, 1, 1, 3, 3] [1, 1, 1, 1, 1, 1]
// CHECK:         tensor.extract_slice %[[PER]][0, 0, 0, 2, 0, 0] [1, 2, 1, 1, 3, 3]
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, 0, 0, 0, 1] [1, 2, 1, 1, 3, 3] [1, 1, 1, 1, 1, 1]
// CHECK-COUNT-7: tensor.insert_slice
// CHECK:         %[[INTERLEAVED:.*]] = linalg.transpose ins(%{{.*}} : tensor<1x2x2x2x4x4xf32>) outs(%{{.*}} : tensor<1x2x4x2x4x2xf32>) permutation = [0, 1, 4, 2, 5, 3]
// CHECK:         %[[ROUNDED:.*]] = tensor.collapse_shape %[[INTERLEAVED]] {{\[}}[0], [1], [2, 3], [4, 5]] : tensor<1x2x4x2x4x2xf32> into tensor<1x2x8x8xf32>
// CHECK:         %[[OUT:.*]] = tensor.extract_slice %[[ROUNDED]][0, 0, 0, 0] [1, 2, 7, 7] [1, 1, 1, 1] : tensor<1x2x8x8xf32> to tensor<1x2x7x7xf32>
// CHECK:         %[[BIAS:.*]] = tensor.expand_shape %[[B]] {{\[}}[0, 1, 2]] output_shape [2, 1, 1]
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$CHAN]], #[[$ID4]]]
// CHECK-SAME:        ins(%[[OUT]], %[[BIAS]] : tensor<1x2x7x7xf32>, tensor<2x1x1xf32>)
// CHECK:           arith.addf
// CHECK:         return %[[R]]
func.func @conv_transpose_stride2_bias(%x: tensor<1x1x3x3xf32>, %w: tensor<1x2x3x3xf32>,
                                       %b: tensor<2xf32>) -> tensor<1x2x7x7xf32> {
  %0 = gs.conv_transpose %x, %w, %b {strides = array<i64: 2, 2>}
      : tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32>, tensor<2xf32> -> tensor<1x2x7x7xf32>
  return %0 : tensor<1x2x7x7xf32>
}

// -----

// A grouped FP16 transposed convolution (1-D, padded): the convolution of
// the input (at stride 1 framed by a pad of zeros, here of none: the
// kernel of 2 less its pad of 1 leaves no frame) is grouped, accumulates in
// f32 and rounds once.
// CHECK-DAG: #[[$FLIP:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, -d3 + 1)>
// CHECK-DAG: #[[$IN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d3 + d5)>
// CHECK-LABEL: func.func @conv_transpose_grouped_f16(
// CHECK-SAME:      %[[X:.*]]: tensor<1x4x5xf16>
// CHECK-NOT:     tensor.pad
// CHECK:         linalg.generic {indexing_maps = [#[[$FLIP]], #{{.+}}]
// CHECK-SAME:        ins(%{{.*}} : tensor<2x2x3x2xf16>) outs(%{{.*}} : tensor<2x3x2x2xf16>)
// CHECK:         tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2], [3]] : tensor<2x3x2x2xf16> into tensor<6x2x2xf16>
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x6x4xf32>)
// CHECK:         %[[G:.*]] = linalg.generic {indexing_maps = [#[[$IN]], #{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME:        ins(%{{.*}}, %{{.*}} : tensor<1x2x2x5xf16>, tensor<2x3x2x2xf16>) outs(%{{.*}} : tensor<1x2x3x4xf32>)
// CHECK:           arith.extf
// CHECK:           arith.extf
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[G]] {{\[}}[0], [1, 2], [3]] : tensor<1x2x3x4xf32> into tensor<1x6x4xf32>
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%[[C]] : tensor<1x6x4xf32>) outs(%{{.*}} : tensor<1x6x4xf16>)
// CHECK:           arith.truncf
func.func @conv_transpose_grouped_f16(%x: tensor<1x4x5xf16>, %w: tensor<4x3x2xf16>) -> tensor<1x6x4xf16> {
  %0 = gs.conv_transpose %x, %w {group = 2 : i64, pads = array<i64: 1, 1>}
      : tensor<1x4x5xf16>, tensor<4x3x2xf16> -> tensor<1x6x4xf16>
  return %0 : tensor<1x6x4xf16>
}

// -----

// At stride 1 the input is framed by kernel - 1 - pad zeros on each side: a
// tensor.pad (whose frame alone is filled, gs-fill-pad-frames), where
// strides above 1 spread the input out (below).
// CHECK-LABEL: func.func @conv_transpose_stride1_frame(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x4xf32>
// CHECK:         tensor.pad %[[X]] low[0, 0, 2] high[0, 0, 2]
// CHECK:           tensor.yield %{{.*}} : f32
// CHECK:         } : tensor<2x3x4xf32> to tensor<2x3x8xf32>
// CHECK-NOT:     tensor.extract %[[X]]
func.func @conv_transpose_stride1_frame(%x: tensor<2x3x4xf32>, %w: tensor<3x5x3xf32>) -> tensor<2x5x6xf32> {
  %0 = gs.conv_transpose %x, %w : tensor<2x3x4xf32>, tensor<3x5x3xf32> -> tensor<2x5x6xf32>
  return %0 : tensor<2x5x6xf32>
}

// -----

// A grouped transposed convolution with a stride above 1 (the input
// gradient of a strided grouped convolution) convolves the input spread
// out by the stride: zeros with the input inserted at the stride, offset
// by its frame of kernel - 1 - pad = 1, not a gather computing each
// element's index.
// CHECK-LABEL: func.func @conv_transpose_grouped_strided(
// CHECK-SAME:      %[[X:.*]]: tensor<1x4x3x3xf32>
// CHECK:         %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x4x8x8xf32>)
// CHECK:         %[[SPREAD:.*]] = tensor.insert_slice %[[X]] into %[[ZEROS]][0, 0, 1, 1] [1, 4, 3, 3] [1, 1, 2, 2] : tensor<1x4x3x3xf32> into tensor<1x4x8x8xf32>
// CHECK-NOT:     arith.divsi
// CHECK:         tensor.expand_shape %[[SPREAD]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 8, 8]
// CHECK:         linalg.conv_2d_ngchw_gfchw
func.func @conv_transpose_grouped_strided(%x: tensor<1x4x3x3xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x6x6x6xf32> {
  %0 = gs.conv_transpose %x, %w {group = 2 : i64, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>}
      : tensor<1x4x3x3xf32>, tensor<4x3x3x3xf32> -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

// Where the pads cut more than the kernel's extent, input elements land
// outside the spread tensor: the gather then reads only those inside.
// CHECK-LABEL: func.func @conv_transpose_grouped_cropped(
// CHECK-NOT:     tensor.insert_slice
// CHECK:         arith.divsi
// CHECK:         arith.remsi
// CHECK:         tensor.extract
func.func @conv_transpose_grouped_cropped(%x: tensor<1x2x4xf32>, %w: tensor<2x1x2xf32>) -> tensor<1x2x3xf32> {
  %0 = gs.conv_transpose %x, %w {group = 2 : i64, strides = array<i64: 2>, pads = array<i64: 3, 2>}
      : tensor<1x2x4xf32>, tensor<2x1x2xf32> -> tensor<1x2x3xf32>
  return %0 : tensor<1x2x3xf32>
}

// -----

// gs.scaled_contraction as what it fused: the contraction, the rescale, the
// cast, the statistics of the cast values, and then the ReLU mask on the
// result only.
// CHECK-LABEL: func.func @scaled_contraction_relu_mask(
// CHECK-SAME:    %{{.*}}: tensor<4x3xf16>, %{{.*}}: tensor<3x8xf16>, %[[H:.*]]: tensor<4x8xf16>, %{{.*}}: f32)
// CHECK:         %[[CAST:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x8xf16>)
// CHECK:           arith.truncf %{{.*}} : f32 to f16
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[CAST]] : tensor<4x8xf16>)
// CHECK:         %[[STATS:.*]] = tensor.from_elements {{.*}} : tensor<7xf64>
// CHECK:         %[[ACTIVE:.*]] = linalg.generic {{.*}} ins(%[[H]], %{{.*}} : tensor<4x8xf16>, tensor<f16>)
// CHECK:           arith.cmpf ogt
// CHECK:         %[[MASKED:.*]] = linalg.generic {{.*}} ins(%[[ACTIVE]], %[[CAST]], %{{.*}} : tensor<4x8xi1>, tensor<4x8xf16>, tensor<f16>)
// CHECK:           arith.select
// CHECK:         return %[[MASKED]], %[[STATS]]
func.func @scaled_contraction_relu_mask(%dy: tensor<4x3xf16>, %w: tensor<3x8xf16>, %h: tensor<4x8xf16>, %beta: f32) -> (tensor<4x8xf16>, tensor<7xf64>) {
  %dx, %s, %c = gs.scaled_contraction scale %beta relu_mask(%h : tensor<4x8xf16>) : tensor<4x8xf16> {
    %p = gs.gemm %dy, %w : tensor<4x3xf16>, tensor<3x8xf16> -> tensor<4x8xf32>
    gs.yield %p : tensor<4x8xf32>
  }
  %l = builtin.unrealized_conversion_cast %s : !gs.stats to tensor<7xf64>
  return %dx, %l : tensor<4x8xf16>, tensor<7xf64>
}
