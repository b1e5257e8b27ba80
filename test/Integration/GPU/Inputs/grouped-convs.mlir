// Grouped convolutions: ResNeXt-101 32x8d's first-stage 3x3 convolution
// at batch 8 (32 groups of 8 channels) and its data gradient, and a weight
// gradient's correlation over 64 images split into 16 groups of 4 (the
// BatchNorm CNN's first convolution: one input channel, 8 filters; the
// kernel reads the output gradient's filters as they are).
func.func @resnext(%x: tensor<8x256x56x56xf16>, %w: tensor<256x8x3x3xf16>) -> tensor<8x256x56x56xf16> {
  %y = gs.conv %x, %w {group = 32 : i64, pads = array<i64: 1, 1, 1, 1>} : tensor<8x256x56x56xf16>, tensor<256x8x3x3xf16> -> tensor<8x256x56x56xf16>
  return %y : tensor<8x256x56x56xf16>
}
func.func @resnext_data_gradient(%dy: tensor<8x256x56x56xf16>, %w: tensor<256x8x3x3xf16>) -> tensor<8x256x56x56xf32> {
  %dx = gs.conv_transpose %dy, %w {group = 32 : i64, pads = array<i64: 1, 1, 1, 1>} : tensor<8x256x56x56xf16>, tensor<256x8x3x3xf16> -> tensor<8x256x56x56xf32>
  return %dx : tensor<8x256x56x56xf32>
}
func.func @split_weight_gradient(%x: tensor<1x64x28x28xf16>, %dy: tensor<8x64x28x28xf16>) -> tensor<1x128x3x3xf32> {
  %parts = gs.reshape %dy : tensor<8x64x28x28xf16> -> tensor<8x16x4x28x28xf16>
  %first = gs.transpose %parts, [1, 0, 2, 3, 4] : tensor<8x16x4x28x28xf16>
  %filters = gs.reshape %first : tensor<16x8x4x28x28xf16> -> tensor<128x4x28x28xf16>
  %dw = gs.conv %x, %filters {group = 16 : i64, pads = array<i64: 1, 1, 1, 1>} : tensor<1x64x28x28xf16>, tensor<128x4x28x28xf16> -> tensor<1x128x3x3xf32>
  return %dw : tensor<1x128x3x3xf32>
}
