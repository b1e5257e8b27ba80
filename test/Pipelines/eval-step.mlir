// RUN: gs-opt %s --split-input-file --verify-diagnostics --gs-add-eval-step | FileCheck %s

// eval_step: forward without its parameter writes, returning the class
// scores of its loss as well.

// CHECK-LABEL: func.func @forward(
// CHECK:         gs.param.write %{{.*}}, @running
// CHECK-LABEL: func.func @eval_step(
// CHECK-SAME:      -> (tensor<f32>, tensor<2x3xf32> {onnx.name = "scores"})
// CHECK:         %[[Y:.*]] = gs.gemm
// CHECK-NOT:     gs.param.write
// CHECK:         %[[L:.*]], %{{.*}} = gs.softmax_cross_entropy %[[Y]]
// CHECK:         return %[[L]], %[[Y]]
gs.param trainable @w = dense<0.5> : tensor<3x4xf32>
gs.param buffer @running = dense<0.0> : tensor<3x4xf32>
func.func @forward(%x: tensor<2x4xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w = gs.param.read @w : tensor<3x4xf32>
  gs.param.write %w, @running : tensor<3x4xf32>
  %y = gs.gemm %x, %w {transB} : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l, %lp = gs.softmax_cross_entropy %y, %t <{reduction = #gs.reduction<mean>}> : tensor<2x3xf32>, tensor<2xi64>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{has no 'forward' function to evaluate}}
module {
  func.func @other(%x: tensor<2xf32>) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
}

// -----

func.func @forward(%x: tensor<2x3xf32>) -> tensor<f32> {
  %l = gs.reduce_sum %x <{axes = array<i64: 0, 1>}> : tensor<2x3xf32>
  // expected-error @+1 {{'func.return' op returns no softmax cross-entropy or negative log-likelihood loss, whose class scores accuracy needs}}
  return %l : tensor<f32>
}

// -----

func.func @forward(%y: tensor<2x3x5xf32>, %t: tensor<2x5xi64>) -> tensor<f32> {
  // expected-error @+1 {{'gs.softmax_cross_entropy' op has class scores of type 'tensor<2x3x5xf32>'; accuracy needs a static batch x classes shape}}
  %l, %lp = gs.softmax_cross_entropy %y, %t <{reduction = #gs.reduction<mean>}> : tensor<2x3x5xf32>, tensor<2x5xi64>
  return %l : tensor<f32>
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
