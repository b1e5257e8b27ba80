// A two-layer Fashion-MNIST classifier in the gs dialect, as the ONNX
// importer produces it: parameters, a forward function whose result is the
// loss, and the training configuration.

gs.param trainable @fc1.weight = dense<0.01> : tensor<128x784xf32>
gs.param trainable @fc1.bias = dense<0.0> : tensor<128xf32>
gs.param trainable @fc2.weight = dense<0.01> : tensor<10x128xf32>
gs.param trainable @fc2.bias = dense<0.0> : tensor<10xf32>

func.func @forward(%images: tensor<64x1x28x28xf32>, %labels: tensor<64xi64>) -> tensor<f32> {
  %x = gs.flatten %images <{axis = 1 : i64}> : tensor<64x1x28x28xf32>
  %w1 = gs.param.read @fc1.weight : tensor<128x784xf32>
  %b1 = gs.param.read @fc1.bias : tensor<128xf32>
  %h = gs.gemm %x, %w1, %b1 {transB} : tensor<64x784xf32>, tensor<128x784xf32>, tensor<128xf32> -> tensor<64x128xf32>
  %a = gs.relu %h : tensor<64x128xf32>
  %w2 = gs.param.read @fc2.weight : tensor<10x128xf32>
  %b2 = gs.param.read @fc2.bias : tensor<10xf32>
  %logits = gs.gemm %a, %w2, %b2 {transB} : tensor<64x128xf32>, tensor<10x128xf32>, tensor<10xf32> -> tensor<64x10xf32>
  %loss, %log_prob = gs.softmax_cross_entropy %logits, %labels <{reduction = #gs.reduction<mean>}> : tensor<64x10xf32>, tensor<64xi64>
  return %loss : tensor<f32>
}

gs.training @forward {learning_rate = 0.1 : f32, optimizer = #gs.momentum<alpha = 0.9>}
