// RUN: gs-opt %s --split-input-file --gs-train-step --gs-mixed-precision --gs-autodiff --gs-widen-weight-gradients --verify-diagnostics | FileCheck %s
// RUN: gs-opt %s --split-input-file --gs-train-step --gs-mixed-precision="fp32-ops=gs.relu" --gs-autodiff --verify-diagnostics | FileCheck %s --check-prefix=OPTIONS
// A name that is not a gs operation is an error, not a silent no-op.
// RUN: not gs-opt %s --split-input-file --gs-mixed-precision="fp32-ops=gs.relux" 2>&1 | FileCheck %s --check-prefix=BAD-OP
// BAD-OP: error: fp32-ops: 'gs.relux' is not a gs operation

// An MLP with a softmax cross-entropy loss. Forward: the input and the FP32
// master weights get FP16 copies, the GEMMs and the ReLU run in FP16, the
// logits are cast up for the loss (FP32). Backward, built by gs-autodiff
// from that forward: the loss gradient is cast to FP16 (the fT cast), the data
// gradients stay FP16, the weight-gradient GEMMs write FP32, the bias
// gradient sums FP16 values into FP32, and the updates get FP32 gradients. The forward function is left alone.

// CHECK-LABEL: func.func @forward
// CHECK-NOT: f16
// CHECK: return

// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[X:.+]]: tensor<2x4xf32>, %{{.+}}: tensor<2xi64>)
// CHECK:   %[[W1:.+]] = gs.param.read @w1 : tensor<8x4xf32>
// CHECK:   %[[X16:.+]] = gs.cast %[[X]] : tensor<2x4xf32> to tensor<2x4xf16>
// CHECK:   %[[W1H:.+]] = gs.cast %[[W1]] : tensor<8x4xf32> to tensor<8x4xf16>
// CHECK:   %[[H:.+]] = gs.gemm %[[X16]], %[[W1H]], %{{.*}} {transB} : tensor<2x4xf16>, tensor<8x4xf16>, tensor<8xf16> -> tensor<2x8xf16>
// CHECK:   %[[R:.+]] = gs.relu %[[H]] : tensor<2x8xf16>
// CHECK:   %[[W2H:.+]] = gs.cast %{{.*}} : tensor<3x8xf32> to tensor<3x8xf16>
// CHECK:   %[[O:.+]] = gs.gemm %[[R]], %[[W2H]] {transB} : tensor<2x8xf16>, tensor<3x8xf16> -> tensor<2x3xf16>
// CHECK:   %[[O32:.+]] = gs.cast %[[O]] : tensor<2x3xf16> to tensor<2x3xf32>
// CHECK:   %[[LOSS:.+]], %{{.+}} = gs.softmax_cross_entropy %[[O32]], %{{.*}} : tensor<2x3xf32>, tensor<2xi64>
// CHECK:   gs.backward %[[LOSS]]
// CHECK:     %[[DO32:.+]] = gs.mul %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<2x1xf32>
// CHECK:     %[[DO:.+]] = gs.cast %[[DO32]] : tensor<2x3xf32> to tensor<2x3xf16>
// CHECK:     %[[DR:.+]] = gs.gemm %[[DO]], %[[W2H]] : tensor<2x3xf16>, tensor<3x8xf16> -> tensor<2x8xf16>
// CHECK:     %[[DW2:.+]] = gs.gemm %[[DO]], %[[R]] {transA} : tensor<2x3xf16>, tensor<2x8xf16> -> tensor<3x8xf32>
// CHECK:     %[[DH:.+]] = gs.where %{{.*}}, %[[DR]], %{{.*}} : tensor<2x8xi1>, tensor<2x8xf16>, tensor<f16>
// CHECK:     %[[DW1:.+]] = gs.gemm %[[DH]], %[[X16]] {transA} : tensor<2x8xf16>, tensor<2x4xf16> -> tensor<8x4xf32>
// CHECK:     %[[DH32:.+]] = gs.cast %[[DH]] : tensor<2x8xf16> to tensor<2x8xf32>
// CHECK:     %[[DB1:.+]] = gs.reduce_sum %[[DH32]] <{axes = array<i64: 0>}> : tensor<2x8xf32>
// CHECK:     gs.yield %[[DW1]], %[[DB1]], %[[DW2]] : tensor<8x4xf32>, tensor<8xf32>, tensor<3x8xf32>
// CHECK:   gs.update @w1, %{{.*}} : tensor<8x4xf32>

// With fp32-ops=gs.relu the ReLU runs in FP32 between casts; without
// widening, the weight-gradient GEMMs round to FP16 and are cast up.
// OPTIONS-LABEL: func.func @train_step
// OPTIONS:   %[[H:.+]] = gs.gemm {{.*}} -> tensor<2x8xf16>
// OPTIONS:   %[[H32:.+]] = gs.cast %[[H]] : tensor<2x8xf16> to tensor<2x8xf32>
// OPTIONS:   %[[R:.+]] = gs.relu %[[H32]] : tensor<2x8xf32>
// OPTIONS:   gs.cast %[[R]] : tensor<2x8xf32> to tensor<2x8xf16>
// OPTIONS:   gs.backward
// OPTIONS:     %[[DW2H:.+]] = gs.gemm %{{.*}}, %{{.*}} {transA} : tensor<2x3xf16>, tensor<2x8xf16> -> tensor<3x8xf16>
// OPTIONS:     gs.cast %[[DW2H]] : tensor<3x8xf16> to tensor<3x8xf32>
gs.param trainable @w1 = dense<0.1> : tensor<8x4xf32>
gs.param trainable @b1 = dense<0.0> : tensor<8xf32>
gs.param trainable @w2 = dense<0.2> : tensor<3x8xf32>
func.func @forward(%x: tensor<2x4xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w1 = gs.param.read @w1 : tensor<8x4xf32>
  %b1 = gs.param.read @b1 : tensor<8xf32>
  %h = gs.gemm %x, %w1, %b1 {transB} : tensor<2x4xf32>, tensor<8x4xf32>, tensor<8xf32> -> tensor<2x8xf32>
  %r = gs.relu %h : tensor<2x8xf32>
  %w2 = gs.param.read @w2 : tensor<3x8xf32>
  %o = gs.gemm %r, %w2 {transB} : tensor<2x8xf32>, tensor<3x8xf32> -> tensor<2x3xf32>
  %l, %lp = gs.softmax_cross_entropy %o, %t <{reduction = #gs.reduction<mean>}> : tensor<2x3xf32>, tensor<2xi64>
  return %l : tensor<f32>
}
gs.training @forward {learning_rate = 0.1 : f32, optimizer = #gs.momentum<>}

// -----

// A convolution with BatchNorm: the FP16 input is normalized with FP32
// statistics, scale and bias (the running statistics stay FP32); the
// convolution's weight gradient (a correlation, then a transpose) writes
// FP32.

// CHECK-LABEL: func.func @train_step
// CHECK:   %[[Y:.+]] = gs.conv %{{.*}}, %{{.*}} {{.*}} : tensor<2x1x4x4xf16>, tensor<2x1x3x3xf16> -> tensor<2x2x4x4xf16>
// CHECK:   %{{.+}}, %[[MEAN:.+]], %{{.+}} = gs.batch_norm %[[Y]], %{{.*}}, %{{.*}} : tensor<2x2x4x4xf16>, tensor<2xf32>
// CHECK:   gs.param.write %[[MEAN]], @mean : tensor<2xf32>
// CHECK:   gs.backward
// CHECK:     %[[CORR:.+]] = gs.conv {{.*}} -> tensor<1x2x3x3xf32>
// CHECK:     %[[DW:.+]] = gs.transpose %[[CORR]], [1, 0, 2, 3] : tensor<1x2x3x3xf32>
// CHECK:     gs.yield %[[DW]], %{{.*}} : tensor<2x1x3x3xf32>, tensor<2xf32>
gs.param trainable @w = dense<0.1> : tensor<2x1x3x3xf32>
gs.param trainable @gamma = dense<1.0> : tensor<2xf32>
gs.param trainable @beta = dense<0.0> : tensor<2xf32>
gs.param buffer @mean = dense<0.0> : tensor<2xf32>
func.func @forward(%x: tensor<2x1x4x4xf32>) -> tensor<f32> {
  %w = gs.param.read @w : tensor<2x1x3x3xf32>
  %g = gs.param.read @gamma : tensor<2xf32>
  %b = gs.param.read @beta : tensor<2xf32>
  %y = gs.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : tensor<2x1x4x4xf32>, tensor<2x1x3x3xf32> -> tensor<2x2x4x4xf32>
  %n, %m, %v = gs.batch_norm %y, %g, %b : tensor<2x2x4x4xf32>, tensor<2xf32>
  gs.param.write %m, @mean : tensor<2xf32>
  %s = gs.mul %n, %n : tensor<2x2x4x4xf32>
  %l = gs.reduce_mean %s <{axes = array<i64: 0, 1, 2, 3>}> : tensor<2x2x4x4xf32>
  return %l : tensor<f32>
}
gs.training @forward {learning_rate = 0.1 : f32, optimizer = #gs.momentum<>}

// -----

// A weight gradient split over its images (16 images of 256 positions: 4
// parts): the grouped correlation writes its partial gradients in FP32,
// and their sum and its transpose stay FP32.

// CHECK-LABEL: func.func @train_step
// CHECK: gs.backward
// CHECK:   %[[CORR:.+]] = gs.conv %{{.*}}, %{{.*}} {{{.*}}group = 4 : i64{{.*}}} : tensor<1x16x16x16xf16>, tensor<32x4x16x16xf16> -> tensor<1x32x3x3xf32>
// CHECK:   %[[PARTS:.+]] = gs.reshape %[[CORR]] : tensor<1x32x3x3xf32> -> tensor<1x4x8x3x3xf32>
// CHECK:   %[[BYPART:.+]] = gs.transpose %[[PARTS]], [1, 2, 0, 3, 4] : tensor<1x4x8x3x3xf32>
// CHECK:   %[[DW:.+]] = gs.reduce_sum %[[BYPART]] <{axes = array<i64: 0>}> : tensor<4x8x1x3x3xf32>
// CHECK:   gs.yield %[[DW]] : tensor<8x1x3x3xf32>
gs.param trainable @w = dense<0.1> : tensor<8x1x3x3xf32>
func.func @forward(%x: tensor<16x1x16x16xf32>) -> tensor<f32> {
  %w = gs.param.read @w : tensor<8x1x3x3xf32>
  %y = gs.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : tensor<16x1x16x16xf32>, tensor<8x1x3x3xf32> -> tensor<16x8x16x16xf32>
  %l = gs.reduce_mean %y <{axes = array<i64: 0, 1, 2, 3>}> : tensor<16x8x16x16xf32>
  return %l : tensor<f32>
}
gs.training @forward {learning_rate = 0.1 : f32, optimizer = #gs.sgd<>}
