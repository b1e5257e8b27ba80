// RUN: gs-opt %s --split-input-file --convert-gs-to-linalg | FileCheck %s
// RUN: gs-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(convert-gs-to-linalg))' \
// RUN:   | FileCheck %s

// Elementwise.cpp: every elementwise op becomes one broadcasting
// linalg.generic whose body is the op's scalar table entry; f16
// transcendental functions are evaluated in f32 and rounded once.

// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @add_broadcast(
// CHECK-SAME:      %[[A:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<3xf32>)
// CHECK:         %[[INIT:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$ROW]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:        ins(%[[A]], %[[B]] : tensor<4x3xf32>, tensor<3xf32>) outs(%[[INIT]] : tensor<4x3xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK:         return %[[R]]
func.func @add_broadcast(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = gs.add %a, %b : tensor<4x3xf32>, tensor<3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// A rank-0 operand reads the same element everywhere; a size-1 dimension
// that meets a larger one reads index 0.
// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$SCALAR:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[$COL:.+]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @broadcast_scalar_and_unit_dims(
// CHECK:         linalg.generic {indexing_maps = [#[[$ID2]], #[[$SCALAR]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:        tensor<4x3xf32>, tensor<f32>
// CHECK:           arith.subf
// CHECK:         linalg.generic {indexing_maps = [#[[$COL]], #[[$ROW]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:        tensor<4x1xf32>, tensor<3xf32>
// CHECK:           arith.mulf
func.func @broadcast_scalar_and_unit_dims(%a: tensor<4x3xf32>, %s: tensor<f32>,
    %c: tensor<4x1xf32>, %r: tensor<3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %0 = gs.sub %a, %s : tensor<4x3xf32>, tensor<f32>
  %1 = gs.mul %c, %r : tensor<4x1xf32>, tensor<3xf32>
  return %0, %1 : tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @float_binary(
// CHECK:         linalg.generic
// CHECK:           arith.divf %{{.*}}, %{{.*}} : f32
// CHECK:         linalg.generic
// CHECK:           arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK:         linalg.generic
// CHECK:           arith.minimumf %{{.*}}, %{{.*}} : f32
// CHECK:         linalg.generic
// CHECK-SAME:        outs(%{{.*}} : tensor<4xf64>)
// CHECK:           arith.maximumf %{{.*}}, %{{.*}} : f64
func.func @float_binary(%a: tensor<4xf32>, %d: tensor<4xf64>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>) {
  %0 = gs.div %a, %a : tensor<4xf32>
  %1 = gs.max %a, %a : tensor<4xf32>
  %2 = gs.min %a, %a : tensor<4xf32>
  %3 = gs.max %d, %d : tensor<4xf64>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>
}

// -----

// Integer arithmetic is signed.
// CHECK-LABEL: func.func @integer_binary(
// CHECK:         linalg.generic
// CHECK:           arith.addi %{{.*}}, %{{.*}} : i64
// CHECK:         linalg.generic
// CHECK:           arith.subi %{{.*}}, %{{.*}} : i64
// CHECK:         linalg.generic
// CHECK:           arith.muli %{{.*}}, %{{.*}} : i64
// CHECK:         linalg.generic
// CHECK:           arith.divsi %{{.*}}, %{{.*}} : i32
// CHECK:         linalg.generic
// CHECK:           arith.maxsi %{{.*}}, %{{.*}} : i32
// CHECK:         linalg.generic
// CHECK:           arith.minsi %{{.*}}, %{{.*}} : i32
func.func @integer_binary(%a: tensor<4x3xi64>, %b: tensor<4x3xi32>)
    -> (tensor<4x3xi64>, tensor<4x3xi64>, tensor<4x3xi64>, tensor<4x3xi32>,
        tensor<4x3xi32>, tensor<4x3xi32>) {
  %0 = gs.add %a, %a : tensor<4x3xi64>
  %1 = gs.sub %a, %a : tensor<4x3xi64>
  %2 = gs.mul %a, %a : tensor<4x3xi64>
  %3 = gs.div %b, %b : tensor<4x3xi32>
  %4 = gs.max %b, %b : tensor<4x3xi32>
  %5 = gs.min %b, %b : tensor<4x3xi32>
  return %0, %1, %2, %3, %4, %5 : tensor<4x3xi64>, tensor<4x3xi64>,
      tensor<4x3xi64>, tensor<4x3xi32>, tensor<4x3xi32>, tensor<4x3xi32>
}

// -----

// +, -, *, / stay in f16 (correctly rounded there); pow is evaluated in f32.
// CHECK-DAG: #[[$ID1:.+]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[$SCALAR:.+]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @f16_add_and_pow(
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f16, %[[Y:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[X]], %[[Y]] : f16
// CHECK-NEXT:      linalg.yield %[[S]] : f16
// CHECK:         linalg.generic {indexing_maps = [#[[$ID1]], #[[$SCALAR]], #[[$ID1]]], iterator_types = ["parallel"]}
// CHECK-NEXT:    ^bb0(%[[B:.*]]: f16, %[[E:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT:      %[[BW:.*]] = arith.extf %[[B]] : f16 to f32
// CHECK-NEXT:      %[[EW:.*]] = arith.extf %[[E]] : f16 to f32
// CHECK-NEXT:      %[[P:.*]] = math.powf %[[BW]], %[[EW]] : f32
// CHECK-NEXT:      %[[PH:.*]] = arith.truncf %[[P]] : f32 to f16
// CHECK-NEXT:      linalg.yield %[[PH]] : f16
func.func @f16_add_and_pow(%h: tensor<8xf16>, %e: tensor<f16>) -> (tensor<8xf16>, tensor<8xf16>) {
  %0 = gs.add %h, %h : tensor<8xf16>
  %1 = gs.pow %h, %e : tensor<8xf16>, tensor<f16>
  return %0, %1 : tensor<8xf16>, tensor<8xf16>
}

// -----

// CHECK-LABEL: func.func @pow_f32(
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[B:.*]]: f32, %[[E:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[P:.*]] = math.powf %[[B]], %[[E]] : f32
// CHECK-NEXT:      linalg.yield %[[P]] : f32
func.func @pow_f32(%a: tensor<8xf32>, %e: tensor<8xf32>) -> tensor<8xf32> {
  %0 = gs.pow %a, %e : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// CHECK-LABEL: func.func @add_n(
// CHECK-SAME:      %[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>, %[[C:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi32>)
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%[[A]], %[[B]], %[[C]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[Z:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[S1:.*]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK-NEXT:      %[[S2:.*]] = arith.addf %[[S1]], %[[Z]] : f32
// CHECK-NEXT:      linalg.yield %[[S2]] : f32
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%[[I]], %[[I]] : tensor<4xi32>, tensor<4xi32>)
// CHECK:           arith.addi %{{.*}}, %{{.*}} : i32
func.func @add_n(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>,
                 %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %0 = gs.add_n %a, %b, %c : tensor<4xf32>
  %1 = gs.add_n %i, %i : tensor<4xi32>
  return %0, %1 : tensor<4xf32>, tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @unary_f32(
// CHECK:         linalg.generic
// CHECK-SAME:        iterator_types = ["parallel"]
// CHECK-NEXT:    ^bb0(%[[X0:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      arith.negf %[[X0]] : f32
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X1:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      math.absf %[[X1]] : f32
// relu: max(x, 0), NaN-propagating.
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X2:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      arith.maximumf %[[X2]], %[[ZERO]] : f32
// leaky_relu: x < 0 ? alpha * x : x.
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X3:.*]]: f32, %{{.*}}: f32):
// CHECK-DAG:       %[[Z3:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:       %[[ALPHA:.*]] = arith.constant 2.500000e-01 : f32
// CHECK:           %[[NEG:.*]] = arith.cmpf olt, %[[X3]], %[[Z3]] : f32
// CHECK:           %[[SC:.*]] = arith.mulf %[[X3]], %[[ALPHA]] : f32
// CHECK:           %[[LR:.*]] = arith.select %[[NEG]], %[[SC]], %[[X3]] : f32
// CHECK:           linalg.yield %[[LR]] : f32
// sigmoid: 1 / (1 + exp(-x)).
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X4:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[NX:.*]] = arith.negf %[[X4]] : f32
// CHECK-NEXT:      %[[EX:.*]] = math.exp %[[NX]] : f32
// CHECK-NEXT:      %[[DEN:.*]] = arith.addf %[[ONE]], %[[EX]] : f32
// CHECK-NEXT:      %[[SIG:.*]] = arith.divf %[[ONE]], %[[DEN]] : f32
// CHECK-NEXT:      linalg.yield %[[SIG]] : f32
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X5:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      math.tanh %[[X5]] : f32
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X6:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      math.exp %[[X6]] : f32
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X7:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      math.log %[[X7]] : f32
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X8:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      math.sqrt %[[X8]] : f32
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X9:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      math.erf %[[X9]] : f32
// CHECK-NOT:     arith.extf
// CHECK:         return
func.func @unary_f32(%a: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = gs.neg %a : tensor<4xf32>
  %1 = gs.abs %a : tensor<4xf32>
  %2 = gs.relu %a : tensor<4xf32>
  %3 = gs.leaky_relu %a {alpha = 0.25 : f32} : tensor<4xf32>
  %4 = gs.sigmoid %a : tensor<4xf32>
  %5 = gs.tanh %a : tensor<4xf32>
  %6 = gs.exp %a : tensor<4xf32>
  %7 = gs.log %a : tensor<4xf32>
  %8 = gs.sqrt %a : tensor<4xf32>
  %9 = gs.erf %a : tensor<4xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Transcendental functions of f16 values: extend, compute in f32, round
// once. relu and leaky_relu (default alpha 0.01) stay in f16.
// CHECK-LABEL: func.func @unary_f16(
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X0:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT:      %[[W0:.*]] = arith.extf %[[X0]] : f16 to f32
// CHECK-NEXT:      %[[E0:.*]] = math.exp %[[W0]] : f32
// CHECK-NEXT:      %[[H0:.*]] = arith.truncf %[[E0]] : f32 to f16
// CHECK-NEXT:      linalg.yield %[[H0]] : f16
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X1:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT:      %[[W1:.*]] = arith.extf %[[X1]] : f16 to f32
// CHECK-NEXT:      %[[E1:.*]] = math.tanh %[[W1]] : f32
// CHECK-NEXT:      arith.truncf %[[E1]] : f32 to f16
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X2:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT:      %[[W2:.*]] = arith.extf %[[X2]] : f16 to f32
// CHECK-NEXT:      %[[E2:.*]] = math.log %[[W2]] : f32
// CHECK-NEXT:      arith.truncf %[[E2]] : f32 to f16
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X3:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT:      %[[W3:.*]] = arith.extf %[[X3]] : f16 to f32
// CHECK-NEXT:      %[[E3:.*]] = math.sqrt %[[W3]] : f32
// CHECK-NEXT:      arith.truncf %[[E3]] : f32 to f16
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X4:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT:      %[[W4:.*]] = arith.extf %[[X4]] : f16 to f32
// CHECK-NEXT:      %[[E4:.*]] = math.erf %[[W4]] : f32
// CHECK-NEXT:      arith.truncf %[[E4]] : f32 to f16
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X5:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT:      %[[W5:.*]] = arith.extf %[[X5]] : f16 to f32
// CHECK:           math.exp
// CHECK:           %[[S5:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:      %[[H5:.*]] = arith.truncf %[[S5]] : f32 to f16
// CHECK-NEXT:      linalg.yield %[[H5]] : f16
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X6:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT:      %[[Z6:.*]] = arith.constant 0.000000e+00 : f16
// CHECK-NEXT:      arith.maximumf %[[X6]], %[[Z6]] : f16
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X7:.*]]: f16, %{{.*}}: f16):
// CHECK:           arith.constant 1.000210e-02 : f16
// CHECK:           arith.cmpf olt, %[[X7]], %{{.*}} : f16
// CHECK:           arith.mulf %[[X7]], %{{.*}} : f16
// CHECK:           arith.select
// CHECK-NOT:       arith.extf
// CHECK:         return
func.func @unary_f16(%a: tensor<4xf16>)
    -> (tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>,
        tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>) {
  %0 = gs.exp %a : tensor<4xf16>
  %1 = gs.tanh %a : tensor<4xf16>
  %2 = gs.log %a : tensor<4xf16>
  %3 = gs.sqrt %a : tensor<4xf16>
  %4 = gs.erf %a : tensor<4xf16>
  %5 = gs.sigmoid %a : tensor<4xf16>
  %6 = gs.relu %a : tensor<4xf16>
  %7 = gs.leaky_relu %a : tensor<4xf16>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<4xf16>, tensor<4xf16>,
      tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>,
      tensor<4xf16>
}

// -----

// gs.cast: floats round to nearest even (truncf) or extend; float to
// integer truncates toward zero (fptosi); anything to bool is `x != 0`;
// bool to number is unsigned, other integers are signed.
// CHECK-LABEL: func.func @casts(
// CHECK:         linalg.generic
// CHECK-SAME:        outs(%{{.*}} : tensor<4xf16>)
// CHECK-NEXT:    ^bb0(%[[X0:.*]]: f32, %{{.*}}: f16):
// CHECK-NEXT:      %[[R0:.*]] = arith.truncf %[[X0]] : f32 to f16
// CHECK-NEXT:      linalg.yield %[[R0]] : f16
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X1:.*]]: f16, %{{.*}}: f32):
// CHECK-NEXT:      arith.extf %[[X1]] : f16 to f32
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X2:.*]]: f32, %{{.*}}: i32):
// CHECK-NEXT:      arith.fptosi %[[X2]] : f32 to i32
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X3:.*]]: f32, %{{.*}}: i1):
// CHECK-NEXT:      %[[Z3:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      arith.cmpf une, %[[X3]], %[[Z3]] : f32
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X4:.*]]: i1, %{{.*}}: f32):
// CHECK-NEXT:      arith.uitofp %[[X4]] : i1 to f32
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X5:.*]]: i64, %{{.*}}: f32):
// CHECK-NEXT:      arith.sitofp %[[X5]] : i64 to f32
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X6:.*]]: i64, %{{.*}}: i32):
// CHECK-NEXT:      arith.trunci %[[X6]] : i64 to i32
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X7:.*]]: i1, %{{.*}}: i64):
// CHECK-NEXT:      arith.extui %[[X7]] : i1 to i64
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X8:.*]]: i32, %{{.*}}: i64):
// CHECK-NEXT:      arith.extsi %[[X8]] : i32 to i64
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X9:.*]]: i64, %{{.*}}: i1):
// CHECK-NEXT:      %[[Z9:.*]] = arith.constant 0 : i64
// CHECK-NEXT:      arith.cmpi ne, %[[X9]], %[[Z9]] : i64
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X10:.*]]: f64, %{{.*}}: f16):
// CHECK-NEXT:      arith.truncf %[[X10]] : f64 to f16
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X11:.*]]: f16, %{{.*}}: i8):
// CHECK-NEXT:      arith.fptosi %[[X11]] : f16 to i8
func.func @casts(%f: tensor<4xf32>, %h: tensor<4xf16>, %b: tensor<4xi1>,
                 %i: tensor<4xi64>, %j: tensor<4xi32>, %d: tensor<4xf64>)
    -> (tensor<4xf16>, tensor<4xf32>, tensor<4xi32>, tensor<4xi1>, tensor<4xf32>,
        tensor<4xf32>, tensor<4xi32>, tensor<4xi64>, tensor<4xi64>, tensor<4xi1>,
        tensor<4xf16>, tensor<4xi8>) {
  %0 = gs.cast %f : tensor<4xf32> to tensor<4xf16>
  %1 = gs.cast %h : tensor<4xf16> to tensor<4xf32>
  %2 = gs.cast %f : tensor<4xf32> to tensor<4xi32>
  %3 = gs.cast %f : tensor<4xf32> to tensor<4xi1>
  %4 = gs.cast %b : tensor<4xi1> to tensor<4xf32>
  %5 = gs.cast %i : tensor<4xi64> to tensor<4xf32>
  %6 = gs.cast %i : tensor<4xi64> to tensor<4xi32>
  %7 = gs.cast %b : tensor<4xi1> to tensor<4xi64>
  %8 = gs.cast %j : tensor<4xi32> to tensor<4xi64>
  %9 = gs.cast %i : tensor<4xi64> to tensor<4xi1>
  %10 = gs.cast %d : tensor<4xf64> to tensor<4xf16>
  %11 = gs.cast %h : tensor<4xf16> to tensor<4xi8>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11
      : tensor<4xf16>, tensor<4xf32>, tensor<4xi32>, tensor<4xi1>, tensor<4xf32>,
        tensor<4xf32>, tensor<4xi32>, tensor<4xi64>, tensor<4xi64>, tensor<4xi1>,
        tensor<4xf16>, tensor<4xi8>
}

// -----

// Float comparisons are ordered except `ne` (NaN != anything); integers
// compare signed, booleans unsigned (false < true).
// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @compare(
// CHECK:         linalg.generic {indexing_maps = [#[[$ID2]], #[[$ROW]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:        outs(%{{.*}} : tensor<4x3xi1>)
// CHECK-NEXT:    ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: i1):
// CHECK-NEXT:      arith.cmpf oeq
// CHECK:           arith.cmpf une
// CHECK:           arith.cmpf olt
// CHECK:           arith.cmpf ole
// CHECK:           arith.cmpf ogt
// CHECK:           arith.cmpf oge
// CHECK:           arith.cmpi slt, %{{.*}}, %{{.*}} : i64
// CHECK:           arith.cmpi ne, %{{.*}}, %{{.*}} : i64
// CHECK:           arith.cmpi uge, %{{.*}}, %{{.*}} : i1
// CHECK:           arith.cmpi ult, %{{.*}}, %{{.*}} : i1
func.func @compare(%a: tensor<4x3xf32>, %r: tensor<3xf32>, %i: tensor<4xi64>,
                   %b: tensor<4xi1>)
    -> (tensor<4x3xi1>, tensor<4x3xi1>, tensor<4x3xi1>, tensor<4x3xi1>,
        tensor<4x3xi1>, tensor<4x3xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>,
        tensor<4xi1>) {
  %0 = gs.compare eq, %a, %r : tensor<4x3xf32>, tensor<3xf32>
  %1 = gs.compare ne, %a, %r : tensor<4x3xf32>, tensor<3xf32>
  %2 = gs.compare lt, %a, %r : tensor<4x3xf32>, tensor<3xf32>
  %3 = gs.compare le, %a, %r : tensor<4x3xf32>, tensor<3xf32>
  %4 = gs.compare gt, %a, %r : tensor<4x3xf32>, tensor<3xf32>
  %5 = gs.compare ge, %a, %r : tensor<4x3xf32>, tensor<3xf32>
  %6 = gs.compare lt, %i, %i : tensor<4xi64>
  %7 = gs.compare ne, %i, %i : tensor<4xi64>
  %8 = gs.compare ge, %b, %b : tensor<4xi1>
  %9 = gs.compare lt, %b, %b : tensor<4xi1>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9
      : tensor<4x3xi1>, tensor<4x3xi1>, tensor<4x3xi1>, tensor<4x3xi1>,
        tensor<4x3xi1>, tensor<4x3xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>,
        tensor<4xi1>
}

// -----

// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @logic(
// CHECK:         linalg.generic {indexing_maps = [#[[$ID2]], #[[$ROW]], #[[$ID2]]]
// CHECK:           arith.andi %{{.*}}, %{{.*}} : i1
// CHECK:         linalg.generic
// CHECK:           arith.ori %{{.*}}, %{{.*}} : i1
// CHECK:         linalg.generic
// CHECK:           arith.xori %{{.*}}, %{{.*}} : i1
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X:.*]]: i1, %{{.*}}: i1):
// CHECK-NEXT:      %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT:      %[[NOT:.*]] = arith.xori %[[X]], %[[TRUE]] : i1
// CHECK-NEXT:      linalg.yield %[[NOT]] : i1
func.func @logic(%a: tensor<4x3xi1>, %b: tensor<3xi1>)
    -> (tensor<4x3xi1>, tensor<4x3xi1>, tensor<4x3xi1>, tensor<4x3xi1>) {
  %0 = gs.and %a, %b : tensor<4x3xi1>, tensor<3xi1>
  %1 = gs.or %a, %a : tensor<4x3xi1>
  %2 = gs.xor %a, %a : tensor<4x3xi1>
  %3 = gs.not %a : tensor<4x3xi1>
  return %0, %1, %2, %3 : tensor<4x3xi1>, tensor<4x3xi1>, tensor<4x3xi1>, tensor<4x3xi1>
}

// -----

// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$SCALAR:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @where(
// CHECK-SAME:      %[[C:.*]]: tensor<3xi1>, %[[X:.*]]: tensor<4x3xf32>, %[[Y:.*]]: tensor<f32>)
// CHECK:         linalg.generic {indexing_maps = [#[[$ROW]], #[[$ID2]], #[[$SCALAR]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:        ins(%[[C]], %[[X]], %[[Y]] : tensor<3xi1>, tensor<4x3xf32>, tensor<f32>)
// CHECK-NEXT:    ^bb0(%[[CC:.*]]: i1, %[[XX:.*]]: f32, %[[YY:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[SEL:.*]] = arith.select %[[CC]], %[[XX]], %[[YY]] : f32
// CHECK-NEXT:      linalg.yield %[[SEL]] : f32
func.func @where(%c: tensor<3xi1>, %x: tensor<4x3xf32>, %y: tensor<f32>) -> tensor<4x3xf32> {
  %0 = gs.where %c, %x, %y : tensor<3xi1>, tensor<4x3xf32>, tensor<f32>
  return %0 : tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @constants(
// CHECK-DAG:     %[[C0:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-DAG:     %[[C1:.*]] = arith.constant dense<7> : tensor<2x2xi64>
// CHECK-DAG:     %[[C2:.*]] = arith.constant dense_resource<blob> : tensor<3xf16>
// CHECK:         return %[[C0]], %[[C1]], %[[C2]]
func.func @constants() -> (tensor<2xf32>, tensor<2x2xi64>, tensor<3xf16>) {
  %0 = gs.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = gs.constant dense<7> : tensor<2x2xi64>
  %2 = gs.constant dense_resource<blob> : tensor<3xf16>
  return %0, %1, %2 : tensor<2xf32>, tensor<2x2xi64>, tensor<3xf16>
}

{-#
  dialect_resources: {
    builtin: {
      blob: "0x04000000003C00400042"
    }
  }
#-}

// -----

// Rescale multiplies and unscale divides by an f32 scalar, in f32.
// CHECK-LABEL: func.func @scaling(
// CHECK-SAME:      %[[H:.*]]: tensor<32x10xf16>, %[[F:.*]]: tensor<10xf32>, %[[S:.*]]: f32)
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%[[H]] : tensor<32x10xf16>)
// CHECK-NEXT:    ^bb0(%[[X0:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT:      %[[W0:.*]] = arith.extf %[[X0]] : f16 to f32
// CHECK-NEXT:      %[[M0:.*]] = arith.mulf %[[W0]], %[[S]] : f32
// CHECK-NEXT:      %[[T0:.*]] = arith.truncf %[[M0]] : f32 to f16
// CHECK-NEXT:      linalg.yield %[[T0]] : f16
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%[[F]] : tensor<10xf32>)
// CHECK-NEXT:    ^bb0(%[[X1:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[M1:.*]] = arith.mulf %[[X1]], %[[S]] : f32
// CHECK-NEXT:      linalg.yield %[[M1]] : f32
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%[[F]] : tensor<10xf32>)
// CHECK-NEXT:    ^bb0(%[[X2:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[D2:.*]] = arith.divf %[[X2]], %[[S]] : f32
// CHECK-NEXT:      linalg.yield %[[D2]] : f32
// An unscaling by a power of two multiplies by its reciprocal, exact then,
// divided out once.
// CHECK:         %[[R:.*]] = arith.divf %{{.*}}, %[[S]] : f32
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%[[F]] : tensor<10xf32>)
// CHECK-NEXT:    ^bb0(%[[X3:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[M3:.*]] = arith.mulf %[[X3]], %[[R]] : f32
// CHECK-NEXT:      linalg.yield %[[M3]] : f32
func.func @scaling(%h: tensor<32x10xf16>, %f: tensor<10xf32>, %s: f32)
    -> (tensor<32x10xf16>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>) {
  %0 = gs.rescale %h, %s : tensor<32x10xf16>
  %1 = gs.rescale %f, %s : tensor<10xf32>
  %2 = gs.unscale %f, %s : tensor<10xf32>
  %3 = gs.unscale %f, %s power_of_two : tensor<10xf32>
  return %0, %1, %2, %3 : tensor<32x10xf16>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>
}

// -----

// Training-mode dropout: a splitmix64 hash of (seed, offset, linear index)
// gives u in [0, 1); the element is kept (and scaled by 1 / (1 - ratio))
// when u >= ratio. Both results come from one generic.
// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @dropout_training(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xf32>, %[[STEP:.*]]: i64)
// CHECK-DAG:     %[[E0:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-DAG:     %[[E1:.*]] = tensor.empty() : tensor<4x8xi1>
// CHECK:         %[[R:.*]]:2 = linalg.generic {indexing_maps = [#[[$ID2]], #[[$ID2]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:        ins(%[[X]] : tensor<4x8xf32>) outs(%[[E0]], %[[E1]] : tensor<4x8xf32>, tensor<4x8xi1>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32, %{{.*}}: i1):
// CHECK:           linalg.index 0 : index
// CHECK:           linalg.index 1 : index
// The offset weighs with 0xD1B54A32D192ED03, the seed 7 with 0x9E3779B97F4A7C15.
// CHECK-DAG:       %[[OFFK:.*]] = arith.constant -3335678366873096957 : i64
// CHECK-DAG:       %[[OFF:.*]] = arith.muli %[[STEP]], %[[OFFK]] : i64
// CHECK-DAG:       %[[SEED:.*]] = arith.constant 6018027440424182931 : i64
// CHECK:           %[[Z0:.*]] = arith.addi %[[SEED]], %[[OFF]] : i64
// CHECK-NEXT:      arith.addi %[[Z0]], %{{.*}} : i64
// CHECK:           %[[C30:.*]] = arith.constant 30 : i64
// CHECK-NEXT:      arith.shrui %{{.*}}, %[[C30]] : i64
// CHECK:           arith.constant -4658895280553007687 : i64
// CHECK:           %[[C27:.*]] = arith.constant 27 : i64
// CHECK-NEXT:      arith.shrui %{{.*}}, %[[C27]] : i64
// CHECK:           arith.constant -7723592293110705685 : i64
// CHECK:           %[[C31:.*]] = arith.constant 31 : i64
// CHECK-NEXT:      arith.shrui %{{.*}}, %[[C31]] : i64
// CHECK:           %[[C40:.*]] = arith.constant 40 : i64
// CHECK-NEXT:      %[[BITS:.*]] = arith.shrui %{{.*}}, %[[C40]] : i64
// CHECK-DAG:       %[[TWOM24:.*]] = arith.constant 5.96046448E-8 : f32
// CHECK-DAG:       %[[UI:.*]] = arith.uitofp %[[BITS]] : i64 to f32
// CHECK:           %[[U:.*]] = arith.mulf %[[UI]], %[[TWOM24]] : f32
// CHECK:           %[[RATIO:.*]] = arith.constant 2.500000e-01 : f32
// CHECK:           %[[KEEP:.*]] = arith.cmpf oge, %[[U]], %[[RATIO]] : f32
// CHECK:           %[[INV:.*]] = arith.constant 1.33333337 : f32
// CHECK:           %[[SCALED:.*]] = arith.mulf %[[IN]], %[[INV]] : f32
// CHECK:           %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:           %[[Y:.*]] = arith.select %[[KEEP]], %[[SCALED]], %[[ZERO]] : f32
// CHECK:           linalg.yield %[[Y]], %[[KEEP]] : f32, i1
// CHECK:         return %[[R]]#0, %[[R]]#1
func.func @dropout_training(%x: tensor<4x8xf32>, %step: i64) -> (tensor<4x8xf32>, tensor<4x8xi1>) {
  %y, %mask = gs.dropout %x offset %step {ratio = 0.25 : f32, seed = 7 : i64, training} : tensor<4x8xf32>
  return %y, %mask : tensor<4x8xf32>, tensor<4x8xi1>
}

// -----

// Without an offset the offset is 0; the scale is an f16 constant.
// CHECK-LABEL: func.func @dropout_training_f16(
// CHECK:         %[[OFF:.*]] = arith.constant 0 : i64
// CHECK:         linalg.generic
// CHECK-DAG:       %[[OFFK:.*]] = arith.constant -3335678366873096957 : i64
// CHECK-DAG:       %[[MUL:.*]] = arith.muli %[[OFF]], %[[OFFK]] : i64
// CHECK:           arith.addi %{{.*}}, %[[MUL]] : i64
// CHECK:           arith.cmpf oge, %{{.*}}, %{{.*}} : f32
// CHECK:           arith.constant 2.000000e+00 : f16
// CHECK:           arith.mulf %{{.*}}, %{{.*}} : f16
// CHECK:           arith.select %{{.*}}, %{{.*}}, %{{.*}} : f16
func.func @dropout_training_f16(%x: tensor<8xf16>) -> (tensor<8xf16>, tensor<8xi1>) {
  %y, %mask = gs.dropout %x {ratio = 0.5 : f32, training} : tensor<8xf16>
  return %y, %mask : tensor<8xf16>, tensor<8xi1>
}

// -----

// Outside training, or with ratio 0: the identity and an all-true mask.
// CHECK-LABEL: func.func @dropout_identity(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xf32>, %[[H:.*]]: tensor<4x8xf16>)
// CHECK-NOT:     linalg.generic
// CHECK-DAG:     %[[M0:.*]] = arith.constant dense<true> : tensor<4x8xi1>
// CHECK-DAG:     %[[M1:.*]] = arith.constant dense<true> : tensor<4x8xi1>
// CHECK:         return %[[X]], %[[M0]], %[[H]], %[[M1]]
func.func @dropout_identity(%x: tensor<4x8xf32>, %h: tensor<4x8xf16>)
    -> (tensor<4x8xf32>, tensor<4x8xi1>, tensor<4x8xf16>, tensor<4x8xi1>) {
  %y, %mask = gs.dropout %x : tensor<4x8xf32>
  %z, %m2 = gs.dropout %h {ratio = 0.0 : f32, training} : tensor<4x8xf16>
  return %y, %mask, %z, %m2 : tensor<4x8xf32>, tensor<4x8xi1>, tensor<4x8xf16>, tensor<4x8xi1>
}
