// The weight gradient of ResNeXt-101 32x8d's first-stage 3x3 convolution
// at batch 8 (32 groups of 8 channels), as the autodiff builds it: the
// forward input rearranged into 8 images of (group, image) channels, the
// output gradient's channels first, which the kernel reads as they lie.
func.func @resnext_weight_gradient(%x: tensor<8x256x56x56xf16>, %dy: tensor<8x256x56x56xf16>) -> tensor<8x256x3x3xf32> {
  %split = gs.reshape %x : tensor<8x256x56x56xf16> -> tensor<8x32x8x56x56xf16>
  %moved = gs.transpose %split, [2, 1, 0, 3, 4] : tensor<8x32x8x56x56xf16>
  %images = gs.reshape %moved : tensor<8x32x8x56x56xf16> -> tensor<8x256x56x56xf16>
  %filters = gs.transpose %dy, [1, 0, 2, 3] : tensor<8x256x56x56xf16>
  %dw = gs.conv %images, %filters {group = 32 : i64, pads = array<i64: 1, 1, 1, 1>} : tensor<8x256x56x56xf16>, tensor<256x8x56x56xf16> -> tensor<8x256x3x3xf32>
  return %dw : tensor<8x256x3x3xf32>
}
