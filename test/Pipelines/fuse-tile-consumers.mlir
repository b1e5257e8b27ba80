// RUN: gs-opt %s --split-input-file --gs-fuse-tile-consumers | FileCheck %s

// A gradient's rounding to FP16 and its underflow count read the result of
// a loop over blocks of 16 rows (a GEMM's tile loop): each block's rounding
// and count run in the loop right after the block, the count carried from
// block to block, the rounded blocks inserted into a tensor the loop
// carries. Nothing else reads the blocks' result: each block is computed
// into a tensor of its own, filled as the whole result was, and the loop
// no longer carries the whole.

// CHECK-LABEL: func.func @round_and_count(
// CHECK-SAME:      %[[X:.*]]: tensor<64x32xf32>, %[[S:.*]]: f32)
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[NONE:.*]] = linalg.fill {{.*}} -> tensor<i32>
// CHECK-DAG:     %[[HALF:.*]] = tensor.empty() : tensor<64x32xf16>
// CHECK-NOT:     tensor<64x32xf32>
// CHECK:         %[[LOOP:.*]]:2 = scf.for %[[I:.*]] = %c0 to %c64 step %c16
// CHECK-SAME:        iter_args(%[[ROUNDED:.*]] = %[[HALF]], %[[COUNT:.*]] = %[[NONE]])
// CHECK:           %[[OWN:.*]] = tensor.empty() : tensor<16x32xf32>
// CHECK:           %[[ZEROS:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[OWN]] : tensor<16x32xf32>)
// CHECK:           %[[TILE:.*]] = linalg.generic {{.*}} outs(%[[ZEROS]] : tensor<16x32xf32>)
// CHECK:           %[[OUT:.*]] = tensor.extract_slice %[[ROUNDED]][%[[I]], 0] [16, 32] [1, 1]
// CHECK:           %[[EPI:.*]]:2 = linalg.generic
// CHECK-SAME:          iterator_types = ["reduction", "reduction"]
// CHECK-SAME:          ins(%[[TILE]] : tensor<16x32xf32>) outs(%[[OUT]], %[[COUNT]] : tensor<16x32xf16>, tensor<i32>)
// CHECK:             arith.mulf %{{.*}}, %[[S]]
// CHECK:           %[[NEXT:.*]] = tensor.insert_slice %[[EPI]]#0 into %[[ROUNDED]][%[[I]], 0] [16, 32]
// CHECK:           scf.yield %[[NEXT]], %[[EPI]]#1 : tensor<64x32xf16>, tensor<i32>
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[LOOP]]#0, %[[LOOP]]#1
#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
func.func @round_and_count(%x: tensor<64x32xf32>, %s: f32)
    -> (tensor<64x32xf16>, tensor<i32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %none = arith.constant 0 : i32
  %e = tensor.empty() : tensor<64x32xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %r = scf.for %i = %c0 to %c64 step %c16 iter_args(%acc = %zeros) -> (tensor<64x32xf32>) {
    %in = tensor.extract_slice %x[%i, 0] [16, 32] [1, 1] : tensor<64x32xf32> to tensor<16x32xf32>
    %dest = tensor.extract_slice %acc[%i, 0] [16, 32] [1, 1] : tensor<64x32xf32> to tensor<16x32xf32>
    %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%in : tensor<16x32xf32>) outs(%dest : tensor<16x32xf32>) {
    ^bb0(%a: f32, %b: f32):
      %sum = arith.addf %a, %b : f32
      linalg.yield %sum : f32
    } -> tensor<16x32xf32>
    %ins = tensor.insert_slice %t into %acc[%i, 0] [16, 32] [1, 1] : tensor<16x32xf32> into tensor<64x32xf32>
    scf.yield %ins : tensor<64x32xf32>
  }
  // The outputs' initial values come after the loop: they move up.
  %h = tensor.empty() : tensor<64x32xf16>
  %ce = tensor.empty() : tensor<i32>
  %c = linalg.fill ins(%none : i32) outs(%ce : tensor<i32>) -> tensor<i32>
  %f:2 = linalg.generic {indexing_maps = [#id, #id, #scalar], iterator_types = ["reduction", "reduction"]}
      ins(%r : tensor<64x32xf32>) outs(%h, %c : tensor<64x32xf16>, tensor<i32>) {
  ^bb0(%v: f32, %o: f16, %n: i32):
    %scaled = arith.mulf %v, %s : f32
    %half = arith.truncf %scaled : f32 to f16
    %tiny = arith.cmpf olt, %half, %half : f16
    %one = arith.extui %tiny : i1 to i32
    %next = arith.addi %n, %one : i32
    linalg.yield %half, %next : f16, i32
  } -> (tensor<64x32xf16>, tensor<i32>)
  return %f#0, %f#1 : tensor<64x32xf16>, tensor<i32>
}

// -----

// Tiles of columns (a GEMM's panels): a count over the result may run
// tile by tile, a floating-point sum (whose order would change) may not.
// A consumer reading the result transposed takes the tile's offsets along
// its own loops.

// CHECK-LABEL: func.func @panels(
// CHECK:         %[[LOOP:.*]]:3 = scf.for %[[J:.*]] = %c0 to %c64 step %c16
// CHECK:           tensor.insert_slice %{{.*}} into %{{.*}}[0, %[[J]]] [32, 16]
// CHECK:           linalg.generic {{.*}} ins(%{{.*}} : tensor<32x16xf32>) outs(%{{.*}} : tensor<i32>)
// CHECK:           %[[T:.*]] = tensor.extract_slice %{{.*}}[%[[J]], 0] [16, 32] [1, 1] : tensor<64x32xf32> to tensor<16x32xf32>
// CHECK:           linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}]{{.*}} ins(%{{.*}} : tensor<32x16xf32>) outs(%[[T]] : tensor<16x32xf32>)
// CHECK:           tensor.insert_slice %{{.*}} into %{{.*}}[%[[J]], 0] [16, 32]
// CHECK:         }
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[LOOP]]#0 : tensor<32x64xf32>) outs(%{{.*}} : tensor<f32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
#scalar = affine_map<(d0, d1) -> ()>
func.func @panels(%x: tensor<32x64xf32>) -> (tensor<i32>, tensor<f32>, tensor<64x32xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %none = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x64xf32>
  %r = scf.for %j = %c0 to %c64 step %c16 iter_args(%acc = %e) -> (tensor<32x64xf32>) {
    %in = tensor.extract_slice %x[0, %j] [32, 16] [1, 1] : tensor<32x64xf32> to tensor<32x16xf32>
    %dest = tensor.extract_slice %acc[0, %j] [32, 16] [1, 1] : tensor<32x64xf32> to tensor<32x16xf32>
    %t = linalg.copy ins(%in : tensor<32x16xf32>) outs(%dest : tensor<32x16xf32>) -> tensor<32x16xf32>
    %ins = tensor.insert_slice %t into %acc[0, %j] [32, 16] [1, 1] : tensor<32x16xf32> into tensor<32x64xf32>
    scf.yield %ins : tensor<32x64xf32>
  }
  %ce = tensor.empty() : tensor<i32>
  %c = linalg.fill ins(%none : i32) outs(%ce : tensor<i32>) -> tensor<i32>
  %count = linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction", "reduction"]}
      ins(%r : tensor<32x64xf32>) outs(%c : tensor<i32>) {
  ^bb0(%v: f32, %n: i32):
    %nonzero = arith.cmpf une, %v, %zero : f32
    %one = arith.extui %nonzero : i1 to i32
    %next = arith.addi %n, %one : i32
    linalg.yield %next : i32
  } -> tensor<i32>
  %se = tensor.empty() : tensor<f32>
  %s = linalg.fill ins(%zero : f32) outs(%se : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction", "reduction"]}
      ins(%r : tensor<32x64xf32>) outs(%s : tensor<f32>) {
  ^bb0(%v: f32, %a: f32):
    %next = arith.addf %a, %v : f32
    linalg.yield %next : f32
  } -> tensor<f32>
  %te = tensor.empty() : tensor<64x32xf32>
  %transposed = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<32x64xf32>) outs(%te : tensor<64x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %twice = arith.addf %v, %v : f32
    linalg.yield %twice : f32
  } -> tensor<64x32xf32>
  return %count, %sum, %transposed : tensor<i32>, tensor<f32>, tensor<64x32xf32>
}

// -----

// A floating-point sum over tiles of the outermost loop adds every element
// in the order the loops would: fused.

// CHECK-LABEL: func.func @rows_sum(
// CHECK:         scf.for
// CHECK:           linalg.generic {{.*}} ins(%{{.*}} : tensor<16x32xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK:         }
// CHECK-NOT:     linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
func.func @rows_sum(%x: tensor<64x32xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x32xf32>
  %r = scf.for %i = %c0 to %c64 step %c16 iter_args(%acc = %e) -> (tensor<64x32xf32>) {
    %in = tensor.extract_slice %x[%i, 0] [16, 32] [1, 1] : tensor<64x32xf32> to tensor<16x32xf32>
    %dest = tensor.extract_slice %acc[%i, 0] [16, 32] [1, 1] : tensor<64x32xf32> to tensor<16x32xf32>
    %t = linalg.copy ins(%in : tensor<16x32xf32>) outs(%dest : tensor<16x32xf32>) -> tensor<16x32xf32>
    %ins = tensor.insert_slice %t into %acc[%i, 0] [16, 32] [1, 1] : tensor<16x32xf32> into tensor<64x32xf32>
    scf.yield %ins : tensor<64x32xf32>
  }
  %se = tensor.empty() : tensor<f32>
  %s = linalg.fill ins(%zero : f32) outs(%se : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction", "reduction"]}
      ins(%r : tensor<64x32xf32>) outs(%s : tensor<f32>) {
  ^bb0(%v: f32, %a: f32):
    %next = arith.addf %a, %v : f32
    linalg.yield %next : f32
  } -> tensor<f32>
  return %sum : tensor<f32>
}

// -----

// Not tile loops: each iteration adds into the whole result (a loop over
// reduction slabs), a loop whose tiles leave rows uncovered, one that
// reads its running result elsewhere than its tile, and tiles too small
// to be worth a loop nest each. And a consumer reading a value computed
// after the loop stays where it is.

// CHECK-LABEL: func.func @not_tiles(
// CHECK-COUNT-5: scf.for
// CHECK-NOT:     scf.for
// CHECK-COUNT-5: linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%{{[^:]*}} : tensor<64x32xf32>{{.*}}) outs(
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @not_tiles(%x: tensor<64x32xf32>, %y: tensor<64x32xf32>)
    -> (tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c48 = arith.constant 48 : index
  %c64 = arith.constant 64 : index
  %e = tensor.empty() : tensor<64x32xf32>
  %slabs = scf.for %k = %c0 to %c64 step %c16 iter_args(%acc = %e) -> (tensor<64x32xf32>) {
    %t = linalg.add ins(%acc, %x : tensor<64x32xf32>, tensor<64x32xf32>) outs(%acc : tensor<64x32xf32>) -> tensor<64x32xf32>
    %ins = tensor.insert_slice %t into %acc[0, 0] [64, 32] [1, 1] : tensor<64x32xf32> into tensor<64x32xf32>
    scf.yield %ins : tensor<64x32xf32>
  }
  %partial = scf.for %i = %c0 to %c48 step %c16 iter_args(%acc = %x) -> (tensor<64x32xf32>) {
    %dest = tensor.extract_slice %acc[%i, 0] [16, 32] [1, 1] : tensor<64x32xf32> to tensor<16x32xf32>
    %t = linalg.copy ins(%dest : tensor<16x32xf32>) outs(%dest : tensor<16x32xf32>) -> tensor<16x32xf32>
    %ins = tensor.insert_slice %t into %acc[%i, 0] [16, 32] [1, 1] : tensor<16x32xf32> into tensor<64x32xf32>
    scf.yield %ins : tensor<64x32xf32>
  }
  %reads = scf.for %i = %c0 to %c64 step %c16 iter_args(%acc = %x) -> (tensor<64x32xf32>) {
    %other = tensor.extract_slice %acc[0, 0] [16, 32] [1, 1] : tensor<64x32xf32> to tensor<16x32xf32>
    %dest = tensor.extract_slice %acc[%i, 0] [16, 32] [1, 1] : tensor<64x32xf32> to tensor<16x32xf32>
    %t = linalg.add ins(%other, %dest : tensor<16x32xf32>, tensor<16x32xf32>) outs(%dest : tensor<16x32xf32>) -> tensor<16x32xf32>
    %ins = tensor.insert_slice %t into %acc[%i, 0] [16, 32] [1, 1] : tensor<16x32xf32> into tensor<64x32xf32>
    scf.yield %ins : tensor<64x32xf32>
  }
  %small = scf.for %i = %c0 to %c64 step %c4 iter_args(%acc = %e) -> (tensor<64x32xf32>) {
    %in = tensor.extract_slice %x[%i, 0] [4, 32] [1, 1] : tensor<64x32xf32> to tensor<4x32xf32>
    %dest = tensor.extract_slice %acc[%i, 0] [4, 32] [1, 1] : tensor<64x32xf32> to tensor<4x32xf32>
    %t = linalg.copy ins(%in : tensor<4x32xf32>) outs(%dest : tensor<4x32xf32>) -> tensor<4x32xf32>
    %ins = tensor.insert_slice %t into %acc[%i, 0] [4, 32] [1, 1] : tensor<4x32xf32> into tensor<64x32xf32>
    scf.yield %ins : tensor<64x32xf32>
  }
  %late = scf.for %i = %c0 to %c64 step %c16 iter_args(%acc = %e) -> (tensor<64x32xf32>) {
    %in = tensor.extract_slice %x[%i, 0] [16, 32] [1, 1] : tensor<64x32xf32> to tensor<16x32xf32>
    %dest = tensor.extract_slice %acc[%i, 0] [16, 32] [1, 1] : tensor<64x32xf32> to tensor<16x32xf32>
    %t = linalg.copy ins(%in : tensor<16x32xf32>) outs(%dest : tensor<16x32xf32>) -> tensor<16x32xf32>
    %ins = tensor.insert_slice %t into %acc[%i, 0] [16, 32] [1, 1] : tensor<16x32xf32> into tensor<64x32xf32>
    scf.yield %ins : tensor<64x32xf32>
  }
  %after = linalg.add ins(%y, %y : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %r0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%slabs : tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %w = arith.mulf %v, %v : f32
    linalg.yield %w : f32
  } -> tensor<64x32xf32>
  %r1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%partial : tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %w = arith.mulf %v, %v : f32
    linalg.yield %w : f32
  } -> tensor<64x32xf32>
  %r2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%reads : tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %w = arith.mulf %v, %v : f32
    linalg.yield %w : f32
  } -> tensor<64x32xf32>
  %r3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%small : tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %w = arith.mulf %v, %v : f32
    linalg.yield %w : f32
  } -> tensor<64x32xf32>
  %r4 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%late, %after : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%v: f32, %a: f32, %o: f32):
    %w = arith.mulf %v, %a : f32
    linalg.yield %w : f32
  } -> tensor<64x32xf32>
  return %r0, %r1, %r2, %r3, %r4 : tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>
}

// -----

// A chain: the ReLU reads the bias add, which reads the GEMM's tiles; once
// the bias add runs in the loop, the ReLU reads the loop's result too and
// follows it there. Neither the GEMM's nor the bias add's whole result is
// read any more: the loop carries the ReLU's alone.

// CHECK-LABEL: func.func @chain(
// CHECK:         %[[LOOP:.*]] = scf.for {{.*}} -> (tensor<64x32xf16>)
// CHECK:           %[[OWN:.*]] = tensor.empty() : tensor<16x32xf32>
// CHECK:           %[[GEMM:.*]] = linalg.copy {{.*}} outs(%[[OWN]] : tensor<16x32xf32>)
// CHECK:           %[[BIAS:.*]] = linalg.generic {{.*}} ins(%[[GEMM]], %{{.*}} : tensor<16x32xf32>, tensor<32xf32>)
// CHECK:           linalg.generic {{.*}} ins(%[[BIAS]] : tensor<16x32xf32>) outs(%{{.*}} : tensor<16x32xf16>)
// CHECK:         }
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[LOOP]]
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @chain(%x: tensor<64x32xf32>, %b: tensor<32xf32>) -> tensor<64x32xf16> {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<64x32xf32>
  %r = scf.for %i = %c0 to %c64 step %c16 iter_args(%acc = %e) -> (tensor<64x32xf32>) {
    %in = tensor.extract_slice %x[%i, 0] [16, 32] [1, 1] : tensor<64x32xf32> to tensor<16x32xf32>
    %dest = tensor.extract_slice %acc[%i, 0] [16, 32] [1, 1] : tensor<64x32xf32> to tensor<16x32xf32>
    %t = linalg.copy ins(%in : tensor<16x32xf32>) outs(%dest : tensor<16x32xf32>) -> tensor<16x32xf32>
    %ins = tensor.insert_slice %t into %acc[%i, 0] [16, 32] [1, 1] : tensor<16x32xf32> into tensor<64x32xf32>
    scf.yield %ins : tensor<64x32xf32>
  }
  %biased = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r, %b : tensor<64x32xf32>, tensor<32xf32>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %sum = arith.addf %v, %w : f32
    linalg.yield %sum : f32
  } -> tensor<64x32xf32>
  %h = tensor.empty() : tensor<64x32xf16>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%biased : tensor<64x32xf32>) outs(%h : tensor<64x32xf16>) {
  ^bb0(%v: f32, %o: f16):
    %half = arith.truncf %v : f32 to f16
    %max = arith.maximumf %half, %zero : f16
    linalg.yield %max : f16
  } -> tensor<64x32xf16>
  return %relu : tensor<64x32xf16>
}

// -----

// A loop whose result starts from a tensor that is neither empty nor a fill
// (an argument, updated tile by tile): the consumer runs in the loop, and
// the loop keeps carrying the whole result, each of whose tiles starts from
// the argument's.

// CHECK-LABEL: func.func @init_from_argument(
// CHECK-SAME:      %[[X:.*]]: tensor<64x32xf32>)
// CHECK:         scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[X]], %{{.*}} = %{{.*}}) -> (tensor<64x32xf32>, tensor<f32>)
// CHECK:           tensor.extract_slice %[[ACC]]
// CHECK:           linalg.generic {{.*}} ins(%{{.*}} : tensor<16x32xf32>) outs(%{{.*}} : tensor<f32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
func.func @init_from_argument(%x: tensor<64x32xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %c64 step %c16 iter_args(%acc = %x) -> (tensor<64x32xf32>) {
    %dest = tensor.extract_slice %acc[%i, 0] [16, 32] [1, 1] : tensor<64x32xf32> to tensor<16x32xf32>
    %t = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
        outs(%dest : tensor<16x32xf32>) {
    ^bb0(%o: f32):
      %twice = arith.addf %o, %o : f32
      linalg.yield %twice : f32
    } -> tensor<16x32xf32>
    %ins = tensor.insert_slice %t into %acc[%i, 0] [16, 32] [1, 1] : tensor<16x32xf32> into tensor<64x32xf32>
    scf.yield %ins : tensor<64x32xf32>
  }
  %se = tensor.empty() : tensor<f32>
  %s = linalg.fill ins(%zero : f32) outs(%se : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction", "reduction"]}
      ins(%r : tensor<64x32xf32>) outs(%s : tensor<f32>) {
  ^bb0(%v: f32, %a: f32):
    %next = arith.addf %a, %v : f32
    linalg.yield %next : f32
  } -> tensor<f32>
  return %sum : tensor<f32>
}

// -----

// A peeled tile loop (a GEMM's panels of 24 columns over 40, as AVX2's
// register blocks cut them): the loop covers 24 columns, an edge tile of
// 16 after it the rest, starting from the loop's result there, inserted
// into it. The rounding and the count run in the loop and then over the
// edge tile, the count carried on from the loop's; the edge starts from
// the loop's initial value, which the loop leaves there (zeros of the
// edge's size), so nothing holds the whole result any more.

// CHECK-LABEL: func.func @peeled_panels(
// CHECK-SAME:      %[[X:.*]]: tensor<32x40xf32>)
// CHECK-NOT:     outs(%{{.*}} : tensor<32x40xf32>)
// CHECK:         %[[LOOP:.*]]:2 = scf.for %[[J:.*]] = %c0 to %c24 step %c24
// CHECK-SAME:        -> (tensor<32x40xf16>, tensor<i32>)
// CHECK:           %[[EPI:.*]]:2 = linalg.generic
// CHECK-SAME:          outs(%{{.*}}, %{{.*}} : tensor<32x24xf16>, tensor<i32>)
// CHECK:           scf.yield
// CHECK:         %[[EMPTY:.*]] = tensor.empty() : tensor<32x16xf32>
// CHECK:         %[[START:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[EMPTY]] : tensor<32x16xf32>)
// CHECK:         %[[EDGE:.*]] = linalg.generic {{.*}} outs(%[[START]] : tensor<32x16xf32>)
// CHECK:         %[[OUT:.*]] = tensor.extract_slice %[[LOOP]]#0[0, 24] [32, 16]
// CHECK:         %[[LAST:.*]]:2 = linalg.generic
// CHECK-SAME:        ins(%[[EDGE]] : tensor<32x16xf32>) outs(%[[OUT]], %[[LOOP]]#1 : tensor<32x16xf16>, tensor<i32>)
// CHECK:         %[[ROUNDED:.*]] = tensor.insert_slice %[[LAST]]#0 into %[[LOOP]]#0[0, 24] [32, 16]
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[ROUNDED]], %[[LAST]]#1
#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
func.func @peeled_panels(%x: tensor<32x40xf32>) -> (tensor<32x40xf16>, tensor<i32>) {
  %c0 = arith.constant 0 : index
  %c24 = arith.constant 24 : index
  %zero = arith.constant 0.0 : f32
  %none = arith.constant 0 : i32
  %e = tensor.empty() : tensor<32x40xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%e : tensor<32x40xf32>) -> tensor<32x40xf32>
  %r = scf.for %j = %c0 to %c24 step %c24 iter_args(%acc = %zeros) -> (tensor<32x40xf32>) {
    %in = tensor.extract_slice %x[0, %j] [32, 24] [1, 1] : tensor<32x40xf32> to tensor<32x24xf32>
    %dest = tensor.extract_slice %acc[0, %j] [32, 24] [1, 1] : tensor<32x40xf32> to tensor<32x24xf32>
    %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%in : tensor<32x24xf32>) outs(%dest : tensor<32x24xf32>) {
    ^bb0(%a: f32, %b: f32):
      %sum = arith.addf %a, %b : f32
      linalg.yield %sum : f32
    } -> tensor<32x24xf32>
    %ins = tensor.insert_slice %t into %acc[0, %j] [32, 24] [1, 1] : tensor<32x24xf32> into tensor<32x40xf32>
    scf.yield %ins : tensor<32x40xf32>
  }
  %in = tensor.extract_slice %x[0, 24] [32, 16] [1, 1] : tensor<32x40xf32> to tensor<32x16xf32>
  %dest = tensor.extract_slice %r[0, 24] [32, 16] [1, 1] : tensor<32x40xf32> to tensor<32x16xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%in : tensor<32x16xf32>) outs(%dest : tensor<32x16xf32>) {
  ^bb0(%a: f32, %b: f32):
    %sum = arith.addf %a, %b : f32
    linalg.yield %sum : f32
  } -> tensor<32x16xf32>
  %whole = tensor.insert_slice %t into %r[0, 24] [32, 16] [1, 1] : tensor<32x16xf32> into tensor<32x40xf32>
  %h = tensor.empty() : tensor<32x40xf16>
  %ce = tensor.empty() : tensor<i32>
  %c = linalg.fill ins(%none : i32) outs(%ce : tensor<i32>) -> tensor<i32>
  %f:2 = linalg.generic {indexing_maps = [#id, #id, #scalar], iterator_types = ["reduction", "reduction"]}
      ins(%whole : tensor<32x40xf32>) outs(%h, %c : tensor<32x40xf16>, tensor<i32>) {
  ^bb0(%v: f32, %o: f16, %n: i32):
    %half = arith.truncf %v : f32 to f16
    %tiny = arith.cmpf olt, %half, %half : f16
    %one = arith.extui %tiny : i1 to i32
    %next = arith.addi %n, %one : i32
    linalg.yield %half, %next : f16, i32
  } -> (tensor<32x40xf16>, tensor<i32>)
  return %f#0, %f#1 : tensor<32x40xf16>, tensor<i32>
}

// -----

// The same with the whole result read again (returned): it is written all
// the same, and narrow tiles of a peeled loop would cost more than they
// save; the consumer stays a pass of its own.

// CHECK-LABEL: func.func @peeled_panels_kept(
// CHECK:         scf.for {{.*}} -> (tensor<32x40xf32>)
// CHECK:         %[[WHOLE:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 24] [32, 16]
// CHECK:         %[[F:.*]]:2 = linalg.generic {{.*}} ins(%[[WHOLE]] : tensor<32x40xf32>)
// CHECK:         return %[[F]]#0, %[[F]]#1, %[[WHOLE]]
#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
func.func @peeled_panels_kept(%x: tensor<32x40xf32>) -> (tensor<32x40xf16>, tensor<i32>, tensor<32x40xf32>) {
  %c0 = arith.constant 0 : index
  %c24 = arith.constant 24 : index
  %zero = arith.constant 0.0 : f32
  %none = arith.constant 0 : i32
  %e = tensor.empty() : tensor<32x40xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%e : tensor<32x40xf32>) -> tensor<32x40xf32>
  %r = scf.for %j = %c0 to %c24 step %c24 iter_args(%acc = %zeros) -> (tensor<32x40xf32>) {
    %in = tensor.extract_slice %x[0, %j] [32, 24] [1, 1] : tensor<32x40xf32> to tensor<32x24xf32>
    %dest = tensor.extract_slice %acc[0, %j] [32, 24] [1, 1] : tensor<32x40xf32> to tensor<32x24xf32>
    %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%in : tensor<32x24xf32>) outs(%dest : tensor<32x24xf32>) {
    ^bb0(%a: f32, %b: f32):
      %sum = arith.addf %a, %b : f32
      linalg.yield %sum : f32
    } -> tensor<32x24xf32>
    %ins = tensor.insert_slice %t into %acc[0, %j] [32, 24] [1, 1] : tensor<32x24xf32> into tensor<32x40xf32>
    scf.yield %ins : tensor<32x40xf32>
  }
  %in = tensor.extract_slice %x[0, 24] [32, 16] [1, 1] : tensor<32x40xf32> to tensor<32x16xf32>
  %dest = tensor.extract_slice %r[0, 24] [32, 16] [1, 1] : tensor<32x40xf32> to tensor<32x16xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%in : tensor<32x16xf32>) outs(%dest : tensor<32x16xf32>) {
  ^bb0(%a: f32, %b: f32):
    %sum = arith.addf %a, %b : f32
    linalg.yield %sum : f32
  } -> tensor<32x16xf32>
  %whole = tensor.insert_slice %t into %r[0, 24] [32, 16] [1, 1] : tensor<32x16xf32> into tensor<32x40xf32>
  %h = tensor.empty() : tensor<32x40xf16>
  %ce = tensor.empty() : tensor<i32>
  %c = linalg.fill ins(%none : i32) outs(%ce : tensor<i32>) -> tensor<i32>
  %f:2 = linalg.generic {indexing_maps = [#id, #id, #scalar], iterator_types = ["reduction", "reduction"]}
      ins(%whole : tensor<32x40xf32>) outs(%h, %c : tensor<32x40xf16>, tensor<i32>) {
  ^bb0(%v: f32, %o: f16, %n: i32):
    %half = arith.truncf %v : f32 to f16
    %tiny = arith.cmpf olt, %half, %half : f16
    %one = arith.extui %tiny : i1 to i32
    %next = arith.addi %n, %one : i32
    linalg.yield %half, %next : f16, i32
  } -> (tensor<32x40xf16>, tensor<i32>)
  return %f#0, %f#1, %whole : tensor<32x40xf16>, tensor<i32>, tensor<32x40xf32>
}
