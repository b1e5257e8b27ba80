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

// Windows (o + k) are left as they are. A broadcast along unit dimensions
// by constant indices (a 1 x C x 1 x 1 scale read at (0, c, 0, 0)) is read
// without them, as C, so that the rows merge (a channel's 4 x 5 positions);
// one by a constant index into a longer dimension stays.

// CHECK-DAG: #[[$ROWS:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$CHANNEL:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @window(
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<1x2x10x10xf32>, tensor<3x3xf32>) outs(%{{.*}} : tensor<1x2x8x8xf32>)
// CHECK-LABEL: func.func @channel_broadcast(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x4x5xf32>, %[[SCALE:.*]]: tensor<1x3x1x1xf32>)
// CHECK:         %[[CHANNELS:.*]] = tensor.collapse_shape %[[SCALE]] {{\[}}[0, 1, 2, 3]] : tensor<1x3x1x1xf32> into tensor<3xf32>
// CHECK:         %[[XR:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0], [1], [2, 3]] : tensor<2x3x4x5xf32> into tensor<2x3x20xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[$ROWS]], #[[$CHANNEL]], #[[$ROWS]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[XR]], %[[CHANNELS]] : tensor<2x3x20xf32>, tensor<3xf32>) outs(%{{.*}} : tensor<2x3x20xf32>)
// CHECK-LABEL: func.func @first_row_broadcast(
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x3x4x5xf32>, tensor<1x3x2x1xf32>) outs(%{{.*}} : tensor<2x3x4x5xf32>)
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
func.func @first_row_broadcast(%x: tensor<2x3x4x5xf32>, %scale: tensor<1x3x2x1xf32>) -> tensor<2x3x4x5xf32> {
  %e = tensor.empty() : tensor<2x3x4x5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (0, c, 0, 0)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %scale : tensor<2x3x4x5xf32>, tensor<1x3x2x1xf32>) outs(%e : tensor<2x3x4x5xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  } -> tensor<2x3x4x5xf32>
  return %r : tensor<2x3x4x5xf32>
}

// -----

// Counts over a whole tensor (gs.cast_stats' counters, exact in any order):
// the four reduction loops merge into one, which LLVM vectorizes where
// it kept each row of 7 apart. A floating-point sum is left in its loops
// (LLVM keeps it in order and scalar either way; gs-split-reductions gives
// the large ones lanes), even beside a maximum.

// CHECK-DAG: #[[$ELEMENT:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[$SCALAR:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @counts(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x7x7xf32>
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1, 2, 3]] : tensor<2x3x7x7xf32> into tensor<294xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[$ELEMENT]], #[[$SCALAR]], #[[$SCALAR]]], iterator_types = ["reduction"]}
// CHECK-SAME:        ins(%[[FLAT]] : tensor<294xf32>)
// CHECK-LABEL: func.func @sum_and_max(
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "reduction", "reduction", "reduction"]
// CHECK-SAME:        ins(%{{.*}} : tensor<2x3x7x7xf32>)
func.func @counts(%x: tensor<2x3x7x7xf32>, %nonzeros: tensor<i32>, %finite: tensor<i1>) -> (tensor<i32>, tensor<i1>) {
  %r:2 = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> ()>, affine_map<(n, c, h, w) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%x : tensor<2x3x7x7xf32>) outs(%nonzeros, %finite : tensor<i32>, tensor<i1>) {
  ^bb0(%in: f32, %count: i32, %all: i1):
    %zero = arith.constant 0.0 : f32
    %inf = arith.constant 0x7F800000 : f32
    %nz = arith.cmpf une, %in, %zero : f32
    %one = arith.extui %nz : i1 to i32
    %c = arith.addi %count, %one : i32
    %a = math.absf %in : f32
    %f = arith.cmpf olt, %a, %inf : f32
    %both = arith.andi %all, %f : i1
    linalg.yield %c, %both : i32, i1
  } -> (tensor<i32>, tensor<i1>)
  return %r#0, %r#1 : tensor<i32>, tensor<i1>
}
func.func @sum_and_max(%x: tensor<2x3x7x7xf32>, %sum: tensor<f64>, %max: tensor<f64>) -> (tensor<f64>, tensor<f64>) {
  %r:2 = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> ()>, affine_map<(n, c, h, w) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%x : tensor<2x3x7x7xf32>) outs(%sum, %max : tensor<f64>, tensor<f64>) {
  ^bb0(%in: f32, %s: f64, %m: f64):
    %w = arith.extf %in : f32 to f64
    %sq = arith.mulf %w, %w : f64
    %s2 = arith.addf %s, %sq : f64
    %a = math.absf %w : f64
    %m2 = arith.maximumf %m, %a : f64
    linalg.yield %s2, %m2 : f64, f64
  } -> (tensor<f64>, tensor<f64>)
  return %r#0, %r#1 : tensor<f64>, tensor<f64>
}

// -----

// A rounding to FP16 fused with the counting of it (gs-fuse-siblings): the
// rounded tensor, written at every point, is no reduction, and the loops
// merge as the counts' alone do.

// CHECK-DAG: #[[$ELEMENT:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[$SCALAR:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @round_and_count(
// CHECK:         linalg.generic {indexing_maps = [#[[$ELEMENT]], #[[$ELEMENT]], #[[$SCALAR]]], iterator_types = ["reduction"]}
// CHECK-SAME:        ins(%{{.*}} : tensor<294xf32>) outs(%{{.*}}, %{{.*}} : tensor<294xf16>, tensor<i32>)
func.func @round_and_count(%x: tensor<2x3x7x7xf32>, %half: tensor<2x3x7x7xf16>, %flushed: tensor<i32>) -> (tensor<2x3x7x7xf16>, tensor<i32>) {
  %r:2 = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%x : tensor<2x3x7x7xf32>) outs(%half, %flushed : tensor<2x3x7x7xf16>, tensor<i32>) {
  ^bb0(%in: f32, %out: f16, %count: i32):
    %h = arith.truncf %in : f32 to f16
    %zero = arith.constant 0.0 : f16
    %z = arith.cmpf oeq, %h, %zero : f16
    %one = arith.extui %z : i1 to i32
    %c = arith.addi %count, %one : i32
    linalg.yield %h, %c : f16, i32
  } -> (tensor<2x3x7x7xf16>, tensor<i32>)
  return %r#0, %r#1 : tensor<2x3x7x7xf16>, tensor<i32>
}

// -----

// col2im's add of one kernel position into a strided slice of the output,
// in place: neither the strided target nor the contribution (a slice of
// 27 of 28 columns) lies contiguously along the rows, so their collapse
// would bufferize into copies; the loops stay.

// CHECK-LABEL: func.func @strided_target(
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// CHECK-SAME:        ins(%{{.*}} : tensor<8x4x27x27xf32>) outs(%{{.*}} : tensor<8x4x27x27xf32>)
func.func @strided_target(%cols: tensor<8x4x3x3x28x28xf32>, %acc: tensor<8x4x56x56xf32>) -> tensor<8x4x56x56xf32> {
  %c = tensor.extract_slice %cols[0, 0, 0, 0, 1, 1] [8, 4, 1, 1, 27, 27] [1, 1, 1, 1, 1, 1] : tensor<8x4x3x3x28x28xf32> to tensor<8x4x27x27xf32>
  %t = tensor.extract_slice %acc[0, 0, 1, 1] [8, 4, 27, 27] [1, 1, 2, 2] : tensor<8x4x56x56xf32> to tensor<8x4x27x27xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<8x4x27x27xf32>) outs(%t : tensor<8x4x27x27xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  } -> tensor<8x4x27x27xf32>
  %r = tensor.insert_slice %s into %acc[0, 0, 1, 1] [8, 4, 27, 27] [1, 1, 2, 2] : tensor<8x4x27x27xf32> into tensor<8x4x56x56xf32>
  return %r : tensor<8x4x56x56xf32>
}

// -----

// A slice of 2 of 4 channels of every image is contiguous along each
// image's channels, rows and columns, not across images: those three loops
// merge, the batch's stays. A fill computed into such a slice lies in it
// (the fill's result is its destination's buffer).

// CHECK-LABEL: func.func @channel_slice(
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK-SAME:        ins(%{{.*}} : tensor<8x168xf32>) outs(%{{.*}} : tensor<8x168xf32>)
func.func @channel_slice(%x: tensor<8x4x12x7xf32>, %y: tensor<8x4x12x7xf32>) -> tensor<8x2x12x7xf32> {
  %channels = tensor.extract_slice %x[0, 1, 0, 0] [8, 2, 12, 7] [1, 1, 1, 1] : tensor<8x4x12x7xf32> to tensor<8x2x12x7xf32>
  %target = tensor.extract_slice %y[0, 2, 0, 0] [8, 2, 12, 7] [1, 1, 1, 1] : tensor<8x4x12x7xf32> to tensor<8x2x12x7xf32>
  %zero = arith.constant 0.0 : f32
  %zeros = linalg.fill ins(%zero : f32) outs(%target : tensor<8x2x12x7xf32>) -> tensor<8x2x12x7xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%channels : tensor<8x2x12x7xf32>) outs(%zeros : tensor<8x2x12x7xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  } -> tensor<8x2x12x7xf32>
  return %r : tensor<8x2x12x7xf32>
}

// -----

// A slice of whole images merges all its loops.

// CHECK-LABEL: func.func @image_slice(
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel"]
// CHECK-SAME:        ins(%{{.*}} : tensor<1344xf32>) outs(%{{.*}} : tensor<1344xf32>)
func.func @image_slice(%x: tensor<8x4x12x7xf32>) -> tensor<4x4x12x7xf32> {
  %images = tensor.extract_slice %x[2, 0, 0, 0] [4, 4, 12, 7] [1, 1, 1, 1] : tensor<8x4x12x7xf32> to tensor<4x4x12x7xf32>
  %e = tensor.empty() : tensor<4x4x12x7xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%images : tensor<4x4x12x7xf32>) outs(%e : tensor<4x4x12x7xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.mulf %in, %in : f32
    linalg.yield %a : f32
  } -> tensor<4x4x12x7xf32>
  return %r : tensor<4x4x12x7xf32>
}
