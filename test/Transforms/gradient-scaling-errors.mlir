// RUN: gs-opt %s --gs-gradient-scaling --verify-diagnostics

// gs-gradient-scaling transforms the backward region it is given (written
// here by hand): a contraction with an FP16 result must be linear in one
// gradient, and this one multiplies the gradient by itself.
func.func @quadratic(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %l = gs.reduce_sum %x <{axes = array<i64: 0, 1>}> : tensor<2x2xf32>
  %g = gs.backward %l wrt %x : tensor<f32>, tensor<2x2xf32> {
  ^bb0(%seed: tensor<f32>):
    %r = gs.reshape %seed : tensor<f32> -> tensor<1x1xf32>
    %e = gs.expand %r : tensor<1x1xf32> -> tensor<2x2xf32>
    %h = gs.cast %e : tensor<2x2xf32> to tensor<2x2xf16>
    // expected-error @+1 {{'gs.matmul' op is a backward contraction with an FP16 result, but not of one gradient and one other operand (gradient scaling needs it linear in the gradient)}}
    %m = gs.matmul %h, %h : tensor<2x2xf16>, tensor<2x2xf16> -> tensor<2x2xf16>
    %f = gs.cast %m : tensor<2x2xf16> to tensor<2x2xf32>
    gs.yield %f : tensor<2x2xf32>
  }
  return %g : tensor<2x2xf32>
}
