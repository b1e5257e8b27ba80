// RUN: gs-opt %s --split-input-file --convert-gs-to-linalg | FileCheck %s

// Reduction.cpp (reductions): one linalg.generic with reduction iterators
// into a filled accumulator (sums and means in f64 for f32 data, f32 for
// f16; the element type itself for maxima), then a division for means, a
// cast back and a reshape for keepdims.

// CHECK-DAG: #[[$ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$KEEP12:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @reduce_sum_keepdims(
// CHECK-SAME:      %[[X:.*]]: tensor<8x16x4xf32>)
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<16x4xf64>
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f64) outs(%[[E]] : tensor<16x4xf64>)
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ID3]], #[[$KEEP12]]], iterator_types = ["reduction", "parallel", "parallel"]}
// CHECK-SAME:        ins(%[[X]] : tensor<8x16x4xf32>) outs(%[[INIT]] : tensor<16x4xf64>)
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %[[ACC:.*]]: f64):
// CHECK-NEXT:      %[[W:.*]] = arith.extf %[[V]] : f32 to f64
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[W]], %[[ACC]] : f64
// CHECK-NEXT:      linalg.yield %[[S]] : f64
// CHECK:         %[[ROUNDED:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[SUM]] : tensor<16x4xf64>) outs(%{{.*}} : tensor<16x4xf32>)
// CHECK-NEXT:    ^bb0(%[[T:.*]]: f64, %{{.*}}: f32):
// CHECK-NEXT:      arith.truncf %[[T]] : f64 to f32
// CHECK:         %[[R:.*]] = tensor.expand_shape %[[ROUNDED]] {{\[}}[0, 1], [2]] output_shape [1, 16, 4] : tensor<16x4xf32> into tensor<1x16x4xf32>
// CHECK:         return %[[R]]
func.func @reduce_sum_keepdims(%x: tensor<8x16x4xf32>) -> tensor<1x16x4xf32> {
  %0 = gs.reduce_sum %x <{axes = array<i64: 0>, keepdims}> : tensor<8x16x4xf32>
  return %0 : tensor<1x16x4xf32>
}

// -----

// f16 sums accumulate in f32 and round once.
// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$KEEP0:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @reduce_sum_f16(
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<8xf32>)
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$KEEP0]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME:        ins(%{{.*}} : tensor<8x16xf16>) outs(%[[INIT]] : tensor<8xf32>)
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f16, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[W:.*]] = arith.extf %[[V]] : f16 to f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[W]], %[[ACC]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK:         %[[R:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[SUM]] : tensor<8xf32>) outs(%{{.*}} : tensor<8xf16>)
// CHECK-NEXT:    ^bb0(%[[T:.*]]: f32, %{{.*}}: f16):
// CHECK-NEXT:      %[[H:.*]] = arith.truncf %[[T]] : f32 to f16
// CHECK-NEXT:      linalg.yield %[[H]] : f16
// CHECK:         return %[[R]]
func.func @reduce_sum_f16(%x: tensor<8x16xf16>) -> tensor<8xf16> {
  %0 = gs.reduce_sum %x <{axes = array<i64: 1>}> : tensor<8x16xf16>
  return %0 : tensor<8xf16>
}

// -----

// Integer sums over every axis: a rank-0 accumulator, arith.addi.
// CHECK-DAG: #[[$SCALAR:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @reduce_sum_i32_all(
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : i32) outs(%{{.*}} : tensor<i32>)
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [#{{.+}}, #[[$SCALAR]]], iterator_types = ["reduction", "reduction"]}
// CHECK-SAME:        outs(%[[INIT]] : tensor<i32>)
// CHECK:           arith.addi %{{.*}}, %{{.*}} : i32
// CHECK:         return %[[SUM]] : tensor<i32>
func.func @reduce_sum_i32_all(%x: tensor<8x16xi32>) -> tensor<i32> {
  %0 = gs.reduce_sum %x <{axes = array<i64: 0, 1>}> : tensor<8x16xi32>
  return %0 : tensor<i32>
}

// -----

// CHECK-DAG: #[[$ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$NC:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-LABEL: func.func @reduce_mean(
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$NC]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// CHECK:           arith.addf %{{.*}}, %{{.*}} : f64
// CHECK:         %[[COUNT:.*]] = arith.constant 1.600000e+01 : f64
// CHECK:         %[[R:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[SUM]] : tensor<8x16xf64>) outs(%{{.*}} : tensor<8x16xf32>)
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f64, %{{.*}}: f32):
// CHECK-NEXT:      %[[Q:.*]] = arith.divf %[[V]], %[[COUNT]] : f64
// CHECK-NEXT:      %[[T:.*]] = arith.truncf %[[Q]] : f64 to f32
// CHECK-NEXT:      linalg.yield %[[T]] : f32
// CHECK:         return %[[R]]
func.func @reduce_mean(%x: tensor<8x16x4x4xf32>) -> tensor<8x16xf32> {
  %0 = gs.reduce_mean %x <{axes = array<i64: 2, 3>}> : tensor<8x16x4x4xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// An f16 mean divides in f32 and rounds once, then keeps the reduced
// dimension.
// CHECK-LABEL: func.func @reduce_mean_f16_keepdims(
// CHECK:         %[[SUM:.*]] = linalg.generic
// CHECK-SAME:        outs(%{{.*}} : tensor<8xf32>)
// CHECK:           arith.extf
// CHECK:           arith.addf
// CHECK:         %[[COUNT:.*]] = arith.constant 1.600000e+01 : f32
// CHECK:         %[[MEAN:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[SUM]] : tensor<8xf32>) outs(%{{.*}} : tensor<8xf16>)
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %{{.*}}: f16):
// CHECK-NEXT:      %[[Q:.*]] = arith.divf %[[V]], %[[COUNT]] : f32
// CHECK-NEXT:      %[[H:.*]] = arith.truncf %[[Q]] : f32 to f16
// CHECK-NEXT:      linalg.yield %[[H]] : f16
// CHECK:         %[[R:.*]] = tensor.expand_shape %[[MEAN]] {{\[}}[0, 1]] output_shape [8, 1] : tensor<8xf16> into tensor<8x1xf16>
// CHECK:         return %[[R]]
func.func @reduce_mean_f16_keepdims(%x: tensor<8x16xf16>) -> tensor<8x1xf16> {
  %0 = gs.reduce_mean %x <{axes = array<i64: 1>, keepdims}> : tensor<8x16xf16>
  return %0 : tensor<8x1xf16>
}

// -----

// Integer means divide signed (truncating).
// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$KEEP1:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @reduce_mean_i64(
// CHECK:         linalg.generic {indexing_maps = [#[[$ID2]], #[[$KEEP1]]], iterator_types = ["reduction", "parallel"]}
// CHECK:           arith.addi %{{.*}}, %{{.*}} : i64
// CHECK:         %[[COUNT:.*]] = arith.constant 8 : i64
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[V:.*]]: i64, %{{.*}}: i64):
// CHECK-NEXT:      arith.divsi %[[V]], %[[COUNT]] : i64
func.func @reduce_mean_i64(%x: tensor<8x16xi64>) -> tensor<16xi64> {
  %0 = gs.reduce_mean %x <{axes = array<i64: 0>}> : tensor<8x16xi64>
  return %0 : tensor<16xi64>
}

// -----

// Maxima start from the lowest value of the element type (-inf for floats,
// the signed minimum for integers) and need no wider accumulator.
// CHECK-LABEL: func.func @reduce_max(
// CHECK:         %[[F32MIN:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[I0:.*]] = linalg.fill ins(%[[F32MIN]] : f32) outs(%{{.*}} : tensor<8xf32>)
// CHECK:         linalg.generic
// CHECK-SAME:        outs(%[[I0]] : tensor<8xf32>)
// CHECK-NEXT:    ^bb0(%[[V0:.*]]: f32, %[[A0:.*]]: f32):
// CHECK-NEXT:      arith.maximumf %[[V0]], %[[A0]] : f32
// CHECK:         %[[F16MIN:.*]] = arith.constant 0xFC00 : f16
// CHECK:         %[[I1:.*]] = linalg.fill ins(%[[F16MIN]] : f16) outs(%{{.*}} : tensor<16xf16>)
// CHECK:         linalg.generic
// CHECK-SAME:        outs(%[[I1]] : tensor<16xf16>)
// CHECK-NEXT:    ^bb0(%[[V1:.*]]: f16, %[[A1:.*]]: f16):
// CHECK-NEXT:      arith.maximumf %[[V1]], %[[A1]] : f16
// CHECK:         %[[I32MIN:.*]] = arith.constant -2147483648 : i32
// CHECK:         %[[I2:.*]] = linalg.fill ins(%[[I32MIN]] : i32) outs(%{{.*}} : tensor<8xi32>)
// CHECK:         linalg.generic
// CHECK-SAME:        outs(%[[I2]] : tensor<8xi32>)
// CHECK-NEXT:    ^bb0(%[[V2:.*]]: i32, %[[A2:.*]]: i32):
// CHECK-NEXT:      arith.maxsi %[[V2]], %[[A2]] : i32
// CHECK-NOT:     arith.truncf
// CHECK:         return
func.func @reduce_max(%x: tensor<8x16xf32>, %h: tensor<8x16xf16>, %i: tensor<8x16xi32>)
    -> (tensor<8xf32>, tensor<16xf16>, tensor<8xi32>) {
  %0 = gs.reduce_max %x <{axes = array<i64: 1>}> : tensor<8x16xf32>
  %1 = gs.reduce_max %h <{axes = array<i64: 0>}> : tensor<8x16xf16>
  %2 = gs.reduce_max %i <{axes = array<i64: 1>}> : tensor<8x16xi32>
  return %0, %1, %2 : tensor<8xf32>, tensor<16xf16>, tensor<8xi32>
}
