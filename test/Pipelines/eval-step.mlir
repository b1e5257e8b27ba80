// RUN: gs-opt %s --split-input-file --verify-diagnostics --gs-add-eval-step | FileCheck %s

// eval_step: forward without its parameter writes, for every model. Where
// the model has a classification loss, it also returns that loss's class
// scores and labels; the loss keeps its position (gs.loss_result) from the
// gs.training.

// CHECK-LABEL: func.func @forward(
// CHECK:         gs.param.write %{{.*}}, @running
// CHECK-LABEL: func.func @eval_step(
// CHECK-SAME:      %[[X:.*]]: tensor<2x4xf32>, %[[T:.*]]: tensor<2xi64>
// CHECK-SAME:      -> (tensor<f32>, tensor<2x3xf32> {onnx.name = "scores"}, tensor<2xi64> {onnx.name = "targets"})
// CHECK-SAME:      gs.loss_result = 0 : i64
// CHECK:         %[[Y:.*]] = gs.gemm
// CHECK-NOT:     gs.param.write
// CHECK:         %[[L:.*]], %{{.*}} = gs.softmax_cross_entropy %[[Y]]
// CHECK:         return %[[L]], %[[Y]], %[[T]]
gs.param trainable @w = dense<0.5> : tensor<3x4xf32>
gs.param buffer @running = dense<0.0> : tensor<3x4xf32>
func.func @forward(%x: tensor<2x4xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w = gs.param.read @w : tensor<3x4xf32>
  gs.param.write %w, @running : tensor<3x4xf32>
  %y = gs.gemm %x, %w {transB} : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l, %lp = gs.softmax_cross_entropy %y, %t <{reduction = #gs.reduction<mean>}> : tensor<2x3xf32>, tensor<2xi64>
  return %l : tensor<f32>
}
gs.training @forward {learning_rate = 0.1 : f32, loss = 0 : i64, optimizer = #gs.sgd<>}

// -----

// expected-error @+1 {{has no 'forward' function to evaluate}}
module {
  func.func @other(%x: tensor<2xf32>) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
}

// -----

// A regression: the forward's results alone, the loss second.
// CHECK-LABEL: func.func @eval_step(
// CHECK-SAME:      -> (tensor<2x3xf32>, tensor<f32>)
// CHECK-SAME:      gs.loss_result = 1 : i64
// CHECK:         return %arg0, %{{.*}} : tensor<2x3xf32>, tensor<f32>
func.func @forward(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<f32>) {
  %l = gs.reduce_sum %x <{axes = array<i64: 0, 1>}> : tensor<2x3xf32>
  return %x, %l : tensor<2x3xf32>, tensor<f32>
}
gs.training @forward {learning_rate = 0.1 : f32, loss = 1 : i64, optimizer = #gs.sgd<>}

// -----

// Per-pixel classes: scores [N, C, P] and labels [N, P], from a
// cross-entropy that is not returned itself.
// CHECK-LABEL: func.func @eval_step(
// CHECK-SAME:      -> (tensor<f32>, tensor<2x3x5xf32> {onnx.name = "scores"}, tensor<2x5xi64> {onnx.name = "targets"})
func.func @forward(%y: tensor<2x3x5xf32>, %t: tensor<2x5xi64>) -> tensor<f32> {
  %l, %lp = gs.softmax_cross_entropy %y, %t <{reduction = #gs.reduction<mean>}> : tensor<2x3x5xf32>, tensor<2x5xi64>
  %twice = gs.add %l, %l : tensor<f32>
  return %twice : tensor<f32>
}

// -----

func.func @forward(%y: tensor<2x3xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %l, %lp = gs.softmax_cross_entropy %y, %t <{reduction = #gs.reduction<mean>}> : tensor<2x3xf32>, tensor<2xi64>
  return %l : tensor<f32>
}
// expected-error @+1 {{'func.func' op is named 'eval_step', the function gs-add-eval-step would add}}
func.func @eval_step() {
  return
}
