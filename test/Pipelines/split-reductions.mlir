// RUN: gs-opt %s --split-input-file --gs-split-reductions | FileCheck %s
// RUN: gs-opt %s --split-input-file --gs-split-reductions="max-lanes=100" | FileCheck %s --check-prefix=NARROW

// Batch-normalization statistics: a sum per channel over n, h and w. The
// lanes are h and w (784 points); each sums over n from -0, then each
// channel's initial value takes its 784 partials in row-major order.

// CHECK-LABEL: func.func @channel_sums
// CHECK-DAG: %[[NEG0:.+]] = arith.constant -0.000000e+00 : f64
// CHECK-DAG: %[[EMPTY:.+]] = tensor.empty() : tensor<8x28x28xf64>
// CHECK: %[[FILLED:.+]] = linalg.fill ins(%[[NEG0]] : f64) outs(%[[EMPTY]] : tensor<8x28x28xf64>)
// CHECK: %[[PARTIAL:.+]] = linalg.generic {indexing_maps = [#[[IN:.+]], #[[LANES:.+]]], iterator_types = ["reduction", "parallel", "parallel", "parallel"]} ins(%{{.*}} : tensor<64x8x28x28xf32>) outs(%[[FILLED]] : tensor<8x28x28xf64>)
// CHECK-NEXT: ^bb0(%[[X:.+]]: f32, %[[ACC:.+]]: f64):
// CHECK-NEXT: %[[WIDE:.+]] = arith.extf %[[X]]
// CHECK-NEXT: %[[SUM:.+]] = arith.addf %[[ACC]], %[[WIDE]] : f64
// CHECK-NEXT: linalg.yield %[[SUM]]
// CHECK: %[[TOTAL:.+]] = linalg.generic {indexing_maps = [#[[BYLANE:.+]], #[[CHANNEL:.+]]], iterator_types = ["parallel", "reduction", "reduction"]} ins(%[[PARTIAL]] : tensor<8x28x28xf64>) outs(%{{.*}} : tensor<8xf64>)
// CHECK-NEXT: ^bb0(%[[P:.+]]: f64, %[[OUT:.+]]: f64):
// CHECK-NEXT: %[[NEXT:.+]] = arith.addf %[[OUT]], %[[P]] : f64
// CHECK-NEXT: linalg.yield %[[NEXT]]
// CHECK: return %[[TOTAL]]

// With at most 100 lanes, w alone (28) is too few: left as it is.
// NARROW-LABEL: func.func @channel_sums
// NARROW-NOT: -0.0
// NARROW: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction", "reduction"]
// NARROW-NOT: linalg.generic
func.func @channel_sums(%x: tensor<64x8x28x28xf32>) -> tensor<8xf64> {
  %zero = arith.constant 0.0 : f64
  %empty = tensor.empty() : tensor<8xf64>
  %init = linalg.fill ins(%zero : f64) outs(%empty : tensor<8xf64>) -> tensor<8xf64>
  %sums = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%x : tensor<64x8x28x28xf32>) outs(%init : tensor<8xf64>) {
  ^bb0(%a: f32, %acc: f64):
    %wide = arith.extf %a : f32 to f64
    %s = arith.addf %acc, %wide : f64
    linalg.yield %s : f64
  } -> tensor<8xf64>
  return %sums : tensor<8xf64>
}

// -----

// Batch normalization's backward sum of dy * x-hat per channel: a
// contraction to linalg, but no GEMM (both inputs read through one map),
// so split as the sums are: it had run as one thread per channel on the
// GPU, each over 50,176 products.

// CHECK-LABEL: func.func @channel_products
// CHECK: %[[PARTIAL:.+]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<64x8x28x28xf32>, tensor<64x8x28x28xf32>) outs(%{{.*}} : tensor<8x28x28xf64>)
// CHECK: arith.mulf
// CHECK: %[[TOTAL:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction"]} ins(%[[PARTIAL]] : tensor<8x28x28xf64>) outs(%{{.*}} : tensor<8xf64>)
// CHECK: return %[[TOTAL]]
// NARROW-LABEL: func.func @channel_products
// NARROW: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction", "reduction"]
func.func @channel_products(%dy: tensor<64x8x28x28xf32>, %xhat: tensor<64x8x28x28xf32>) -> tensor<8xf64> {
  %zero = arith.constant 0.0 : f64
  %empty = tensor.empty() : tensor<8xf64>
  %init = linalg.fill ins(%zero : f64) outs(%empty : tensor<8xf64>) -> tensor<8xf64>
  %sums = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%dy, %xhat : tensor<64x8x28x28xf32>, tensor<64x8x28x28xf32>) outs(%init : tensor<8xf64>) {
  ^bb0(%a: f32, %b: f32, %acc: f64):
    %p = arith.mulf %a, %b : f32
    %wide = arith.extf %p : f32 to f64
    %s = arith.addf %wide, %acc : f64
    linalg.yield %s : f64
  } -> tensor<8xf64>
  return %sums : tensor<8xf64>
}

// -----

// Gradient statistics: several outputs, a sum with the running value second,
// a product and an exact maximum (each lane's from -inf), and an index in
// the body; the lanes (14 x 14) stop before c, which would make 6272 (more
// than 4096).

// CHECK-LABEL: func.func @statistics
// CHECK-DAG: %[[NEG0:.+]] = arith.constant -0.000000e+00 : f64
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[NEGINF:.+]] = arith.constant 0xFFF0000000000000 : f64
// CHECK-DAG: linalg.fill ins(%[[NEG0]] : f64) outs(%{{.*}} : tensor<14x14xf64>)
// CHECK-DAG: linalg.fill ins(%[[ONE]] : f32) outs(%{{.*}} : tensor<14x14xf32>)
// CHECK-DAG: linalg.fill ins(%[[NEGINF]] : f64) outs(%{{.*}} : tensor<14x14xf64>)
// CHECK: %[[PARTIAL:.+]]:3 = linalg.generic {{.*}} iterator_types = ["reduction", "reduction", "parallel", "parallel"]} ins(%{{.*}} : tensor<64x32x14x14xf16>) outs(%{{.*}}, %{{.*}}, %{{.*}} : tensor<14x14xf64>, tensor<14x14xf32>, tensor<14x14xf64>)
// CHECK: linalg.index 3 : index
// CHECK: linalg.generic {indexing_maps = [#[[LANES:.+]], #[[LANES]], #[[LANES]], #[[ALL:.+]], #[[ALL]], #[[ALL]]], iterator_types = ["reduction", "reduction"]} ins(%[[PARTIAL]]#0, %[[PARTIAL]]#1, %[[PARTIAL]]#2 : tensor<14x14xf64>, tensor<14x14xf32>, tensor<14x14xf64>) outs(%{{.*}} : tensor<f64>, tensor<f32>, tensor<f64>)
// CHECK-NEXT: ^bb0(%[[P0:.+]]: f64, %[[P1:.+]]: f32, %[[P2:.+]]: f64, %[[O0:.+]]: f64, %[[O1:.+]]: f32, %[[O2:.+]]: f64):
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[P0]], %[[O0]] : f64
// CHECK-NEXT: %[[M:.+]] = arith.mulf %[[O1]], %[[P1]] fastmath<nnan> : f32
// CHECK-NEXT: %[[X:.+]] = arith.maximumf %[[O2]], %[[P2]] : f64
// CHECK-NEXT: linalg.yield %[[S]], %[[M]], %[[X]]
// NARROW-LABEL: func.func @statistics
// NARROW: linalg.generic {{.*}} iterator_types = ["reduction", "reduction", "reduction", "reduction"]
// NARROW-NOT: linalg.generic
func.func @statistics(%g: tensor<64x32x14x14xf16>, %i0: tensor<f64>, %i1: tensor<f32>, %i2: tensor<f64>) -> (tensor<f64>, tensor<f32>, tensor<f64>) {
  %r:3 = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> ()>, affine_map<(n, c, h, w) -> ()>, affine_map<(n, c, h, w) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%g : tensor<64x32x14x14xf16>) outs(%i0, %i1, %i2 : tensor<f64>, tensor<f32>, tensor<f64>) {
  ^bb0(%a: f16, %sum: f64, %prod: f32, %max: f64):
    %w = linalg.index 3 : index
    %wi = arith.index_cast %w : index to i64
    %wf = arith.sitofp %wi : i64 to f64
    %wide = arith.extf %a : f16 to f64
    %term = arith.mulf %wide, %wf : f64
    %s = arith.addf %term, %sum : f64
    %f = arith.extf %a : f16 to f32
    %p = arith.mulf %prod, %f fastmath<nnan> : f32
    %m = arith.maximumf %max, %wide : f64
    linalg.yield %s, %p, %m : f64, f32, f64
  } -> (tensor<f64>, tensor<f32>, tensor<f64>)
  return %r#0, %r#1, %r#2 : tensor<f64>, tensor<f32>, tensor<f64>
}

// -----

// Left as they are: too few points; only exact combiners (the targets split
// those themselves); a running value read twice; a combiner without an
// identity; a contraction.

// CHECK-LABEL: func.func @unchanged
// NARROW-LABEL: func.func @unchanged
// CHECK-NOT: -0.0
// CHECK-COUNT-5: linalg.generic
// CHECK-NOT: linalg.generic
func.func @unchanged(%small: tensor<8x8x15xf32>, %big: tensor<64x64x64xf32>, %a: tensor<4x64x64xf32>, %b: tensor<64x64x4xf32>, %f: tensor<f32>, %i: tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<f32>, tensor<f32>, tensor<4x4xf32>) {
  %0 = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%small : tensor<8x8x15xf32>) outs(%f : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %1 = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%big : tensor<64x64x64xf32>) outs(%i : tensor<i32>) {
  ^bb0(%x: f32, %acc: i32):
    %nz = arith.fptosi %x : f32 to i32
    %s = arith.addi %acc, %nz : i32
    linalg.yield %s : i32
  } -> tensor<i32>
  %3 = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%big : tensor<64x64x64xf32>) outs(%f : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %t = arith.mulf %acc, %x : f32
    %s = arith.addf %acc, %t : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %4 = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%big : tensor<64x64x64xf32>) outs(%f : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.maxnumf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %empty = tensor.empty() : tensor<4x4xf32>
  %5 = linalg.generic {indexing_maps = [affine_map<(m, n, k, l) -> (m, k, l)>, affine_map<(m, n, k, l) -> (k, l, n)>, affine_map<(m, n, k, l) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%a, %b : tensor<4x64x64xf32>, tensor<64x64x4xf32>) outs(%empty : tensor<4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %0, %1, %3, %4, %5 : tensor<f32>, tensor<i32>, tensor<f32>, tensor<f32>, tensor<4x4xf32>
}

// -----

// Whole tensors summed whose innermost loops make too few lanes (a 3x3
// convolution weight of 512 input channels: 9, and 9 x 512 is more than
// 4096; a single loop: none) are read as (points / lanes) x lanes instead,
// the most lanes that divide the points (at most 4096, each of at least 8
// points): 2359296 = 576 x 4096 and 262144 = 64 x 4096 (with at most 100
// lanes, 4096 x 64). A maximum beside the sum is split alike. A prime
// number of points has no such lanes and is left alone.

// CHECK-LABEL: func.func @whole_tensors
// CHECK-SAME:      %[[W:[^:]*]]: tensor<512x512x3x3xf16>, %[[FLAT:[^:]*]]: tensor<262144xf32>
// CHECK:         %[[WFLAT:.+]] = tensor.collapse_shape %[[W]] {{\[\[}}0, 1, 2, 3]] : tensor<512x512x3x3xf16> into tensor<2359296xf16>
// CHECK:         %[[WM:.+]] = tensor.expand_shape %[[WFLAT]] {{\[\[}}0, 1]] output_shape [576, 4096] : tensor<2359296xf16> into tensor<576x4096xf16>
// CHECK:         %[[WP:.+]]:2 = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[WM]] : tensor<576x4096xf16>) outs(%{{.*}}, %{{.*}} : tensor<4096xf64>, tensor<4096xf64>)
// CHECK:           arith.addf
// CHECK:           arith.maximumf
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[WP]]#0, %[[WP]]#1 : tensor<4096xf64>, tensor<4096xf64>)
// CHECK:         %[[FM:.+]] = tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [64, 4096] : tensor<262144xf32> into tensor<64x4096xf32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[FM]] : tensor<64x4096xf32>) outs(%{{.*}} : tensor<4096xf32>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%{{.*}} : tensor<4096xf32>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%{{.*}} : tensor<4099xf32>)
// CHECK-NOT:     linalg.generic
// NARROW-LABEL: func.func @whole_tensors
// NARROW:         tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [4096, 64] : tensor<262144xf32> into tensor<4096x64xf32>
func.func @whole_tensors(%w: tensor<512x512x3x3xf16>, %flat: tensor<262144xf32>, %prime: tensor<4099xf32>, %d: tensor<f64>, %f: tensor<f32>) -> (tensor<f64>, tensor<f64>, tensor<f32>, tensor<f32>) {
  %0:2 = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> ()>, affine_map<(a, b, c, d) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%w : tensor<512x512x3x3xf16>) outs(%d, %d : tensor<f64>, tensor<f64>) {
  ^bb0(%x: f16, %sum: f64, %max: f64):
    %wide = arith.extf %x : f16 to f64
    %sq = arith.mulf %wide, %wide : f64
    %s = arith.addf %sum, %sq : f64
    %abs = math.absf %wide : f64
    %m = arith.maximumf %max, %abs : f64
    linalg.yield %s, %m : f64, f64
  } -> (tensor<f64>, tensor<f64>)
  %1 = linalg.generic {indexing_maps = [affine_map<(a) -> (a)>, affine_map<(a) -> ()>], iterator_types = ["reduction"]} ins(%flat : tensor<262144xf32>) outs(%f : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %2 = linalg.generic {indexing_maps = [affine_map<(a) -> (a)>, affine_map<(a) -> ()>], iterator_types = ["reduction"]} ins(%prime : tensor<4099xf32>) outs(%f : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %0#0, %0#1, %1, %2 : tensor<f64>, tensor<f64>, tensor<f32>, tensor<f32>
}

// -----

// Grouped convolutions no target's kernel computes (a filter or two a
// group: too few for a GEMM): a depthwise convolution's weight gradient,
// 32 channels' 3x3 offsets each summing 64 images' 28 x 28 positions,
// becomes a generic split into the 28 x 28 kernel offsets (lanes reading
// consecutive input elements) of 64 points each, then the lanes added in
// order. The same at dilation 2 (a stride-2 layer's weight gradient,
// whose lanes would read every other element), a group that fills a GEMM
// (4 filters, 16 channels of 8x8 offsets: 64 lanes of 16 points were it
// split), and a shallow one (the depthwise forward
// convolution, 9 products an output) stay named ops.
// CHECK-LABEL: func.func @grouped
// CHECK:         %[[LANES:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "parallel", "parallel"]} ins(%{{.+}}, %{{.+}} : tensor<1x32x64x30x30xf16>, tensor<32x1x64x28x28xf16>) outs(%{{.+}} : tensor<1x32x1x3x3x28x28xf32>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[LANES]] : tensor<1x32x1x3x3x28x28xf32>)
// CHECK:         linalg.conv_2d_ngchw_gfchw {dilations = dense<2> : tensor<2xi64>
// CHECK:         linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%{{.+}}, %{{.+}} : tensor<2x2x16x10x10xf16>, tensor<2x4x16x8x8xf16>)
// CHECK:         linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%{{.+}}, %{{.+}} : tensor<64x32x1x30x30xf16>, tensor<32x1x1x3x3xf16>)
func.func @grouped(%x: tensor<1x32x64x30x30xf16>, %dy: tensor<32x1x64x28x28xf16>, %x2: tensor<1x32x64x57x57xf16>, %dy2: tensor<32x1x64x28x28xf16>, %xg: tensor<2x2x16x10x10xf16>, %wg: tensor<2x4x16x8x8xf16>, %xf: tensor<64x32x1x30x30xf16>, %wf: tensor<32x1x1x3x3xf16>) -> (tensor<1x32x1x3x3xf32>, tensor<1x32x1x3x3xf32>, tensor<2x2x4x3x3xf32>, tensor<64x32x1x28x28xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x32x1x3x3xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x32x1x3x3xf32>) -> tensor<1x32x1x3x3xf32>
  %dw = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %dy : tensor<1x32x64x30x30xf16>, tensor<32x1x64x28x28xf16>) outs(%z0 : tensor<1x32x1x3x3xf32>) -> tensor<1x32x1x3x3xf32>
  %dw2 = linalg.conv_2d_ngchw_gfchw {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x2, %dy2 : tensor<1x32x64x57x57xf16>, tensor<32x1x64x28x28xf16>) outs(%z0 : tensor<1x32x1x3x3xf32>) -> tensor<1x32x1x3x3xf32>
  %e1 = tensor.empty() : tensor<2x2x4x3x3xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x2x4x3x3xf32>) -> tensor<2x2x4x3x3xf32>
  %g = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%xg, %wg : tensor<2x2x16x10x10xf16>, tensor<2x4x16x8x8xf16>) outs(%z1 : tensor<2x2x4x3x3xf32>) -> tensor<2x2x4x3x3xf32>
  %e2 = tensor.empty() : tensor<64x32x1x28x28xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<64x32x1x28x28xf32>) -> tensor<64x32x1x28x28xf32>
  %f = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%xf, %wf : tensor<64x32x1x30x30xf16>, tensor<32x1x1x3x3xf16>) outs(%z2 : tensor<64x32x1x28x28xf32>) -> tensor<64x32x1x28x28xf32>
  return %dw, %dw2, %g, %f : tensor<1x32x1x3x3xf32>, tensor<1x32x1x3x3xf32>, tensor<2x2x4x3x3xf32>, tensor<64x32x1x28x28xf32>
}
