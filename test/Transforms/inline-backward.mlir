// RUN: gs-opt %s --split-input-file --gs-inline-backward | FileCheck %s

// A differentiated gs.backward region becomes straight-line code in front
// of where it was; ones (no seed) replace its argument, and its results are
// the gradients it yielded.

// CHECK-LABEL: func.func @differentiated(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<4xf32>)
// CHECK:         %[[Y:.*]] = gs.mul %[[X]], %[[W]]
// CHECK:         %[[L:.*]] = gs.reduce_sum %[[Y]]
// CHECK-NOT:     gs.backward
// CHECK:         %[[ONE:.*]] = gs.constant dense<1.000000e+00> : tensor<f32>
// CHECK:         %[[G:.*]] = gs.mul %[[ONE]], %[[X]]
// CHECK-NOT:     gs.yield
// CHECK:         %[[SUM:.*]] = gs.add %[[G]], %[[L]]
// CHECK:         return %[[SUM]]
func.func @differentiated(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %y = gs.mul %x, %w : tensor<4xf32>, tensor<4xf32>
  %l = gs.reduce_sum %y <{axes = array<i64: 0>}> : tensor<4xf32>
  %g = gs.backward %l wrt %w : tensor<f32>, tensor<4xf32> {
  ^bb0(%seed: tensor<f32>):
    %d = gs.mul %seed, %x : tensor<f32>, tensor<4xf32>
    gs.yield %d : tensor<4xf32>
  }
  %r = gs.add %g, %l : tensor<4xf32>, tensor<f32>
  return %r : tensor<4xf32>
}

// -----

// With a seed, the seed replaces the argument.

// CHECK-LABEL: func.func @seeded(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<4xf32>, %[[S:.*]]: tensor<f32>)
// CHECK-NOT:     gs.constant
// CHECK:         %[[G:.*]] = gs.mul %[[S]], %[[X]]
// CHECK:         return %[[G]]
func.func @seeded(%x: tensor<4xf32>, %w: tensor<4xf32>, %s: tensor<f32>) -> tensor<4xf32> {
  %y = gs.mul %x, %w : tensor<4xf32>, tensor<4xf32>
  %l = gs.reduce_sum %y <{axes = array<i64: 0>}> : tensor<4xf32>
  %g = gs.backward %l wrt %w seed %s : tensor<f32>, tensor<4xf32> {
  ^bb0(%seed: tensor<f32>):
    %d = gs.mul %seed, %x : tensor<f32>, tensor<4xf32>
    gs.yield %d : tensor<4xf32>
  }
  return %g : tensor<4xf32>
}

// -----

// A request not yet differentiated stays for the lowering to reject.

// CHECK-LABEL: func.func @request(
// CHECK:         gs.backward %{{.*}} wrt %{{.*}} : tensor<f32>, tensor<4xf32>
// CHECK-NEXT:    return
func.func @request(%l: tensor<f32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %g = gs.backward %l wrt %w : tensor<f32>, tensor<4xf32>
  return %g : tensor<4xf32>
}
