// RUN: gs-opt %s --split-input-file --gs-collapse-inner-loops | FileCheck %s

// A sum over the batch into a lane per channel and position (a
// batch-normalization statistic after gs-split-reductions): the channel and
// position loops, contiguous in both operands, merge into one loop of 120
// lanes, and the batch's 8 steps move inside it (each lane sums them in
// order, in registers, and is written once).

// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[$LANE:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @batch_sums(
// CHECK-SAME:      %[[X:.*]]: tensor<8x4x6x5xf32>, %[[INIT:.*]]: tensor<4x6x5xf64>)
// CHECK:         %[[XM:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0], [1, 2, 3]] : tensor<8x4x6x5xf32> into tensor<8x120xf32>
// CHECK:         %[[LANES:.*]] = tensor.collapse_shape %[[INIT]] {{\[}}[0, 1, 2]] : tensor<4x6x5xf64> into tensor<120xf64>
// CHECK:         %[[SUMS:.*]] = linalg.generic {indexing_maps = [#[[$IN]], #[[$LANE]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME:        ins(%[[XM]] : tensor<8x120xf32>) outs(%[[LANES]] : tensor<120xf64>)
// CHECK:           arith.extf
// CHECK:           arith.addf
// CHECK:         %[[R:.*]] = tensor.expand_shape %[[SUMS]] {{\[}}[0, 1, 2]] output_shape [4, 6, 5]
// CHECK:         return %[[R]]
func.func @batch_sums(%x: tensor<8x4x6x5xf32>, %init: tensor<4x6x5xf64>) -> tensor<4x6x5xf64> {
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c, h, w)>], iterator_types = ["reduction", "parallel", "parallel", "parallel"]} ins(%x : tensor<8x4x6x5xf32>) outs(%init : tensor<4x6x5xf64>) {
  ^bb0(%in: f32, %out: f64):
    %e = arith.extf %in : f32 to f64
    %s = arith.addf %e, %out : f64
    linalg.yield %s : f64
  } -> tensor<4x6x5xf64>
  return %r : tensor<4x6x5xf64>
}

// -----

// Over more steps than 16 the reduction stays outside (LLVM would not
// unroll it, and could vectorize neither loop).

// CHECK-LABEL: func.func @long_sums(
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK-SAME:        ins(%{{.*}} : tensor<32x30xf32>) outs(%{{.*}} : tensor<30xf32>)
func.func @long_sums(%x: tensor<32x5x6xf32>, %init: tensor<5x6xf32>) -> tensor<5x6xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(n, h, w) -> (n, h, w)>, affine_map<(n, h, w) -> (h, w)>], iterator_types = ["reduction", "parallel", "parallel"]} ins(%x : tensor<32x5x6xf32>) outs(%init : tensor<5x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<5x6xf32>
  return %r : tensor<5x6xf32>
}

// -----

// Elementwise ops merge all their loops; a transposed operand keeps the
// run to the loops it reads contiguously (the last two here).

// CHECK-LABEL: func.func @elementwise(
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel"]
// CHECK-SAME:        ins(%{{.*}}, %{{.*}} : tensor<210xf32>, tensor<210xf32>) outs(%{{.*}} : tensor<210xf32>)
// CHECK-LABEL: func.func @transposed_operand(
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK-SAME:        ins(%{{.*}}, %{{.*}} : tensor<5x42xf32>, tensor<42x5xf32>) outs(%{{.*}} : tensor<5x42xf32>)
func.func @elementwise(%a: tensor<5x6x7xf32>, %b: tensor<5x6x7xf32>) -> tensor<5x6x7xf32> {
  %e = tensor.empty() : tensor<5x6x7xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (i, j, k)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%a, %b : tensor<5x6x7xf32>, tensor<5x6x7xf32>) outs(%e : tensor<5x6x7xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<5x6x7xf32>
  return %r : tensor<5x6x7xf32>
}
func.func @transposed_operand(%a: tensor<5x6x7xf32>, %b: tensor<6x7x5xf32>) -> tensor<5x6x7xf32> {
  %e = tensor.empty() : tensor<5x6x7xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (j, k, i)>, affine_map<(i, j, k) -> (i, j, k)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%a, %b : tensor<5x6x7xf32>, tensor<6x7x5xf32>) outs(%e : tensor<5x6x7xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<5x6x7xf32>
  return %r : tensor<5x6x7xf32>
}

// -----

// Windows (o + k) and broadcasts by constant indices are left as they are.

// CHECK-LABEL: func.func @window(
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<1x2x10x10xf32>, tensor<3x3xf32>) outs(%{{.*}} : tensor<1x2x8x8xf32>)
// CHECK-LABEL: func.func @channel_broadcast(
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x3x4x5xf32>, tensor<1x3x1x1xf32>) outs(%{{.*}} : tensor<2x3x4x5xf32>)
func.func @window(%x: tensor<1x2x10x10xf32>, %init: tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32> {
  %w = tensor.empty() : tensor<3x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>, affine_map<(n, c, kh, kw, oh, ow) -> (kh, kw)>, affine_map<(n, c, kh, kw, oh, ow) -> (n, c, oh, ow)>], iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel", "parallel"]} ins(%x, %w : tensor<1x2x10x10xf32>, tensor<3x3xf32>) outs(%init : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %unused: f32, %out: f32):
    %m = arith.maximumf %in, %out : f32
    linalg.yield %m : f32
  } -> tensor<1x2x8x8xf32>
  return %r : tensor<1x2x8x8xf32>
}
func.func @channel_broadcast(%x: tensor<2x3x4x5xf32>, %scale: tensor<1x3x1x1xf32>) -> tensor<2x3x4x5xf32> {
  %e = tensor.empty() : tensor<2x3x4x5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (0, c, 0, 0)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %scale : tensor<2x3x4x5xf32>, tensor<1x3x1x1xf32>) outs(%e : tensor<2x3x4x5xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  } -> tensor<2x3x4x5xf32>
  return %r : tensor<2x3x4x5xf32>
}
