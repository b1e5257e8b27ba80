// RUN: gs-opt %s --split-input-file --gs-fuse-elementwise | FileCheck %s
// RUN: gs-opt %s --split-input-file \
// RUN:   --gs-fuse-elementwise="multi-result=true transposes=true" \
// RUN:   --gs-fuse-siblings=same-loops=true | FileCheck %s --check-prefix=GPU

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
// computed twice (math.exp costs more than writing and reading it back).

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

// -----

// A gradient's unscaling, one division per element, read by the finiteness
// check (a reduction) and by the update (in the branch taken when all is
// finite): each divides again, where the unscaled gradient would be
// written and read back twice.

// CHECK-LABEL: func.func @unscale_for_check_and_update
// CHECK-SAME: (%[[G:.+]]: tensor<8x16xf32>, %[[W:.+]]: tensor<8x16xf32>, %[[S:.+]]: f32)
// CHECK-NOT: linalg.generic {{.*}} ins(%[[G]] : tensor<8x16xf32>) outs(%{{.*}} : tensor<8x16xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[G]] : tensor<8x16xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.divf %{{.*}}, %[[S]]
// CHECK: scf.if
// CHECK: linalg.generic {{.*}} ins(%[[W]], %[[G]] : tensor<8x16xf32>, tensor<8x16xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.divf %{{.*}}, %[[S]]
#id2 = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @unscale_for_check_and_update(%g: tensor<8x16xf32>, %w: tensor<8x16xf32>, %s: f32) -> tensor<8x16xf32> {
  %empty = tensor.empty() : tensor<8x16xf32>
  %unscaled = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<8x16xf32>) outs(%empty : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.divf %a, %s : f32
    linalg.yield %d : f32
  } -> tensor<8x16xf32>
  %true = arith.constant true
  %inf = arith.constant 0x7F800000 : f32
  %flag0 = tensor.empty() : tensor<i1>
  %flag = linalg.fill ins(%true : i1) outs(%flag0 : tensor<i1>) -> tensor<i1>
  %finite = linalg.generic {indexing_maps = [#id2, #all], iterator_types = ["reduction", "reduction"]} ins(%unscaled : tensor<8x16xf32>) outs(%flag : tensor<i1>) {
  ^bb0(%a: f32, %acc: i1):
    %m = math.absf %a : f32
    %c = arith.cmpf olt, %m, %inf : f32
    %r = arith.andi %acc, %c : i1
    linalg.yield %r : i1
  } -> tensor<i1>
  %ok = tensor.extract %finite[] : tensor<i1>
  %new = scf.if %ok -> tensor<8x16xf32> {
    %lr = arith.constant 0.01 : f32
    %u = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%w, %unscaled : tensor<8x16xf32>, tensor<8x16xf32>) outs(%empty : tensor<8x16xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %step = arith.mulf %b, %lr : f32
      %d = arith.subf %a, %step : f32
      linalg.yield %d : f32
    } -> tensor<8x16xf32>
    scf.yield %u : tensor<8x16xf32>
  } else {
    scf.yield %w : tensor<8x16xf32>
  }
  return %new : tensor<8x16xf32>
}

// -----

// Where a GEMM reads it too, it is made once: the GEMM would divide again
// for every block reading the element.

// CHECK-LABEL: func.func @unscale_for_gemm
// CHECK: %[[UNSCALED:.+]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<8x16xf32>) outs(%{{.*}} : tensor<8x16xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.divf
// CHECK: linalg.matmul ins(%{{.*}}, %[[UNSCALED]] : tensor<4x8xf32>, tensor<8x16xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[UNSCALED]] : tensor<8x16xf32>)
#id = affine_map<(i, j) -> (i, j)>
func.func @unscale_for_gemm(%g: tensor<8x16xf32>, %x: tensor<4x8xf32>, %s: f32) -> (tensor<4x16xf32>, tensor<8x16xf32>) {
  %empty = tensor.empty() : tensor<8x16xf32>
  %unscaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<8x16xf32>) outs(%empty : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.divf %a, %s : f32
    linalg.yield %d : f32
  } -> tensor<8x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %mm = linalg.matmul ins(%x, %unscaled : tensor<4x8xf32>, tensor<8x16xf32>) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%unscaled : tensor<8x16xf32>) outs(%empty : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<8x16xf32>
  return %mm, %neg : tensor<4x16xf32>, tensor<8x16xf32>
}

// -----

// An optimizer update (new weight and new momentum) and the selects of
// its skip guard on the GPU. By default the update keeps its two results
// and each select stays an op of its own. For the GPU's kernels
// (multi-result, then elementwise siblings merged) they become one op:
// the update computed once, both selects, a kernel reading and writing
// each parameter once.

// CHECK-LABEL: func.func @update_and_selects
// CHECK: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<8xf32>, tensor<8xf32>)
// CHECK: arith.select
// CHECK: arith.select

// GPU-LABEL: func.func @update_and_selects
// GPU-SAME: (%[[W:.+]]: tensor<8xf32>, %[[G:.+]]: tensor<8xf32>, %[[V:.+]]: tensor<8xf32>, %[[OK:.+]]: i1)
// GPU: %[[NEW:.+]]:2 = linalg.generic {{.*}} ins(%[[W]], %[[G]], %[[V]] : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
// GPU: ^bb0(%[[WI:[^:]+]]: f32, %[[GI:[^:]+]]: f32, %[[VI:[^:]+]]: f32,
// GPU: %[[M:.+]] = arith.mulf %[[VI]]
// GPU-NEXT: %[[VN:.+]] = arith.addf %[[M]], %[[GI]]
// GPU-NEXT: %[[WN:.+]] = arith.subf %[[WI]], %[[VN]]
// GPU-DAG: %[[KW:.+]] = arith.select %[[OK]], %[[WN]], %[[WI]]
// GPU-DAG: %[[KV:.+]] = arith.select %[[OK]], %[[VN]], %[[VI]]
// GPU-NOT: arith.mulf
// GPU: linalg.yield
// GPU-NOT: linalg.generic
// GPU: return %[[NEW]]#{{[01]}}, %[[NEW]]#{{[01]}}
#id = affine_map<(i) -> (i)>
func.func @update_and_selects(%w: tensor<8xf32>, %g: tensor<8xf32>, %v: tensor<8xf32>, %ok: i1) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %mu = arith.constant 0.9 : f32
  %new:2 = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel"]} ins(%w, %g, %v : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e, %e : tensor<8xf32>, tensor<8xf32>) {
  ^bb0(%wi: f32, %gi: f32, %vi: f32, %o1: f32, %o2: f32):
    %m = arith.mulf %vi, %mu : f32
    %vn = arith.addf %m, %gi : f32
    %wn = arith.subf %wi, %vn : f32
    linalg.yield %wn, %vn : f32, f32
  } -> (tensor<8xf32>, tensor<8xf32>)
  %kw = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%new#0, %w : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%n: f32, %old: f32, %o: f32):
    %k = arith.select %ok, %n, %old : f32
    linalg.yield %k : f32
  } -> tensor<8xf32>
  %kv = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%new#1, %v : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%n: f32, %old: f32, %o: f32):
    %k = arith.select %ok, %n, %old : f32
    linalg.yield %k : f32
  } -> tensor<8xf32>
  return %kw, %kv : tensor<8xf32>, tensor<8xf32>
}

// -----

// The partial sums of a weight gradient split over its images (Cin x S x
// Cout x K), moved part first and summed over the parts. On the CPU the
// transpose stays one (the kernel schedule tiles it); for the GPU's
// kernels (transposes) the sum reads the partials through the permuted
// map, one kernel instead of two. A transpose with a second user, or
// read by a contraction, stays.

// CHECK-LABEL: func.func @summed_partials
// CHECK: linalg.transpose
// CHECK: linalg.generic

// GPU: #[[PARTS_FIRST:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d0, d1, d3)>
// GPU-LABEL: func.func @summed_partials
// GPU-SAME: (%[[P:.+]]: tensor<8x4x16x9xf32>
// GPU-NOT: linalg.transpose
// GPU: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[PARTS_FIRST]], #{{.+}}], iterator_types = ["reduction", "parallel", "parallel", "parallel"]} ins(%[[P]] : tensor<8x4x16x9xf32>)
// GPU: arith.addf
// GPU-NOT: linalg.generic
// GPU: linalg.transpose ins(%[[P]]
// GPU: arith.negf
// GPU: linalg.transpose ins(%{{.+}} : tensor<4x8xf32>)
// GPU: arith.mulf
#read = affine_map<(s, co, ci, k) -> (s, co, ci, k)>
#summed = affine_map<(s, co, ci, k) -> (co, ci, k)>
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#acc = affine_map<(i, j, k) -> (i, j)>
func.func @summed_partials(%p: tensor<8x4x16x9xf32>, %a: tensor<4x8xf32>) -> (tensor<16x8x9xf32>, tensor<4x8x16x9xf32>, tensor<4x8x16x9xf32>, tensor<8x8xf32>) {
  %e = tensor.empty() : tensor<4x16x8x9xf32>
  %t = linalg.transpose ins(%p : tensor<8x4x16x9xf32>) outs(%e : tensor<4x16x8x9xf32>) permutation = [1, 2, 0, 3]
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<16x8x9xf32>
  %filled = linalg.fill ins(%zero : f32) outs(%init : tensor<16x8x9xf32>) -> tensor<16x8x9xf32>
  %sum = linalg.generic {indexing_maps = [#read, #summed], iterator_types = ["reduction", "parallel", "parallel", "parallel"]} ins(%t : tensor<4x16x8x9xf32>) outs(%filled : tensor<16x8x9xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %add = arith.addf %in, %acc : f32
    linalg.yield %add : f32
  } -> tensor<16x8x9xf32>
  // A second user: the transpose stays.
  %e2 = tensor.empty() : tensor<4x8x16x9xf32>
  %t2 = linalg.transpose ins(%p : tensor<8x4x16x9xf32>) outs(%e2 : tensor<4x8x16x9xf32>) permutation = [1, 0, 2, 3]
  %neg = linalg.generic {indexing_maps = [#read, #read], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%t2 : tensor<4x8x16x9xf32>) outs(%e2 : tensor<4x8x16x9xf32>) {
  ^bb0(%in: f32, %o: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<4x8x16x9xf32>
  // A contraction's operand stays a transpose.
  %ea = tensor.empty() : tensor<8x4xf32>
  %at = linalg.transpose ins(%a : tensor<4x8xf32>) outs(%ea : tensor<8x4xf32>) permutation = [1, 0]
  %ec = tensor.empty() : tensor<8x8xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ec : tensor<8x8xf32>) -> tensor<8x8xf32>
  %mm = linalg.generic {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"]} ins(%at, %a : tensor<8x4xf32>, tensor<4x8xf32>) outs(%c : tensor<8x8xf32>) {
  ^bb0(%l: f32, %r: f32, %o: f32):
    %m = arith.mulf %l, %r : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x8xf32>
  return %sum, %neg, %t2, %mm : tensor<16x8x9xf32>, tensor<4x8x16x9xf32>, tensor<4x8x16x9xf32>, tensor<8x8xf32>
}
