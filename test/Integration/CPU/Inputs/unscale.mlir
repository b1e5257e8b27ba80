// A weight gradient's unscaling: x / alpha, alpha known at run time.
func.func @unscale(%x: tensor<4096xf32>, %alpha: tensor<f32>) -> tensor<4096xf32> {
  %s = tensor.extract %alpha[] : tensor<f32>
  %r = gs.unscale %x, %s : tensor<4096xf32>
  return %r : tensor<4096xf32>
}
