// RUN: gs-opt %s --split-input-file --gs-fill-pad-frames | FileCheck %s

// A convolution's input framed by one zero row and column on each side:
// four disjoint slabs of zeros (the top and bottom rows whole, the left
// and right columns of the interior rows only), then the input in the
// interior. No fill of the whole padded tensor is left.

// CHECK-LABEL: func.func @frame(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x4x5xf32>)
// CHECK:         %[[ZERO:.*]] = arith.constant 0.0
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x3x6x7xf32>
// CHECK:         %[[TOP:.*]] = tensor.extract_slice %[[E]][0, 0, 0, 0] [2, 3, 1, 7] [1, 1, 1, 1]
// CHECK:         %[[TOPF:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[TOP]] : tensor<2x3x1x7xf32>)
// CHECK:         %[[F1:.*]] = tensor.insert_slice %[[TOPF]] into %[[E]][0, 0, 0, 0] [2, 3, 1, 7] [1, 1, 1, 1]
// CHECK:         tensor.extract_slice %[[F1]][0, 0, 5, 0] [2, 3, 1, 7] [1, 1, 1, 1]
// CHECK:         %[[F2:.*]] = tensor.insert_slice %{{.*}} into %[[F1]][0, 0, 5, 0] [2, 3, 1, 7] [1, 1, 1, 1]
// CHECK:         tensor.extract_slice %[[F2]][0, 0, 1, 0] [2, 3, 4, 1] [1, 1, 1, 1]
// CHECK:         %[[F3:.*]] = tensor.insert_slice %{{.*}} into %[[F2]][0, 0, 1, 0] [2, 3, 4, 1] [1, 1, 1, 1]
// CHECK:         tensor.extract_slice %[[F3]][0, 0, 1, 6] [2, 3, 4, 1] [1, 1, 1, 1]
// CHECK:         %[[F4:.*]] = tensor.insert_slice %{{.*}} into %[[F3]][0, 0, 1, 6] [2, 3, 4, 1] [1, 1, 1, 1]
// CHECK:         %[[R:.*]] = tensor.insert_slice %[[X]] into %[[F4]][0, 0, 1, 1] [2, 3, 4, 5] [1, 1, 1, 1]
// CHECK-NOT:     tensor.pad
// CHECK:         return %[[R]]
func.func @frame(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x6x7xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x3x4x5xf32> to tensor<2x3x6x7xf32>
  return %p : tensor<2x3x6x7xf32>
}

// -----

// Sides padded unevenly (a strided convolution's weight gradient pads the
// start only), and by another constant (max pooling's -inf): a slab per
// padded side.

// CHECK-LABEL: func.func @one_side(
// CHECK:         %[[NEG:.*]] = arith.constant 0xFC00 : f16
// CHECK:         linalg.fill ins(%[[NEG]] : f16) outs(%{{.*}} : tensor<2x1x5xf16>)
// CHECK:         linalg.fill ins(%[[NEG]] : f16) outs(%{{.*}} : tensor<2x3x2xf16>)
// CHECK-NOT:     linalg.fill
// CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[0, 1, 2] [2, 3, 3] [1, 1, 1]
func.func @one_side(%x: tensor<2x3x3xf16>) -> tensor<2x4x5xf16> {
  %neg = arith.constant 0xFC00 : f16
  %p = tensor.pad %x low[0, 1, 2] high[0, 0, 0] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %neg : f16
  } : tensor<2x3x3xf16> to tensor<2x4x5xf16>
  return %p : tensor<2x4x5xf16>
}

// -----

// A constant defined in the pad's body fills the frame too (the pattern
// driver has hoisted it out of the body).

// CHECK-LABEL: func.func @constant_in_body(
// CHECK:         %[[ONE:.*]] = arith.constant 1.0
// CHECK:         linalg.fill ins(%[[ONE]] : f32) outs(%{{.*}} : tensor<1xf32>)
// CHECK:         linalg.fill ins(%[[ONE]] : f32) outs(%{{.*}} : tensor<2xf32>)
// CHECK-NOT:     tensor.pad
func.func @constant_in_body(%x: tensor<4xf32>) -> tensor<7xf32> {
  %p = tensor.pad %x low[1] high[2] {
  ^bb0(%i: index):
    %one = arith.constant 1.0 : f32
    tensor.yield %one : f32
  } : tensor<4xf32> to tensor<7xf32>
  return %p : tensor<7xf32>
}

// -----

// A pad whose value depends on the position, of dynamic sizes, or by a
// negative amount (a crop) stays.

// CHECK-LABEL: func.func @not_constant(
// CHECK:         tensor.pad
// CHECK-LABEL: func.func @dynamic(
// CHECK:         tensor.pad
// CHECK-LABEL: func.func @negative(
// CHECK:         tensor.pad %{{.*}} low[-1] high[2]
func.func @not_constant(%x: tensor<4xf32>) -> tensor<6xf32> {
  %p = tensor.pad %x low[1] high[1] {
  ^bb0(%i: index):
    %c = arith.index_cast %i : index to i32
    %f = arith.sitofp %c : i32 to f32
    tensor.yield %f : f32
  } : tensor<4xf32> to tensor<6xf32>
  return %p : tensor<6xf32>
}
func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<?xf32> to tensor<?xf32>
  return %p : tensor<?xf32>
}
func.func @negative(%x: tensor<4xf32>) -> tensor<5xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[-1] high[2] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<4xf32> to tensor<5xf32>
  return %p : tensor<5xf32>
}
