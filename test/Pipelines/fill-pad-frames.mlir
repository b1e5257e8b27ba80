// RUN: gs-opt %s --split-input-file --gs-fill-pad-frames | FileCheck %s

// A convolution's input framed by one zero row and column on each side:
// a plane (image and channel) at a time, four disjoint slabs of zeros (the
// top and bottom rows whole, the left and right columns of the interior
// rows only), then the plane's input in the interior, so that the column
// fills meet the rows the copy has just written in the cache. No fill of
// the whole padded tensor is left.

// CHECK-LABEL: func.func @frame(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x4x5xf32>)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.0
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x3x6x7xf32>
// CHECK:         %[[R:.*]] = scf.for %[[N:.*]] = %[[C0]] to %[[C2]] step %[[C1]] iter_args(%[[A:.*]] = %[[E]])
// CHECK:           scf.for %[[C:.*]] = %[[C0]] to %[[C3]] step %[[C1]] iter_args(%[[B:.*]] = %[[A]])
// CHECK:             %[[SRC:.*]] = tensor.extract_slice %[[X]][%[[N]], %[[C]], 0, 0] [1, 1, 4, 5] [1, 1, 1, 1]
// CHECK:             %[[PLANE:.*]] = tensor.extract_slice %[[B]][%[[N]], %[[C]], 0, 0] [1, 1, 6, 7] [1, 1, 1, 1]
// CHECK:             %[[TOP:.*]] = tensor.extract_slice %[[PLANE]][0, 0, 0, 0] [1, 1, 1, 7] [1, 1, 1, 1]
// CHECK:             %[[TOPF:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[TOP]] : tensor<1x1x1x7xf32>)
// CHECK:             %[[F1:.*]] = tensor.insert_slice %[[TOPF]] into %[[PLANE]][0, 0, 0, 0] [1, 1, 1, 7] [1, 1, 1, 1]
// CHECK:             tensor.extract_slice %[[F1]][0, 0, 5, 0] [1, 1, 1, 7] [1, 1, 1, 1]
// CHECK:             %[[F2:.*]] = tensor.insert_slice %{{.*}} into %[[F1]][0, 0, 5, 0] [1, 1, 1, 7] [1, 1, 1, 1]
// CHECK:             tensor.extract_slice %[[F2]][0, 0, 1, 0] [1, 1, 4, 1] [1, 1, 1, 1]
// CHECK:             %[[F3:.*]] = tensor.insert_slice %{{.*}} into %[[F2]][0, 0, 1, 0] [1, 1, 4, 1] [1, 1, 1, 1]
// CHECK:             tensor.extract_slice %[[F3]][0, 0, 1, 6] [1, 1, 4, 1] [1, 1, 1, 1]
// CHECK:             %[[F4:.*]] = tensor.insert_slice %{{.*}} into %[[F3]][0, 0, 1, 6] [1, 1, 4, 1] [1, 1, 1, 1]
// CHECK:             %[[FRAMED:.*]] = tensor.insert_slice %[[SRC]] into %[[F4]][0, 0, 1, 1] [1, 1, 4, 5] [1, 1, 1, 1]
// CHECK:             %[[NEXT:.*]] = tensor.insert_slice %[[FRAMED]] into %[[B]][%[[N]], %[[C]], 0, 0] [1, 1, 6, 7] [1, 1, 1, 1]
// CHECK:             scf.yield %[[NEXT]]
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
// padded side, a plane at a time.

// CHECK-LABEL: func.func @one_side(
// CHECK:         %[[NEG:.*]] = arith.constant 0xFC00 : f16
// CHECK:         scf.for
// CHECK:           linalg.fill ins(%[[NEG]] : f16) outs(%{{.*}} : tensor<1x1x5xf16>)
// CHECK:           linalg.fill ins(%[[NEG]] : f16) outs(%{{.*}} : tensor<1x3x2xf16>)
// CHECK-NOT:       linalg.fill
// CHECK:           tensor.insert_slice %{{.*}} into %{{.*}}[0, 1, 2] [1, 3, 3] [1, 1, 1]
func.func @one_side(%x: tensor<2x3x3xf16>) -> tensor<2x4x5xf16> {
  %neg = arith.constant 0xFC00 : f16
  %p = tensor.pad %x low[0, 1, 2] high[0, 0, 0] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %neg : f16
  } : tensor<2x3x3xf16> to tensor<2x4x5xf16>
  return %p : tensor<2x4x5xf16>
}

// -----

// Rows alone padded (the slabs are whole rows), or a source computed into
// an empty tensor for the pad alone (empty-tensor elimination computes it
// in the interior, which a plane at a time would copy): the slabs of the
// whole tensor, no loop.

// CHECK-LABEL: func.func @rows_only(
// CHECK-NOT:     scf.for
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x3x1x5xf32>)
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x3x2x5xf32>)
// CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 1, 0] [2, 3, 4, 5] [1, 1, 1, 1]
// CHECK-LABEL: func.func @computed_in_place(
// CHECK-NOT:     scf.for
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x3x6x1xf32>)
// CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 1] [2, 3, 6, 5] [1, 1, 1, 1]
func.func @rows_only(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x7x5xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 0] high[0, 0, 2, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x3x4x5xf32> to tensor<2x3x7x5xf32>
  return %p : tensor<2x3x7x5xf32>
}
func.func @computed_in_place(%x: tensor<2x3x6x5xf32>) -> tensor<2x3x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x3x6x5xf32>
  %neg = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<2x3x6x5xf32>) outs(%empty : tensor<2x3x6x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<2x3x6x5xf32>
  %p = tensor.pad %neg low[0, 0, 0, 1] high[0, 0, 0, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x3x6x5xf32> to tensor<2x3x6x6xf32>
  return %p : tensor<2x3x6x6xf32>
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
