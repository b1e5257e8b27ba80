// RUN: gs-opt %s --split-input-file --gs-autodiff --gs-mixed-precision --verify-diagnostics

// The backward region is built once, from the forward ops in the precision
// they run in: a region differentiated already would keep the gradients of
// the FP32 ops, so gs-mixed-precision refuses it.
func.func @differentiated(%x: tensor<4xf32>) -> tensor<4xf32> {
  %l = gs.reduce_sum %x <{axes = array<i64: 0>}> : tensor<4xf32>
  // expected-error @+1 {{'gs.backward' op is differentiated already: gs-mixed-precision changes the forward ops the backward region is built from, so it runs before gs-autodiff}}
  %g = gs.backward %l wrt %x : tensor<f32>, tensor<4xf32>
  return %g : tensor<4xf32>
}
