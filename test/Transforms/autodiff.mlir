// RUN: gs-opt %s --split-input-file --gs-train-step --gs-autodiff --verify-diagnostics | FileCheck %s

// A GEMM's gradients are GEMMs: dW = alpha * g^T x (transB), db sums g over
// the rows; the input x needs no gradient, so no GEMM computes one.

// CHECK-LABEL: func.func @gemm
// CHECK-SAME: (%[[X:.+]]: tensor<8x16xf32>, %[[W:.+]]: tensor<4x16xf32>, %{{.+}}: tensor<4xf32>)
// CHECK: gs.backward %{{.*}} wrt %[[W]], %{{.*}} : tensor<f32>, tensor<4x16xf32>, tensor<4xf32> {
// CHECK-NEXT: ^bb0(%[[SEED:.+]]: tensor<f32>):
// CHECK:   %[[ONES:.+]] = gs.reshape %[[SEED]] : tensor<f32> -> tensor<1x1xf32>
// CHECK:   %[[G:.+]] = gs.expand %[[ONES]] : tensor<1x1xf32> -> tensor<8x4xf32>
// CHECK-NOT: gs.gemm {{.*}} -> tensor<8x16xf32>
// CHECK:   %[[DW:.+]] = gs.gemm %[[G]], %[[X]] {alpha = 2.000000e+00 : f32, transA} : tensor<8x4xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK:   %[[DB:.+]] = gs.reduce_sum %[[G]] <{axes = array<i64: 0>}> : tensor<8x4xf32>
// CHECK:   gs.yield %[[DW]], %[[DB]] : tensor<4x16xf32>, tensor<4xf32>
func.func @gemm(%x: tensor<8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>) -> (tensor<f32>, tensor<4x16xf32>, tensor<4xf32>) {
  %y = gs.gemm %x, %w, %b {transB, alpha = 2.0 : f32} : tensor<8x16xf32>, tensor<4x16xf32>, tensor<4xf32> -> tensor<8x4xf32>
  %l = gs.reduce_sum %y <{axes = array<i64: 0, 1>}> : tensor<8x4xf32>
  %g:2 = gs.backward %l wrt %w, %b : tensor<f32>, tensor<4x16xf32>, tensor<4xf32>
  return %l, %g#0, %g#1 : tensor<f32>, tensor<4x16xf32>, tensor<4xf32>
}

// -----

// A value used twice: its two contributions meet in one gs.add_n (a branch
// point). The broadcast operand's contribution is summed back to its shape.

// CHECK-LABEL: func.func @branch
// CHECK: gs.backward
// CHECK:   %[[G:.+]] = gs.mul %{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<f32>
// CHECK:   %[[VIA_ADD:.+]] = gs.reduce_sum %[[G]] <{axes = array<i64: 0>}> : tensor<4x3xf32>
// CHECK:   %[[PRODUCT:.+]] = gs.mul %[[G]], %{{.*}} : tensor<4x3xf32>
// CHECK:   %[[VIA_MUL:.+]] = gs.reduce_sum %[[PRODUCT]] <{axes = array<i64: 0>}> : tensor<4x3xf32>
// CHECK:   %[[SUM:.+]] = gs.add_n %[[VIA_ADD]], %[[VIA_MUL]] : tensor<3xf32>
// CHECK:   gs.yield %[[SUM]] : tensor<3xf32>
func.func @branch(%x: tensor<4x3xf32>, %s: tensor<3xf32>) -> tensor<3xf32> {
  %a = gs.mul %x, %s : tensor<4x3xf32>, tensor<3xf32>
  %b = gs.add %a, %s : tensor<4x3xf32>, tensor<3xf32>
  %l = gs.reduce_mean %b <{axes = array<i64: 0, 1>}> : tensor<4x3xf32>
  %g = gs.backward %l wrt %s : tensor<f32>, tensor<3xf32>
  return %g : tensor<3xf32>
}

// -----

// Integer values carry no gradient; a wrt value the loss does not depend on
// gets zeros.

// CHECK-LABEL: func.func @unreachable
// CHECK: gs.backward
// CHECK-NEXT: ^bb0(%seed: tensor<f32>):
// CHECK-NEXT: %[[ZERO:.+]] = gs.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK-NEXT: gs.yield %[[ZERO]]
func.func @unreachable(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %l = gs.reduce_sum %x <{axes = array<i64: 0>}> : tensor<4xf32>
  %g = gs.backward %l wrt %y : tensor<f32>, tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// The classification loss: (softmax - onehot(t)) / N, then the GEMM.

// CHECK-LABEL: func.func @cross_entropy
// CHECK: gs.backward
// CHECK-DAG: %[[SOFTMAX:.+]] = gs.exp %{{.*}} : tensor<8x5xf32>
// CHECK-DAG: %[[N:.+]] = gs.constant dense<8.000000e+00> : tensor<f32>
// CHECK-DAG: %[[IOTA:.+]] = gs.constant dense<{{\[\[}}0, 1, 2, 3, 4]]> : tensor<1x5xi64>
// CHECK: %[[HIT:.+]] = gs.compare eq, %{{.*}}, %[[IOTA]] : tensor<8x1xi64>, tensor<1x5xi64>
// CHECK: %[[ONEHOT:.+]] = gs.cast %[[HIT]] : tensor<8x5xi1> to tensor<8x5xf32>
// CHECK: %[[DIFF:.+]] = gs.sub %[[SOFTMAX]], %[[ONEHOT]] : tensor<8x5xf32>
// CHECK: %[[DLOGITS:.+]] = gs.mul %[[DIFF]], %{{.*}} : tensor<8x5xf32>, tensor<8x1xf32>
// CHECK: gs.gemm %[[DLOGITS]], %{{.*}} {transA} : tensor<8x5xf32>, tensor<8x16xf32> -> tensor<5x16xf32>
func.func @cross_entropy(%x: tensor<8x16xf32>, %w: tensor<5x16xf32>, %t: tensor<8xi64>) -> tensor<5x16xf32> {
  %y = gs.gemm %x, %w {transB} : tensor<8x16xf32>, tensor<5x16xf32> -> tensor<8x5xf32>
  %l, %lp = gs.softmax_cross_entropy %y, %t <{reduction = #gs.reduction<mean>}> : tensor<8x5xf32>, tensor<8xi64>
  %g = gs.backward %l wrt %w : tensor<f32>, tensor<5x16xf32>
  return %g : tensor<5x16xf32>
}

// -----

// Max sends the gradient to the larger operand, ties to the left one.

// CHECK-LABEL: func.func @max
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[Y:.+]]: tensor<4xf32>)
// CHECK: gs.backward
// CHECK-DAG: %[[ZERO:.+]] = gs.constant dense<0.000000e+00> : tensor<f32>
// CHECK-DAG: %[[XWINS:.+]] = gs.compare ge, %[[X]], %[[Y]] : tensor<4xf32>
// CHECK: %[[DX:.+]] = gs.where %[[XWINS]], %[[G:.+]], %[[ZERO]] : tensor<4xi1>, tensor<4xf32>, tensor<f32>
// CHECK: %[[DY:.+]] = gs.where %[[XWINS]], %[[ZERO]], %[[G]] : tensor<4xi1>, tensor<f32>, tensor<4xf32>
// CHECK: gs.yield %[[DX]], %[[DY]]
func.func @max(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %m = gs.max %x, %y : tensor<4xf32>
  %l = gs.reduce_sum %m <{axes = array<i64: 0>}> : tensor<4xf32>
  %g:2 = gs.backward %l wrt %x, %y : tensor<f32>, tensor<4xf32>, tensor<4xf32>
  return %g#0, %g#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// An op without a vector-Jacobian product on the path is an error (here a
// pooling gradient: no second derivatives).
func.func @no_vjp(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{'gs.avg_pool_grad' op is on the path from the differentiated value to a gradient input, but has no gradient}}
  %y = gs.avg_pool_grad %x <{kernel_shape = array<i64: 2, 2>}> : tensor<1x1x4x4xf32> -> tensor<1x1x5x5xf32>
  %l = gs.reduce_sum %y <{axes = array<i64: 0, 1, 2, 3>}> : tensor<1x1x5x5xf32>
  %g = gs.backward %l wrt %x : tensor<f32>, tensor<1x1x4x4xf32>
  return %g : tensor<1x1x4x4xf32>
}

// -----

// The train step: the forward ops, the gradients of the loss with respect to
// the trainable parameters (not the frozen buffer), one update per parameter
// with zero-initialized optimizer state, and the step counter.

// CHECK: gs.param trainable @w
// CHECK: gs.param buffer @frozen
// CHECK-DAG: gs.param state @gs.step = dense<0> : tensor<i64>
// CHECK-DAG: gs.param state @w.velocity = dense<0.000000e+00> : tensor<3x4xf32>
// CHECK-NOT: @frozen.velocity
// CHECK-LABEL: func.func @forward
// CHECK-NOT: gs.backward
// CHECK-LABEL: func.func @train_step
// CHECK: %[[W:.+]] = gs.param.read @w : tensor<3x4xf32>
// CHECK: %[[LOSS:.+]] = gs.reduce_sum
// CHECK: %[[G:.+]] = gs.backward %[[LOSS]] wrt %[[W]] : tensor<f32>, tensor<3x4xf32> {
// CHECK: %[[STEP:.+]] = gs.param.read @gs.step : tensor<i64>
// CHECK: %[[T:.+]] = tensor.extract %[[STEP]][] : tensor<i64>
// CHECK: %[[LR:.+]] = arith.constant 1.000000e-01 : f32
// CHECK: gs.update @w, %[[G]], lr %[[LR]], step %[[T]] state [@w.velocity] {optimizer = #gs.momentum<>} : tensor<3x4xf32>
// CHECK: %[[NEXT:.+]] = gs.add %[[STEP]], %{{.*}} : tensor<i64>
// CHECK: gs.param.write %[[NEXT]], @gs.step : tensor<i64>
// CHECK: return %[[LOSS]] : tensor<f32>
gs.param trainable @w = dense<0.5> : tensor<3x4xf32>
gs.param buffer @frozen = dense<2.0> : tensor<3x4xf32>
func.func @forward(%x: tensor<3x4xf32>) -> tensor<f32> {
  %w = gs.param.read @w : tensor<3x4xf32>
  %f = gs.param.read @frozen : tensor<3x4xf32>
  %a = gs.mul %x, %w : tensor<3x4xf32>
  %b = gs.mul %a, %f : tensor<3x4xf32>
  %l = gs.reduce_sum %b <{axes = array<i64: 0, 1>}> : tensor<3x4xf32>
  return %l : tensor<f32>
}
gs.training @forward {learning_rate = 0.1 : f32, optimizer = #gs.momentum<>}

// -----

// expected-error @+1 {{'gs.training' op cannot create the train step @train_step: the symbol exists (was gs-train-step run already?)}}
gs.training @forward {learning_rate = 0.1 : f32, optimizer = #gs.momentum<>}
func.func @forward(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
func.func @train_step() {
  return
}

// -----

// A convolution's data gradient is the transposed convolution with the same
// geometry (output padding restores the row the stride skipped: 8 + 2 - 3
// is odd); its weight gradient correlates the input (batch and channels
// swapped, per group) with the output gradient: a gs.conv whose stride is
// the forward dilation and whose dilation is the forward stride.

// CHECK-LABEL: func.func @conv
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x8x8xf32>, %[[W:.+]]: tensor<6x2x3x3xf32>, %{{.+}}: tensor<6xf32>)
// CHECK: gs.backward
// CHECK:   %[[G:.+]] = gs.expand %{{.*}} -> tensor<2x6x4x4xf32>
// CHECK:   %[[DX:.+]] = gs.conv_transpose %[[G]], %[[W]] {group = 2 : i64, output_padding = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<2x6x4x4xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x8x8xf32>
// CHECK:   %[[GROUPED:.+]] = gs.reshape %[[X]] : tensor<2x4x8x8xf32> -> tensor<2x2x2x8x8xf32>
// CHECK:   %[[SWAPPED:.+]] = gs.transpose %[[GROUPED]], [2, 1, 0, 3, 4]
// CHECK:   %[[IMAGES:.+]] = gs.reshape %[[SWAPPED]] : tensor<2x2x2x8x8xf32> -> tensor<2x4x8x8xf32>
// CHECK:   %[[FILTERS:.+]] = gs.transpose %[[G]], [1, 0, 2, 3] : tensor<2x6x4x4xf32>
// CHECK:   %[[CORR:.+]] = gs.conv %[[IMAGES]], %[[FILTERS]] {dilations = array<i64: 2, 2>, group = 2 : i64, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 1, 1>} : tensor<2x4x8x8xf32>, tensor<6x2x4x4xf32> -> tensor<2x6x3x3xf32>
// CHECK:   %[[DW:.+]] = gs.transpose %[[CORR]], [1, 0, 2, 3] : tensor<2x6x3x3xf32>
// CHECK:   %[[DB:.+]] = gs.reduce_sum %[[G]] <{axes = array<i64: 0, 2, 3>}>
// CHECK:   gs.yield %[[DX]], %[[DW]], %[[DB]]
func.func @conv(%x: tensor<2x4x8x8xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>) -> (tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) {
  %y = gs.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64} : tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32> -> tensor<2x6x4x4xf32>
  %l = gs.reduce_sum %y <{axes = array<i64: 0, 1, 2, 3>}> : tensor<2x6x4x4xf32>
  %g:3 = gs.backward %l wrt %x, %w, %b : tensor<f32>, tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>
  return %g#0, %g#1, %g#2 : tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>
}

// -----

// A weight gradient of few elements, each a deep sum (8 x 1 x 3 x 3
// elements, 16 images of 256 output positions: 4096 products each), is
// split over its images: 4 groups of 4 images (1024 products a part) of
// the correlation (its images the input's channels: one group, batch and
// channels swapped), the output gradient's filters regrouped part first,
// and the 4 partial gradients summed (in part order), transposed by the
// sum's reads.

// CHECK-LABEL: func.func @conv_split_weight_gradient
// CHECK-SAME: (%[[X:.+]]: tensor<16x1x16x16xf32>, %{{.+}}: tensor<8x1x3x3xf32>)
// CHECK: gs.backward
// CHECK:   %[[G:.+]] = gs.expand %{{.*}} -> tensor<16x8x16x16xf32>
// CHECK:   %[[IMAGES:.+]] = gs.transpose %[[X]], [1, 0, 2, 3] : tensor<16x1x16x16xf32>
// CHECK:   %[[SWAPPED:.+]] = gs.transpose %[[G]], [1, 0, 2, 3] : tensor<16x8x16x16xf32>
// CHECK:   %[[PARTS:.+]] = gs.reshape %[[SWAPPED]] : tensor<8x16x16x16xf32> -> tensor<8x4x4x16x16xf32>
// CHECK:   %[[FIRST:.+]] = gs.transpose %[[PARTS]], [1, 0, 2, 3, 4] : tensor<8x4x4x16x16xf32>
// CHECK:   %[[FILTERS:.+]] = gs.reshape %[[FIRST]] : tensor<4x8x4x16x16xf32> -> tensor<32x4x16x16xf32>
// CHECK:   %[[CORR:.+]] = gs.conv %[[IMAGES]], %[[FILTERS]] {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : tensor<1x16x16x16xf32>, tensor<32x4x16x16xf32> -> tensor<1x32x3x3xf32>
// CHECK:   %[[PARTIAL:.+]] = gs.reshape %[[CORR]] : tensor<1x32x3x3xf32> -> tensor<1x4x8x3x3xf32>
// CHECK:   %[[BYPART:.+]] = gs.transpose %[[PARTIAL]], [1, 2, 0, 3, 4] : tensor<1x4x8x3x3xf32>
// CHECK:   %[[DW:.+]] = gs.reduce_sum %[[BYPART]] <{axes = array<i64: 0>}> : tensor<4x8x1x3x3xf32>
// CHECK:   gs.yield %{{.+}}, %[[DW]]
func.func @conv_split_weight_gradient(%x: tensor<16x1x16x16xf32>, %w: tensor<8x1x3x3xf32>) -> (tensor<16x1x16x16xf32>, tensor<8x1x3x3xf32>) {
  %y = gs.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : tensor<16x1x16x16xf32>, tensor<8x1x3x3xf32> -> tensor<16x8x16x16xf32>
  %l = gs.reduce_sum %y <{axes = array<i64: 0, 1, 2, 3>}> : tensor<16x8x16x16xf32>
  %g:2 = gs.backward %l wrt %x, %w : tensor<f32>, tensor<16x1x16x16xf32>, tensor<8x1x3x3xf32>
  return %g#0, %g#1 : tensor<16x1x16x16xf32>, tensor<8x1x3x3xf32>
}

// -----

// A transposed convolution's data gradient is the convolution with the
// same geometry; its weight gradient correlates the output gradient with
// the input.

// CHECK-LABEL: func.func @conv_transpose
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x3x3xf32>, %[[W:.+]]: tensor<2x3x3x3xf32>)
// CHECK: gs.backward
// CHECK:   %[[G:.+]] = gs.expand %{{.*}} -> tensor<1x3x7x7xf32>
// CHECK:   %[[DX:.+]] = gs.conv %[[G]], %[[W]] {strides = array<i64: 2, 2>} : tensor<1x3x7x7xf32>, tensor<2x3x3x3xf32> -> tensor<1x2x3x3xf32>
// CHECK:   %[[FILTERS:.+]] = gs.transpose %[[X]], [1, 0, 2, 3] : tensor<1x2x3x3xf32>
// CHECK:   %[[CORR:.+]] = gs.conv %{{.*}}, %[[FILTERS]] {dilations = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : tensor<3x1x7x7xf32>, tensor<2x1x3x3xf32> -> tensor<3x2x3x3xf32>
// CHECK:   %[[DW:.+]] = gs.transpose %[[CORR]], [1, 0, 2, 3]
// CHECK:   gs.yield %[[DX]], %[[DW]]
func.func @conv_transpose(%x: tensor<1x2x3x3xf32>, %w: tensor<2x3x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<2x3x3x3xf32>) {
  %y = gs.conv_transpose %x, %w {strides = array<i64: 2, 2>} : tensor<1x2x3x3xf32>, tensor<2x3x3x3xf32> -> tensor<1x3x7x7xf32>
  %l = gs.reduce_sum %y <{axes = array<i64: 0, 1, 2, 3>}> : tensor<1x3x7x7xf32>
  %g:2 = gs.backward %l wrt %x, %w : tensor<f32>, tensor<1x2x3x3xf32>, tensor<2x3x3x3xf32>
  return %g#0, %g#1 : tensor<1x2x3x3xf32>, tensor<2x3x3x3xf32>
}

// -----

// Training-mode batch norm differentiates through its batch statistics:
// xhat from the op's mean and variance, then
// dx = inv_std * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)).
// Max pooling routes the gradient with gs.max_pool_grad.

// CHECK-LABEL: func.func @batch_norm
// CHECK-SAME: (%[[X:.+]]: tensor<8x3x4x4xf32>, %[[S:.+]]: tensor<3xf32>, %[[B:.+]]: tensor<3xf32>)
// CHECK: %[[Y:.+]], %[[MEAN:.+]], %[[VAR:.+]] = gs.batch_norm
// CHECK: gs.backward
// CHECK:   %[[DP:.+]] = gs.max_pool_grad %[[Y]], %{{.*}} <{kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : tensor<8x3x4x4xf32>, tensor<8x3x2x2xf32>
// CHECK-DAG:   gs.reshape %[[MEAN]] : tensor<3xf32> -> tensor<1x3x1x1xf32>
// CHECK-DAG:   gs.reshape %[[VAR]] : tensor<3xf32> -> tensor<1x3x1x1xf32>
// CHECK:   %[[XHAT:.+]] = gs.mul %{{.*}}, %{{.*}} : tensor<8x3x4x4xf32>, tensor<1x3x1x1xf32>
// CHECK:   %[[DB:.+]] = gs.reduce_sum %[[DP]] <{axes = array<i64: 0, 2, 3>}>
// CHECK:   %[[DYXHAT:.+]] = gs.mul %[[DP]], %[[XHAT]]
// CHECK:   %[[DS:.+]] = gs.reduce_sum %[[DYXHAT]] <{axes = array<i64: 0, 2, 3>}>
// CHECK:   %[[DXHAT:.+]] = gs.mul %[[DP]], %{{.*}} : tensor<8x3x4x4xf32>, tensor<1x3x1x1xf32>
// CHECK:   gs.reduce_mean %[[DXHAT]] <{axes = array<i64: 0, 2, 3>, keepdims}>
// CHECK:   %[[DX:.+]] = gs.mul %{{.*}}, %{{.*}} : tensor<1x3x1x1xf32>, tensor<8x3x4x4xf32>
// CHECK:   gs.yield %[[DX]], %[[DS]], %[[DB]]
func.func @batch_norm(%x: tensor<8x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<8x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  %y, %m, %v = gs.batch_norm %x, %s, %b : tensor<8x3x4x4xf32>, tensor<3xf32>
  %p = gs.max_pool %y <{kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : tensor<8x3x4x4xf32>
  %l = gs.reduce_sum %p <{axes = array<i64: 0, 1, 2, 3>}> : tensor<8x3x2x2xf32>
  %g:3 = gs.backward %l wrt %x, %s, %b : tensor<f32>, tensor<8x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>
  return %g#0, %g#1, %g#2 : tensor<8x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Layer norm: the scale and bias gradients sum over the leading axes; the
// statistics are the op's mean and inverse standard deviation. Average
// pooling's gradient is gs.avg_pool_grad, global average pooling's a
// broadcast over the spatial size.

// CHECK-LABEL: func.func @layer_norm
// CHECK: %[[Y:.+]], %[[MEAN:.+]], %[[INV:.+]] = gs.layer_norm
// CHECK: gs.backward
// CHECK:   %[[G:.+]] = gs.mul %{{.*}}, %{{.*}} : tensor<2x3x1x1xf32>, tensor<f32>
// CHECK:   %[[GP:.+]] = gs.expand %[[G]] : tensor<2x3x1x1xf32> -> tensor<2x3x2x2xf32>
// CHECK:   %[[DA:.+]] = gs.avg_pool_grad %[[GP]] <{kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : tensor<2x3x2x2xf32> -> tensor<2x3x4x4xf32>
// CHECK:   %[[CENTERED:.+]] = gs.sub %{{.*}}, %[[MEAN]] : tensor<2x3x4x4xf32>, tensor<2x1x1x1xf32>
// CHECK:   %[[XHAT:.+]] = gs.mul %[[CENTERED]], %[[INV]]
// CHECK:   %[[PRODUCT:.+]] = gs.mul %[[DA]], %[[XHAT]]
// CHECK:   %[[DS:.+]] = gs.reduce_sum %[[PRODUCT]] <{axes = array<i64: 0>}> : tensor<2x3x4x4xf32>
// CHECK:   %[[DB:.+]] = gs.reduce_sum %[[DA]] <{axes = array<i64: 0>}> : tensor<2x3x4x4xf32>
// CHECK:   gs.yield %[[DS]], %[[DB]] : tensor<3x4x4xf32>, tensor<3x4x4xf32>
func.func @layer_norm(%x: tensor<2x3x4x4xf32>, %s: tensor<3x4x4xf32>, %b: tensor<3x4x4xf32>) -> (tensor<3x4x4xf32>, tensor<3x4x4xf32>) {
  %y, %m, %i = gs.layer_norm %x, %s, %b <{axis = 1 : i64}> : tensor<2x3x4x4xf32>, tensor<3x4x4xf32>, tensor<3x4x4xf32>
  %a = gs.avg_pool %y <{kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : tensor<2x3x4x4xf32>
  %p = gs.global_avg_pool %a : tensor<2x3x2x2xf32>
  %l = gs.reduce_sum %p <{axes = array<i64: 0, 1, 2, 3>}> : tensor<2x3x1x1xf32>
  %g:2 = gs.backward %l wrt %s, %b : tensor<f32>, tensor<3x4x4xf32>, tensor<3x4x4xf32>
  return %g#0, %g#1 : tensor<3x4x4xf32>, tensor<3x4x4xf32>
}

// -----

// A strided slice's gradient is spread back with zero blocks: each element
// gets a zero column (concat), the pairs are flattened (reshape), cut after
// the last element and framed by zeros to the input's size. A gather's
// gradient is the transposed one-hot mask of its (normalized) indices times
// the gradient.

// CHECK-LABEL: func.func @slice_gather
// CHECK: gs.backward
// CHECK:   %[[HIT:.+]] = gs.compare eq, %{{.*}}, %{{.*}} : tensor<2x1xi64>, tensor<1x5xi64>
// CHECK:   %[[ONEHOT:.+]] = gs.cast %[[HIT]] : tensor<2x5xi1> to tensor<2x5xf32>
// CHECK:   %[[T:.+]] = gs.transpose %[[ONEHOT]], [1, 0]
// CHECK:   %[[DG:.+]] = gs.matmul %[[T]], %{{.*}} : tensor<5x2xf32>, tensor<1x2x4xf32> -> tensor<1x5x4xf32>
// CHECK:   %[[DTABLE:.+]] = gs.reshape %[[DG]] : tensor<1x5x4xf32> -> tensor<5x4xf32>
// CHECK:   %[[COLUMN:.+]] = gs.reshape %{{.*}} : tensor<3xf32> -> tensor<3x1xf32>
// CHECK:   %[[ZEROS:.+]] = gs.constant dense<0.000000e+00> : tensor<3x1xf32>
// CHECK:   %[[PAIRS:.+]] = gs.concat %[[COLUMN]], %[[ZEROS]] <{axis = 1 : i64}>
// CHECK:   %[[FLAT:.+]] = gs.reshape %[[PAIRS]] : tensor<3x2xf32> -> tensor<6xf32>
// CHECK:   %[[CUT:.+]] = gs.slice %[[FLAT]] <{ends = array<i64: 5>, starts = array<i64: 0>, steps = array<i64: 1>}>
// CHECK:   %[[FRONT:.+]] = gs.constant dense<0.000000e+00> : tensor<1xf32>
// CHECK:   %[[BACK:.+]] = gs.constant dense<0.000000e+00> : tensor<2xf32>
// CHECK:   %[[DS:.+]] = gs.concat %[[FRONT]], %[[CUT]], %[[BACK]] <{axis = 0 : i64}> : tensor<1xf32>, tensor<5xf32>, tensor<2xf32>
// CHECK:   gs.yield %[[DS]], %[[DTABLE]] : tensor<8xf32>, tensor<5x4xf32>
func.func @slice_gather(%x: tensor<8xf32>, %table: tensor<5x4xf32>, %ids: tensor<2xi64>) -> (tensor<8xf32>, tensor<5x4xf32>) {
  %s = gs.slice %x <{starts = array<i64: 1>, ends = array<i64: 7>, steps = array<i64: 2>}> : tensor<8xf32>
  %a = gs.reduce_sum %s <{axes = array<i64: 0>}> : tensor<3xf32>
  %e = gs.gather %table, %ids <{axis = 0 : i64}> : tensor<5x4xf32>, tensor<2xi64>
  %b = gs.reduce_sum %e <{axes = array<i64: 0, 1>}> : tensor<2x4xf32>
  %l = gs.add %a, %b : tensor<f32>, tensor<f32>
  %g:2 = gs.backward %l wrt %x, %table : tensor<f32>, tensor<8xf32>, tensor<5x4xf32>
  return %g#0, %g#1 : tensor<8xf32>, tensor<5x4xf32>
}

// -----

// A cast's gradient is cast back to the operand's type: the FP32->FP16
// casts of the mixed-precision backward pass come from here.

// CHECK-LABEL: func.func @cast
// CHECK: gs.backward
// CHECK:   %[[G:.+]] = gs.expand %{{.*}} : tensor<1xf32> -> tensor<4xf32>
// CHECK:   %[[DX:.+]] = gs.cast %[[G]] : tensor<4xf32> to tensor<4xf16>
// CHECK:   gs.yield %[[DX]] : tensor<4xf16>
func.func @cast(%x: tensor<4xf16>) -> tensor<4xf16> {
  %c = gs.cast %x : tensor<4xf16> to tensor<4xf32>
  %l = gs.reduce_sum %c <{axes = array<i64: 0>}> : tensor<4xf32>
  %g = gs.backward %l wrt %x : tensor<f32>, tensor<4xf16>
  return %g : tensor<4xf16>
}

// -----

// Where the stride does not divide the input, the last input rows reach no
// output; the weight gradient cuts them before correlating, so that the
// correlation makes exactly the kernel's offsets (a 1x1 stride-2
// convolution of an 8x8 input: 7x7 of it, a 1x1 correlation, not a 2x2
// one of which a slice keeps a quarter).

// CHECK-LABEL: func.func @strided_1x1
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x8x8xf32>, %[[W:.+]]: tensor<6x4x1x1xf32>)
// CHECK: gs.backward
// CHECK:   %[[USED:.+]] = gs.slice %[[X]] <{ends = array<i64: 2, 4, 7, 7>, starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>}>
// CHECK:   %[[IMAGES:.+]] = gs.transpose %[[USED]], [1, 0, 2, 3] : tensor<2x4x7x7xf32>
// CHECK:   %[[CORR:.+]] = gs.conv %[[IMAGES]], %{{.*}} {dilations = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : tensor<4x2x7x7xf32>, tensor<6x2x4x4xf32> -> tensor<4x6x1x1xf32>
// CHECK-NOT: gs.slice
// CHECK:   %[[DW:.+]] = gs.transpose %[[CORR]], [1, 0, 2, 3]
func.func @strided_1x1(%x: tensor<2x4x8x8xf32>, %w: tensor<6x4x1x1xf32>) -> (tensor<2x4x8x8xf32>, tensor<6x4x1x1xf32>) {
  %y = gs.conv %x, %w {strides = array<i64: 2, 2>} : tensor<2x4x8x8xf32>, tensor<6x4x1x1xf32> -> tensor<2x6x4x4xf32>
  %l = gs.reduce_sum %y <{axes = array<i64: 0, 1, 2, 3>}> : tensor<2x6x4x4xf32>
  %g:2 = gs.backward %l wrt %x, %w : tensor<f32>, tensor<2x4x8x8xf32>, tensor<6x4x1x1xf32>
  return %g#0, %g#1 : tensor<2x4x8x8xf32>, tensor<6x4x1x1xf32>
}
