// Reductions gs-linalg-to-gpu computes in register blocks of points.

// An NCHW 3x3 convolution (the eval step's FP32 convolutions): 4 images x
// 4 filters a thread, the weights loaded once for the images and the
// input once for the filters.
#in = affine_map<(n, f, y, x, c, i, j) -> (n, c, y + i, x + j)>
#w = affine_map<(n, f, y, x, c, i, j) -> (f, c, i, j)>
#out = affine_map<(n, f, y, x, c, i, j) -> (n, f, y, x)>
func.func @conv(%x: tensor<64x8x34x34xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<64x16x32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x16x32x32xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x16x32x32xf32>) -> tensor<64x16x32x32xf32>
  %y = linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<64x8x34x34xf32>, tensor<16x8x3x3xf32>) outs(%zeros : tensor<64x16x32x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<64x16x32x32xf32>
  return %y : tensor<64x16x32x32xf32>
}

// A GEMM from an initial value, with a second output (the largest product
// magnitude): 270 rows in blocks of 3 (4 does not divide them), a guarded
// last block of threads.
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @gemm(%a: tensor<270x40xf32>, %b: tensor<40x1000xf32>, %init: tensor<270x1000xf32>) -> (tensor<270x1000xf32>, tensor<270x1000xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<270x1000xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%empty : tensor<270x1000xf32>) -> tensor<270x1000xf32>
  %r:2 = linalg.generic {indexing_maps = [#a, #b, #c, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<270x40xf32>, tensor<40x1000xf32>) outs(%init, %zeros : tensor<270x1000xf32>, tensor<270x1000xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32, %big: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    %m = math.absf %p : f32
    %l = arith.maximumf %big, %m : f32
    linalg.yield %s, %l : f32, f32
  } -> (tensor<270x1000xf32>, tensor<270x1000xf32>)
  return %r#0, %r#1 : tensor<270x1000xf32>, tensor<270x1000xf32>
}
