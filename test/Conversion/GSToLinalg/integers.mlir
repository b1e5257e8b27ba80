// RUN: gs-opt %s --split-input-file --convert-gs-to-linalg | FileCheck %s
// RUN: gs-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(convert-gs-to-linalg))' \
// RUN:   | FileCheck %s

// Integer tensors of every width, signless (ONNX's INT types) and unsigned
// (its UINT types). arith and linalg compute on signless integers, so
// unsigned tensors lower to signless ones of their width, function
// signatures included, and the ops whose result depends on the reading
// (division, ordering, widening) pick their unsigned forms from the gs
// op's type. Integer division never traps.

// CHECK-LABEL: func.func @unsigned_div(
// CHECK-SAME:      %[[A:.*]]: tensor<4xi8>, %[[B:.*]]: tensor<4xi8>) -> tensor<4xi8>
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%[[A]], %[[B]] : tensor<4xi8>, tensor<4xi8>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: i8, %[[Y:.*]]: i8, %{{.*}}: i8):
// CHECK-DAG:       %[[ZERO:.*]] = arith.constant 0 : i8
// CHECK-DAG:       %[[ONE:.*]] = arith.constant 1 : i8
// CHECK:           %[[BYZERO:.*]] = arith.cmpi eq, %[[Y]], %[[ZERO]] : i8
// CHECK-NEXT:      %[[D:.*]] = arith.select %[[BYZERO]], %[[ONE]], %[[Y]] : i8
// CHECK-NEXT:      %[[Q:.*]] = arith.divui %[[X]], %[[D]] : i8
// CHECK-NEXT:      %[[R:.*]] = arith.select %[[BYZERO]], %[[ZERO]], %[[Q]] : i8
// CHECK-NEXT:      linalg.yield %[[R]] : i8
func.func @unsigned_div(%a: tensor<4xui8>, %b: tensor<4xui8>) -> tensor<4xui8> {
  %0 = gs.div %a, %b : tensor<4xui8>, tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// The signed MIN / -1 divides by 1 instead (its quotient wraps to MIN).
// CHECK-LABEL: func.func @signed_div(
// CHECK:         ^bb0(%[[X:.*]]: i32, %[[Y:.*]]: i32, %{{.*}}: i32):
// CHECK-DAG:       %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-DAG:       %[[ONE:.*]] = arith.constant 1 : i32
// CHECK:           %[[BYZERO:.*]] = arith.cmpi eq, %[[Y]], %[[ZERO]] : i32
// CHECK:           %[[MIN:.*]] = arith.constant -2147483648 : i32
// CHECK:           %[[ISMIN:.*]] = arith.cmpi eq, %[[X]], %[[MIN]] : i32
// CHECK:           %[[MINUS1:.*]] = arith.constant -1 : i32
// CHECK:           %[[ISM1:.*]] = arith.cmpi eq, %[[Y]], %[[MINUS1]] : i32
// CHECK:           %[[OVER:.*]] = arith.andi %[[ISMIN]], %[[ISM1]] : i1
// CHECK:           %[[UNSAFE:.*]] = arith.ori %[[BYZERO]], %[[OVER]] : i1
// CHECK:           %[[D:.*]] = arith.select %[[UNSAFE]], %[[ONE]], %[[Y]] : i32
// CHECK:           %[[Q:.*]] = arith.divsi %[[X]], %[[D]] : i32
// CHECK:           arith.select %[[BYZERO]], %[[ZERO]], %[[Q]] : i32
func.func @signed_div(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = gs.div %a, %b : tensor<4xi32>, tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @ordering(
// CHECK-SAME:      %{{.*}}: tensor<4xi16>, %{{.*}}: tensor<4xi16>, %{{.*}}: tensor<4xi64>, %{{.*}}: tensor<4xi64>)
// CHECK-SAME:      -> (tensor<4xi16>, tensor<4xi16>, tensor<4xi1>, tensor<4xi64>, tensor<4xi1>)
// CHECK:         arith.maxui %{{.*}}, %{{.*}} : i16
// CHECK:         arith.minui %{{.*}}, %{{.*}} : i16
// CHECK:         arith.cmpi ult, %{{.*}}, %{{.*}} : i16
// CHECK:         arith.maxsi %{{.*}}, %{{.*}} : i64
// CHECK:         arith.cmpi sge, %{{.*}}, %{{.*}} : i64
func.func @ordering(%a: tensor<4xui16>, %b: tensor<4xui16>, %c: tensor<4xi64>, %d: tensor<4xi64>)
    -> (tensor<4xui16>, tensor<4xui16>, tensor<4xi1>, tensor<4xi64>, tensor<4xi1>) {
  %0 = gs.max %a, %b : tensor<4xui16>, tensor<4xui16>
  %1 = gs.min %a, %b : tensor<4xui16>, tensor<4xui16>
  %2 = gs.compare lt, %a, %b : tensor<4xui16>, tensor<4xui16>
  %3 = gs.max %c, %d : tensor<4xi64>, tensor<4xi64>
  %4 = gs.compare ge, %c, %d : tensor<4xi64>, tensor<4xi64>
  return %0, %1, %2, %3, %4 : tensor<4xui16>, tensor<4xui16>, tensor<4xi1>, tensor<4xi64>, tensor<4xi1>
}

// -----

// Casts widen by the source's signedness.
// CHECK-LABEL: func.func @casts(
// CHECK:         arith.uitofp %{{.*}} : i8 to f32
// CHECK:         arith.sitofp %{{.*}} : i8 to f32
// CHECK:         arith.extui %{{.*}} : i16 to i64
// CHECK:         arith.extsi %{{.*}} : i16 to i64
// CHECK:         arith.fptoui %{{.*}} : f32 to i8
// CHECK:         arith.trunci %{{.*}} : i64 to i32
// CHECK:         linalg.generic
// CHECK-NOT:       arith.
// CHECK:           linalg.yield
func.func @casts(%u8: tensor<4xui8>, %i8: tensor<4xi8>, %u16: tensor<4xui16>,
                 %i16: tensor<4xi16>, %f: tensor<4xf32>, %i64: tensor<4xi64>,
                 %u32: tensor<4xui32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi64>, tensor<4xi64>, tensor<4xui8>, tensor<4xui32>, tensor<4xi32>) {
  %0 = gs.cast %u8 : tensor<4xui8> to tensor<4xf32>
  %1 = gs.cast %i8 : tensor<4xi8> to tensor<4xf32>
  %2 = gs.cast %u16 : tensor<4xui16> to tensor<4xi64>
  %3 = gs.cast %i16 : tensor<4xi16> to tensor<4xi64>
  %4 = gs.cast %f : tensor<4xf32> to tensor<4xui8>
  %5 = gs.cast %i64 : tensor<4xi64> to tensor<4xui32>
  // Same width: the same bits.
  %6 = gs.cast %u32 : tensor<4xui32> to tensor<4xi32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<4xf32>, tensor<4xf32>, tensor<4xi64>, tensor<4xi64>, tensor<4xui8>, tensor<4xui32>, tensor<4xi32>
}

// -----

// Windows and reductions start from the type's least value: 0 unsigned.
// CHECK-LABEL: func.func @max_pool_and_reduce(
// CHECK-SAME:      %[[X:.*]]: tensor<1x1x4x4xi8>)
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i8
// CHECK:         linalg.fill ins(%[[ZERO]] : i8) outs(%{{.*}} : tensor<1x1x2x2xi8>)
// CHECK:         linalg.generic
// CHECK:           arith.maxui %{{.*}}, %{{.*}} : i8
// CHECK:         %[[ZERO2:.*]] = arith.constant 0 : i8
// CHECK:         linalg.fill ins(%[[ZERO2]] : i8)
// CHECK:         linalg.generic
// CHECK:           arith.maxui %{{.*}}, %{{.*}} : i8
func.func @max_pool_and_reduce(%x: tensor<1x1x4x4xui8>) -> (tensor<1x1x2x2xui8>, tensor<1x1xui8>) {
  %0 = gs.max_pool %x <{kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : tensor<1x1x4x4xui8>
  %1 = gs.reduce_max %x <{axes = array<i64: 2, 3>}> : tensor<1x1x4x4xui8>
  return %0, %1 : tensor<1x1x2x2xui8>, tensor<1x1xui8>
}

// -----

// Constants keep their bits; shape ops and selects only change the type.
// CHECK-LABEL: func.func @constant_and_shape(
// CHECK-SAME:      %[[X:.*]]: tensor<4xi8>, %[[M:.*]]: tensor<4xi1>) -> tensor<2x2xi8>
// CHECK:         %[[C:.*]] = arith.constant dense<[1, 2, -1, -128]> : tensor<4xi8>
// CHECK:         %[[S:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[M]], %[[X]], %[[C]] : tensor<4xi1>, tensor<4xi8>, tensor<4xi8>)
// CHECK:         %[[R:.*]] = tensor.expand_shape %[[S]] {{\[\[}}0, 1]] output_shape [2, 2] : tensor<4xi8> into tensor<2x2xi8>
// CHECK:         return %[[R]] : tensor<2x2xi8>
func.func @constant_and_shape(%x: tensor<4xui8>, %m: tensor<4xi1>) -> tensor<2x2xui8> {
  %c = gs.constant dense<[1, 2, 255, 128]> : tensor<4xui8>
  %0 = gs.where %m, %x, %c : tensor<4xi1>, tensor<4xui8>, tensor<4xui8>
  %1 = gs.reshape %0 : tensor<4xui8> -> tensor<2x2xui8>
  return %1 : tensor<2x2xui8>
}
