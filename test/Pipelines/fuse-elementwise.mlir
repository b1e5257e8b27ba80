// RUN: gs-opt %s --split-input-file --gs-fuse-elementwise | FileCheck %s

// The bias and the ReLU after a GEMM become one pass over its result; the
// flatten in front of the GEMM stays a reshape, so the GEMM keeps a single
// reduction dimension (upstream's fusion would fold it in, giving a
// contraction over two reduction dimensions that is no longer a matmul).

// CHECK-LABEL: func.func @flatten_gemm_relu
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2]] : tensor<4x2x8xf32> into tensor<4x16xf32>
// CHECK: %[[MM:.+]] = linalg.matmul ins(%[[FLAT]], %{{.*}} : tensor<4x16xf32>, tensor<16x10xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[MM]], %{{.*}} : tensor<4x10xf32>, tensor<10xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: %[[SUM:.+]] = arith.addf
// CHECK-NEXT: %[[RELU:.+]] = arith.maximumf %[[SUM]]
// CHECK-NEXT: linalg.yield %[[RELU]]
// CHECK-NOT: linalg.generic
func.func @flatten_gemm_relu(%x: tensor<4x2x8xf32>, %w: tensor<16x10xf32>, %bias: tensor<10xf32>) -> tensor<4x10xf32> {
  %flat = tensor.collapse_shape %x [[0], [1, 2]] : tensor<4x2x8xf32> into tensor<4x16xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x10xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x10xf32>) -> tensor<4x10xf32>
  %mm = linalg.matmul ins(%flat, %w : tensor<4x16xf32>, tensor<16x10xf32>) outs(%init : tensor<4x10xf32>) -> tensor<4x10xf32>
  %biased = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%mm, %bias : tensor<4x10xf32>, tensor<10xf32>) outs(%empty : tensor<4x10xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x10xf32>
  %relu = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%biased : tensor<4x10xf32>) outs(%empty : tensor<4x10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x10xf32>
  return %relu : tensor<4x10xf32>
}

// -----

// A producer with two users is not fused into either: it would be
// computed twice.

// CHECK-LABEL: func.func @shared_producer
// CHECK: %[[EXP:.+]] = linalg.generic
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} ins(%[[EXP]] : tensor<8xf32>)
// CHECK: arith.negf
// CHECK: linalg.generic {{.*}} ins(%[[EXP]] : tensor<8xf32>)
// CHECK: arith.mulf
func.func @shared_producer(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %empty = tensor.empty() : tensor<8xf32>
  %exp = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%empty : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  } -> tensor<8xf32>
  %neg = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%exp : tensor<8xf32>) outs(%empty : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  %sq = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%exp : tensor<8xf32>) outs(%empty : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %neg, %sq : tensor<8xf32>, tensor<8xf32>
}
