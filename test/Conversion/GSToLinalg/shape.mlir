// RUN: gs-opt %s --split-input-file --convert-gs-to-linalg | FileCheck %s

// Shape.cpp: reshape, flatten, squeeze and unsqueeze only reinterpret the
// shape (one collapse_shape or expand_shape, or both through a 1-D tensor);
// transpose is linalg.transpose; expand a broadcasting generic; concat and
// split insert / extract slices; slice is a strided extract_slice or, when
// it walks backwards, a generic reading through an affine map; gather and
// gather_elements read with tensor.extract at normalized indices.

// CHECK-LABEL: func.func @reshapes(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x4xf32>, %[[Y:.*]]: tensor<6x4xi64>, %[[Z:.*]]: tensor<f32>)
// CHECK:         %[[R0:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK:         %[[R1:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2, 3]] output_shape [2, 3, 2, 2] : tensor<6x4xi64> into tensor<2x3x2x2xi64>
// Neither a collapse nor an expansion: through the flat shape.
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK:         %[[R2:.*]] = tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [4, 6] : tensor<24xf32> into tensor<4x6xf32>
// From a scalar: no reassociation groups.
// CHECK:         %[[R3:.*]] = tensor.expand_shape %[[Z]] [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
// CHECK:         %[[R4:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0], [1, 2]] : tensor<2x3x4xf32> into tensor<2x12xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]]
func.func @reshapes(%x: tensor<2x3x4xf32>, %y: tensor<6x4xi64>, %z: tensor<f32>)
    -> (tensor<24xf32>, tensor<2x3x2x2xi64>, tensor<4x6xf32>, tensor<1x1xf32>, tensor<2x12xf32>) {
  %0 = gs.reshape %x : tensor<2x3x4xf32> -> tensor<24xf32>
  %1 = gs.reshape %y : tensor<6x4xi64> -> tensor<2x3x2x2xi64>
  %2 = gs.reshape %x : tensor<2x3x4xf32> -> tensor<4x6xf32>
  %3 = gs.reshape %z : tensor<f32> -> tensor<1x1xf32>
  %4 = gs.flatten %x <{axis = 1 : i64}> : tensor<2x3x4xf32>
  return %0, %1, %2, %3, %4
      : tensor<24xf32>, tensor<2x3x2x2xi64>, tensor<4x6xf32>, tensor<1x1xf32>, tensor<2x12xf32>
}

// -----

// CHECK-LABEL: func.func @squeeze_unsqueeze(
// CHECK-SAME:      %[[S:.*]]: tensor<1x3x1x5xf32>, %[[A:.*]]: tensor<2x3xi1>, %[[O:.*]]: tensor<1x1xf32>)
// CHECK:         %[[R0:.*]] = tensor.collapse_shape %[[S]] {{\[}}[0, 1], [2, 3]] : tensor<1x3x1x5xf32> into tensor<3x5xf32>
// CHECK:         %[[R1:.*]] = tensor.expand_shape %[[A]] {{\[}}[0, 1], [2, 3]] output_shape [1, 2, 3, 1] : tensor<2x3xi1> into tensor<1x2x3x1xi1>
// CHECK:         %[[R2:.*]] = tensor.collapse_shape %[[O]] [] : tensor<1x1xf32> into tensor<f32>
// CHECK:         return %[[R0]], %[[R1]], %[[R2]]
func.func @squeeze_unsqueeze(%s: tensor<1x3x1x5xf32>, %a: tensor<2x3xi1>, %o: tensor<1x1xf32>)
    -> (tensor<3x5xf32>, tensor<1x2x3x1xi1>, tensor<f32>) {
  %0 = gs.squeeze %s <{axes = array<i64: 0, 2>}> : tensor<1x3x1x5xf32>
  %1 = gs.unsqueeze %a <{axes = array<i64: 0, 3>}> : tensor<2x3xi1>
  %2 = gs.squeeze %o <{axes = array<i64: 0, 1>}> : tensor<1x1xf32>
  return %0, %1, %2 : tensor<3x5xf32>, tensor<1x2x3x1xi1>, tensor<f32>
}

// -----

// CHECK-LABEL: func.func @transpose(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x4xf16>)
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4x2x3xf16>
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<2x3x4xf16>) outs(%[[E]] : tensor<4x2x3xf16>) permutation = [2, 0, 1]
// CHECK:         return %[[T]]
func.func @transpose(%x: tensor<2x3x4xf16>) -> tensor<4x2x3xf16> {
  %0 = gs.transpose %x, [2, 0, 1] : tensor<2x3x4xf16>
  return %0 : tensor<4x2x3xf16>
}

// -----

// CHECK-DAG: #[[$IN:.+]] = affine_map<(d0, d1, d2) -> (d1, 0)>
// CHECK-DAG: #[[$ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @expand(
// CHECK-SAME:      %[[X:.*]]: tensor<3x1xf32>)
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x3x5xf32>
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[$IN]], #[[$ID3]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME:        ins(%[[X]] : tensor<3x1xf32>) outs(%[[E]] : tensor<2x3x5xf32>)
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      linalg.yield %[[V]] : f32
// CHECK:         return %[[R]]
func.func @expand(%e: tensor<3x1xf32>) -> tensor<2x3x5xf32> {
  %0 = gs.expand %e : tensor<3x1xf32> -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

// Empty inputs insert nothing.
// CHECK-LABEL: func.func @concat(
// CHECK-SAME:      %[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x5xf32>, %[[C:.*]]: tensor<2x0xf32>)
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x8xf32>
// CHECK:         %[[I0:.*]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x8xf32>
// CHECK-NOT:     %[[C]]
// CHECK:         %[[I1:.*]] = tensor.insert_slice %[[B]] into %[[I0]][0, 3] [2, 5] [1, 1] : tensor<2x5xf32> into tensor<2x8xf32>
// CHECK:         return %[[I1]]
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>, %c: tensor<2x0xf32>) -> tensor<2x8xf32> {
  %0 = gs.concat %a, %c, %b <{axis = 1 : i64}> : tensor<2x3xf32>, tensor<2x0xf32>, tensor<2x5xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// An empty piece is a tensor.empty (its offset need not lie in the input).
// CHECK-LABEL: func.func @split(
// CHECK-SAME:      %[[X:.*]]: tensor<2x6xi32>)
// CHECK:         %[[P0:.*]] = tensor.extract_slice %[[X]][0, 0] [2, 1] [1, 1] : tensor<2x6xi32> to tensor<2x1xi32>
// CHECK:         %[[P1:.*]] = tensor.empty() : tensor<2x0xi32>
// CHECK:         %[[P2:.*]] = tensor.extract_slice %[[X]][0, 1] [2, 5] [1, 1] : tensor<2x6xi32> to tensor<2x5xi32>
// CHECK:         return %[[P0]], %[[P1]], %[[P2]]
func.func @split(%x: tensor<2x6xi32>) -> (tensor<2x1xi32>, tensor<2x0xi32>, tensor<2x5xi32>) {
  %0:3 = gs.split %x {axis = 1 : i64} : tensor<2x6xi32> -> tensor<2x1xi32>, tensor<2x0xi32>, tensor<2x5xi32>
  return %0#0, %0#1, %0#2 : tensor<2x1xi32>, tensor<2x0xi32>, tensor<2x5xi32>
}

// -----

// CHECK-LABEL: func.func @slice_forward(
// CHECK-SAME:      %[[X:.*]]: tensor<2x5xf32>)
// CHECK:         %[[R:.*]] = tensor.extract_slice %[[X]][0, 1] [2, 2] [1, 2] : tensor<2x5xf32> to tensor<2x2xf32>
// CHECK-NEXT:    return %[[R]]
func.func @slice_forward(%x: tensor<2x5xf32>) -> tensor<2x2xf32> {
  %0 = gs.slice %x <{starts = array<i64: 0, 1>, ends = array<i64: 2, 4>, steps = array<i64: 1, 2>}> : tensor<2x5xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// A negative step: result element i of dimension d reads input element
// start + i * step.
// CHECK-DAG: #[[$READ:.+]] = affine_map<(d0, d1, d2) -> (d0, -d1 + 2, d2 * 2)>
// CHECK-DAG: #[[$ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @slice_backward(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x4xf32>)
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[$READ]], #[[$ID3]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME:        ins(%[[X]] : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<2x3x2xf32>)
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      linalg.yield %[[V]] : f32
// CHECK:         return %[[R]]
func.func @slice_backward(%x: tensor<2x3x4xf32>) -> tensor<2x3x2xf32> {
  %0 = gs.slice %x <{starts = array<i64: 0, 2, 0>, ends = array<i64: 2, -1, 4>, steps = array<i64: 1, -1, 2>}> : tensor<2x3x4xf32>
  return %0 : tensor<2x3x2xf32>
}

// -----

// CHECK-LABEL: func.func @slice_empty(
// CHECK-NOT:     tensor.extract_slice
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x0xf32>
// CHECK-NEXT:    return %[[E]]
func.func @slice_empty(%x: tensor<2x5xf32>) -> tensor<2x0xf32> {
  %0 = gs.slice %x <{starts = array<i64: 0, 3>, ends = array<i64: 2, 3>, steps = array<i64: 1, 1>}> : tensor<2x5xf32>
  return %0 : tensor<2x0xf32>
}

// -----

// Gather along axis 1 with 2 x 5 indices: result (p, j0, j1, q) reads
// data[p, idx(indices[j0, j1]), q], where a negative index counts from the
// end and the result is clamped into [0, size).
// CHECK-DAG: #[[$IDX:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d2)>
// CHECK-DAG: #[[$ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @gather(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x4xf32>, %[[I:.*]]: tensor<2x5xi64>)
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[$IDX]], #[[$ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME:        ins(%[[I]] : tensor<2x5xi64>) outs(%{{.*}} : tensor<2x2x5x4xf32>)
// CHECK-NEXT:    ^bb0(%[[RAW:.*]]: i64, %{{.*}}: f32):
// CHECK-NEXT:      %[[P:.*]] = linalg.index 0 : index
// CHECK-NEXT:      %[[IV:.*]] = arith.index_cast %[[RAW]] : i64 to index
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[NEG:.*]] = arith.cmpi slt, %[[IV]], %[[ZERO]] : index
// CHECK-NEXT:      %[[SIZE:.*]] = arith.constant 3 : index
// CHECK-NEXT:      %[[WRAPPED:.*]] = arith.addi %[[IV]], %[[SIZE]] : index
// CHECK-NEXT:      %[[W:.*]] = arith.select %[[NEG]], %[[WRAPPED]], %[[IV]] : index
// CHECK-NEXT:      %[[LO:.*]] = arith.maxsi %[[W]], %[[ZERO]] : index
// CHECK-NEXT:      %[[LAST:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[CL:.*]] = arith.minsi %[[LO]], %[[LAST]] : index
// CHECK-NEXT:      %[[Q:.*]] = linalg.index 3 : index
// CHECK-NEXT:      %[[V:.*]] = tensor.extract %[[X]][%[[P]], %[[CL]], %[[Q]]] : tensor<2x3x4xf32>
// CHECK-NEXT:      linalg.yield %[[V]] : f32
// CHECK:         return %[[R]]
func.func @gather(%x: tensor<2x3x4xf32>, %i: tensor<2x5xi64>) -> tensor<2x2x5x4xf32> {
  %0 = gs.gather %x, %i <{axis = 1 : i64}> : tensor<2x3x4xf32>, tensor<2x5xi64>
  return %0 : tensor<2x2x5x4xf32>
}

// -----

// A rank-0 i32 index selects one row.
// CHECK-DAG: #[[$IDX:.+]] = affine_map<(d0) -> ()>
// CHECK-DAG: #[[$ID1:.+]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @gather_scalar_index(
// CHECK-SAME:      %[[X:.*]]: tensor<7x4xf16>, %[[I:.*]]: tensor<i32>)
// CHECK:         linalg.generic {indexing_maps = [#[[$IDX]], #[[$ID1]]], iterator_types = ["parallel"]}
// CHECK-SAME:        ins(%[[I]] : tensor<i32>) outs(%{{.*}} : tensor<4xf16>)
// CHECK-NEXT:    ^bb0(%[[RAW:.*]]: i32, %{{.*}}: f16):
// CHECK-NEXT:      arith.index_cast %[[RAW]] : i32 to index
// CHECK:           %[[CL:.*]] = arith.minsi
// CHECK-NEXT:      %[[Q:.*]] = linalg.index 0 : index
// CHECK-NEXT:      tensor.extract %[[X]][%[[CL]], %[[Q]]] : tensor<7x4xf16>
func.func @gather_scalar_index(%x: tensor<7x4xf16>, %i: tensor<i32>) -> tensor<4xf16> {
  %0 = gs.gather %x, %i <{axis = 0 : i64}> : tensor<7x4xf16>, tensor<i32>
  return %0 : tensor<4xf16>
}

// -----

// gather_elements: position (i, j) reads data[i, idx(indices[i, j])].
// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @gather_elements(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3xf32>, %[[I:.*]]: tensor<2x5xi64>)
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:        ins(%[[I]] : tensor<2x5xi64>) outs(%{{.*}} : tensor<2x5xf32>)
// CHECK-NEXT:    ^bb0(%[[RAW:.*]]: i64, %{{.*}}: f32):
// CHECK-NEXT:      %[[ROW:.*]] = linalg.index 0 : index
// CHECK-NEXT:      arith.index_cast %[[RAW]] : i64 to index
// CHECK:           arith.constant 3 : index
// CHECK:           %[[CL:.*]] = arith.minsi
// CHECK-NEXT:      %[[V:.*]] = tensor.extract %[[X]][%[[ROW]], %[[CL]]] : tensor<2x3xf32>
// CHECK-NEXT:      linalg.yield %[[V]] : f32
// CHECK:         return %[[R]]
func.func @gather_elements(%x: tensor<2x3xf32>, %i: tensor<2x5xi64>) -> tensor<2x5xf32> {
  %0 = gs.gather_elements %x, %i <{axis = 1 : i64}> : tensor<2x3xf32>, tensor<2x5xi64>
  return %0 : tensor<2x5xf32>
}
