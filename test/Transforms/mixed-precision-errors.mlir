// RUN: gs-opt %s --gs-mixed-precision --verify-diagnostics

// The backward region is rebuilt from the forward ops: it must exist.
func.func @request(%x: tensor<4xf32>) -> tensor<4xf32> {
  %l = gs.reduce_sum %x <{axes = array<i64: 0>}> : tensor<4xf32>
  // expected-error @+1 {{'gs.backward' op must be differentiated (by gs-autodiff) before gs-mixed-precision}}
  %g = gs.backward %l wrt %x : tensor<f32>, tensor<4xf32>
  return %g : tensor<4xf32>
}
