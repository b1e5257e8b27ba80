// Inputs of test/Tools/flags.test: a train graph that already holds a
// telemetry symbol gs-gradient-scaling needs (an error in a pass).
gs.param trainable @w = dense<0.5> : tensor<3x4xf32>
gs.param state @gs.scaling.cast0 = dense<0.0> : tensor<f32>
func.func @forward(%x: tensor<2x4xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w = gs.param.read @w : tensor<3x4xf32>
  %y = gs.gemm %x, %w {transB} : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l, %lp = gs.softmax_cross_entropy %y, %t <{reduction = #gs.reduction<mean>}> : tensor<2x3xf32>, tensor<2xi64>
  return %l : tensor<f32>
}
gs.training @forward {learning_rate = 0.1 : f32, optimizer = #gs.sgd<>}
