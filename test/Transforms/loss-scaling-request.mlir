// A gradient request of a non-scalar value (an ONNX Gradient operator):
// gs-loss-scaling with mode=none leaves its gradient as it is (telemetry
// has no FP16 rounding to record here); the scaling modes need a scalar
// loss to scale.
// RUN: gs-opt %s --gs-train-step --gs-autodiff --gs-loss-scaling=mode=none | FileCheck %s
// RUN: not gs-opt %s --gs-train-step --gs-autodiff --gs-loss-scaling=mode=fixed 2>&1 | FileCheck %s --check-prefix=FIXED
// RUN: not gs-opt %s --gs-train-step --gs-autodiff --gs-loss-scaling=mode=dynamic 2>&1 | FileCheck %s --check-prefix=FIXED

// CHECK-LABEL: func.func @request
// CHECK: gs.backward %{{[0-9]+}} wrt %{{[a-z0-9]+}} : tensor<2x3xf32>, tensor<2x3xf32> {
// CHECK-NEXT: ^bb0(%[[SEED:.+]]: tensor<2x3xf32>):
// CHECK:   gs.mul %[[SEED]], %{{.*}} : tensor<2x3xf32>
// CHECK-NOT: gs.unscale
// CHECK-NOT: gs.scaling
// FIXED: error: 'gs.backward' op loss scaling needs a scalar loss, got 'tensor<2x3xf32>'
func.func @request(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = gs.tanh %x : tensor<2x3xf32>
  %g = gs.backward %y wrt %x : tensor<2x3xf32>, tensor<2x3xf32>
  return %g : tensor<2x3xf32>
}
