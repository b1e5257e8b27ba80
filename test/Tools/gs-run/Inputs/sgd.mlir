// loss = sum(x * w), trained with ONNX Momentum (lr 0.5).
gs.param trainable @w = dense<1.0> : tensor<2xf32>
func.func @forward(%x: tensor<2xf32>) -> tensor<f32> {
  %w = gs.param.read @w : tensor<2xf32>
  %p = gs.mul %x, %w : tensor<2xf32>
  %l = gs.reduce_sum %p <{axes = array<i64: 0>}> : tensor<2xf32>
  return %l : tensor<f32>
}
gs.training @forward {learning_rate = 0.5 : f32, optimizer = #gs.momentum<>}
