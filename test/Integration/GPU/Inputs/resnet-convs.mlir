// ResNet-18's 3x3 convolutions at batch 8: a 64-channel stage's forward
// convolution, its data gradient, its weight gradient, and the strided
// first convolution of the next stage.
func.func @forward(%x: tensor<8x64x56x56xf16>, %w: tensor<64x64x3x3xf16>) -> tensor<8x64x56x56xf16> {
  %y = gs.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : tensor<8x64x56x56xf16>, tensor<64x64x3x3xf16> -> tensor<8x64x56x56xf16>
  return %y : tensor<8x64x56x56xf16>
}
func.func @data_gradient(%dy: tensor<8x64x56x56xf16>, %w: tensor<64x64x3x3xf16>) -> tensor<8x64x56x56xf32> {
  %dx = gs.conv_transpose %dy, %w {pads = array<i64: 1, 1, 1, 1>} : tensor<8x64x56x56xf16>, tensor<64x64x3x3xf16> -> tensor<8x64x56x56xf32>
  return %dx : tensor<8x64x56x56xf32>
}
func.func @weight_gradient(%x: tensor<64x8x56x56xf16>, %dy: tensor<64x8x56x56xf16>) -> tensor<64x64x3x3xf32> {
  %dw = gs.conv %x, %dy {pads = array<i64: 1, 1, 1, 1>} : tensor<64x8x56x56xf16>, tensor<64x8x56x56xf16> -> tensor<64x64x3x3xf32>
  return %dw : tensor<64x64x3x3xf32>
}
func.func @strided(%x: tensor<8x64x56x56xf16>, %w: tensor<128x64x3x3xf16>) -> tensor<8x128x28x28xf16> {
  %y = gs.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<8x64x56x56xf16>, tensor<128x64x3x3xf16> -> tensor<8x128x28x28xf16>
  return %y : tensor<8x128x28x28xf16>
}
