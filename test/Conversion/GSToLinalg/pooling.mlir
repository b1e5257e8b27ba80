// RUN: gs-opt %s --split-input-file --convert-gs-to-linalg | FileCheck %s

// Pooling.cpp: windows are reduction loops of a linalg.generic over the
// padded input (loops n, c, o..., k..., and the last o innermost, so that
// the loops run along output rows); the window's shape comes from an
// unread tensor.empty operand. Max pooling pads with and starts from -inf;
// average pooling sums (in f32 for f16) and divides by per-position window
// sizes known at compile time.

// CHECK-DAG: #[[$IN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d3, d5 * 2 + d4)>
// CHECK-DAG: #[[$WIN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d4)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>
// CHECK-LABEL: func.func @max_pool(
// CHECK-SAME:      %[[X:.*]]: tensor<1x3x8x8xf32>)
// CHECK:         %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[PADDED:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:           tensor.yield %[[NEGINF]] : f32
// CHECK:         } : tensor<1x3x8x8xf32> to tensor<1x3x10x10xf32>
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<1x3x4x4xf32>
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%[[E]] : tensor<1x3x4x4xf32>)
// CHECK:         %[[WINDOW:.*]] = tensor.empty() : tensor<3x3xf32>
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[$IN]], #[[$WIN]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
// CHECK-SAME:        ins(%[[PADDED]], %[[WINDOW]] : tensor<1x3x10x10xf32>, tensor<3x3xf32>) outs(%[[INIT]] : tensor<1x3x4x4xf32>)
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %{{.*}}: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[M:.*]] = arith.maximumf %[[V]], %[[ACC]] : f32
// CHECK-NEXT:      linalg.yield %[[M]] : f32
// CHECK:         return %[[R]]
func.func @max_pool(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %0 = gs.max_pool %x <{kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}> : tensor<1x3x8x8xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

// f16 max pooling stays in f16 (-inf is 0xFC00). With ceil_mode the last
// window reaches one element beyond the input: one more element of -inf
// padding at the end. Dilation 2 shows in the input map.
// CHECK-DAG: #[[$IN:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3 * 2 + d2 * 2)>
// CHECK-DAG: #[[$WIN:.+]] = affine_map<(d0, d1, d2, d3) -> (d2)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-LABEL: func.func @max_pool_f16_ceil_dilated(
// CHECK:         %[[NEGINF:.*]] = arith.constant 0xFC00 : f16
// CHECK:         %[[PADDED:.*]] = tensor.pad %{{.*}} low[0, 0, 0] high[0, 0, 1]
// CHECK:           tensor.yield %[[NEGINF]] : f16
// CHECK:         } : tensor<1x1x6xf16> to tensor<1x1x7xf16>
// CHECK:         tensor.empty() : tensor<1x1x3xf16>
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[NEGINF]] : f16) outs(%{{.*}} : tensor<1x1x3xf16>)
// CHECK:         linalg.generic {indexing_maps = [#[[$IN]], #[[$WIN]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
// CHECK-SAME:        ins(%[[PADDED]], %{{.*}} : tensor<1x1x7xf16>, tensor<2xf32>) outs(%[[INIT]] : tensor<1x1x3xf16>)
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f16, %{{.*}}: f32, %[[ACC:.*]]: f16):
// CHECK-NEXT:      arith.maximumf %[[V]], %[[ACC]] : f16
func.func @max_pool_f16_ceil_dilated(%x: tensor<1x1x6xf16>) -> tensor<1x1x3xf16> {
  %0 = gs.max_pool %x <{kernel_shape = array<i64: 2>, strides = array<i64: 2>, dilations = array<i64: 2>, ceil_mode}> : tensor<1x1x6xf16>
  return %0 : tensor<1x1x3xf16>
}

// -----

// Without count_include_pad the divisor counts only input elements: 3x3
// windows at stride 2 with one element of padding cover 2 or 3 input
// elements per dimension.
// CHECK-DAG: #[[$IN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d3, d5 * 2 + d4)>
// CHECK-DAG: #[[$ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$SPATIAL:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-LABEL: func.func @avg_pool(
// CHECK-SAME:      %[[X:.*]]: tensor<1x1x4x4xf32>)
// CHECK:         %[[PADV:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[PADDED:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:           tensor.yield %[[PADV]] : f32
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<1x1x2x2xf32>)
// CHECK:         %[[SUMS:.*]] = linalg.generic {indexing_maps = [#[[$IN]], #{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
// CHECK-SAME:        ins(%[[PADDED]], %{{.*}} : tensor<1x1x6x6xf32>, tensor<3x3xf32>) outs(%[[INIT]] : tensor<1x1x2x2xf32>)
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %{{.*}}: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[V]], %[[ACC]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK:         %[[COUNTS:.*]] = arith.constant dense<{{\[}}[4.000000e+00, 6.000000e+00], [6.000000e+00, 9.000000e+00]]> : tensor<2x2xf32>
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$SPATIAL]], #[[$ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME:        ins(%[[SUMS]], %[[COUNTS]] : tensor<1x1x2x2xf32>, tensor<2x2xf32>)
// CHECK-NEXT:    ^bb0(%[[SV:.*]]: f32, %[[CV:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[Q:.*]] = arith.divf %[[SV]], %[[CV]] : f32
// CHECK-NEXT:      linalg.yield %[[Q]] : f32
// CHECK:         return %[[R]]
func.func @avg_pool(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %0 = gs.avg_pool %x <{kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}> : tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// With count_include_pad every window counts 9; f16 sums accumulate in f32
// and round once after the division.
// CHECK-LABEL: func.func @avg_pool_f16_count_include_pad(
// CHECK:         %[[PADV:.*]] = arith.constant 0.000000e+00 : f16
// CHECK:         tensor.pad
// CHECK:           tensor.yield %[[PADV]] : f16
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<1x1x2x2xf32>)
// CHECK:         %[[SUMS:.*]] = linalg.generic
// CHECK-SAME:        ins(%{{.*}}, %{{.*}} : tensor<1x1x6x6xf16>, tensor<3x3xf32>) outs(%[[INIT]] : tensor<1x1x2x2xf32>)
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f16, %{{.*}}: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[VW:.*]] = arith.extf %[[V]] : f16 to f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[VW]], %[[ACC]] : f32
// CHECK:         %[[COUNTS:.*]] = arith.constant dense<9.000000e+00> : tensor<2x2xf32>
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%[[SUMS]], %[[COUNTS]] : tensor<1x1x2x2xf32>, tensor<2x2xf32>) outs(%{{.*}} : tensor<1x1x2x2xf16>)
// CHECK-NEXT:    ^bb0(%[[SV:.*]]: f32, %[[CV:.*]]: f32, %{{.*}}: f16):
// CHECK-NEXT:      %[[Q:.*]] = arith.divf %[[SV]], %[[CV]] : f32
// CHECK-NEXT:      %[[H:.*]] = arith.truncf %[[Q]] : f32 to f16
// CHECK-NEXT:      linalg.yield %[[H]] : f16
func.func @avg_pool_f16_count_include_pad(%x: tensor<1x1x4x4xf16>) -> tensor<1x1x2x2xf16> {
  %0 = gs.avg_pool %x <{kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, count_include_pad}> : tensor<1x1x4x4xf16>
  return %0 : tensor<1x1x2x2xf16>
}

// -----

// ceil_mode: the extra end padding (beyond the explicit pads) never counts,
// even with count_include_pad. Input 5, kernel 2, stride 2 -> windows
// [0, 1], [2, 3], [4, pad]: counts 2, 2, 1.
// CHECK-LABEL: func.func @avg_pool_ceil(
// CHECK:         tensor.pad %{{.*}} low[0, 0, 0] high[0, 0, 1]
// CHECK:         arith.constant dense<[2.000000e+00, 2.000000e+00, 1.000000e+00]> : tensor<3xf32>
func.func @avg_pool_ceil(%x: tensor<1x1x5xf32>) -> tensor<1x1x3xf32> {
  %0 = gs.avg_pool %x <{kernel_shape = array<i64: 2>, strides = array<i64: 2>, ceil_mode, count_include_pad}> : tensor<1x1x5xf32>
  return %0 : tensor<1x1x3xf32>
}

// -----

// Global average pooling: a sum over the spatial dimensions (in f64 for
// f32 data, f32 for f16), a division by their size, and a reshape to
// N x C x 1 x 1.
// CHECK-DAG: #[[$ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$NC:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-LABEL: func.func @global_avg_pool(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x4x5xf32>, %[[H:.*]]: tensor<2x3x4x5xf16>)
// CHECK:         %[[Z0:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:         %[[I0:.*]] = linalg.fill ins(%[[Z0]] : f64) outs(%{{.*}} : tensor<2x3xf64>)
// CHECK:         %[[S0:.*]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$NC]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME:        ins(%[[X]] : tensor<2x3x4x5xf32>) outs(%[[I0]] : tensor<2x3xf64>)
// CHECK-NEXT:    ^bb0(%[[V0:.*]]: f32, %[[A0:.*]]: f64):
// CHECK-NEXT:      %[[W0:.*]] = arith.extf %[[V0]] : f32 to f64
// CHECK-NEXT:      arith.addf %[[W0]], %[[A0]] : f64
// CHECK:         %[[N0:.*]] = arith.constant 2.000000e+01 : f64
// CHECK:         %[[M0:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[S0]] : tensor<2x3xf64>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK-NEXT:    ^bb0(%[[Q0:.*]]: f64, %{{.*}}: f32):
// CHECK-NEXT:      %[[D0:.*]] = arith.divf %[[Q0]], %[[N0]] : f64
// CHECK-NEXT:      arith.truncf %[[D0]] : f64 to f32
// CHECK:         %[[R0:.*]] = tensor.expand_shape %[[M0]] {{\[}}[0], [1, 2, 3]] output_shape [2, 3, 1, 1] : tensor<2x3xf32> into tensor<2x3x1x1xf32>
// CHECK:         %[[I1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK:         %[[S1:.*]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$NC]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME:        ins(%[[H]] : tensor<2x3x4x5xf16>) outs(%[[I1]] : tensor<2x3xf32>)
// CHECK-NEXT:    ^bb0(%[[V1:.*]]: f16, %[[A1:.*]]: f32):
// CHECK-NEXT:      %[[W1:.*]] = arith.extf %[[V1]] : f16 to f32
// CHECK-NEXT:      arith.addf %[[W1]], %[[A1]] : f32
// CHECK:         %[[M1:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[S1]] : tensor<2x3xf32>) outs(%{{.*}} : tensor<2x3xf16>)
// CHECK:           arith.divf
// CHECK-NEXT:      arith.truncf %{{.*}} : f32 to f16
// CHECK:         %[[R1:.*]] = tensor.expand_shape %[[M1]] {{\[}}[0], [1, 2, 3]] output_shape [2, 3, 1, 1] : tensor<2x3xf16> into tensor<2x3x1x1xf16>
// CHECK:         return %[[R0]], %[[R1]]
func.func @global_avg_pool(%x: tensor<2x3x4x5xf32>, %h: tensor<2x3x4x5xf16>)
    -> (tensor<2x3x1x1xf32>, tensor<2x3x1x1xf16>) {
  %0 = gs.global_avg_pool %x : tensor<2x3x4x5xf32>
  %1 = gs.global_avg_pool %h : tensor<2x3x4x5xf16>
  return %0, %1 : tensor<2x3x1x1xf32>, tensor<2x3x1x1xf16>
}

// -----

// Max pooling's gradient: one generic finds each window's first maximum
// (value and window position, i8 for up to 127 positions; ties go to the
// lower position, whatever the loop order), written into winners padded
// with -1 for the windows before and after the output; then each residue
// class of the input modulo the stride is one pass over its strided slice
// (the stride, 2, does not divide the size, 5, so each class along it is
// apart): elements 0, 2, 4 are element 0 of window t and element 2 of
// window t - 1 (padded: t + 1 and t), elements 1, 3 element 1 of window t.
// CHECK-DAG: #[[$ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @max_pool_grad(
// CHECK-SAME:      %[[X:.*]]: tensor<1x2x5xf32>, %[[G:.*]]: tensor<1x2x2xf32>)
// CHECK:         %[[NONE:.*]] = linalg.fill ins(%c-1_i8 : i8) outs(%{{.*}} : tensor<1x2x4xi8>)
// CHECK:         %[[INIT:.*]] = tensor.extract_slice %[[NONE]][0, 0, 1] [1, 2, 2] [1, 1, 1]
// CHECK:         %[[ARGMAX:.*]]:2 = linalg.generic
// CHECK-SAME:        iterator_types = ["parallel", "parallel", "reduction", "parallel"]
// CHECK-SAME:        ins(%[[X]], %{{.*}} : tensor<1x2x5xf32>, tensor<3xf32>) outs(%{{.*}}, %[[INIT]] : tensor<1x2x2xf32>, tensor<1x2x2xi8>)
// CHECK:           %[[GT:.*]] = arith.cmpf ogt
// CHECK:           %[[TIE:.*]] = arith.cmpf oeq
// CHECK:           %[[BEFORE:.*]] = arith.cmpi ult
// CHECK:           %[[TIEBEFORE:.*]] = arith.andi %[[TIE]], %[[BEFORE]]
// CHECK:           %[[WINS:.*]] = arith.ori %[[GT]], %[[TIEBEFORE]]
// CHECK:         %[[WINNERS:.*]] = tensor.insert_slice %[[ARGMAX]]#1 into %[[NONE]][0, 0, 1] [1, 2, 2] [1, 1, 1]
// CHECK:         %[[GRADS:.*]] = tensor.pad %[[G]] low[0, 0, 1] high[0, 0, 1]
// CHECK:         %[[DX:.*]] = bufferization.alloc_tensor() : tensor<1x2x5xf32>
// CHECK:         %[[EVEN:.*]] = tensor.extract_slice %[[DX]][0, 0, 0] [1, 2, 3] [1, 1, 2]
// CHECK:         %[[W0:.*]] = tensor.extract_slice %[[WINNERS]][0, 0, 1] [1, 2, 3] [1, 1, 1]
// CHECK:         %[[G0:.*]] = tensor.extract_slice %[[GRADS]][0, 0, 1] [1, 2, 3] [1, 1, 1]
// CHECK:         %[[W2:.*]] = tensor.extract_slice %[[WINNERS]][0, 0, 0] [1, 2, 3] [1, 1, 1]
// CHECK:         %[[G2:.*]] = tensor.extract_slice %[[GRADS]][0, 0, 0] [1, 2, 3] [1, 1, 1]
// CHECK:         %[[EVENDX:.*]] = linalg.generic {indexing_maps = [#[[$ID3]], #[[$ID3]], #[[$ID3]], #[[$ID3]], #[[$ID3]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME:        ins(%[[W0]], %[[G0]], %[[W2]], %[[G2]] : {{.*}}) outs(%[[EVEN]] : tensor<1x2x3xf32>)
// CHECK:         ^bb0(%[[WIN0:.*]]: i8, %[[GRAD0:.*]]: f32, %[[WIN2:.*]]: i8, %[[GRAD2:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:           %[[IS0:.*]] = arith.cmpi eq, %[[WIN0]], %c0_i8
// CHECK:           %[[T0:.*]] = arith.select %[[IS0]], %[[GRAD0]], %[[ZERO]]
// CHECK:           %[[S0:.*]] = arith.addf %[[ZERO]], %[[T0]]
// CHECK:           %[[IS2:.*]] = arith.cmpi eq, %[[WIN2]], %c2_i8
// CHECK:           %[[T2:.*]] = arith.select %[[IS2]], %[[GRAD2]], %[[ZERO]]
// CHECK:           %[[S2:.*]] = arith.addf %[[S0]], %[[T2]]
// CHECK:           linalg.yield %[[S2]]
// CHECK:         %[[DX1:.*]] = tensor.insert_slice %[[EVENDX]] into %[[DX]][0, 0, 0] [1, 2, 3] [1, 1, 2]
// CHECK:         %[[ODD:.*]] = tensor.extract_slice %[[DX1]][0, 0, 1] [1, 2, 2] [1, 1, 2]
// CHECK:         %[[W1:.*]] = tensor.extract_slice %[[WINNERS]][0, 0, 1] [1, 2, 2] [1, 1, 1]
// CHECK:         %[[G1:.*]] = tensor.extract_slice %[[GRADS]][0, 0, 1] [1, 2, 2] [1, 1, 1]
// CHECK:         %[[ODDDX:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[W1]], %[[G1]] : {{.*}}) outs(%[[ODD]] : tensor<1x2x2xf32>)
// CHECK:           arith.cmpi eq, %{{.*}}, %c1_i8
// CHECK:         %[[DX2:.*]] = tensor.insert_slice %[[ODDDX]] into %[[DX1]][0, 0, 1] [1, 2, 2] [1, 1, 2]
// CHECK:         return %[[DX2]]
func.func @max_pool_grad(%x: tensor<1x2x5xf32>, %g: tensor<1x2x2xf32>) -> tensor<1x2x5xf32> {
  %0 = gs.max_pool_grad %x, %g <{kernel_shape = array<i64: 3>, strides = array<i64: 2>}> : tensor<1x2x5xf32>, tensor<1x2x2xf32>
  return %0 : tensor<1x2x5xf32>
}

// -----

// Where the stride divides the last dimension, its classes are one pass:
// the result viewed as (..., 4, 2), the class r the last loop. Along it,
// class r is element (r + 1) mod 2 + 2j of window q + (r + 1) floordiv 2 - j
// (padded: + 1), for the j where that element is in the kernel. Rows
// (split) are a strided slice per class, their kernel rows static.
// CHECK-DAG: #[[$TERM0:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3 + (d4 + 1) floordiv 2 + 1)>
// CHECK-DAG: #[[$TERM1:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3 + (d4 + 1) floordiv 2)>
// CHECK-DAG: #[[$ID5:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @max_pool_grad_interleaved(
// CHECK:         %[[DX:.*]] = bufferization.alloc_tensor() : tensor<1x2x8x8xf32>
// CHECK:         %[[VIEW:.*]] = tensor.expand_shape %[[DX]] {{\[}}[0], [1], [2], [3, 4]] output_shape [1, 2, 8, 4, 2]
// CHECK:         %[[EVEN:.*]] = tensor.extract_slice %[[VIEW]][0, 0, 0, 0, 0] [1, 2, 4, 4, 2] [1, 1, 2, 1, 1]
// CHECK:         %[[EVENDX:.*]] = linalg.generic {indexing_maps = [#[[$TERM0]], #[[$TERM0]], #[[$TERM1]], #[[$TERM1]], #[[$ID5]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME:        outs(%[[EVEN]] : tensor<1x2x4x4x2xf32>)
// CHECK:           %[[R:.*]] = linalg.index 4 : index
// CHECK:           %[[RP:.*]] = arith.addi %[[R]], %c1
// CHECK:           %[[COL:.*]] = arith.remui %[[RP]], %c2
// CHECK:           %[[K0:.*]] = arith.addi %[[COL]], %c0
// CHECK:           %[[IN0:.*]] = arith.cmpi ult, %[[K0]], %c3
// CHECK:           %[[P0:.*]] = arith.addi %c3{{.*}}, %[[K0]]
// CHECK:           %[[AT0:.*]] = arith.index_cast %[[P0]] : index to i8
// CHECK:           %[[EQ0:.*]] = arith.cmpi eq, %{{.*}}, %[[AT0]] : i8
// CHECK:           arith.andi %[[IN0]], %[[EQ0]]
// CHECK:           %[[K1:.*]] = arith.addi %[[COL]], %c2
// CHECK:           arith.cmpi ult, %[[K1]], %c3
// CHECK:         %[[DX1:.*]] = tensor.insert_slice %[[EVENDX]] into %[[VIEW]][0, 0, 0, 0, 0] [1, 2, 4, 4, 2] [1, 1, 2, 1, 1]
// CHECK:         %[[ODD:.*]] = tensor.extract_slice %[[DX1]][0, 0, 1, 0, 0] [1, 2, 4, 4, 2] [1, 1, 2, 1, 1]
// CHECK:         %[[ODDDX:.*]] = linalg.generic
// CHECK-SAME:        outs(%[[ODD]] : tensor<1x2x4x4x2xf32>)
// CHECK:         %[[DX2:.*]] = tensor.insert_slice %[[ODDDX]] into %[[DX1]][0, 0, 1, 0, 0] [1, 2, 4, 4, 2] [1, 1, 2, 1, 1]
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[DX2]] {{\[}}[0], [1], [2], [3, 4]] : tensor<1x2x8x4x2xf32> into tensor<1x2x8x8xf32>
// CHECK:         return %[[FLAT]]
func.func @max_pool_grad_interleaved(%x: tensor<1x2x8x8xf32>, %g: tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32> {
  %0 = gs.max_pool_grad %x, %g <{kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}> : tensor<1x2x8x8xf32>, tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x8x8xf32>
}

// -----

// Where the windows tile the input (stride = kernel, no padding, the input
// a whole number of windows), each input element lies in one window: the
// gradient is one elementwise pass reading its window's winner and
// gradient at (i floordiv k), taking the gradient where the winner is its
// position in the window, (i mod k) row-major, else +0; added to +0 and
// rounded back to f16, as the gather form's one-term sum is. Overlapping
// windows (above) keep the gather form.

// CHECK-DAG: #[[$WINDOW:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 2, d3 floordiv 2)>
// CHECK-DAG: #[[$ELEMENT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @max_pool_grad_tiling(
// CHECK-SAME:      %[[X:.*]]: tensor<1x2x4x6xf16>, %[[G:.*]]: tensor<1x2x2x3xf16>)
// CHECK:         %[[ARGMAX:.*]]:2 = linalg.generic
// CHECK:         %[[DX:.*]] = linalg.generic {indexing_maps = [#[[$WINDOW]], #[[$WINDOW]], #[[$ELEMENT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME:        ins(%[[ARGMAX]]#1, %[[G]] : tensor<1x2x2x3xi8>, tensor<1x2x2x3xf16>) outs(%{{.*}} : tensor<1x2x4x6xf16>)
// CHECK:         ^bb0(%[[WINNER:.*]]: i8, %[[GRAD:.*]]: f16, %{{.*}}: f16):
// CHECK:           %[[ROW:.*]] = arith.remui %{{.*}}, %{{.*}} : index
// CHECK:           %[[COL:.*]] = arith.remui %{{.*}}, %{{.*}} : index
// CHECK:           %[[AT:.*]] = arith.addi %{{.*}}, %[[COL]] : index
// CHECK:           %[[AT8:.*]] = arith.index_cast %[[AT]] : index to i8
// CHECK:           %[[WINS:.*]] = arith.cmpi eq, %[[WINNER]], %[[AT8]] : i8
// CHECK:           %[[WIDE:.*]] = arith.extf %[[GRAD]] : f16 to f32
// CHECK:           %[[TERM:.*]] = arith.select %[[WINS]], %[[WIDE]], %[[ZERO:.*]] : f32
// CHECK:           %[[SUM:.*]] = arith.addf %[[ZERO]], %[[TERM]] : f32
// CHECK:           %[[NARROW:.*]] = arith.truncf %[[SUM]] : f32 to f16
// CHECK:           linalg.yield %[[NARROW]] : f16
// CHECK:         return %[[DX]]
func.func @max_pool_grad_tiling(%x: tensor<1x2x4x6xf16>, %g: tensor<1x2x2x3xf16>) -> tensor<1x2x4x6xf16> {
  %0 = gs.max_pool_grad %x, %g <{kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : tensor<1x2x4x6xf16>, tensor<1x2x2x3xf16>
  return %0 : tensor<1x2x4x6xf16>
}

// -----

// Average pooling's gradient divides each window's gradient by the same
// compile-time divisors as the forward (here the first window holds one
// input element and one pad), accumulating f16 in f32.

// CHECK-LABEL: func.func @avg_pool_grad(
// CHECK-SAME:      %[[G:.*]]: tensor<1x2x3xf16>)
// CHECK:         %[[DIVISORS:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 2.000000e+00]> : tensor<3xf32>
// CHECK:         %[[SUMS:.*]] = linalg.generic
// CHECK-SAME:        outs(%{{.*}} : tensor<1x2x5xf32>)
// CHECK:           %[[V:.*]] = tensor.extract %[[G]]
// CHECK:           %[[WIDE:.*]] = arith.extf %[[V]] : f16 to f32
// CHECK:           %[[D:.*]] = tensor.extract %[[DIVISORS]]
// CHECK:           arith.divf %[[WIDE]], %[[D]] : f32
// CHECK:         linalg.generic
// CHECK:           arith.truncf %{{.*}} : f32 to f16
func.func @avg_pool_grad(%g: tensor<1x2x3xf16>) -> tensor<1x2x5xf16> {
  %0 = gs.avg_pool_grad %g <{kernel_shape = array<i64: 2>, strides = array<i64: 2>, pads = array<i64: 1, 0>}> : tensor<1x2x3xf16> -> tensor<1x2x5xf16>
  return %0 : tensor<1x2x5xf16>
}
