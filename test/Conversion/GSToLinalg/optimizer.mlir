// RUN: gs-opt %s --split-input-file --convert-gs-to-linalg | FileCheck %s

// Optimizer.cpp: gs.optimizer_step is one elementwise linalg.generic (in
// f32; f16 tensors are extended and the results rounded) with one result
// per new tensor; step-dependent factors are f32 scalars computed once,
// before the generic. The rules are those of ONNX's training operators
// (plus plain SGD), with g_reg = g + norm_coefficient * x.

// SGD: x - lr * g_reg.
// CHECK-DAG: #[[$ID1:.+]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @sgd(
// CHECK-SAME:      %[[LR:.*]]: f32, %[[T:.*]]: i64, %[[X:.*]]: tensor<2xf32>, %[[G:.*]]: tensor<2xf32>)
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2xf32>
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID1]], #[[$ID1]], #[[$ID1]]], iterator_types = ["parallel"]}
// CHECK-SAME:        ins(%[[X]], %[[G]] : tensor<2xf32>, tensor<2xf32>) outs(%[[E]] : tensor<2xf32>)
// CHECK-NEXT:    ^bb0(%[[XV:.*]]: f32, %[[GV:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[NC:.*]] = arith.constant 0.00999999977 : f32
// CHECK-NEXT:      %[[NCX:.*]] = arith.mulf %[[NC]], %[[XV]] : f32
// CHECK-NEXT:      %[[REG:.*]] = arith.addf %[[GV]], %[[NCX]] : f32
// CHECK-NEXT:      %[[STEP:.*]] = arith.mulf %[[LR]], %[[REG]] : f32
// CHECK-NEXT:      %[[NEW:.*]] = arith.subf %[[XV]], %[[STEP]] : f32
// CHECK-NEXT:      linalg.yield %[[NEW]] : f32
// CHECK:         return %[[R]]
func.func @sgd(%r: f32, %t: i64, %x: tensor<2xf32>, %g: tensor<2xf32>) -> tensor<2xf32> {
  %0 = gs.optimizer_step %r, %t, %x, %g {optimizer = #gs.sgd<norm_coefficient = 0.01>} : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Nesterov momentum: beta' = (step > 0 ? beta : 1), v' = alpha * v +
// beta' * g_reg, x' = x - lr * (g_reg + alpha * v').
// CHECK-LABEL: func.func @momentum_nesterov(
// CHECK-SAME:      %[[LR:.*]]: f32, %[[T:.*]]: i64, %[[X:.*]]: tensor<2xf32>, %[[G:.*]]: tensor<2xf32>, %[[V:.*]]: tensor<2xf32>)
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK:         %[[STARTED:.*]] = arith.cmpi sgt, %[[T]], %[[ZERO]] : i64
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG:     %[[BETA:.*]] = arith.constant 5.000000e-01 : f32
// CHECK:         %[[BETA1:.*]] = arith.select %[[STARTED]], %[[BETA]], %[[ONE]] : f32
// CHECK:         %[[R:.*]]:2 = linalg.generic
// CHECK-SAME:        ins(%[[X]], %[[G]], %[[V]] : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) outs(%{{.*}}, %{{.*}} : tensor<2xf32>, tensor<2xf32>)
// CHECK-NEXT:    ^bb0(%[[XV:.*]]: f32, %[[GV:.*]]: f32, %[[VV:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[NC:.*]] = arith.constant 2.500000e-01 : f32
// CHECK-NEXT:      %[[NCX:.*]] = arith.mulf %[[NC]], %[[XV]] : f32
// CHECK-NEXT:      %[[REG:.*]] = arith.addf %[[GV]], %[[NCX]] : f32
// CHECK-NEXT:      %[[ALPHA:.*]] = arith.constant 8.000000e-01 : f32
// CHECK-DAG:       %[[AV:.*]] = arith.mulf %[[ALPHA]], %[[VV]] : f32
// CHECK-DAG:       %[[BG:.*]] = arith.mulf %[[BETA1]], %[[REG]] : f32
// CHECK:           %[[VNEW:.*]] = arith.addf %[[AV]], %[[BG]] : f32
// CHECK-NEXT:      %[[AVN:.*]] = arith.mulf %[[ALPHA]], %[[VNEW]] : f32
// CHECK-NEXT:      %[[DIR:.*]] = arith.addf %[[REG]], %[[AVN]] : f32
// CHECK-NEXT:      %[[STEP:.*]] = arith.mulf %[[LR]], %[[DIR]] : f32
// CHECK-NEXT:      %[[XNEW:.*]] = arith.subf %[[XV]], %[[STEP]] : f32
// CHECK-NEXT:      linalg.yield %[[XNEW]], %[[VNEW]] : f32, f32
// CHECK:         return %[[R]]#0, %[[R]]#1
func.func @momentum_nesterov(%r: f32, %t: i64, %x: tensor<2xf32>, %g: tensor<2xf32>, %v: tensor<2xf32>)
    -> (tensor<2xf32>, tensor<2xf32>) {
  %0:2 = gs.optimizer_step %r, %t, %x, %g, %v {optimizer = #gs.momentum<alpha = 0.8, beta = 0.5, norm_coefficient = 0.25, mode = nesterov>}
      : tensor<2xf32>, tensor<2xf32>
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xf32>
}

// -----

// Standard momentum on f16 tensors: everything is extended to f32 first,
// x' = x - lr * v', and both results are rounded to f16.
// CHECK-LABEL: func.func @momentum_standard_f16(
// CHECK-SAME:      %[[LR:.*]]: f32
// CHECK:         %[[BETA1:.*]] = arith.select
// CHECK:         linalg.generic
// CHECK-SAME:        outs(%{{.*}}, %{{.*}} : tensor<2xf16>, tensor<2xf16>)
// CHECK-NEXT:    ^bb0(%[[XH:.*]]: f16, %[[GH:.*]]: f16, %[[VH:.*]]: f16, %{{.*}}: f16, %{{.*}}: f16):
// CHECK-NEXT:      %[[XV:.*]] = arith.extf %[[XH]] : f16 to f32
// CHECK-NEXT:      %[[GV:.*]] = arith.extf %[[GH]] : f16 to f32
// CHECK-NEXT:      %[[VV:.*]] = arith.extf %[[VH]] : f16 to f32
// CHECK:           %[[ALPHA:.*]] = arith.constant 0.899999976 : f32
// CHECK-DAG:       %[[AV:.*]] = arith.mulf %[[ALPHA]], %[[VV]] : f32
// CHECK-DAG:       %[[BG:.*]] = arith.mulf %[[BETA1]], %{{.*}} : f32
// CHECK:           %[[VNEW:.*]] = arith.addf %[[AV]], %[[BG]] : f32
// CHECK-NEXT:      %[[STEP:.*]] = arith.mulf %[[LR]], %[[VNEW]] : f32
// CHECK-NEXT:      %[[XNEW:.*]] = arith.subf %[[XV]], %[[STEP]] : f32
// CHECK-NEXT:      %[[XH2:.*]] = arith.truncf %[[XNEW]] : f32 to f16
// CHECK-NEXT:      %[[VH2:.*]] = arith.truncf %[[VNEW]] : f32 to f16
// CHECK-NEXT:      linalg.yield %[[XH2]], %[[VH2]] : f16, f16
func.func @momentum_standard_f16(%r: f32, %t: i64, %x: tensor<2xf16>, %g: tensor<2xf16>, %v: tensor<2xf16>)
    -> (tensor<2xf16>, tensor<2xf16>) {
  %0:2 = gs.optimizer_step %r, %t, %x, %g, %v {optimizer = #gs.momentum<>} : tensor<2xf16>, tensor<2xf16>
  return %0#0, %0#1 : tensor<2xf16>, tensor<2xf16>
}

// -----

// Adagrad: r = lr / (1 + step * decay_factor), h' = h + g_reg^2,
// x' = x - r * g_reg / (sqrt(h') + epsilon).
// CHECK-LABEL: func.func @adagrad(
// CHECK-SAME:      %[[LR:.*]]: f32, %[[T:.*]]: i64, %[[X:.*]]: tensor<2xf32>, %[[G:.*]]: tensor<2xf32>, %[[H:.*]]: tensor<2xf32>)
// CHECK:         %[[STEPF:.*]] = arith.sitofp %[[T]] : i64 to f32
// CHECK-DAG:     %[[DECAY:.*]] = arith.constant 1.000000e-01 : f32
// CHECK-DAG:     %[[SD:.*]] = arith.mulf %[[STEPF]], %[[DECAY]] : f32
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         %[[DEN:.*]] = arith.addf %[[ONE]], %[[SD]] : f32
// CHECK-NEXT:    %[[RATE:.*]] = arith.divf %[[LR]], %[[DEN]] : f32
// CHECK:         %[[R:.*]]:2 = linalg.generic
// CHECK-SAME:        ins(%[[X]], %[[G]], %[[H]] : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
// CHECK-NEXT:    ^bb0(%[[XV:.*]]: f32, %[[GV:.*]]: f32, %[[HV:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[NC:.*]] = arith.constant 1.000000e-03 : f32
// CHECK-NEXT:      %[[NCX:.*]] = arith.mulf %[[NC]], %[[XV]] : f32
// CHECK-NEXT:      %[[REG:.*]] = arith.addf %[[GV]], %[[NCX]] : f32
// CHECK-NEXT:      %[[REG2:.*]] = arith.mulf %[[REG]], %[[REG]] : f32
// CHECK-NEXT:      %[[HNEW:.*]] = arith.addf %[[HV]], %[[REG2]] : f32
// CHECK-DAG:       %[[EPS:.*]] = arith.constant 9.99999997E-7 : f32
// CHECK-DAG:       %[[SQ:.*]] = math.sqrt %[[HNEW]] : f32
// CHECK:           %[[ADAPT:.*]] = arith.addf %[[SQ]], %[[EPS]] : f32
// CHECK-NEXT:      %[[RG:.*]] = arith.mulf %[[RATE]], %[[REG]] : f32
// CHECK-NEXT:      %[[Q:.*]] = arith.divf %[[RG]], %[[ADAPT]] : f32
// CHECK-NEXT:      %[[XNEW:.*]] = arith.subf %[[XV]], %[[Q]] : f32
// CHECK-NEXT:      linalg.yield %[[XNEW]], %[[HNEW]] : f32, f32
// CHECK:         return %[[R]]#0, %[[R]]#1
func.func @adagrad(%r: f32, %t: i64, %x: tensor<2xf32>, %g: tensor<2xf32>, %h: tensor<2xf32>)
    -> (tensor<2xf32>, tensor<2xf32>) {
  %0:2 = gs.optimizer_step %r, %t, %x, %g, %h {optimizer = #gs.adagrad<decay_factor = 0.1, epsilon = 1.0e-6, norm_coefficient = 0.001>}
      : tensor<2xf32>, tensor<2xf32>
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xf32>
}

// -----

// Adam on f16 tensors: r = step > 0 ? lr * sqrt(1 - beta^step) /
// (1 - alpha^step) : lr; v' = alpha * v + (1 - alpha) * g_reg;
// h' = beta * h + (1 - beta) * g_reg^2;
// x' = (1 - norm_coefficient_post) * (x - r * v' / (sqrt(h') + epsilon)).
// CHECK-LABEL: func.func @adam_f16(
// CHECK-SAME:      %[[LR:.*]]: f32, %[[T:.*]]: i64, %[[X:.*]]: tensor<2xf16>, %[[G:.*]]: tensor<2xf16>, %[[V:.*]]: tensor<2xf16>, %[[H:.*]]: tensor<2xf16>)
// CHECK:         %[[STEPF:.*]] = arith.sitofp %[[T]] : i64 to f32
// CHECK:         %[[STARTED:.*]] = arith.cmpi sgt, %[[T]], %{{.*}} : i64
// CHECK-DAG:     %[[ALPHA:.*]] = arith.constant 7.500000e-01 : f32
// CHECK-DAG:     %[[APOW:.*]] = math.powf %[[ALPHA]], %[[STEPF]] : f32
// CHECK-DAG:     %[[ADEN:.*]] = arith.subf %{{.*}}, %[[APOW]] : f32
// CHECK-DAG:     %[[BETA:.*]] = arith.constant 8.750000e-01 : f32
// CHECK-DAG:     %[[BPOW:.*]] = math.powf %[[BETA]], %[[STEPF]] : f32
// CHECK-DAG:     %[[BSUB:.*]] = arith.subf %{{.*}}, %[[BPOW]] : f32
// CHECK-DAG:     %[[BSQRT:.*]] = math.sqrt %[[BSUB]] : f32
// CHECK-DAG:     %[[NUM:.*]] = arith.mulf %[[LR]], %[[BSQRT]] : f32
// CHECK:         %[[CORR:.*]] = arith.divf %[[NUM]], %[[ADEN]] : f32
// CHECK-NEXT:    %[[RATE:.*]] = arith.select %[[STARTED]], %[[CORR]], %[[LR]] : f32
// CHECK:         %[[R:.*]]:3 = linalg.generic
// CHECK-SAME:        ins(%[[X]], %[[G]], %[[V]], %[[H]] : tensor<2xf16>, tensor<2xf16>, tensor<2xf16>, tensor<2xf16>) outs(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2xf16>, tensor<2xf16>, tensor<2xf16>)
// CHECK-NEXT:    ^bb0(%[[XH:.*]]: f16, %[[GH:.*]]: f16, %[[VH:.*]]: f16, %[[HH:.*]]: f16, %{{.*}}: f16, %{{.*}}: f16, %{{.*}}: f16):
// CHECK-NEXT:      %[[XV:.*]] = arith.extf %[[XH]] : f16 to f32
// CHECK-NEXT:      %[[GV:.*]] = arith.extf %[[GH]] : f16 to f32
// CHECK-NEXT:      %[[VV:.*]] = arith.extf %[[VH]] : f16 to f32
// CHECK-NEXT:      %[[HV:.*]] = arith.extf %[[HH]] : f16 to f32
// CHECK-NEXT:      %[[NC:.*]] = arith.constant 1.000000e-01 : f32
// CHECK-NEXT:      %[[NCX:.*]] = arith.mulf %[[NC]], %[[XV]] : f32
// CHECK-NEXT:      %[[REG:.*]] = arith.addf %[[GV]], %[[NCX]] : f32
// CHECK-DAG:       %[[A:.*]] = arith.constant 7.500000e-01 : f32
// CHECK-DAG:       %[[AV:.*]] = arith.mulf %[[A]], %[[VV]] : f32
// CHECK-DAG:       %[[A1:.*]] = arith.constant 2.500000e-01 : f32
// CHECK-DAG:       %[[A1G:.*]] = arith.mulf %[[A1]], %[[REG]] : f32
// CHECK:           %[[VNEW:.*]] = arith.addf %[[AV]], %[[A1G]] : f32
// CHECK-DAG:       %[[B:.*]] = arith.constant 8.750000e-01 : f32
// CHECK-DAG:       %[[BH:.*]] = arith.mulf %[[B]], %[[HV]] : f32
// CHECK-DAG:       %[[REG2:.*]] = arith.mulf %[[REG]], %[[REG]] : f32
// CHECK-DAG:       %[[B1:.*]] = arith.constant 1.250000e-01 : f32
// CHECK-DAG:       %[[B1G:.*]] = arith.mulf %[[B1]], %[[REG2]] : f32
// CHECK:           %[[HNEW:.*]] = arith.addf %[[BH]], %[[B1G]] : f32
// CHECK-DAG:       %[[EPS:.*]] = arith.constant 6.250000e-02 : f32
// CHECK-DAG:       %[[SQ:.*]] = math.sqrt %[[HNEW]] : f32
// CHECK:           %[[DEN:.*]] = arith.addf %[[SQ]], %[[EPS]] : f32
// CHECK-NEXT:      %[[RV:.*]] = arith.mulf %[[RATE]], %[[VNEW]] : f32
// CHECK-NEXT:      %[[Q:.*]] = arith.divf %[[RV]], %[[DEN]] : f32
// CHECK-NEXT:      %[[UPD:.*]] = arith.subf %[[XV]], %[[Q]] : f32
// CHECK-NEXT:      %[[POST:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      %[[XNEW:.*]] = arith.mulf %[[POST]], %[[UPD]] : f32
// CHECK-NEXT:      %[[XO:.*]] = arith.truncf %[[XNEW]] : f32 to f16
// CHECK-NEXT:      %[[VO:.*]] = arith.truncf %[[VNEW]] : f32 to f16
// CHECK-NEXT:      %[[HO:.*]] = arith.truncf %[[HNEW]] : f32 to f16
// CHECK-NEXT:      linalg.yield %[[XO]], %[[VO]], %[[HO]] : f16, f16, f16
// CHECK:         return %[[R]]#0, %[[R]]#1, %[[R]]#2
func.func @adam_f16(%r: f32, %t: i64, %x: tensor<2xf16>, %g: tensor<2xf16>, %v: tensor<2xf16>, %h: tensor<2xf16>)
    -> (tensor<2xf16>, tensor<2xf16>, tensor<2xf16>) {
  %0:3 = gs.optimizer_step %r, %t, %x, %g, %v, %h
      {optimizer = #gs.adam<alpha = 0.75, beta = 0.875, epsilon = 0.0625, norm_coefficient = 0.1, norm_coefficient_post = 0.5>}
      : tensor<2xf16>, tensor<2xf16>, tensor<2xf16>
  return %0#0, %0#1, %0#2 : tensor<2xf16>, tensor<2xf16>, tensor<2xf16>
}
