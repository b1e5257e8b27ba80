// The errors of the scaling passes that a model can cause, each at the op
// it is about (the options' errors are in gradient-scaling-options.mlir).
// RUN: not gs-opt %s --split-input-file --gs-train-step --gs-mixed-precision --gs-autodiff --gs-widen-weight-gradients --gs-gradient-scaling 2>&1 | FileCheck %s --check-prefix=GS
// RUN: not gs-opt %s --split-input-file --gs-train-step --gs-mixed-precision --gs-autodiff --gs-widen-weight-gradients --gs-loss-scaling=mode=dynamic 2>&1 | FileCheck %s --check-prefix=LOSS
// RUN: not gs-opt %s --split-input-file --gs-train-step --gs-mixed-precision --gs-autodiff --gs-widen-weight-gradients --gs-gradient-scaling=interval=2 2>&1 | FileCheck %s --check-prefix=INTERVAL

// A trainable FP16 parameter gets an FP16 gradient, which the scaling
// passes cannot unscale (they unscale in FP32, for FP32 master weights).
gs.param trainable @w = dense<0.5> : tensor<3x4xf16>
func.func @forward(%x: tensor<2x4xf16>, %t: tensor<2xi64>) -> tensor<f32> {
  %w = gs.param.read @w : tensor<3x4xf16>
  %y = gs.gemm %x, %w {transB} : tensor<2x4xf16>, tensor<3x4xf16> -> tensor<2x3xf16>
  %y32 = gs.cast %y : tensor<2x3xf16> to tensor<2x3xf32>
  %l, %lp = gs.softmax_cross_entropy %y32, %t <{reduction = #gs.reduction<mean>}> : tensor<2x3xf32>, tensor<2xi64>
  return %l : tensor<f32>
}
gs.training @forward {learning_rate = 0.1 : f32, optimizer = #gs.sgd<>}
// GS: scaling-state-errors.mlir:[[@LINE-1]]:1: error: 'gs.backward' op gradient scaling unscales FP32 gradients, got 'tensor<3x4xf16>' for gradient #0
// LOSS: scaling-state-errors.mlir:[[@LINE-2]]:1: error: 'gs.backward' op loss scaling unscales FP32 gradients, got 'tensor<3x4xf16>'

// -----

// The skipped-step counter is an i64 state; a symbol of that name and
// another type is an error.
gs.param trainable @w = dense<0.5> : tensor<3x4xf32>
gs.param state @gs.skipped_steps = dense<0.0> : tensor<f32>
// GS: scaling-state-errors.mlir:[[@LINE-1]]:1: error: 'gs.param' op is needed as training state of type 'tensor<i64>', but is not
// LOSS: scaling-state-errors.mlir:[[@LINE-2]]:1: error: 'gs.param' op is needed as training state of type 'tensor<i64>', but is not
func.func @forward(%x: tensor<2x4xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w = gs.param.read @w : tensor<3x4xf32>
  %y = gs.gemm %x, %w {transB} : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l, %lp = gs.softmax_cross_entropy %y, %t <{reduction = #gs.reduction<mean>}> : tensor<2x3xf32>, tensor<2xi64>
  return %l : tensor<f32>
}
gs.training @forward {learning_rate = 0.1 : f32, optimizer = #gs.sgd<>}

// -----

// Recomputing the scales every K steps needs a step counter: a gradient
// request outside a train step has none.
func.func @request(%x: tensor<2x4xf32>, %w: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %y = gs.gemm %x, %w {transB} : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l = gs.reduce_sum %y <{axes = array<i64: 0, 1>}> : tensor<2x3xf32>
  %g = gs.backward %l wrt %w : tensor<f32>, tensor<3x4xf32>
  // INTERVAL: scaling-state-errors.mlir:[[@LINE-1]]:8: error: 'gs.backward' op gs-gradient-scaling interval > 1 needs the step counter @gs.step of a train step
  return %g : tensor<3x4xf32>
}
