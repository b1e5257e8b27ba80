// RUN: gs-opt %s --split-input-file --convert-gs-to-gpu | FileCheck %s

// A grouped convolution's kernel: one implicit GEMM a group, the group
// the grid's z. Each block views its group's rows of the weight matrix
// (M x C/G x K... collapsed), input channels, output channels and biases;
// the GEMM is a group's (8 rows, 36 deep).
// CHECK-LABEL: func.func private @gs_conv_2x8x9x9_k16x3x3_o9x9_s1x1_d1x1_p1x1_g2_bias_f32_f32_nostats(
// CHECK-SAME: %[[W:[^:]+]]: memref<16x4x3x3xf16>, %[[X:[^:]+]]: memref<2x8x9x9xf16>, %{{[^:]+}}: memref<1xf32>, %[[B:[^:]+]]: memref<16xf32>, %[[Y:[^:]+]]: memref<2x16x9x9xf32>)
// CHECK: %[[TWO:.+]] = arith.constant 2 : index
// CHECK: gpu.launch blocks({{.+}}) in ({{.+}} = %{{.+}}, {{.+}} = %{{.+}}, {{.+}} = %[[TWO]])
// CHECK: %[[WM:.+]] = memref.collapse_shape %[[W]] {{\[}}[0], [1, 2, 3]] : memref<16x4x3x3xf16> into memref<16x36xf16>
// CHECK: %[[G:.+]] = gpu.block_id z
// CHECK: %[[ROWS:.+]] = arith.muli %[[G]], %{{.+}} : index
// CHECK: memref.subview %[[WM]][%[[ROWS]], 0] [8, 36] [1, 1]
// CHECK: %[[CHANNELS:.+]] = arith.muli %[[G]], %{{.+}} : index
// CHECK: memref.subview %[[X]][0, %[[CHANNELS]], 0, 0] [2, 4, 9, 9] [1, 1, 1, 1]
// CHECK: memref.subview %[[Y]][0, %{{.+}}, 0, 0] [2, 8, 9, 9] [1, 1, 1, 1]
// CHECK: memref.subview %[[B]][%{{.+}}] [8] [1]
// CHECK: nvgpu.mma.sync
func.func @grouped(%x: tensor<2x8x9x9xf16>, %w: tensor<16x4x3x3xf16>, %b: tensor<16xf32>) -> tensor<2x16x9x9xf32> {
  %y = gs.conv %x, %w, %b {group = 2 : i64, pads = array<i64: 1, 1, 1, 1>} : tensor<2x8x9x9xf16>, tensor<16x4x3x3xf16>, tensor<16xf32> -> tensor<2x16x9x9xf32>
  return %y : tensor<2x16x9x9xf32>
}

// -----

// Transposed: the weight's rows are input channels (C x M/G x K...), a
// group's rows gathered from its view.
// CHECK-LABEL: func.func private @gs_convt_2x16x9x9_k16x3x3_o9x9_s1x1_d1x1_p1x1_g2_f32_nostats(
// CHECK-SAME: %[[W:[^:]+]]: memref<16x8x3x3xf16>, %[[X:[^:]+]]: memref<2x16x9x9xf16>, %{{[^:]+}}: memref<1xf32>, %[[Y:[^:]+]]: memref<2x16x9x9xf32>)
// CHECK: %[[G:.+]] = gpu.block_id z
// CHECK: memref.subview %[[W]][%{{.+}}, 0, 0, 0] [8, 8, 3, 3] [1, 1, 1, 1]
// CHECK: memref.subview %[[X]][0, %{{.+}}, 0, 0] [2, 8, 9, 9] [1, 1, 1, 1]
// CHECK: memref.subview %[[Y]][0, %{{.+}}, 0, 0] [2, 8, 9, 9] [1, 1, 1, 1]
func.func @grouped_transposed(%dy: tensor<2x16x9x9xf16>, %w: tensor<16x8x3x3xf16>) -> tensor<2x16x9x9xf32> {
  %dx = gs.conv_transpose %dy, %w {group = 2 : i64, pads = array<i64: 1, 1, 1, 1>} : tensor<2x16x9x9xf16>, tensor<16x8x3x3xf16> -> tensor<2x16x9x9xf32>
  return %dx : tensor<2x16x9x9xf32>
}

// -----

// Groups that split one weight's input channels (a weight gradient split
// over its images): the kernel takes the M/G x C x K... weight the
// reshapes and the transpose regroup, and views a block of its columns a
// group (8 filters, 4 channels of 3x3 a group).
// CHECK-LABEL: func.func @split_weight
// CHECK-SAME: (%{{[^:]+}}: tensor<1x8x5x5xf16>, %[[W:[^:]+]]: tensor<8x8x3x3xf16>)
// CHECK: call @gs_conv_1x8x5x5_k16x3x3_o3x3_s1x1_d1x1_p0x0_g2_split_f32_nostats_entry(%[[W]],
// CHECK-LABEL: func.func private @gs_conv_1x8x5x5_k16x3x3_o3x3_s1x1_d1x1_p0x0_g2_split_f32_nostats(
// CHECK-SAME: %[[WM:[^:]+]]: memref<8x8x3x3xf16>
// CHECK: %[[MATRIX:.+]] = memref.collapse_shape %[[WM]] {{\[}}[0], [1, 2, 3]] : memref<8x8x3x3xf16> into memref<8x72xf16>
// CHECK: %[[G:.+]] = gpu.block_id z
// CHECK: %[[COLUMNS:.+]] = arith.muli %[[G]], %{{.+}} : index
// CHECK: memref.subview %[[MATRIX]][0, %[[COLUMNS]]] [8, 36] [1, 1]
func.func @split_weight(%x: tensor<1x8x5x5xf16>, %w: tensor<8x8x3x3xf16>) -> tensor<1x16x3x3xf32> {
  %parts = gs.reshape %w : tensor<8x8x3x3xf16> -> tensor<8x2x4x3x3xf16>
  %first = gs.transpose %parts, [1, 0, 2, 3, 4] : tensor<8x2x4x3x3xf16>
  %filters = gs.reshape %first : tensor<2x8x4x3x3xf16> -> tensor<16x4x3x3xf16>
  %y = gs.conv %x, %filters {group = 2 : i64} : tensor<1x8x5x5xf16>, tensor<16x4x3x3xf16> -> tensor<1x16x3x3xf32>
  return %y : tensor<1x16x3x3xf32>
}

// -----

// Another regrouping (the kernel positions moved, not the groups) is not
// such a weight: the kernel takes the grouped weight.
// CHECK-LABEL: func.func @not_split
// CHECK: call @gs_conv_1x8x5x5_k16x3x3_o3x3_s1x1_d1x1_p0x0_g2_f32_nostats_entry(%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<16x4x3x3xf16>,
func.func @not_split(%x: tensor<1x8x5x5xf16>, %w: tensor<8x8x3x3xf16>) -> tensor<1x16x3x3xf32> {
  %parts = gs.reshape %w : tensor<8x8x3x3xf16> -> tensor<8x2x4x3x3xf16>
  %moved = gs.transpose %parts, [1, 0, 2, 4, 3] : tensor<8x2x4x3x3xf16>
  %filters = gs.reshape %moved : tensor<2x8x4x3x3xf16> -> tensor<16x4x3x3xf16>
  %y = gs.conv %x, %filters {group = 2 : i64} : tensor<1x8x5x5xf16>, tensor<16x4x3x3xf16> -> tensor<1x16x3x3xf32>
  return %y : tensor<1x16x3x3xf32>
}

// -----

// A grouped convolution's weight gradient correlates the forward input
// (4 images of 2 groups of 3 channels) rearranged into 3 images of
// (group, forward image) channels: the kernel takes the forward input as
// it lies, each group all 4 of its first dimension and its own 3 of the
// second.
// CHECK-LABEL: func.func @grouped_images
// CHECK-SAME: (%[[IN:[^:]+]]: tensor<4x6x5x5xf16>, %{{[^:]+}}: tensor<16x4x3x3xf16>)
// CHECK: call @gs_conv_3x8x5x5_k16x3x3_o3x3_s1x1_d1x1_p0x0_g2_gcfirst_f32_nostats_entry(%{{.+}}, %[[IN]],
// CHECK-LABEL: func.func private @gs_conv_3x8x5x5_k16x3x3_o3x3_s1x1_d1x1_p0x0_g2_gcfirst_f32_nostats(
// CHECK-SAME: %[[X:[^:]+]]: memref<4x6x5x5xf16>
// CHECK: %[[G:.+]] = gpu.block_id z
// CHECK: %[[IMAGES:.+]] = arith.muli %[[G]], %c3 : index
// CHECK: memref.subview %[[X]][0, %[[IMAGES]], 0, 0] [4, 3, 5, 5] [1, 1, 1, 1]
func.func @grouped_images(%in: tensor<4x6x5x5xf16>, %w: tensor<16x4x3x3xf16>) -> tensor<3x16x3x3xf32> {
  %split = gs.reshape %in : tensor<4x6x5x5xf16> -> tensor<4x2x3x5x5xf16>
  %moved = gs.transpose %split, [2, 1, 0, 3, 4] : tensor<4x2x3x5x5xf16>
  %images = gs.reshape %moved : tensor<3x2x4x5x5xf16> -> tensor<3x8x5x5xf16>
  %y = gs.conv %images, %w {group = 2 : i64} : tensor<3x8x5x5xf16>, tensor<16x4x3x3xf16> -> tensor<3x16x3x3xf32>
  return %y : tensor<3x16x3x3xf32>
}

// -----

// Another rearrangement (the rows and columns swapped too) is not the
// forward input's: the kernel takes the rearranged images.
// CHECK-LABEL: func.func @not_grouped_images
// CHECK: call @gs_conv_3x8x5x5_k16x3x3_o3x3_s1x1_d1x1_p0x0_g2_f32_nostats_entry(%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<16x4x3x3xf16>, tensor<3x8x5x5xf16>,
func.func @not_grouped_images(%in: tensor<4x6x5x5xf16>, %w: tensor<16x4x3x3xf16>) -> tensor<3x16x3x3xf32> {
  %split = gs.reshape %in : tensor<4x6x5x5xf16> -> tensor<4x2x3x5x5xf16>
  %moved = gs.transpose %split, [2, 1, 0, 4, 3] : tensor<4x2x3x5x5xf16>
  %images = gs.reshape %moved : tensor<3x2x4x5x5xf16> -> tensor<3x8x5x5xf16>
  %y = gs.conv %images, %w {group = 2 : i64} : tensor<3x8x5x5xf16>, tensor<16x4x3x3xf16> -> tensor<3x16x3x3xf32>
  return %y : tensor<3x16x3x3xf32>
}
