// RUN: gs-opt %s --split-input-file --gs-fuse-siblings | FileCheck %s
// RUN: gs-opt %s --split-input-file --gs-fuse-siblings=same-loops=true \
// RUN:   | FileCheck %s --check-prefix=GPU

// A gradient's rounding to FP16 and the counting of that rounding (as
// gs.cast_stats lowers) read the same scaled values: one generic computes
// both, scaling each element once. Its loops are reductions (the counts'),
// the rounded tensor written at every point all the same.

// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @round_and_count(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xf32>, %[[S:.*]]: f32)
// CHECK:         %[[F:.*]]:2 = linalg.generic {indexing_maps = [#[[$ID]], #[[$ID]], #[[$SCALAR]]], iterator_types = ["reduction", "reduction"]}
// CHECK-SAME:        ins(%[[X]] : tensor<4x8xf32>) outs(%{{.*}}, %{{.*}} : tensor<4x8xf16>, tensor<i32>)
// CHECK:         ^bb0(%[[IN:.*]]: f32, %{{.*}}: f16, %[[COUNT:.*]]: i32):
// CHECK:           %[[SCALED:.*]] = arith.mulf %[[IN]], %[[S]] : f32
// CHECK-NEXT:      %[[HALF:.*]] = arith.truncf %[[SCALED]] : f32 to f16
// CHECK-NOT:       arith.mulf
// CHECK-NOT:       arith.truncf
// CHECK:           %[[NEXT:.*]] = arith.addi %[[COUNT]], %{{.*}} : i32
// CHECK:           linalg.yield %[[HALF]], %[[NEXT]] : f16, i32
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[F]]#0, %[[F]]#1
func.func @round_and_count(%x: tensor<4x8xf32>, %s: f32) -> (tensor<4x8xf16>, tensor<i32>) {
  %empty = tensor.empty() : tensor<4x8xf16>
  %half = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%empty : tensor<4x8xf16>) {
  ^bb0(%in: f32, %out: f16):
    %scaled = arith.mulf %in, %s : f32
    %h = arith.truncf %scaled : f32 to f16
    linalg.yield %h : f16
  } -> tensor<4x8xf16>
  %zero = arith.constant 0 : i32
  %init = tensor.empty() : tensor<i32>
  %fill = linalg.fill ins(%zero : i32) outs(%init : tensor<i32>) -> tensor<i32>
  %count = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%fill : tensor<i32>) {
  ^bb0(%in: f32, %acc: i32):
    %scaled = arith.mulf %in, %s : f32
    %h = arith.truncf %scaled : f32 to f16
    %zero16 = arith.constant 0.0 : f16
    %flushed = arith.cmpf oeq, %h, %zero16 : f16
    %one = arith.extui %flushed : i1 to i32
    %next = arith.addi %acc, %one : i32
    linalg.yield %next : i32
  } -> tensor<i32>
  return %half, %count : tensor<4x8xf16>, tensor<i32>
}

// -----

// Where the first op's results are read before the second op (the counts
// extracted at once), the fused op goes where the first was; the second's
// output, an empty tensor made after the first, moves up with it.

// CHECK-LABEL: func.func @fused_at_first(
// CHECK:         %[[F:.*]]:2 = linalg.generic
// CHECK-SAME:        outs(%{{.*}}, %{{.*}} : tensor<i32>, tensor<4x8xf16>)
// CHECK:         %[[C:.*]] = tensor.extract %[[F]]#0[]
// CHECK:         %[[D:.*]] = arith.addi %[[C]], %[[C]]
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[F]]#1, %[[D]]
func.func @fused_at_first(%x: tensor<4x8xf32>, %fill: tensor<i32>) -> (tensor<4x8xf16>, i32) {
  %count = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%fill : tensor<i32>) {
  ^bb0(%in: f32, %acc: i32):
    %zero = arith.constant 0.0 : f32
    %nonzero = arith.cmpf une, %in, %zero : f32
    %one = arith.extui %nonzero : i1 to i32
    %next = arith.addi %acc, %one : i32
    linalg.yield %next : i32
  } -> tensor<i32>
  %c = tensor.extract %count[] : tensor<i32>
  %d = arith.addi %c, %c : i32
  %empty = tensor.empty() : tensor<4x8xf16>
  %half = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%empty : tensor<4x8xf16>) {
  ^bb0(%in: f32, %out: f16):
    %h = arith.truncf %in : f32 to f16
    linalg.yield %h : f16
  } -> tensor<4x8xf16>
  return %half, %d : tensor<4x8xf16>, i32
}

// -----

// Batch normalization's backward sums per channel, of the gradient and of
// the gradient times the normalized input: one pass, the gradient widened
// once.

// CHECK-LABEL: func.func @channel_sums(
// CHECK:         %[[F:.*]]:2 = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction"]}
// CHECK-SAME:        outs(%{{.*}}, %{{.*}} : tensor<3xf64>, tensor<3xf64>)
// CHECK:           arith.extf %{{.*}} : f32 to f64
// CHECK:           arith.addf
// CHECK:           arith.extf %{{.*}} : f32 to f64
// CHECK-NOT:       arith.extf
// CHECK:           linalg.yield
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[F]]#0, %[[F]]#1
#in = affine_map<(n, c, p) -> (n, c, p)>
#channel = affine_map<(n, c, p) -> (c)>
func.func @channel_sums(%g: tensor<2x3x16xf32>, %xhat: tensor<2x3x16xf32>, %init: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) {
  %sum = linalg.generic {indexing_maps = [#in, #channel], iterator_types = ["reduction", "parallel", "reduction"]} ins(%g : tensor<2x3x16xf32>) outs(%init : tensor<3xf64>) {
  ^bb0(%in: f32, %acc: f64):
    %w = arith.extf %in : f32 to f64
    %s = arith.addf %w, %acc : f64
    linalg.yield %s : f64
  } -> tensor<3xf64>
  %dot = linalg.generic {indexing_maps = [#in, #in, #channel], iterator_types = ["reduction", "parallel", "reduction"]} ins(%g, %xhat : tensor<2x3x16xf32>, tensor<2x3x16xf32>) outs(%init : tensor<3xf64>) {
  ^bb0(%in: f32, %x: f32, %acc: f64):
    %w = arith.extf %in : f32 to f64
    %wx = arith.extf %x : f32 to f64
    %p = arith.mulf %w, %wx : f64
    %s = arith.addf %p, %acc : f64
    linalg.yield %s : f64
  } -> tensor<3xf64>
  return %sum, %dot : tensor<3xf64>, tensor<3xf64>
}

// -----

// Not fused: the second op uses a scale computed from the first's result
// (gs.compute_scale's input, the statistics, and the rescale before the
// rounding): neither can move to the other.

// CHECK-LABEL: func.func @scale_from_statistics(
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<f32>)
// CHECK:         tensor.extract
// CHECK:         arith.divf
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<4x8xf16>)
func.func @scale_from_statistics(%x: tensor<4x8xf32>, %fill: tensor<f32>) -> tensor<4x8xf16> {
  %max = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%fill : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %m = arith.maximumf %a, %acc : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  %m = tensor.extract %max[] : tensor<f32>
  %limit = arith.constant 6.0e4 : f32
  %scale = arith.divf %limit, %m : f32
  %empty = tensor.empty() : tensor<4x8xf16>
  %half = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%empty : tensor<4x8xf16>) {
  ^bb0(%in: f32, %out: f16):
    %s = arith.mulf %in, %scale : f32
    %h = arith.truncf %s : f32 to f16
    linalg.yield %h : f16
  } -> tensor<4x8xf16>
  return %half : tensor<4x8xf16>
}

// -----

// Not fused: a transposed read (the kernel schedule's transposes are
// blocks of their own), a libm call (exp would keep the fused loop scalar),
// and loops of another shape over the same tensor.

// CHECK-LABEL: func.func @not_siblings(
// CHECK-COUNT-4: linalg.generic
#id = affine_map<(i, j) -> (i, j)>
func.func @not_siblings(%x: tensor<8x8xf32>, %y: tensor<2x8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<2x8x8xf32>) {
  %empty = tensor.empty() : tensor<8x8xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x8xf32>) outs(%empty : tensor<8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<8x8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x8xf32>) outs(%empty : tensor<8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x8xf32>
  %e = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x8xf32>) outs(%empty : tensor<8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %ex = math.exp %in : f32
    linalg.yield %ex : f32
  } -> tensor<8x8xf32>
  %empty3 = tensor.empty() : tensor<2x8x8xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(n, i, j) -> (i, j)>, affine_map<(n, i, j) -> (n, i, j)>, affine_map<(n, i, j) -> (n, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %y : tensor<8x8xf32>, tensor<2x8x8xf32>) outs(%empty3 : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %s = arith.addf %in, %in2 : f32
    linalg.yield %s : f32
  } -> tensor<2x8x8xf32>
  return %neg, %t, %e, %b : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<2x8x8xf32>
}

// -----

// For the GPU's kernels (same-loops): an elementwise op does not
// join a reduction (whose loops one thread per output would run), but two
// elementwise ops join whatever their bodies (exp is a libdevice call
// there; the CPU's fusion leaves it, which would keep a loop scalar).

// CHECK-LABEL: func.func @exp_and_sum
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.exp
// CHECK: %{{.+}}:2 = linalg.generic {{.*}} iterator_types = ["reduction"]

// GPU-LABEL: func.func @exp_and_sum
// GPU: %{{.+}}:2 = linalg.generic {{.*}} iterator_types = ["parallel"]
// GPU: math.exp
// GPU: arith.negf
// GPU: linalg.yield
// GPU: linalg.generic {{.*}} iterator_types = ["reduction"]
// GPU-NOT: linalg.generic
#id = affine_map<(i) -> (i)>
#all = affine_map<(i) -> ()>
func.func @exp_and_sum(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<f32>) {
  %e = tensor.empty() : tensor<64xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<f32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]} ins(%x : tensor<64xf32>) outs(%fill : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %exp, %neg, %sum : tensor<64xf32>, tensor<64xf32>, tensor<f32>
}

// -----

// For the GPU's kernels, reductions over the same loops fuse: two sums
// over x (a kernel's thread per channel computes both), and a maximum
// with an all-finite check, both exact (which a kernel may split across a
// block's threads) — but an exact one not with a sum, which would keep it
// from being split.

// GPU-LABEL: func.func @same_loop_reductions
// GPU: %[[SUMS:.+]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// GPU: arith.addf
// GPU: arith.mulf
// GPU: arith.addf
// GPU: linalg.yield
// GPU: %[[EXACT:.+]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// GPU: arith.maximumf
// GPU: arith.andi
// GPU: linalg.yield
// GPU-NOT: linalg.generic
// GPU: return %[[SUMS]]#0, %[[SUMS]]#1, %[[EXACT]]#0, %[[EXACT]]#1
#x = affine_map<(c, i) -> (c, i)>
#c = affine_map<(c, i) -> (c)>
func.func @same_loop_reductions(%x: tensor<8x4096xf32>, %s: tensor<8xf32>, %m: tensor<8xf32>, %ok: tensor<8xi1>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xi1>) {
  %sum = linalg.generic {indexing_maps = [#x, #c], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x4096xf32>) outs(%s : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %squares = linalg.generic {indexing_maps = [#x, #c], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x4096xf32>) outs(%s : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %q = arith.mulf %a, %a : f32
    %r = arith.addf %acc, %q : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %max = linalg.generic {indexing_maps = [#x, #c], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x4096xf32>) outs(%m : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %finite = linalg.generic {indexing_maps = [#x, #c], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x4096xf32>) outs(%ok : tensor<8xi1>) {
  ^bb0(%a: f32, %acc: i1):
    %inf = arith.constant 0x7F800000 : f32
    %abs = math.absf %a : f32
    %f = arith.cmpf olt, %abs, %inf : f32
    %r = arith.andi %acc, %f : i1
    linalg.yield %r : i1
  } -> tensor<8xi1>
  return %sum, %squares, %max, %finite : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xi1>
}
