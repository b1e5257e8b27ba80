// The backward region is built once, by gs-autodiff; the passes after it
// transform the region they are given and never rebuild it, so what a pass
// or a user put there stays. Here the region is written by hand: its
// gradient is the negated one (gs.neg), which no rebuild would produce.
// RUN: gs-opt %s --gs-loss-scaling="mode=fixed scale=4 telemetry=false" | FileCheck %s --check-prefix=LOSS
// RUN: gs-opt %s --gs-gradient-scaling="telemetry=false" | FileCheck %s --check-prefix=GS
// RUN: gs-opt %s --gs-widen-weight-gradients | FileCheck %s --check-prefix=WIDEN

// LOSS-LABEL: func.func @kept
// LOSS: gs.backward %{{.*}} wrt %{{.*}} seed %{{.*}} : tensor<f32>, tensor<4xf32> {
// LOSS: gs.neg
// LOSS: gs.yield
// LOSS: gs.unscale

// GS-LABEL: func.func @kept
// GS: gs.backward
// GS-NEXT: ^bb0(%[[SEED:.+]]: tensor<f32>):
// GS: gs.mul %[[SEED]]
// GS-NEXT: gs.neg
// GS-NEXT: gs.yield

// WIDEN-LABEL: func.func @kept
// WIDEN: gs.backward
// WIDEN: gs.neg
func.func @kept(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %y = gs.mul %x, %w : tensor<4xf32>, tensor<4xf32>
  %l = gs.reduce_sum %y <{axes = array<i64: 0>}> : tensor<4xf32>
  %g = gs.backward %l wrt %w : tensor<f32>, tensor<4xf32> {
  ^bb0(%seed: tensor<f32>):
    %d = gs.mul %seed, %x : tensor<f32>, tensor<4xf32>
    %n = gs.neg %d : tensor<4xf32>
    gs.yield %n : tensor<4xf32>
  }
  return %g : tensor<4xf32>
}
