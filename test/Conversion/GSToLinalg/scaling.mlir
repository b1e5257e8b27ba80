// RUN: gs-opt %s --split-input-file --convert-gs-to-linalg | FileCheck %s

// Scaling.cpp: !gs.stats is a tensor<7xf64> (count, sum, sum of squares,
// max |x|, nonzero count, and the sum and sum of squares of ln|x| over the
// nonzeros), filled by one reduction over the gradient in f64.

// CHECK-LABEL: func.func @grad_stats(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xf16>)
// CHECK:         %[[R:.*]]:6 = linalg.generic
// CHECK-SAME:        iterator_types = ["reduction", "reduction"]
// CHECK-SAME:        ins(%[[X]] : tensor<4x8xf16>)
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f16, %[[SUM:.*]]: f64, %[[SQ:.*]]: f64, %[[MAX:.*]]: f64, %[[NZ:.*]]: f64, %[[SL:.*]]: f64, %[[SL2:.*]]: f64):
// CHECK-NEXT:      %[[W:.*]] = arith.extf %[[V]] : f16 to f64
// CHECK-NEXT:      %[[A:.*]] = math.absf %[[W]] : f64
// CHECK:           %[[NONZERO:.*]] = arith.cmpf olt, %{{.*}}, %[[A]] : f64
// CHECK:           %[[SAFE:.*]] = arith.select %[[NONZERO]], %[[A]], %{{.*}} : f64
// ln|x| inline from its exponent and mantissa bits (a libm call would keep
// the loop scalar); (m-1)/(m+1) from an f32 reciprocal of m+1 refined by a
// Newton step in f64 (no f64 division), the atanh series by FMAs:
// CHECK:           %[[BITS:.*]] = arith.bitcast %[[SAFE]] : f64 to i64
// CHECK:           arith.shrui %[[BITS]]
// CHECK-NOT:       math.log
// CHECK:           %[[DEN:.*]] = arith.addf %[[M:.*]], %{{.*}} : f64
// CHECK:           %[[NARROW:.*]] = arith.truncf %[[DEN]] : f64 to f32
// CHECK:           %[[RCP:.*]] = arith.divf %{{.*}}, %[[NARROW]] : f32
// CHECK:           %[[R:.*]] = arith.extf %[[RCP]] : f32 to f64
// CHECK:           %[[T0:.*]] = arith.mulf %{{.*}}, %[[R]] : f64
// CHECK:           %[[NEG:.*]] = arith.negf %[[T0]] : f64
// CHECK:           %[[RES:.*]] = math.fma %[[NEG]], %[[DEN]], %{{.*}} : f64
// CHECK:           %[[T:.*]] = math.fma %[[RES]], %[[R]], %[[T0]] : f64
// CHECK-COUNT-8:   math.fma
// CHECK-NOT:       arith.divf
// CHECK-NOT:       math.log
// CHECK:           arith.maximumf %[[MAX]], %[[A]] : f64
// CHECK:         %[[COUNT:.*]] = arith.constant 3.200000e+01 : f64
// CHECK:         %[[STATS:.*]] = tensor.from_elements %[[COUNT]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<7xf64>
// CHECK:         %[[MAXABS:.*]] = tensor.extract %[[STATS]][%c3{{.*}}] : tensor<7xf64>
func.func @grad_stats(%x: tensor<4x8xf16>) -> f32 {
  %s = gs.grad_stats %x : tensor<4x8xf16>
  %a = arith.constant 1.0 : f32
  %b = gs.unify_scales %a stats %s
  return %b : f32
}

// -----

// The half-normal model: sigma = sqrt(N) * rms(dY) * rms(W) (times sqrt(1/2)
// with a ReLU mask), beta_uf = 2^-24 / (sqrt(2) sigma erfinv(threshold))
// with the constant folded at compile time, the overflow cap 65504 /
// (N max|dY| max|W|), then rounding (up, down) on the f64 bits (the
// mantissa cleared; up, the next binade unless it was 0), the clamp at
// min_scale and the f32 result.

// CHECK-LABEL: func.func @half_normal(
// CHECK:         %[[FACTOR:.*]] = arith.constant 11.31370849{{[0-9]*}} : f64
// CHECK:         %[[SIGMA:.*]] = arith.mulf %[[FACTOR]], %{{.*}} : f64
// CHECK:         %[[UF:.*]] = arith.constant 4.75576{{[0-9]*}}E-5 : f64
// CHECK:         %[[BUF:.*]] = arith.divf %[[UF]], %[[SIGMA]] : f64
// CHECK:         %[[OF:.*]] = arith.constant 2.558750e+02 : f64
// CHECK:         %[[BOF:.*]] = arith.divf %[[OF]], %{{.*}} : f64
// CHECK:         %[[B1:.*]] = arith.bitcast %[[BUF]] : f64 to i64
// CHECK:         %[[P1:.*]] = arith.andi %[[B1]], %c-4503599627370496_i64{{.*}} : i64
// CHECK:         %[[M1:.*]] = arith.andi %[[B1]], %c4503599627370495_i64{{.*}} : i64
// CHECK:         %[[E1:.*]] = arith.cmpi eq, %[[M1]], %c0_i64{{.*}} : i64
// CHECK:         %[[N1:.*]] = arith.addi %[[P1]], %c4503599627370496_i64{{.*}} : i64
// CHECK:         %[[S1:.*]] = arith.select %[[E1]], %[[P1]], %[[N1]] : i64
// CHECK:         arith.bitcast %[[S1]] : i64 to f64
// CHECK:         %[[B2:.*]] = arith.bitcast %[[BOF]] : f64 to i64
// CHECK:         %[[P2:.*]] = arith.andi %[[B2]], %c-4503599627370496_i64{{.*}} : i64
// CHECK:         arith.bitcast %[[P2]] : i64 to f64
// The estimate: erf(2^-24 / sqrt(2) / (beta sigma)).
// CHECK:         %[[C:.*]] = arith.constant 4.21468485{{[0-9]*}}E-8 : f64
// CHECK:         %[[BS:.*]] = arith.mulf %{{.*}}, %[[SIGMA]] : f64
// CHECK:         %[[Q:.*]] = arith.divf %[[C]], %[[BS]] : f64
// CHECK:         math.erf %[[Q]] : f64
// CHECK:         arith.truncf %{{.*}} : f64 to f32
func.func @half_normal(%dy: tensor<8x256xf16>, %w: tensor<256x64xf16>) -> (f32, f64) {
  %sdy = gs.grad_stats %dy : tensor<8x256xf16>
  %sw = gs.grad_stats %w : tensor<256x64xf16>
  %beta, %rate = gs.compute_scale %sdy, %sw {model = #gs.scale_model<half_normal>, accum_length = 256 : i64, relu_mask}
  return %beta, %rate : f32, f64
}

// -----

// The log-normal model on the nonzero |dY|: mu and s from the log-moments,
// beta_uf = exp(ln 2^-24 - mu - s * sqrt(2) * erfinv(2 threshold - 1)),
// the cap 65504 / max|dY|; no rounding when asked for none.

// CHECK-LABEL: func.func @log_normal(
// CHECK:         %[[LNMIN:.*]] = arith.constant -16.635532333438686 : f64
// CHECK:         %[[SHIFT:.*]] = arith.subf %[[LNMIN]], %{{.*}} : f64
// CHECK:         %[[K:.*]] = arith.constant -3.090232306167{{[0-9]*}} : f64
// CHECK:         %[[SPREAD:.*]] = arith.mulf %{{.*}}, %[[K]] : f64
// CHECK:         %[[EXP:.*]] = arith.subf %[[SHIFT]], %[[SPREAD]] : f64
// CHECK:         math.exp %[[EXP]] : f64
// CHECK-NOT:     arith.bitcast
// The estimate: Phi(z) = erfc(-z / sqrt(2)) / 2.
// CHECK:         math.log
// CHECK:         math.erfc
// CHECK:         arith.truncf %{{.*}} : f64 to f32
func.func @log_normal(%dy: tensor<8x10xf32>) -> (f32, f64) {
  %s = gs.grad_stats %dy : tensor<8x10xf32>
  %beta, %rate = gs.compute_scale %s {model = #gs.scale_model<log_normal>, underflow_rounding = #gs.rounding<none>, overflow_rounding = #gs.rounding<none>}
  return %beta, %rate : f32, f64
}

// -----

// An f64 gradient may hold subnormals, which the inline ln does not take:
// libm's log.

// CHECK-LABEL: func.func @grad_stats_f64(
// CHECK:         linalg.generic
// CHECK-NOT:       arith.bitcast
// CHECK:           math.log %{{.*}} : f64
func.func @grad_stats_f64(%x: tensor<4x8xf64>) -> f32 {
  %s = gs.grad_stats %x : tensor<4x8xf64>
  %a = arith.constant 1.0 : f32
  %b = gs.unify_scales %a stats %s
  return %b : f32
}

// -----

// cast_stats: one reduction into four counts of the input rounded to
// FP16 (arith.truncf rounds to nearest even, as gs.cast does), in i32
// counters (fewer than 2^31 elements) widened to i64 after the pass.

// CHECK-LABEL: func.func @cast_stats(
// CHECK:         %[[COUNTS:.*]]:4 = linalg.generic
// CHECK-SAME:        outs({{.*}} : tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>)
// CHECK:           %[[H:.*]] = arith.truncf %{{.*}} : f32 to f16
// CHECK:           %[[M:.*]] = math.absf %[[H]] : f16
// CHECK:           %[[NZ:.*]] = arith.cmpf une, %{{.*}}, %{{.*}} : f32
// CHECK:           %[[Z:.*]] = arith.cmpf oeq, %[[M]], %{{.*}} : f16
// CHECK:           arith.andi %[[NZ]], %[[Z]] : i1
// CHECK:           arith.cmpf olt, %[[M]], %{{.*}} : f16
// CHECK:           arith.cmpf oeq, %[[M]], %{{.*}} : f16
// CHECK-COUNT-4:   arith.extui %{{.*}} : i1 to i32
// CHECK:         %[[N:.*]] = tensor.extract %[[COUNTS]]#0[] : tensor<i32>
// CHECK-COUNT-3: tensor.extract
// CHECK:         %[[WIDE:.*]] = arith.extui %[[N]] : i32 to i64
// CHECK-COUNT-3: arith.extui %{{.*}} : i32 to i64
// CHECK:         tensor.from_elements %[[WIDE]], %{{.*}}, %{{.*}}, %{{.*}} : tensor<4xi64>
func.func @cast_stats(%x: tensor<8x10xf32>) -> tensor<4xi64> {
  %counts = gs.cast_stats %x : tensor<8x10xf32>
  return %counts : tensor<4xi64>
}

// -----

// 2^31 elements and more: i64 counters.

// CHECK-LABEL: func.func @cast_stats_2g(
// CHECK:         linalg.generic
// CHECK-SAME:        outs({{.*}} : tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>)
// CHECK-COUNT-4:   arith.extui %{{.*}} : i1 to i64
// CHECK-NOT:     i32
// CHECK:         tensor.from_elements
func.func @cast_stats_2g(%x: tensor<65536x32768xf32>) -> tensor<4xi64> {
  %counts = gs.cast_stats %x : tensor<65536x32768xf32>
  return %counts : tensor<4xi64>
}

// -----

// exponent_histogram: the tensor flattened, one loop adding each nonzero
// to the bin of its FP32 biased exponent; the histogram model of
// compute_scale scans the bins for the largest cut at most threshold *
// nonzeros below it, and the scale is 2^(102 - cut).

// CHECK-LABEL: func.func @exponent_histogram(
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<4x8xf16> into tensor<32xf16>
// CHECK:         %[[H:.*]] = scf.for %[[I:.*]] = %{{.*}} to %c32 step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<256xi64>)
// CHECK:           %[[X:.*]] = tensor.extract %[[FLAT]][%[[I]]] : tensor<32xf16>
// CHECK:           %[[W:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK:           %[[BITS:.*]] = arith.bitcast %[[W]] : f32 to i32
// CHECK:           %[[E:.*]] = arith.shrui %[[BITS]], %{{.*}} : i32
// CHECK:           arith.andi %[[E]], %{{.*}} : i32
// CHECK:           tensor.insert %{{.*}} into %[[ACC]]
// CHECK:         scf.for %{{.*}} = %{{.*}} to %c256 step
// CHECK:           tensor.extract %[[H]]
// CHECK:           arith.cmpf ole
// CHECK:         %[[CUT:.*]] = arith.constant 1.020000e+02 : f64
// CHECK:         arith.subf %[[CUT]], %{{.*}} : f64
// CHECK:         math.exp2
func.func @exponent_histogram(%x: tensor<4x8xf16>) -> f32 {
  %s = gs.grad_stats %x : tensor<4x8xf16>
  %h = gs.exponent_histogram %x : tensor<4x8xf16>
  %beta, %rate = gs.compute_scale %s histogram(%h) {model = #gs.scale_model<exponent_histogram>}
  return %beta : f32
}

// -----

// all_finite: one reduction of |x| < inf per operand, and-ed.

// CHECK-LABEL: func.func @all_finite(
// CHECK:         linalg.generic
// CHECK:           %[[A:.*]] = math.absf %{{.*}} : f32
// CHECK:           %[[F:.*]] = arith.cmpf olt, %[[A]], %{{.*}} : f32
// CHECK:           arith.andi %{{.*}}, %[[F]] : i1
// CHECK:         linalg.generic
// CHECK:           math.absf %{{.*}} : f16
// CHECK:         %[[LAST:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
// CHECK:         %[[ALL:.*]] = arith.andi %{{.*}}, %[[LAST]] : i1
// CHECK:         return %[[ALL]] : i1
func.func @all_finite(%a: tensor<4x4xf32>, %b: tensor<8xf16>) -> i1 {
  %ok = gs.all_finite %a, %b : tensor<4x4xf32>, tensor<8xf16>
  return %ok : i1
}

// -----

// convert-gs-to-gpu's casts between !gs.stats and its lowered type (host
// statistics read by a device kernel, a kernel's statistics read by host
// code) resolve to the lowered tensor itself.

// CHECK-LABEL: func.func @stats_casts(
// CHECK-SAME:    %[[X:.*]]: tensor<8x10xf32>
// CHECK:         %[[STATS:.*]] = tensor.from_elements {{.*}} : tensor<7xf64>
// CHECK-NOT:     unrealized_conversion_cast
// CHECK:         return %[[STATS]]
func.func @stats_casts(%x: tensor<8x10xf32>) -> tensor<7xf64> {
  %s = gs.grad_stats %x : tensor<8x10xf32>
  %lowered = builtin.unrealized_conversion_cast %s : !gs.stats to tensor<7xf64>
  return %lowered : tensor<7xf64>
}
