// RUN: gs-opt %s | gs-opt | FileCheck %s
// RUN: gs-opt %s --mlir-print-op-generic | gs-opt | FileCheck %s
// RUN: gs-opt %s --emit-bytecode | gs-opt | FileCheck %s

// Every gs op and attribute, printed and parsed back (custom form, generic
// form and bytecode). coverage.test checks that no op is missing here.

// CHECK-LABEL: func.func @linear_algebra
func.func @linear_algebra(%x: tensor<32x784xf16>, %w: tensor<256x784xf16>,
                          %b: tensor<256xf32>, %bt: tensor<8x16x32xf32>,
                          %m: tensor<32x64xf32>, %v: tensor<32xf32>)
    -> (tensor<32x256xf32>, tensor<784x784xf16>, tensor<8x16x64xf32>, tensor<8x16xf32>) {
  // CHECK: gs.gemm %{{.*}}, %{{.*}}, %{{.*}} {alpha = 5.000000e-01 : f32, transB} : tensor<32x784xf16>, tensor<256x784xf16>, tensor<256xf32> -> tensor<32x256xf32>
  %0 = gs.gemm %x, %w, %b {transB, alpha = 0.5 : f32} : tensor<32x784xf16>, tensor<256x784xf16>, tensor<256xf32> -> tensor<32x256xf32>
  // CHECK: gs.gemm %{{.*}}, %{{.*}} {transA} : tensor<32x784xf16>, tensor<32x784xf16> -> tensor<784x784xf16>
  %1 = gs.gemm %x, %x {transA} : tensor<32x784xf16>, tensor<32x784xf16> -> tensor<784x784xf16>
  // CHECK: gs.matmul %{{.*}}, %{{.*}} : tensor<8x16x32xf32>, tensor<32x64xf32> -> tensor<8x16x64xf32>
  %2 = gs.matmul %bt, %m : tensor<8x16x32xf32>, tensor<32x64xf32> -> tensor<8x16x64xf32>
  // CHECK: gs.matmul %{{.*}}, %{{.*}} : tensor<8x16x32xf32>, tensor<32xf32> -> tensor<8x16xf32>
  %3 = gs.matmul %bt, %v : tensor<8x16x32xf32>, tensor<32xf32> -> tensor<8x16xf32>
  return %0, %1, %2, %3 : tensor<32x256xf32>, tensor<784x784xf16>, tensor<8x16x64xf32>, tensor<8x16xf32>
}

// CHECK-LABEL: func.func @convolution
func.func @convolution(%x: tensor<8x4x32x32xf32>, %w: tensor<16x2x3x3xf32>,
                       %b: tensor<16xf32>, %y: tensor<1x1x3x3xf32>,
                       %wt: tensor<1x2x3x3xf32>)
    -> (tensor<8x16x16x16xf32>, tensor<1x2x7x7xf32>, tensor<1x2x8x8xf32>) {
  // CHECK: gs.conv %{{.*}}, %{{.*}}, %{{.*}} {group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<8x4x32x32xf32>, tensor<16x2x3x3xf32>, tensor<16xf32> -> tensor<8x16x16x16xf32>
  %0 = gs.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64} : tensor<8x4x32x32xf32>, tensor<16x2x3x3xf32>, tensor<16xf32> -> tensor<8x16x16x16xf32>
  // CHECK: gs.conv_transpose %{{.*}}, %{{.*}} {strides = array<i64: 2, 2>} : tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32> -> tensor<1x2x7x7xf32>
  %1 = gs.conv_transpose %y, %wt {strides = array<i64: 2, 2>} : tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32> -> tensor<1x2x7x7xf32>
  // CHECK: gs.conv_transpose %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, output_padding = array<i64: 1, 1>, strides = array<i64: 2, 2>} : tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32> -> tensor<1x2x8x8xf32>
  %2 = gs.conv_transpose %y, %wt {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, output_padding = array<i64: 1, 1>} : tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32> -> tensor<1x2x8x8xf32>
  return %0, %1, %2 : tensor<8x16x16x16xf32>, tensor<1x2x7x7xf32>, tensor<1x2x8x8xf32>
}

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%a: tensor<4x3xf32>, %r: tensor<3xf32>, %s: tensor<f32>,
                       %h: tensor<4x3xf16>, %i: tensor<4x3xi64>) -> tensor<4x3xf32> {
  // CHECK: gs.add %{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<3xf32>
  %0 = gs.add %a, %r : tensor<4x3xf32>, tensor<3xf32>
  // CHECK: gs.sub %{{.*}}, %{{.*}} : tensor<4x3xf32>{{$}}
  %1 = gs.sub %0, %a : tensor<4x3xf32>
  // CHECK: gs.mul %{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<f32>
  %2 = gs.mul %1, %s : tensor<4x3xf32>, tensor<f32>
  // CHECK: gs.div
  %3 = gs.div %2, %a : tensor<4x3xf32>
  // CHECK: gs.max
  %4 = gs.max %3, %a : tensor<4x3xf32>
  // CHECK: gs.min
  %5 = gs.min %4, %a : tensor<4x3xf32>
  // CHECK: gs.pow
  %6 = gs.pow %5, %s : tensor<4x3xf32>, tensor<f32>
  // CHECK: gs.add_n %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x3xf32>
  %7 = gs.add_n %6, %5, %4 : tensor<4x3xf32>
  // CHECK: gs.neg
  %8 = gs.neg %7 : tensor<4x3xf32>
  // CHECK: gs.abs
  %9 = gs.abs %8 : tensor<4x3xf32>
  // CHECK: gs.relu
  %10 = gs.relu %9 : tensor<4x3xf32>
  // CHECK: gs.leaky_relu %{{.*}} {alpha = 1.000000e-01 : f32} : tensor<4x3xf32>
  %11 = gs.leaky_relu %10 {alpha = 0.1 : f32} : tensor<4x3xf32>
  // CHECK: gs.leaky_relu %{{.*}} : tensor<4x3xf32>
  %12 = gs.leaky_relu %11 : tensor<4x3xf32>
  // CHECK: gs.sigmoid
  %13 = gs.sigmoid %12 : tensor<4x3xf32>
  // CHECK: gs.tanh
  %14 = gs.tanh %13 : tensor<4x3xf32>
  // CHECK: gs.exp
  %15 = gs.exp %14 : tensor<4x3xf32>
  // CHECK: gs.log
  %16 = gs.log %15 : tensor<4x3xf32>
  // CHECK: gs.sqrt
  %17 = gs.sqrt %16 : tensor<4x3xf32>
  // CHECK: gs.erf %{{.*}} : tensor<4x3xf16>
  %18 = gs.erf %h : tensor<4x3xf16>
  // CHECK: gs.add %{{.*}}, %{{.*}} : tensor<4x3xi64>
  %19 = gs.add %i, %i : tensor<4x3xi64>
  // CHECK: %[[M:.*]] = gs.compare lt, %{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<3xf32>
  %20 = gs.compare lt, %a, %r : tensor<4x3xf32>, tensor<3xf32>
  // CHECK: gs.compare eq, %{{.*}}, %{{.*}} : tensor<4x3xi64>{{$}}
  %21 = gs.compare eq, %i, %i : tensor<4x3xi64>
  // CHECK: gs.where %[[M]], %{{.*}}, %{{.*}} : tensor<4x3xi1>, tensor<4x3xf32>, tensor<f32>
  %22 = gs.where %20, %a, %s : tensor<4x3xi1>, tensor<4x3xf32>, tensor<f32>
  // CHECK: gs.and %{{.*}}, %{{.*}} : tensor<4x3xi1>{{$}}
  %23 = gs.and %20, %21 : tensor<4x3xi1>
  // CHECK: gs.or %{{.*}}, %{{.*}} : tensor<4x3xi1>{{$}}
  %24 = gs.or %23, %21 : tensor<4x3xi1>
  // CHECK: gs.xor %{{.*}}, %{{.*}} : tensor<4x3xi1>{{$}}
  %25 = gs.xor %24, %21 : tensor<4x3xi1>
  // CHECK: gs.not %{{.*}} : tensor<4x3xi1>
  %26 = gs.not %25 : tensor<4x3xi1>
  return %17 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @normalization_and_pooling
func.func @normalization_and_pooling(%x: tensor<8x16x4x4xf16>, %c: tensor<16xf32>,
                                     %t: tensor<4x8x32xf32>, %g: tensor<32xf32>,
                                     %p: tensor<1x3x32x32xf32>) {
  // CHECK: %{{.*}}, %{{.*}}, %{{.*}} = gs.batch_norm %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-03 : f32} : tensor<8x16x4x4xf16>, tensor<16xf32>
  %y, %mean, %var = gs.batch_norm %x, %c, %c {epsilon = 1.0e-3 : f32} : tensor<8x16x4x4xf16>, tensor<16xf32>
  // CHECK: gs.batch_norm_inference %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<8x16x4x4xf16>, tensor<16xf32>
  %z = gs.batch_norm_inference %x, %c, %c, %mean, %var : tensor<8x16x4x4xf16>, tensor<16xf32>
  // CHECK: gs.layer_norm %{{.*}}, %{{.*}}, %{{.*}} <{axis = 2 : i64}> : tensor<4x8x32xf32>, tensor<32xf32>, tensor<32xf32>
  %l, %lm, %li = gs.layer_norm %t, %g, %g <{axis = 2 : i64}> : tensor<4x8x32xf32>, tensor<32xf32>, tensor<32xf32>
  // CHECK: gs.layer_norm %{{.*}}, %{{.*}} <{axis = 2 : i64, epsilon = 9.99999974E-5 : f32}> : tensor<4x8x32xf32>, tensor<32xf32>{{$}}
  %l2, %lm2, %li2 = gs.layer_norm %t, %g <{axis = 2 : i64, epsilon = 1.0e-4 : f32}> : tensor<4x8x32xf32>, tensor<32xf32>
  // CHECK: gs.max_pool %{{.*}} <{ceil_mode, kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>}> : tensor<1x3x32x32xf32>
  %mp = gs.max_pool %p <{kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, ceil_mode}> : tensor<1x3x32x32xf32>
  // CHECK: gs.max_pool %{{.*}} <{dilations = array<i64: 2, 2>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}> : tensor<1x3x32x32xf32>
  %md = gs.max_pool %p <{kernel_shape = array<i64: 2, 2>, dilations = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}> : tensor<1x3x32x32xf32>
  // CHECK: gs.max_pool_grad %{{.*}}, %{{.*}} <{ceil_mode, kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>}> : tensor<1x3x32x32xf32>, tensor<1x3x16x16xf32>
  %mg = gs.max_pool_grad %p, %mp <{kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, ceil_mode}> : tensor<1x3x32x32xf32>, tensor<1x3x16x16xf32>
  // CHECK: gs.avg_pool_grad %{{.*}} <{count_include_pad, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}> : tensor<1x3x16x16xf32> -> tensor<1x3x32x32xf32>
  %ag = gs.avg_pool_grad %mp <{kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, count_include_pad}> : tensor<1x3x16x16xf32> -> tensor<1x3x32x32xf32>
  // CHECK: gs.avg_pool %{{.*}} <{count_include_pad, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>}> : tensor<1x3x32x32xf32>
  %ap = gs.avg_pool %p <{kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, count_include_pad}> : tensor<1x3x32x32xf32>
  // CHECK: gs.global_avg_pool %{{.*}} : tensor<8x16x4x4xf16>
  %gp = gs.global_avg_pool %x : tensor<8x16x4x4xf16>
  return
}

// CHECK-LABEL: func.func @shapes
func.func @shapes(%x: tensor<2x3x4xf32>, %a: tensor<2x3xf32>, %b: tensor<2x5xi64>,
                  %s: tensor<1x3x1x5xf32>, %e: tensor<3x1xf32>)
    -> (tensor<24xf32>, tensor<4x2x3xf32>, tensor<2x6xf32>, tensor<2x3x5xf32>) {
  // CHECK: gs.reshape %{{.*}} : tensor<2x3x4xf32> -> tensor<24xf32>
  %0 = gs.reshape %x : tensor<2x3x4xf32> -> tensor<24xf32>
  // CHECK: gs.transpose %{{.*}}, [2, 0, 1] : tensor<2x3x4xf32>
  %1 = gs.transpose %x, [2, 0, 1] : tensor<2x3x4xf32>
  // CHECK: gs.concat %{{.*}}, %{{.*}} <{axis = 1 : i64}> : tensor<2x3xf32>, tensor<2x3xf32>
  %2 = gs.concat %a, %a <{axis = 1 : i64}> : tensor<2x3xf32>, tensor<2x3xf32>
  // CHECK: gs.concat %{{.*}}, %{{.*}} <{axis = 1 : i64}> : tensor<2x5xi64>, tensor<2x5xi64>
  %3 = gs.concat %b, %b <{axis = 1 : i64}> : tensor<2x5xi64>, tensor<2x5xi64>
  // CHECK: gs.split %{{.*}} {axis = 1 : i64} : tensor<2x6xf32> -> tensor<2x1xf32>, tensor<2x5xf32>
  %4:2 = gs.split %2 {axis = 1 : i64} : tensor<2x6xf32> -> tensor<2x1xf32>, tensor<2x5xf32>
  // CHECK: gs.slice %{{.*}} <{ends = array<i64: 2, -1, 4>, starts = array<i64: 0, 2, 0>, steps = array<i64: 1, -1, 2>}> : tensor<2x3x4xf32>
  %5 = gs.slice %x <{starts = array<i64: 0, 2, 0>, ends = array<i64: 2, -1, 4>, steps = array<i64: 1, -1, 2>}> : tensor<2x3x4xf32>
  // CHECK: gs.flatten %{{.*}} <{axis = 1 : i64}> : tensor<2x3x4xf32>
  %6 = gs.flatten %x <{axis = 1 : i64}> : tensor<2x3x4xf32>
  // CHECK: gs.squeeze %{{.*}} <{axes = array<i64: 0, 2>}> : tensor<1x3x1x5xf32>
  %7 = gs.squeeze %s <{axes = array<i64: 0, 2>}> : tensor<1x3x1x5xf32>
  // CHECK: gs.unsqueeze %{{.*}} <{axes = array<i64: 0, 3>}> : tensor<2x3xf32>
  %8 = gs.unsqueeze %a <{axes = array<i64: 0, 3>}> : tensor<2x3xf32>
  // CHECK: gs.expand %{{.*}} : tensor<3x1xf32> -> tensor<2x3x5xf32>
  %9 = gs.expand %e : tensor<3x1xf32> -> tensor<2x3x5xf32>
  // CHECK: gs.gather %{{.*}}, %{{.*}} <{axis = 1 : i64}> : tensor<2x3x4xf32>, tensor<2x5xi64>
  %10 = gs.gather %x, %b <{axis = 1 : i64}> : tensor<2x3x4xf32>, tensor<2x5xi64>
  // CHECK: gs.gather_elements %{{.*}}, %{{.*}} <{axis = 1 : i64}> : tensor<2x3xf32>, tensor<2x5xi64>
  %11 = gs.gather_elements %a, %b <{axis = 1 : i64}> : tensor<2x3xf32>, tensor<2x5xi64>
  return %0, %1, %2, %9 : tensor<24xf32>, tensor<4x2x3xf32>, tensor<2x6xf32>, tensor<2x3x5xf32>
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<8x16x4x4xf32>) {
  // CHECK: gs.reduce_sum %{{.*}} <{axes = array<i64: 0>, keepdims}> : tensor<8x16x4x4xf32>
  %0 = gs.reduce_sum %x <{axes = array<i64: 0>, keepdims}> : tensor<8x16x4x4xf32>
  // CHECK: gs.reduce_mean %{{.*}} <{axes = array<i64: 2, 3>}> : tensor<8x16x4x4xf32>
  %1 = gs.reduce_mean %x <{axes = array<i64: 2, 3>}> : tensor<8x16x4x4xf32>
  // CHECK: gs.reduce_max %{{.*}} <{axes = array<i64: 1>}> : tensor<8x16x4x4xf32>
  %2 = gs.reduce_max %x <{axes = array<i64: 1>}> : tensor<8x16x4x4xf32>
  return
}

// CHECK-LABEL: func.func @losses
func.func @losses(%s: tensor<32x10xf32>, %t: tensor<32xi64>, %w: tensor<10xf32>,
                  %img: tensor<2x5x8x8xf32>, %lbl: tensor<2x8x8xi32>)
    -> (tensor<f32>, tensor<2x8x8xf32>, tensor<f32>) {
  // CHECK: gs.softmax %{{.*}} {axis = 1 : i64} : tensor<32x10xf32>
  %p = gs.softmax %s {axis = 1 : i64} : tensor<32x10xf32>
  // CHECK: gs.log_softmax %{{.*}} {axis = 1 : i64} : tensor<32x10xf32>
  %lp = gs.log_softmax %s {axis = 1 : i64} : tensor<32x10xf32>
  // CHECK: gs.softmax_cross_entropy %{{.*}}, %{{.*}}, %{{.*}} <{ignore_index = 3 : i64, reduction = #gs.reduction<mean>}> : tensor<32x10xf32>, tensor<32xi64>, tensor<10xf32>
  %0, %1 = gs.softmax_cross_entropy %s, %t, %w <{reduction = #gs.reduction<mean>, ignore_index = 3 : i64}> : tensor<32x10xf32>, tensor<32xi64>, tensor<10xf32>
  // CHECK: gs.softmax_cross_entropy %{{.*}}, %{{.*}} <{reduction = #gs.reduction<none>}> : tensor<2x5x8x8xf32>, tensor<2x8x8xi32>
  %2, %3 = gs.softmax_cross_entropy %img, %lbl <{reduction = #gs.reduction<none>}> : tensor<2x5x8x8xf32>, tensor<2x8x8xi32>
  // CHECK: gs.nll_loss %{{.*}}, %{{.*}} <{reduction = #gs.reduction<sum>}> : tensor<32x10xf32>, tensor<32xi64>
  %4 = gs.nll_loss %lp, %t <{reduction = #gs.reduction<sum>}> : tensor<32x10xf32>, tensor<32xi64>
  return %0, %2, %4 : tensor<f32>, tensor<2x8x8xf32>, tensor<f32>
}

// CHECK-LABEL: func.func @casts_dropout_constants
func.func @casts_dropout_constants(%x: tensor<32x256xf32>, %step: i64) -> tensor<32x256xf16> {
  // CHECK: gs.cast %{{.*}} : tensor<32x256xf32> to tensor<32x256xf16>
  %h = gs.cast %x : tensor<32x256xf32> to tensor<32x256xf16>
  // CHECK: gs.dropout %{{.*}} offset %{{.*}} {ratio = 2.500000e-01 : f32, seed = 7 : i64, training} : tensor<32x256xf32>
  %y, %mask = gs.dropout %x offset %step {ratio = 0.25 : f32, seed = 7 : i64, training} : tensor<32x256xf32>
  // CHECK: gs.dropout %{{.*}} : tensor<32x256xf32>
  %z, %m2 = gs.dropout %x : tensor<32x256xf32>
  // CHECK: gs.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %c = gs.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // CHECK: gs.constant dense_resource<blob> : tensor<2xf32>
  %r = gs.constant dense_resource<blob> : tensor<2xf32>
  return %h : tensor<32x256xf16>
}

// CHECK: gs.param trainable @fc.weight = dense<1.000000e+00> : tensor<4x3xf32>
gs.param trainable @fc.weight = dense<1.0> : tensor<4x3xf32>
// CHECK: gs.param copy @fc.weight.fp16 of @fc.weight = dense<1.000000e+00> : tensor<4x3xf16>
gs.param copy @fc.weight.fp16 of @fc.weight = dense<1.0> : tensor<4x3xf16>
// CHECK: gs.param buffer @bn.running_mean = dense<0.000000e+00> : tensor<4xf32>
gs.param buffer @bn.running_mean = dense<0.0> : tensor<4xf32>
// CHECK: gs.param state @fc.weight.moment1 = dense<0.000000e+00> : tensor<4x3xf32>
gs.param state @fc.weight.moment1 = dense<0.0> : tensor<4x3xf32>
gs.param state @fc.weight.moment2 = dense<0.0> : tensor<4x3xf32>
// CHECK: gs.param state @step = dense<0> : tensor<i64>
gs.param state @step = dense<0> : tensor<i64>

// CHECK-LABEL: func.func @training
func.func @training(%x: tensor<2x3xf32>, %mean: tensor<4xf32>) -> tensor<f32> {
  // CHECK: gs.param.read @fc.weight : tensor<4x3xf32>
  %w = gs.param.read @fc.weight : tensor<4x3xf32>
  %y = gs.gemm %x, %w {transB} : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<2x4xf32>
  %l = gs.reduce_sum %y <{axes = array<i64: 0, 1>}> : tensor<2x4xf32>
  // CHECK: gs.param.write %{{.*}}, @bn.running_mean : tensor<4xf32>
  gs.param.write %mean, @bn.running_mean : tensor<4xf32>
  // CHECK: %[[G:.*]] = gs.backward %{{.*}} wrt %{{.*}} : tensor<f32>, tensor<4x3xf32> {
  // CHECK: ^bb0(%seed: tensor<f32>):
  // CHECK:   gs.yield %{{.*}} : tensor<4x3xf32>
  // CHECK: }
  %g = gs.backward %l wrt %w : tensor<f32>, tensor<4x3xf32> {
  ^bb0(%seed: tensor<f32>):
    %s = gs.reduce_sum %x <{axes = array<i64: 0>}> : tensor<2x3xf32>
    %b = gs.expand %s : tensor<3xf32> -> tensor<4x3xf32>
    gs.yield %b : tensor<4x3xf32>
  }
  // A gradient request: autodiff fills the region.
  // CHECK: gs.backward %{{.*}} wrt %{{.*}}, %{{.*}} : tensor<f32>, tensor<4x3xf32>, tensor<2x3xf32>{{$}}
  %r:2 = gs.backward %l wrt %w, %x : tensor<f32>, tensor<4x3xf32>, tensor<2x3xf32>
  // A request with a seed: the gradients of sum(%l * %l).
  // CHECK: gs.backward %[[L:.*]] wrt %{{.*}} seed %[[L]] : tensor<f32>, tensor<2x3xf32>{{$}}
  %q = gs.backward %l wrt %x seed %l : tensor<f32>, tensor<2x3xf32>
  %lr = arith.constant 0.1 : f32
  %t = arith.constant 0 : i64
  // CHECK: gs.update @fc.weight, %[[G]], lr %{{.*}}, step %{{.*}} state [@fc.weight.moment1, @fc.weight.moment2] {optimizer = #gs.adam<beta = 0.97999999999999998, epsilon = 1.000000e-08>} : tensor<4x3xf32>
  gs.update @fc.weight, %g, lr %lr, step %t state [@fc.weight.moment1, @fc.weight.moment2] {optimizer = #gs.adam<beta = 0.98, epsilon = 1.0e-8>} : tensor<4x3xf32>
  return %l : tensor<f32>
}

// CHECK: gs.training @training {learning_rate = 1.000000e-01 : f32, optimizer = #gs.momentum<alpha = 8.000000e-01, mode = nesterov>}
gs.training @training {learning_rate = 0.1 : f32, optimizer = #gs.momentum<alpha = 0.8, mode = nesterov>}

// CHECK-LABEL: func.func @optimizer_steps
func.func @optimizer_steps(%r: f32, %t: i64, %x: tensor<2xf32>, %g: tensor<2xf32>,
                           %v: tensor<2xf32>, %h: tensor<2xf32>) {
  // CHECK: gs.optimizer_step %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {optimizer = #gs.sgd<norm_coefficient = 1.000000e-02>} : tensor<2xf32>{{$}}
  %0 = gs.optimizer_step %r, %t, %x, %g {optimizer = #gs.sgd<norm_coefficient = 0.01>} : tensor<2xf32>
  // CHECK: gs.optimizer_step %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {optimizer = #gs.momentum<>} : tensor<2xf32>, tensor<2xf32>
  %1:2 = gs.optimizer_step %r, %t, %x, %g, %v {optimizer = #gs.momentum<>} : tensor<2xf32>, tensor<2xf32>
  // CHECK: {optimizer = #gs.adagrad<decay_factor = 1.000000e-01, epsilon = 9.9999999999999995E-7, norm_coefficient = 1.000000e-03>}
  %2:2 = gs.optimizer_step %r, %t, %x, %g, %h {optimizer = #gs.adagrad<decay_factor = 0.1, epsilon = 1.0e-6, norm_coefficient = 0.001>} : tensor<2xf32>, tensor<2xf32>
  // CHECK: {optimizer = #gs.adam<alpha = 5.000000e-01, norm_coefficient_post = 1.000000e-01>} : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
  %3:3 = gs.optimizer_step %r, %t, %x, %g, %v, %h {optimizer = #gs.adam<alpha = 0.5, norm_coefficient_post = 0.1>} : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
  return
}

// CHECK-LABEL: func.func @scaling
func.func @scaling(%dy: tensor<32x10xf16>, %w: tensor<10x256xf16>,
                   %dw: tensor<10x256xf32>, %a1: f32, %a2: f32) -> (f32, i1) {
  // CHECK: %[[S:.*]] = gs.grad_stats %{{.*}} : tensor<32x10xf16>
  %s = gs.grad_stats %dy : tensor<32x10xf16>
  %sw = gs.grad_stats %w : tensor<10x256xf16>
  // CHECK: %{{.*}}, %{{.*}} = gs.compute_scale %[[S]], %{{.*}} {accum_length = 10 : i64, model = #gs.scale_model<half_normal>, relu_mask}
  %b1, %rate1 = gs.compute_scale %s, %sw {model = #gs.scale_model<half_normal>, accum_length = 10 : i64, relu_mask}
  // CHECK: gs.compute_scale %[[S]] alpha(%{{.*}}) {max_accum_scale = 6.550400e+04 : f64, max_scale = 1.024000e+03 : f64, model = #gs.scale_model<log_normal>, overflow_rounding = #gs.rounding<none>, threshold = 1.000000e-04 : f64, underflow_rounding = #gs.rounding<down>}
  %b2, %rate2 = gs.compute_scale %s alpha(%a1) {model = #gs.scale_model<log_normal>, threshold = 1.0e-4 : f64, max_scale = 1024.0 : f64, max_accum_scale = 65504.0 : f64, underflow_rounding = #gs.rounding<down>, overflow_rounding = #gs.rounding<none>}
  // CHECK: gs.rescale %{{.*}}, %{{.*}} : tensor<32x10xf16>
  %r = gs.rescale %dy, %b1 : tensor<32x10xf16>
  // CHECK: gs.unscale %{{[^ ]*}}, %{{[^ ]*}} : tensor<10x256xf32>
  %u = gs.unscale %dw, %a1 : tensor<10x256xf32>
  // CHECK: gs.unscale %{{[^ ]*}}, %{{[^ ]*}} power_of_two : tensor<10x256xf32>
  %u2 = gs.unscale %dw, %a1 power_of_two : tensor<10x256xf32>
  // CHECK: gs.cast_stats %{{.*}} : tensor<10x256xf32>
  %counts = gs.cast_stats %u : tensor<10x256xf32>
  // CHECK: %[[H:.*]] = gs.exponent_histogram %{{.*}} : tensor<32x10xf16>
  %h = gs.exponent_histogram %dy : tensor<32x10xf16>
  // CHECK: gs.compute_scale %[[S]] histogram(%[[H]]) {model = #gs.scale_model<exponent_histogram>}
  %b3, %rate3 = gs.compute_scale %s histogram(%h) {model = #gs.scale_model<exponent_histogram>}
  // CHECK: gs.unify_scales %{{.*}}, %{{.*}} stats %{{.*}}, %{{.*}}
  %c = gs.unify_scales %a1, %a2 stats %s, %sw
  // CHECK: gs.all_finite %{{.*}}, %{{.*}} : tensor<10x256xf32>, tensor<32x10xf16>
  %ok = gs.all_finite %u, %r : tensor<10x256xf32>, tensor<32x10xf16>
  return %c, %ok : f32, i1
}

// CHECK-LABEL: func.func @scaled_contraction
func.func @scaled_contraction(%dy: tensor<32x10xf16>, %w: tensor<10x256xf16>, %g: tensor<2x8x5x5xf16>, %k: tensor<8x3x3x3xf16>, %beta: f32) -> (tensor<32x256xf16>, !gs.stats, tensor<4xi64>, tensor<2x3x9x9xf32>) {
  // CHECK: gs.scaled_contraction scale %{{.*}} : tensor<32x256xf16> {
  // CHECK-NEXT: gs.gemm
  // CHECK-NEXT: gs.yield %{{.*}} : tensor<32x256xf32>
  %dx, %s, %counts = gs.scaled_contraction scale %beta : tensor<32x256xf16> {
    %p = gs.gemm %dy, %w : tensor<32x10xf16>, tensor<10x256xf16> -> tensor<32x256xf32>
    gs.yield %p : tensor<32x256xf32>
  }
  // CHECK: gs.scaled_contraction scale %{{.*}} : tensor<2x3x9x9xf32> {
  // CHECK-NEXT: gs.conv_transpose
  %d, %s2, %c2 = gs.scaled_contraction scale %beta : tensor<2x3x9x9xf32> {
    %p = gs.conv_transpose %g, %k {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<2x8x5x5xf16>, tensor<8x3x3x3xf16> -> tensor<2x3x9x9xf32>
    gs.yield %p : tensor<2x3x9x9xf32>
  }
  // CHECK: gs.scaled_contraction scale %{{.*}} relu_mask(%{{.*}} : tensor<32x256xf16>) : tensor<32x256xf16> {
  %m, %s3, %c3 = gs.scaled_contraction scale %beta relu_mask(%dx : tensor<32x256xf16>) : tensor<32x256xf16> {
    %p = gs.gemm %dy, %w : tensor<32x10xf16>, tensor<10x256xf16> -> tensor<32x256xf32>
    gs.yield %p : tensor<32x256xf32>
  }
  return %m, %s, %counts, %d : tensor<32x256xf16>, !gs.stats, tensor<4xi64>, tensor<2x3x9x9xf32>
}

// CHECK-LABEL: func.func @all_reduce
func.func @all_reduce(%dw: tensor<10x256xf32>, %s: !gs.stats, %h: tensor<256xi64>) -> (tensor<10x256xf32>, !gs.stats, tensor<256xi64>, i64) {
  // CHECK: gs.all_reduce sum %{{.*}} : tensor<10x256xf32>
  %g = gs.all_reduce sum %dw : tensor<10x256xf32>
  // CHECK: gs.all_reduce sum %{{.*}} : !gs.stats
  %t = gs.all_reduce sum %s : !gs.stats
  // CHECK: gs.all_reduce max %{{.*}} : tensor<256xi64>
  %m = gs.all_reduce max %h : tensor<256xi64>
  // CHECK: gs.world_size : i64
  %n = gs.world_size : i64
  return %g, %t, %m, %n : tensor<10x256xf32>, !gs.stats, tensor<256xi64>, i64
}

{-#
  dialect_resources: {
    builtin: {
      blob: "0x040000000000803F00000040"
    }
  }
#-}
