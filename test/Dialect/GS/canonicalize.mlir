// RUN: gs-opt %s -canonicalize -split-input-file | FileCheck %s

// Every folder and canonicalization pattern of the gs dialect.

// CHECK-LABEL: func.func @add_n_single
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @add_n_single(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = gs.add_n %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @involution_and_idempotence
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[A:.*]] = gs.abs %[[X]]
// CHECK-NEXT: %[[R:.*]] = gs.relu %[[A]]
// CHECK-NEXT: return %[[R]]
func.func @involution_and_idempotence(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = gs.neg %x : tensor<4xf32>
  %1 = gs.neg %0 : tensor<4xf32>
  %2 = gs.abs %1 : tensor<4xf32>
  %3 = gs.abs %2 : tensor<4xf32>
  %4 = gs.relu %3 : tensor<4xf32>
  %5 = gs.relu %4 : tensor<4xf32>
  return %5 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @cast_to_same_type
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @cast_to_same_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = gs.cast %x : tensor<4xf32> to tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Widening f16 to f32 is exact, so narrowing back recovers the input...
// CHECK-LABEL: func.func @cast_round_trip_exact
// CHECK-SAME: (%[[X:.*]]: tensor<4xf16>, %[[I:.*]]: tensor<4xi32>)
// CHECK-NEXT: return %[[X]], %[[I]]
func.func @cast_round_trip_exact(%x: tensor<4xf16>, %i: tensor<4xi32>) -> (tensor<4xf16>, tensor<4xi32>) {
  %0 = gs.cast %x : tensor<4xf16> to tensor<4xf32>
  %1 = gs.cast %0 : tensor<4xf32> to tensor<4xf16>
  %2 = gs.cast %i : tensor<4xi32> to tensor<4xf64>
  %3 = gs.cast %2 : tensor<4xf64> to tensor<4xi32>
  return %1, %3 : tensor<4xf16>, tensor<4xi32>
}

// -----

// ... but f32 -> f16 -> f32 rounds (and underflows): it must stay.
// CHECK-LABEL: func.func @cast_round_trip_lossy
// CHECK: gs.cast %{{.*}} : tensor<4xf32> to tensor<4xf16>
// CHECK: gs.cast %{{.*}} : tensor<4xf16> to tensor<4xf32>
// CHECK: gs.cast %{{.*}} : tensor<4xi32> to tensor<4xf32>
// CHECK: gs.cast %{{.*}} : tensor<4xf32> to tensor<4xi32>
func.func @cast_round_trip_lossy(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %0 = gs.cast %x : tensor<4xf32> to tensor<4xf16>
  %1 = gs.cast %0 : tensor<4xf16> to tensor<4xf32>
  %2 = gs.cast %i : tensor<4xi32> to tensor<4xf32>
  %3 = gs.cast %2 : tensor<4xf32> to tensor<4xi32>
  return %1, %3 : tensor<4xf32>, tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @dropout_identity
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[M:.*]] = gs.constant dense<true> : tensor<4xi1>
// CHECK-NEXT: return %[[X]], %[[M]], %[[X]]
func.func @dropout_identity(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>, tensor<4xf32>) {
  %y, %m = gs.dropout %x {ratio = 0.5 : f32} : tensor<4xf32>
  %z, %n = gs.dropout %x {ratio = 0.0 : f32, training} : tensor<4xf32>
  return %y, %m, %z : tensor<4xf32>, tensor<4xi1>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @dropout_training_stays
// CHECK: gs.dropout
func.func @dropout_training_stays(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y, %m = gs.dropout %x {ratio = 0.5 : f32, training} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_folds
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[C:.*]] = gs.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT: %[[R:.*]] = gs.reshape %[[X]] : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK-NEXT: return %[[X]], %[[R]], %[[C]]
func.func @reshape_folds(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>, tensor<2x2xf32>) {
  %0 = gs.reshape %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %1 = gs.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %2 = gs.reshape %1 : tensor<6xf32> -> tensor<3x2xf32>
  %c = gs.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %3 = gs.reshape %c : tensor<4xf32> -> tensor<2x2xf32>
  return %0, %2, %3 : tensor<2x3xf32>, tensor<3x2xf32>, tensor<2x2xf32>
}

// -----

// CHECK-LABEL: func.func @shape_ops_become_reshapes
// CHECK-SAME: (%[[X:.*]]: tensor<2x1x3xf32>)
// CHECK-NEXT: %[[F:.*]] = gs.reshape %[[X]] : tensor<2x1x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[S:.*]] = gs.reshape %[[X]] : tensor<2x1x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[U:.*]] = gs.reshape %[[X]] : tensor<2x1x3xf32> -> tensor<1x2x1x3x1xf32>
// CHECK-NEXT: return %[[F]], %[[S]], %[[U]]
func.func @shape_ops_become_reshapes(%x: tensor<2x1x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<1x2x1x3x1xf32>) {
  %0 = gs.flatten %x <{axis = 1 : i64}> : tensor<2x1x3xf32>
  %1 = gs.squeeze %x <{axes = array<i64: 1>}> : tensor<2x1x3xf32>
  %2 = gs.unsqueeze %x <{axes = array<i64: 0, 4>}> : tensor<2x1x3xf32>
  return %0, %1, %2 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<1x2x1x3x1xf32>
}

// -----

// CHECK-LABEL: func.func @transposes
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[T:.*]] = gs.transpose %[[X]], [1, 0, 2] : tensor<2x3x4xf32>
// CHECK-NEXT: return %[[X]], %[[X]], %[[T]]
func.func @transposes(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<3x2x4xf32>) {
  %0 = gs.transpose %x, [0, 1, 2] : tensor<2x3x4xf32>
  %1 = gs.transpose %x, [2, 0, 1] : tensor<2x3x4xf32>
  %2 = gs.transpose %1, [1, 2, 0] : tensor<4x2x3xf32>
  %3 = gs.transpose %1, [2, 1, 0] : tensor<4x2x3xf32>
  return %0, %2, %3 : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<3x2x4xf32>
}

// -----

// A transpose that moves only dimensions of size 1 keeps every element in
// place: a reshape, folded into the reshapes around it (the autodiff's
// regrouping of a layer's one input channel). One that also reorders
// larger dimensions stays.

// CHECK-LABEL: func.func @unit_dim_transposes
// CHECK-SAME: (%[[X:.*]]: tensor<64x1x28x28xf16>, %[[Y:.*]]: tensor<1x8x3x3xf32>)
// CHECK-DAG: %[[IMAGES:.*]] = gs.reshape %[[X]] : tensor<64x1x28x28xf16> -> tensor<1x64x28x28xf16>
// CHECK-DAG: %[[SWAPPED:.*]] = gs.reshape %[[Y]] : tensor<1x8x3x3xf32> -> tensor<8x1x3x3xf32>
// CHECK-DAG: %[[KEPT:.*]] = gs.transpose %[[Y]], [2, 0, 1, 3] : tensor<1x8x3x3xf32>
// CHECK-NOT: gs.transpose
// CHECK: return %[[IMAGES]], %[[SWAPPED]], %[[KEPT]]
func.func @unit_dim_transposes(%x: tensor<64x1x28x28xf16>, %y: tensor<1x8x3x3xf32>) -> (tensor<1x64x28x28xf16>, tensor<8x1x3x3xf32>, tensor<3x1x8x3xf32>) {
  %0 = gs.reshape %x : tensor<64x1x28x28xf16> -> tensor<64x1x1x28x28xf16>
  %1 = gs.transpose %0, [2, 1, 0, 3, 4] : tensor<64x1x1x28x28xf16>
  %2 = gs.reshape %1 : tensor<1x1x64x28x28xf16> -> tensor<1x64x28x28xf16>
  %3 = gs.transpose %y, [1, 0, 2, 3] : tensor<1x8x3x3xf32>
  %4 = gs.transpose %y, [2, 0, 1, 3] : tensor<1x8x3x3xf32>
  return %2, %3, %4 : tensor<1x64x28x28xf16>, tensor<8x1x3x3xf32>, tensor<3x1x8x3xf32>
}

// -----

// CHECK-LABEL: func.func @single_piece_concat_split
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]], %[[X]]
func.func @single_piece_concat_split(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = gs.concat %x <{axis = 0 : i64}> : tensor<2x3xf32>
  %1 = gs.split %x {axis = 1 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @full_slice
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[S:.*]] = gs.slice %[[X]]
// CHECK-NEXT: return %[[X]], %[[S]]
func.func @full_slice(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = gs.slice %x <{starts = array<i64: 0, 0>, ends = array<i64: 2, 3>, steps = array<i64: 1, 1>}> : tensor<2x3xf32>
  %1 = gs.slice %x <{starts = array<i64: 0, 2>, ends = array<i64: 2, -1>, steps = array<i64: 1, -1>}> : tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @expands
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[C:.*]] = gs.constant dense<2.500000e+00> : tensor<4x3xf32>
// CHECK-NEXT: return %[[X]], %[[C]]
func.func @expands(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<4x3xf32>) {
  %0 = gs.expand %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %c = gs.constant dense<2.5> : tensor<3xf32>
  %1 = gs.expand %c : tensor<3xf32> -> tensor<4x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @reductions_over_nothing
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]]
func.func @reductions_over_nothing(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = gs.reduce_sum %x <{axes = array<i64>}> : tensor<2x3xf32>
  %1 = gs.reduce_mean %x <{axes = array<i64>, keepdims}> : tensor<2x3xf32>
  %2 = gs.reduce_max %x <{axes = array<i64>}> : tensor<2x3xf32>
  return %0, %1, %2 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @scale_by_one
// CHECK-SAME: (%[[X:.*]]: tensor<4xf16>, %[[G:.*]]: tensor<4xf32>, %[[S:.*]]: f32)
// CHECK-NEXT: %[[R:.*]] = gs.rescale %[[X]], %[[S]]
// CHECK-NEXT: return %[[X]], %[[G]], %[[R]]
func.func @scale_by_one(%x: tensor<4xf16>, %g: tensor<4xf32>, %s: f32) -> (tensor<4xf16>, tensor<4xf32>, tensor<4xf16>) {
  %one = arith.constant 1.0 : f32
  %0 = gs.rescale %x, %one : tensor<4xf16>
  %1 = gs.unscale %g, %one : tensor<4xf32>
  %2 = gs.rescale %x, %s : tensor<4xf16>
  return %0, %1, %2 : tensor<4xf16>, tensor<4xf32>, tensor<4xf16>
}
