// RUN: gs-opt %s --split-input-file --gs-train-step --gs-mixed-precision --gs-autodiff --gs-widen-weight-gradients --gs-gradient-scaling | FileCheck %s
// RUN: gs-opt %s --split-input-file --gs-train-step --gs-mixed-precision --gs-autodiff --gs-widen-weight-gradients | FileCheck %s --check-prefix=FORWARD
// RUN: gs-opt %s --split-input-file --gs-train-step --gs-mixed-precision --gs-autodiff --gs-widen-weight-gradients --gs-gradient-scaling | FileCheck %s --check-prefix=FORWARD

// gs-gradient-scaling (docs/GradientScaling.md). An MLP, Linear-ReLU-
// Linear-ReLU-Linear with softmax cross-entropy, in mixed precision.
//
// The softmax cross-entropy gradient is cast from FP32 to FP16 (fT): the
// log-normal model on its FP32 values, a rescale before the cast, and the
// seed's scale 1 times beta.
// CHECK: gs.param state @gs.scaling.cast0 = dense<0x7FF8000000000000> : tensor<7xf64> {gs.site = "fT: FP32->FP16 cast of a gradient at {{.*}}"}
// CHECK: gs.param state @gs.scaling.cast1 = {{.*}} {gs.site = "fG: FP16 result of gs.gemm in the backward pass at {{.*}}"}
// CHECK: gs.param state @gs.scaling.cast2 = {{.*}} {gs.site = "fG: FP16 result of gs.gemm in the backward pass at {{.*}}"}
// CHECK-NOT: gs.scaling.cast3
// CHECK-LABEL: func.func @train_step
// CHECK:     %[[W2:.+]] = gs.cast %{{.*}} : tensor<8x8xf32> to tensor<8x8xf16>
// CHECK:     %[[W3:.+]] = gs.cast %{{.*}} : tensor<3x8xf32> to tensor<3x8xf16>
// CHECK:     %[[G:.+]]:4 = gs.backward
// CHECK:       %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK:       %[[DL:.+]] = gs.mul {{.*}} : tensor<2x3xf32>, tensor<2x1xf32>
// CHECK:       %[[SL:.+]] = gs.grad_stats %[[DL]] : tensor<2x3xf32>
// CHECK:       %[[BL:.+]], %[[EL:.+]] = gs.compute_scale %[[SL]] {model = #gs.scale_model<log_normal>}
// CHECK:       %[[DLS:.+]] = gs.rescale %[[DL]], %[[BL]] : tensor<2x3xf32>
// CHECK:       %[[A1:.+]] = arith.mulf %[[ONE]], %[[BL]] : f32
// CHECK:       gs.cast_stats %[[DLS]] : tensor<2x3xf32>
// CHECK:       gs.param.write %{{.*}}, @gs.scaling.cast0
// CHECK:       %[[DY3:.+]] = gs.cast %[[DLS]] : tensor<2x3xf32> to tensor<2x3xf16>
//
// The data gradient of the last layer (fG): statistics of the incoming
// gradient and of the weight, the half-normal model with N = 3 (the
// contraction length), no ReLU between; the GEMM accumulates in FP32, is
// rescaled, then cast.
// CHECK:       %[[S3:.+]] = gs.grad_stats %[[DY3]] : tensor<2x3xf16>
// CHECK:       %[[SW3:.+]] = gs.grad_stats %[[W3]] : tensor<3x8xf16>
// CHECK:       %[[B3:.+]], %{{.+}} = gs.compute_scale %[[S3]], %[[SW3]] {accum_length = 3 : i64, model = #gs.scale_model<half_normal>}
// CHECK:       %[[ACC3:.+]] = gs.gemm %[[DY3]], %[[W3]] : tensor<2x3xf16>, tensor<3x8xf16> -> tensor<2x8xf32>
// CHECK:       %[[R3:.+]] = gs.rescale %[[ACC3]], %[[B3]] : tensor<2x8xf32>
// CHECK:       %[[A2:.+]] = arith.mulf %[[A1]], %[[B3]] : f32
// CHECK:       gs.cast_stats %[[R3]] : tensor<2x8xf32>
// CHECK:       gs.param.write %{{.*}}, @gs.scaling.cast1
// CHECK:       %[[DX3:.+]] = gs.cast %[[R3]] : tensor<2x8xf32> to tensor<2x8xf16>
// The weight gradient of the last layer is FP32 (no rounding to scale).
// CHECK:       %[[DW3:.+]] = gs.gemm %[[DY3]], %{{.*}} {transA} : tensor<2x3xf16>, tensor<2x8xf16> -> tensor<3x8xf32>
//
// Behind the ReLU's mask: the statistics of the gradient before the mask,
// and relu_mask; N = 8.
// CHECK:       %[[M2:.+]] = gs.where %{{.*}}, %[[DX3]], %{{.*}} : tensor<2x8xi1>, tensor<2x8xf16>, tensor<f16>
// CHECK:       %[[S2:.+]] = gs.grad_stats %[[DX3]] : tensor<2x8xf16>
// CHECK:       %[[SW2:.+]] = gs.grad_stats %[[W2]] : tensor<8x8xf16>
// CHECK:       %[[B2:.+]], %{{.+}} = gs.compute_scale %[[S2]], %[[SW2]] {accum_length = 8 : i64, model = #gs.scale_model<half_normal>, relu_mask}
// CHECK:       %[[ACC2:.+]] = gs.gemm %[[M2]], %[[W2]] : tensor<2x8xf16>, tensor<8x8xf16> -> tensor<2x8xf32>
// CHECK:       %[[R2:.+]] = gs.rescale %[[ACC2]], %[[B2]] : tensor<2x8xf32>
// CHECK:       %[[A3:.+]] = arith.mulf %[[A2]], %[[B2]] : f32
// CHECK:       gs.param.write %{{.*}}, @gs.scaling.cast2
// CHECK:       %[[DX2:.+]] = gs.cast %[[R2]] : tensor<2x8xf32> to tensor<2x8xf16>
// CHECK:       %[[DW2:.+]] = gs.gemm %[[M2]], %{{.*}} {transA}
// The first layer's input needs no gradient: no third fG.
// CHECK:       %[[M1:.+]] = gs.where %{{.*}}, %[[DX2]], %{{.*}}
// CHECK-NOT:   gs.compute_scale
// CHECK:       %[[DW1:.+]] = gs.gemm %[[M1]], %{{.*}} {transA}
//
// Each weight gradient is unscaled by the scale of the gradient it came
// from; the bias gradient too.
// CHECK:       %[[U1:.+]] = gs.unscale %[[DW1]], %[[A3]] power_of_two : tensor<8x4xf32>
// CHECK:       %[[U2:.+]] = gs.unscale %[[DW2]], %[[A2]] power_of_two : tensor<8x8xf32>
// CHECK:       %[[U3:.+]] = gs.unscale %[[DW3]], %[[A1]] power_of_two : tensor<3x8xf32>
// CHECK:       %[[U4:.+]] = gs.unscale %{{.*}}, %[[A1]] power_of_two : tensor<3xf32>
// CHECK:       gs.yield %[[U1]], %[[U2]], %[[U3]], %[[U4]]
//
// A step with a non-finite gradient updates nothing and counts the skip.
// CHECK:     %[[OK:.+]] = gs.all_finite %[[G]]#0, %[[G]]#1, %[[G]]#2, %[[G]]#3
// CHECK:     scf.if %[[OK]] {
// CHECK-NEXT:  gs.update @w1
// CHECK-NEXT:  gs.update @w2
// CHECK-NEXT:  gs.update @w3
// CHECK-NEXT:  gs.update @b3
// CHECK-NEXT:  gs.param.write %{{.*}}, @gs.step
// CHECK-NEXT: }
// CHECK:     %[[SKIPS:.+]] = gs.param.read @gs.skipped_steps
// CHECK:     gs.param.write %{{.*}}, @gs.skipped_steps

// The forward computation is what gs-mixed-precision left: the same ops
// in both runs, and nothing of the scaling before the backward region.
// FORWARD-LABEL: func.func @train_step
// FORWARD:     gs.gemm %{{.*}}, %{{.*}} {transB} : tensor<2x4xf16>, tensor<8x4xf16> -> tensor<2x8xf16>
// FORWARD-NEXT: gs.relu %{{.*}} : tensor<2x8xf16>
// FORWARD-NEXT: gs.cast %{{.*}} : tensor<8x8xf32> to tensor<8x8xf16>
// FORWARD-NEXT: gs.gemm %{{.*}}, %{{.*}} {transB} : tensor<2x8xf16>, tensor<8x8xf16> -> tensor<2x8xf16>
// FORWARD-NEXT: gs.relu %{{.*}} : tensor<2x8xf16>
// FORWARD-NEXT: gs.cast %{{.*}} : tensor<3x8xf32> to tensor<3x8xf16>
// FORWARD-NEXT: gs.cast %{{.*}} : tensor<3xf32> to tensor<3xf16>
// FORWARD-NEXT: gs.gemm %{{.*}}, %{{.*}}, %{{.*}} {transB} : tensor<2x8xf16>, tensor<3x8xf16>, tensor<3xf16> -> tensor<2x3xf16>
// FORWARD-NEXT: gs.cast %{{.*}} : tensor<2x3xf16> to tensor<2x3xf32>
// FORWARD-NEXT: gs.softmax_cross_entropy
// FORWARD-NOT:  gs.grad_stats
// FORWARD-NOT:  gs.rescale
// FORWARD:     gs.backward
gs.param trainable @w1 = dense<0.1> : tensor<8x4xf32>
gs.param trainable @w2 = dense<0.1> : tensor<8x8xf32>
gs.param trainable @w3 = dense<0.1> : tensor<3x8xf32>
gs.param trainable @b3 = dense<0.0> : tensor<3xf32>
func.func @forward(%x: tensor<2x4xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w1 = gs.param.read @w1 : tensor<8x4xf32>
  %w2 = gs.param.read @w2 : tensor<8x8xf32>
  %w3 = gs.param.read @w3 : tensor<3x8xf32>
  %b3 = gs.param.read @b3 : tensor<3xf32>
  %h1 = gs.gemm %x, %w1 {transB} : tensor<2x4xf32>, tensor<8x4xf32> -> tensor<2x8xf32>
  %r1 = gs.relu %h1 : tensor<2x8xf32>
  %h2 = gs.gemm %r1, %w2 {transB} : tensor<2x8xf32>, tensor<8x8xf32> -> tensor<2x8xf32>
  %r2 = gs.relu %h2 : tensor<2x8xf32>
  %y = gs.gemm %r2, %w3, %b3 {transB} : tensor<2x8xf32>, tensor<3x8xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %l, %lp = gs.softmax_cross_entropy %y, %t <{reduction = #gs.reduction<mean>}> : tensor<2x3xf32>, tensor<2xi64>
  return %l : tensor<f32>
}
gs.training @forward {learning_rate = 0.1 : f32, optimizer = #gs.momentum<>}

// -----

// A CNN with a residual add: conv-ReLU-conv, plus the ReLU's output. The
// data gradient of the second conv is a conv_transpose (fG, N = 4 * 3 * 3);
// the ReLU's output gets the sum of that (scale alpha * beta) and of the
// add's pass-through (scale alpha): one gs.unify_scales, both parts
// rescaled to its scale, and the first conv's weight gradient unscaled by
// it. The unification has a telemetry record naming the op and its node.
// CHECK: gs.param state @gs.scaling.unify0 = dense<0x7FF8000000000000> : tensor<5xf64> {gs.site = "branch: 2 gradients of gs.add_n brought to one scale at {{.*}}gradient-scaling.mlir:{{[0-9]+}}"}
// CHECK-LABEL: func.func @train_step
// CHECK:     gs.backward
// CHECK:       %[[B:.+]], %{{.+}} = gs.compute_scale %{{.*}}, %{{.*}} {accum_length = 36 : i64, model = #gs.scale_model<half_normal>}
// CHECK:       %[[ACC:.+]] = gs.conv_transpose %[[PASS:.+]], %{{.*}} {pads = array<i64: 1, 1, 1, 1>} : tensor<2x4x4x4xf16>, tensor<4x4x3x3xf16> -> tensor<2x4x4x4xf32>
// CHECK:       %[[R:.+]] = gs.rescale %[[ACC]], %[[B]] : tensor<2x4x4x4xf32>
// CHECK:       %[[AB:.+]] = arith.mulf %[[A:.+]], %[[B]] : f32
// CHECK:       %[[DX:.+]] = gs.cast %[[R]] : tensor<2x4x4x4xf32> to tensor<2x4x4x4xf16>
// CHECK:       %[[S1:.+]] = gs.grad_stats %[[PASS]] : tensor<2x4x4x4xf16>
// CHECK:       %[[S2:.+]] = gs.grad_stats %[[DX]] : tensor<2x4x4x4xf16>
// CHECK:       %[[C:.+]] = gs.unify_scales %[[A]], %[[AB]] stats %[[S1]], %[[S2]]
// CHECK:       %[[F1:.+]] = arith.divf %[[C]], %[[A]] : f32
// CHECK:       %[[P1:.+]] = gs.rescale %[[PASS]], %[[F1]] : tensor<2x4x4x4xf16>
// CHECK:       %[[F2:.+]] = arith.divf %[[C]], %[[AB]] : f32
// CHECK:       %[[P2:.+]] = gs.rescale %[[DX]], %[[F2]] : tensor<2x4x4x4xf16>
// Its record: the unified scale, then each part's scale and factor.
// CHECK-DAG:   %[[RC:.+]] = arith.extf %[[C]] : f32 to f64
// CHECK-DAG:   %[[RA:.+]] = arith.extf %[[A]] : f32 to f64
// CHECK-DAG:   %[[RF1:.+]] = arith.extf %[[F1]] : f32 to f64
// CHECK-DAG:   %[[RAB:.+]] = arith.extf %[[AB]] : f32 to f64
// CHECK-DAG:   %[[RF2:.+]] = arith.extf %[[F2]] : f32 to f64
// CHECK:       %[[REC:.+]] = tensor.from_elements %[[RC]], %[[RA]], %[[RF1]], %[[RAB]], %[[RF2]] : tensor<5xf64>
// CHECK:       gs.param.write %[[REC]], @gs.scaling.unify0 : tensor<5xf64>
// CHECK:       gs.add_n %[[P1]], %[[P2]] : tensor<2x4x4x4xf16>
// CHECK-NOT:   gs.unify_scales
// CHECK:       %[[U:.+]] = gs.unscale %{{.*}}, %[[C]] power_of_two : tensor<4x2x3x3xf32>
// CHECK:       gs.yield %[[U]]
gs.param trainable @c1 = dense<0.1> : tensor<4x2x3x3xf32>
gs.param trainable @c2 = dense<0.1> : tensor<4x4x3x3xf32>
gs.param trainable @fc = dense<0.1> : tensor<3x4xf32>
func.func @forward(%x: tensor<2x2x4x4xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %c1 = gs.param.read @c1 : tensor<4x2x3x3xf32>
  %c2 = gs.param.read @c2 : tensor<4x4x3x3xf32>
  %fc = gs.param.read @fc : tensor<3x4xf32>
  %a = gs.conv %x, %c1 {pads = array<i64: 1, 1, 1, 1>} : tensor<2x2x4x4xf32>, tensor<4x2x3x3xf32> -> tensor<2x4x4x4xf32>
  %r = gs.relu %a : tensor<2x4x4x4xf32>
  %b = gs.conv %r, %c2 {pads = array<i64: 1, 1, 1, 1>} : tensor<2x4x4x4xf32>, tensor<4x4x3x3xf32> -> tensor<2x4x4x4xf32>
  %s = gs.add %b, %r : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>
  %p = gs.global_avg_pool %s : tensor<2x4x4x4xf32>
  %f = gs.flatten %p <{axis = 1 : i64}> : tensor<2x4x1x1xf32>
  %y = gs.gemm %f, %fc {transB} : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l, %lp = gs.softmax_cross_entropy %y, %t <{reduction = #gs.reduction<mean>}> : tensor<2x3xf32>, tensor<2xi64>
  return %l : tensor<f32>
}
gs.training @forward {learning_rate = 0.1 : f32, optimizer = #gs.momentum<>}

// -----

// Split and concat: the gradient of a concat is sliced, each slice keeping
// the incoming scale; the gradient of a split is a concat of its parts,
// here one passed through (alpha) and one through a GEMM's data gradient
// (alpha * beta): unified before the concat.
// CHECK: gs.param state @gs.scaling.unify0 = {{.*}} {gs.site = "branch: 2 gradients of gs.concat brought to one scale at {{.*}}"}
// CHECK-LABEL: func.func @train_step
// CHECK:     gs.backward
// CHECK:       gs.param.write %{{.*}}, @gs.scaling.cast0
// CHECK:       %[[AIN:.+]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK:       %[[D:.+]] = gs.cast %{{.*}} : tensor<2x8xf32> to tensor<2x8xf16>
// CHECK:       %[[LEFT:.+]] = gs.slice %[[D]] <{ends = array<i64: 2, 4>
// CHECK:       %[[RIGHT:.+]] = gs.slice %[[D]] <{ends = array<i64: 2, 8>
// CHECK:       %[[SR:.+]] = gs.grad_stats %[[RIGHT]] : tensor<2x4xf16>
// CHECK:       %[[B:.+]], %{{.+}} = gs.compute_scale %[[SR]], %{{.*}} {accum_length = 4 : i64, model = #gs.scale_model<half_normal>}
// CHECK:       gs.gemm %[[RIGHT]], %{{.*}} : tensor<2x4xf16>, tensor<4x4xf16> -> tensor<2x4xf32>
// CHECK:       %[[AOUT:.+]] = arith.mulf %[[AIN]], %[[B]] : f32
// CHECK:       %[[DP:.+]] = gs.cast %{{.*}} : tensor<2x4xf32> to tensor<2x4xf16>
// CHECK:       %[[C:.+]] = gs.unify_scales %[[AIN]], %[[AOUT]] stats %{{.*}}, %{{.*}}
// CHECK:       %[[P1:.+]] = gs.rescale %[[LEFT]], %{{.*}} : tensor<2x4xf16>
// CHECK:       %[[P2:.+]] = gs.rescale %[[DP]], %{{.*}} : tensor<2x4xf16>
// CHECK:       %[[CAT:.+]] = gs.concat %[[P1]], %[[P2]] <{axis = 1 : i64}>
// CHECK:       %[[DW1:.+]] = gs.gemm %[[CAT]], %{{.*}} {transA}
// CHECK:       gs.unscale %[[DW1]], %[[C]] power_of_two : tensor<8x4xf32>
gs.param trainable @w1 = dense<0.1> : tensor<8x4xf32>
gs.param trainable @w2 = dense<0.1> : tensor<4x4xf32>
gs.param trainable @w3 = dense<0.1> : tensor<3x8xf32>
func.func @forward(%x: tensor<2x4xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w1 = gs.param.read @w1 : tensor<8x4xf32>
  %w2 = gs.param.read @w2 : tensor<4x4xf32>
  %w3 = gs.param.read @w3 : tensor<3x8xf32>
  %h = gs.gemm %x, %w1 {transB} : tensor<2x4xf32>, tensor<8x4xf32> -> tensor<2x8xf32>
  %s:2 = gs.split %h {axis = 1 : i64} : tensor<2x8xf32> -> tensor<2x4xf32>, tensor<2x4xf32>
  %p = gs.gemm %s#1, %w2 {transB} : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %c = gs.concat %s#0, %p <{axis = 1 : i64}> : tensor<2x4xf32>, tensor<2x4xf32>
  %y = gs.gemm %c, %w3 {transB} : tensor<2x8xf32>, tensor<3x8xf32> -> tensor<2x3xf32>
  %l, %lp = gs.softmax_cross_entropy %y, %t <{reduction = #gs.reduction<mean>}> : tensor<2x3xf32>, tensor<2xi64>
  return %l : tensor<f32>
}
gs.training @forward {learning_rate = 0.1 : f32, optimizer = #gs.momentum<>}
