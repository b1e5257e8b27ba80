// A weight gradient's unscaling: x / alpha, alpha known at run time.
func.func @unscale(%x: tensor<4096xf32>, %alpha: tensor<f32>) -> tensor<4096xf32> {
  %s = tensor.extract %alpha[] : tensor<f32>
  %r = gs.unscale %x, %s : tensor<4096xf32>
  return %r : tensor<4096xf32>
}

// The same where alpha is known to be a power of two: a multiplication by
// its reciprocal.
func.func @unscale_power_of_two(%x: tensor<4096xf32>, %alpha: tensor<f32>) -> tensor<4096xf32> {
  %s = tensor.extract %alpha[] : tensor<f32>
  %r = gs.unscale %x, %s power_of_two : tensor<4096xf32>
  return %r : tensor<4096xf32>
}
