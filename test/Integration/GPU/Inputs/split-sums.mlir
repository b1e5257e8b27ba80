// Floating-point sums gs-split-reductions splits into lanes: batch
// normalization's per-channel sum of x and of x^2 (f64 accumulators) and a
// full f32 sum of |x| with its maximum (an order-independent combiner in
// the same op).
#x = affine_map<(n, c, h, w) -> (n, c, h, w)>
#channel = affine_map<(n, c, h, w) -> (c)>
#all = affine_map<(n, c, h, w) -> ()>
func.func @sums(%x: tensor<64x8x28x28xf32>) -> (tensor<8xf64>, tensor<8xf64>, tensor<f32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f64
  %zero32 = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8xf64>
  %init = linalg.fill ins(%zero : f64) outs(%empty : tensor<8xf64>) -> tensor<8xf64>
  %channel:2 = linalg.generic {indexing_maps = [#x, #channel, #channel], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%x : tensor<64x8x28x28xf32>) outs(%init, %init : tensor<8xf64>, tensor<8xf64>) {
  ^bb0(%a: f32, %sum: f64, %squares: f64):
    %wide = arith.extf %a : f32 to f64
    %square = arith.mulf %wide, %wide : f64
    %s = arith.addf %sum, %wide : f64
    %q = arith.addf %square, %squares : f64
    linalg.yield %s, %q : f64, f64
  } -> (tensor<8xf64>, tensor<8xf64>)
  %scalar = tensor.empty() : tensor<f32>
  %init32 = linalg.fill ins(%zero32 : f32) outs(%scalar : tensor<f32>) -> tensor<f32>
  %all:2 = linalg.generic {indexing_maps = [#x, #all, #all], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%x : tensor<64x8x28x28xf32>) outs(%init32, %init32 : tensor<f32>, tensor<f32>) {
  ^bb0(%a: f32, %sum: f32, %max: f32):
    %abs = math.absf %a : f32
    %s = arith.addf %sum, %abs : f32
    %m = arith.maximumf %max, %abs : f32
    linalg.yield %s, %m : f32, f32
  } -> (tensor<f32>, tensor<f32>)
  return %channel#0, %channel#1, %all#0, %all#1 : tensor<8xf64>, tensor<8xf64>, tensor<f32>, tensor<f32>
}
