// A request with its own seed (the gradient of sum(seed * loss)): loss
// scaling multiplies the seed by S and leaves the region autodiff built;
// gs-inline-backward then feeds the product to the region's argument.
// RUN: gs-opt %s --gs-autodiff --gs-loss-scaling="mode=fixed scale=8 telemetry=false" | FileCheck %s
// RUN: gs-opt %s --gs-autodiff --gs-loss-scaling="mode=fixed scale=8 telemetry=false" --gs-inline-backward | FileCheck %s --check-prefix=INLINED

// CHECK-LABEL: func.func @seeded
// CHECK-SAME: (%[[X:.+]]: tensor<3xf32>, %[[DL:.+]]: tensor<f32>)
// CHECK: %[[S:.+]] = gs.constant dense<8.000000e+00> : tensor<f32>
// CHECK: %[[SEED:.+]] = gs.mul %[[DL]], %[[S]] : tensor<f32>{{$}}
// CHECK: %[[G:.+]] = gs.backward %{{.*}} wrt %[[X]] seed %[[SEED]] : tensor<f32>, tensor<3xf32> {
// CHECK-NEXT: ^bb0(%[[ARG:.+]]: tensor<f32>):
// CHECK:   gs.expand %{{.*}} : tensor<1xf32> -> tensor<3xf32>
// CHECK:   gs.yield
// CHECK: gs.unscale %[[G]], %{{.*}} : tensor<3xf32>

// INLINED-LABEL: func.func @seeded
// INLINED: %[[SEED:.+]] = gs.mul
// INLINED-NOT: gs.backward
// INLINED: gs.reshape %[[SEED]] : tensor<f32> -> tensor<1xf32>
func.func @seeded(%x: tensor<3xf32>, %dl: tensor<f32>) -> tensor<3xf32> {
  %l = gs.reduce_sum %x <{axes = array<i64: 0>}> : tensor<3xf32>
  %g = gs.backward %l wrt %x seed %dl : tensor<f32>, tensor<3xf32>
  return %g : tensor<3xf32>
}
