// RUN: gs-opt %s --split-input-file --convert-gs-to-linalg | FileCheck %s

// Normalization.cpp: statistics with two passes (the mean, then the mean of
// squared deviations: the biased variance) summed in f64 and rounded to f32,
// 1 / sqrt(var + eps) as math.rsqrt, and one normalizing generic computing
// (x - mean) * inv_std * scale + bias in f32, rounded to the input type.

// Training-mode batch norm over N x C x H x W: statistics over (0, 2, 3).
// CHECK-DAG: #[[$ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$C:.+]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-DAG: #[[$KEPT:.+]] = affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>
// CHECK-DAG: #[[$CHAN:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
// CHECK-LABEL: func.func @batch_norm(
// CHECK-SAME:      %[[X:.*]]: tensor<8x4x2x2xf32>, %[[SCALE:.*]]: tensor<4xf32>, %[[BIAS:.*]]: tensor<4xf32>)
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:         %[[SINIT:.*]] = linalg.fill ins(%[[ZERO]] : f64) outs(%{{.*}} : tensor<4xf64>)
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$C]]], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
// CHECK-SAME:        ins(%[[X]] : tensor<8x4x2x2xf32>) outs(%[[SINIT]] : tensor<4xf64>)
// CHECK:           arith.extf %{{.*}} : f32 to f64
// CHECK:           arith.addf
// CHECK:         %[[COUNT:.*]] = arith.constant 3.200000e+01 : f64
// CHECK:         %[[MEAN:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[SUM]] : tensor<4xf64>)
// CHECK:           arith.divf %{{.*}}, %[[COUNT]] : f64
// CHECK:         %[[MEANK:.*]] = tensor.expand_shape %[[MEAN]] {{\[}}[0, 1, 2, 3]] output_shape [1, 4, 1, 1] : tensor<4xf64> into tensor<1x4x1x1xf64>
// CHECK:         %[[SQ:.*]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$KEPT]], #[[$ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME:        ins(%[[X]], %[[MEANK]] : tensor<8x4x2x2xf32>, tensor<1x4x1x1xf64>)
// CHECK-NEXT:    ^bb0(%[[XV:.*]]: f32, %[[MV:.*]]: f64, %{{.*}}: f64):
// CHECK-NEXT:      %[[XW:.*]] = arith.extf %[[XV]] : f32 to f64
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[XW]], %[[MV]] : f64
// CHECK-NEXT:      %[[D2:.*]] = arith.mulf %[[D]], %[[D]] : f64
// CHECK-NEXT:      linalg.yield %[[D2]] : f64
// CHECK:         %[[SQSUM:.*]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$C]]], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
// CHECK-SAME:        ins(%[[SQ]] : tensor<8x4x2x2xf64>)
// CHECK:         %[[VAR:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[SQSUM]] : tensor<4xf64>)
// CHECK:           arith.divf
// CHECK:         %[[VARW:.*]] = tensor.expand_shape %[[VAR]] {{\[}}[0, 1, 2, 3]] output_shape [1, 4, 1, 1]
// CHECK:         %[[MEANR:.*]] = linalg.generic {{.*}} ins(%[[MEANK]] : tensor<1x4x1x1xf64>) outs(%{{.*}} : tensor<1x4x1x1xf32>)
// CHECK:           arith.truncf %{{.*}} : f64 to f32
// CHECK:         %[[VARK:.*]] = linalg.generic {{.*}} ins(%[[VARW]] : tensor<1x4x1x1xf64>) outs(%{{.*}} : tensor<1x4x1x1xf32>)
// CHECK:           arith.truncf %{{.*}} : f64 to f32
// CHECK:         %[[EPS:.*]] = arith.constant 1.000000e-03 : f32
// CHECK:         %[[INV:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[VARK]] : tensor<1x4x1x1xf32>)
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[VE:.*]] = arith.addf %[[V]], %[[EPS]] : f32
// CHECK-NEXT:      %[[RS:.*]] = math.rsqrt %[[VE]] : f32
// CHECK-NEXT:      linalg.yield %[[RS]] : f32
// CHECK-DAG:     %[[SCALEC:.*]] = tensor.expand_shape %[[SCALE]] {{\[}}[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
// CHECK-DAG:     %[[BIASC:.*]] = tensor.expand_shape %[[BIAS]] {{\[}}[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
// CHECK:         %[[Y:.*]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$KEPT]], #[[$KEPT]], #[[$CHAN]], #[[$CHAN]], #[[$ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME:        ins(%[[X]], %[[MEANR]], %[[INV]], %[[SCALEC]], %[[BIASC]] : tensor<8x4x2x2xf32>, tensor<1x4x1x1xf32>, tensor<1x4x1x1xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[M:.*]]: f32, %[[I:.*]]: f32, %[[G:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[C0:.*]] = arith.subf %[[A]], %[[M]] : f32
// CHECK-NEXT:      %[[N:.*]] = arith.mulf %[[C0]], %[[I]] : f32
// CHECK-NEXT:      %[[NG:.*]] = arith.mulf %[[N]], %[[G]] : f32
// CHECK-NEXT:      %[[NB:.*]] = arith.addf %[[NG]], %[[B]] : f32
// CHECK-NEXT:      linalg.yield %[[NB]] : f32
// CHECK:         %[[BM:.*]] = tensor.collapse_shape %[[MEANR]] {{\[}}[0, 1, 2, 3]] : tensor<1x4x1x1xf32> into tensor<4xf32>
// CHECK:         %[[BV:.*]] = tensor.collapse_shape %[[VARK]] {{\[}}[0, 1, 2, 3]] : tensor<1x4x1x1xf32> into tensor<4xf32>
// CHECK:         return %[[Y]], %[[BM]], %[[BV]]
func.func @batch_norm(%x: tensor<8x4x2x2xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>)
    -> (tensor<8x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>) {
  %y, %m, %v = gs.batch_norm %x, %s, %b {epsilon = 1.0e-3 : f32} : tensor<8x4x2x2xf32>, tensor<4xf32>
  return %y, %m, %v : tensor<8x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// f16 batch norm of a rank-2 input: f16 values are extended for the
// statistics (summed in f64) and the normalization (f32); the batch
// statistics are rounded to the type of `scale` (f16). The default epsilon
// is 1e-5.
// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$KEPT:.+]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-DAG: #[[$COL:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @batch_norm_f16(
// CHECK-SAME:      %[[X:.*]]: tensor<8x4xf16>, %[[SCALE:.*]]: tensor<4xf16>, %[[BIAS:.*]]: tensor<4xf16>)
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%[[X]] : tensor<8x4xf16>) outs(%{{.*}} : tensor<4xf64>)
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f16, %[[ACC:.*]]: f64):
// CHECK-NEXT:      %[[W:.*]] = arith.extf %[[V]] : f16 to f64
// CHECK-NEXT:      arith.addf %[[W]], %[[ACC]] : f64
// CHECK:         arith.constant 9.99999974E-6 : f32
// CHECK:         math.rsqrt
// CHECK:         %[[Y:.*]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$KEPT]], #[[$KEPT]], #[[$COL]], #[[$COL]], #[[$ID2]]]
// CHECK-SAME:        ins(%[[X]], %{{.*}}, %{{.*}}, %[[SCALE]], %[[BIAS]] : tensor<8x4xf16>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<4xf16>, tensor<4xf16>) outs(%{{.*}} : tensor<8x4xf16>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f16, %[[M:.*]]: f32, %[[I:.*]]: f32, %[[G:.*]]: f16, %[[B:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT:      %[[AW:.*]] = arith.extf %[[A]] : f16 to f32
// CHECK-NEXT:      %[[C0:.*]] = arith.subf %[[AW]], %[[M]] : f32
// CHECK-NEXT:      %[[N:.*]] = arith.mulf %[[C0]], %[[I]] : f32
// CHECK-NEXT:      %[[GW:.*]] = arith.extf %[[G]] : f16 to f32
// CHECK-NEXT:      %[[NG:.*]] = arith.mulf %[[N]], %[[GW]] : f32
// CHECK-NEXT:      %[[BW:.*]] = arith.extf %[[B]] : f16 to f32
// CHECK-NEXT:      %[[NB:.*]] = arith.addf %[[NG]], %[[BW]] : f32
// CHECK-NEXT:      %[[H:.*]] = arith.truncf %[[NB]] : f32 to f16
// CHECK-NEXT:      linalg.yield %[[H]] : f16
// CHECK:         %[[BM:.*]] = linalg.generic
// CHECK-SAME:        ins(%{{.*}} : tensor<4xf32>) outs(%{{.*}} : tensor<4xf16>)
// CHECK:           arith.truncf
// CHECK:         %[[BV:.*]] = linalg.generic
// CHECK-SAME:        ins(%{{.*}} : tensor<4xf32>) outs(%{{.*}} : tensor<4xf16>)
// CHECK:           arith.truncf
// CHECK:         return %[[Y]], %[[BM]], %[[BV]] : tensor<8x4xf16>, tensor<4xf16>, tensor<4xf16>
func.func @batch_norm_f16(%x: tensor<8x4xf16>, %s: tensor<4xf16>, %b: tensor<4xf16>)
    -> (tensor<8x4xf16>, tensor<4xf16>, tensor<4xf16>) {
  %y, %m, %v = gs.batch_norm %x, %s, %b : tensor<8x4xf16>, tensor<4xf16>
  return %y, %m, %v : tensor<8x4xf16>, tensor<4xf16>, tensor<4xf16>
}

// -----

// Inference batch norm with given statistics: the operands are
// (input, scale, bias, mean, variance); each per-channel vector is laid
// along dimension 1 (C x 1 for a rank-3 input).
// CHECK-DAG: #[[$ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$CHAN:.+]] = affine_map<(d0, d1, d2) -> (d1, 0)>
// CHECK-LABEL: func.func @batch_norm_inference(
// CHECK-SAME:      %[[X:.*]]: tensor<2x4x3xf16>, %[[SCALE:.*]]: tensor<4xf32>, %[[BIAS:.*]]: tensor<4xf32>, %[[MEAN:.*]]: tensor<4xf32>, %[[VAR:.*]]: tensor<4xf32>)
// CHECK:         %[[VARC:.*]] = tensor.expand_shape %[[VAR]] {{\[}}[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
// CHECK:         %[[EPS:.*]] = arith.constant 1.000000e-03 : f32
// CHECK:         %[[INV:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[VARC]] : tensor<4x1xf32>)
// CHECK:           arith.addf %{{.*}}, %[[EPS]] : f32
// CHECK:           math.rsqrt
// CHECK-DAG:     %[[MEANC:.*]] = tensor.expand_shape %[[MEAN]] {{\[}}[0, 1]] output_shape [4, 1]
// CHECK-DAG:     %[[SCALEC:.*]] = tensor.expand_shape %[[SCALE]] {{\[}}[0, 1]] output_shape [4, 1]
// CHECK-DAG:     %[[BIASC:.*]] = tensor.expand_shape %[[BIAS]] {{\[}}[0, 1]] output_shape [4, 1]
// CHECK:         %[[Y:.*]] = linalg.generic {indexing_maps = [#[[$ID3]], #[[$CHAN]], #[[$CHAN]], #[[$CHAN]], #[[$CHAN]], #[[$ID3]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME:        ins(%[[X]], %[[MEANC]], %[[INV]], %[[SCALEC]], %[[BIASC]] : tensor<2x4x3xf16>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>) outs(%{{.*}} : tensor<2x4x3xf16>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f16, %[[M:.*]]: f32, %[[I:.*]]: f32, %[[G:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f16):
// CHECK-NEXT:      %[[AW:.*]] = arith.extf %[[A]] : f16 to f32
// CHECK-NEXT:      %[[C0:.*]] = arith.subf %[[AW]], %[[M]] : f32
// CHECK-NEXT:      %[[N:.*]] = arith.mulf %[[C0]], %[[I]] : f32
// CHECK-NEXT:      %[[NG:.*]] = arith.mulf %[[N]], %[[G]] : f32
// CHECK-NEXT:      %[[NB:.*]] = arith.addf %[[NG]], %[[B]] : f32
// CHECK-NEXT:      %[[H:.*]] = arith.truncf %[[NB]] : f32 to f16
// CHECK-NEXT:      linalg.yield %[[H]] : f16
// CHECK:         return %[[Y]]
func.func @batch_norm_inference(%x: tensor<2x4x3xf16>, %s: tensor<4xf32>, %b: tensor<4xf32>,
                                %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<2x4x3xf16> {
  %y = gs.batch_norm_inference %x, %s, %b, %m, %v {epsilon = 1.0e-3 : f32} : tensor<2x4x3xf16>, tensor<4xf32>
  return %y : tensor<2x4x3xf16>
}

// -----

// Layer norm over the last axis: the statistics results keep the leading
// dimensions (4 x 8 x 1, f32); scale and bias broadcast from the trailing
// dimension.
// CHECK-DAG: #[[$ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$LEAD:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$KEPT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
// CHECK-DAG: #[[$LAST:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @layer_norm(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8x32xf32>, %[[G:.*]]: tensor<32xf32>, %[[B:.*]]: tensor<32xf32>)
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ID3]], #[[$LEAD]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME:        ins(%[[X]] : tensor<4x8x32xf32>) outs(%{{.*}} : tensor<4x8xf64>)
// CHECK:         %[[N:.*]] = arith.constant 3.200000e+01 : f64
// CHECK:         arith.divf %{{.*}}, %[[N]] : f64
// CHECK:         %[[MEANW:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [4, 8, 1] : tensor<4x8xf64> into tensor<4x8x1xf64>
// CHECK:         linalg.generic {indexing_maps = [#[[$ID3]], #[[$KEPT]], #[[$ID3]]]
// CHECK-SAME:        ins(%[[X]], %[[MEANW]] : tensor<4x8x32xf32>, tensor<4x8x1xf64>)
// CHECK:           arith.subf
// CHECK:           arith.mulf
// CHECK:         %[[VARW:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [4, 8, 1]
// CHECK:         %[[MEANK:.*]] = linalg.generic {{.*}} ins(%[[MEANW]] : tensor<4x8x1xf64>) outs(%{{.*}} : tensor<4x8x1xf32>)
// CHECK:         %[[VARK:.*]] = linalg.generic {{.*}} ins(%[[VARW]] : tensor<4x8x1xf64>) outs(%{{.*}} : tensor<4x8x1xf32>)
// CHECK:         %[[EPS:.*]] = arith.constant 9.99999974E-6 : f32
// CHECK:         %[[INV:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[VARK]] : tensor<4x8x1xf32>)
// CHECK:           math.rsqrt
// CHECK:         %[[Y:.*]] = linalg.generic {indexing_maps = [#[[$ID3]], #[[$KEPT]], #[[$KEPT]], #[[$LAST]], #[[$LAST]], #[[$ID3]]]
// CHECK-SAME:        ins(%[[X]], %[[MEANK]], %[[INV]], %[[G]], %[[B]] : tensor<4x8x32xf32>, tensor<4x8x1xf32>, tensor<4x8x1xf32>, tensor<32xf32>, tensor<32xf32>)
// CHECK:           arith.subf
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      arith.addf
// CHECK:         return %[[Y]], %[[MEANK]], %[[INV]] : tensor<4x8x32xf32>, tensor<4x8x1xf32>, tensor<4x8x1xf32>
func.func @layer_norm(%x: tensor<4x8x32xf32>, %g: tensor<32xf32>, %b: tensor<32xf32>)
    -> (tensor<4x8x32xf32>, tensor<4x8x1xf32>, tensor<4x8x1xf32>) {
  %y, %m, %i = gs.layer_norm %x, %g, %b <{axis = 2 : i64}> : tensor<4x8x32xf32>, tensor<32xf32>, tensor<32xf32>
  return %y, %m, %i : tensor<4x8x32xf32>, tensor<4x8x1xf32>, tensor<4x8x1xf32>
}

// -----

// f16 layer norm over axes 1 and 2 without a bias: no bias operand, the
// statistics stay f32, the output is rounded to f16.
// CHECK-DAG: #[[$ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$LEAD:.+]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-DAG: #[[$KEPT:.+]] = affine_map<(d0, d1, d2) -> (d0, 0, 0)>
// CHECK-DAG: #[[$TRAIL:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @layer_norm_f16_no_bias(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8x32xf16>, %[[G:.*]]: tensor<8x32xf16>)
// CHECK:         linalg.generic {indexing_maps = [#[[$ID3]], #[[$LEAD]]], iterator_types = ["parallel", "reduction", "reduction"]}
// CHECK-SAME:        ins(%[[X]] : tensor<4x8x32xf16>) outs(%{{.*}} : tensor<4xf64>)
// CHECK:           arith.extf
// CHECK:         arith.constant 2.560000e+02 : f64
// CHECK:         %[[MEANW:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf64> into tensor<4x1x1xf64>
// CHECK:         %[[MEANK:.*]] = linalg.generic {{.*}} ins(%[[MEANW]] : tensor<4x1x1xf64>) outs(%{{.*}} : tensor<4x1x1xf32>)
// CHECK:         arith.constant 9.99999974E-5 : f32
// CHECK:         %[[INV:.*]] = linalg.generic
// CHECK:           math.rsqrt
// CHECK:         %[[Y:.*]] = linalg.generic {indexing_maps = [#[[$ID3]], #[[$KEPT]], #[[$KEPT]], #[[$TRAIL]], #[[$ID3]]]
// CHECK-SAME:        ins(%[[X]], %[[MEANK]], %[[INV]], %[[G]] : tensor<4x8x32xf16>, tensor<4x1x1xf32>, tensor<4x1x1xf32>, tensor<8x32xf16>) outs(%{{.*}} : tensor<4x8x32xf16>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f16, %[[M:.*]]: f32, %[[I:.*]]: f32, %[[GV:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT:      %[[AW:.*]] = arith.extf %[[A]] : f16 to f32
// CHECK-NEXT:      %[[C0:.*]] = arith.subf %[[AW]], %[[M]] : f32
// CHECK-NEXT:      %[[N:.*]] = arith.mulf %[[C0]], %[[I]] : f32
// CHECK-NEXT:      %[[GW:.*]] = arith.extf %[[GV]] : f16 to f32
// CHECK-NEXT:      %[[NG:.*]] = arith.mulf %[[N]], %[[GW]] : f32
// CHECK-NEXT:      %[[H:.*]] = arith.truncf %[[NG]] : f32 to f16
// CHECK-NEXT:      linalg.yield %[[H]] : f16
// CHECK:         return %[[Y]], %[[MEANK]], %[[INV]] : tensor<4x8x32xf16>, tensor<4x1x1xf32>, tensor<4x1x1xf32>
func.func @layer_norm_f16_no_bias(%x: tensor<4x8x32xf16>, %g: tensor<8x32xf16>)
    -> (tensor<4x8x32xf16>, tensor<4x1x1xf32>, tensor<4x1x1xf32>) {
  %y, %m, %i = gs.layer_norm %x, %g <{axis = 1 : i64, epsilon = 1.0e-4 : f32}> : tensor<4x8x32xf16>, tensor<8x32xf16>
  return %y, %m, %i : tensor<4x8x32xf16>, tensor<4x1x1xf32>, tensor<4x1x1xf32>
}
