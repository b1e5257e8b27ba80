// An ignored target whose log-probability is -inf (PyTorch: 1.2039728).
func.func @forward(%lp: tensor<2x3xf32>, %t: tensor<2xi64>) -> (tensor<f32>, tensor<f32>) {
  %mean = gs.nll_loss %lp, %t <{reduction = #gs.reduction<mean>, ignore_index = -100 : i64}> : tensor<2x3xf32>, tensor<2xi64>
  %sum = gs.nll_loss %lp, %t <{reduction = #gs.reduction<sum>, ignore_index = -100 : i64}> : tensor<2x3xf32>, tensor<2xi64>
  return %mean, %sum : tensor<f32>, tensor<f32>
}
