// RUN: gs-opt %s --convert-gs-to-gpu | FileCheck %s

// Each 2-D FP16 contraction becomes a call, on tensors, of the entry of a
// fused GEMM kernel built for its shape, layouts and epilogue; equal
// contractions share a kernel.
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[X:.+]]: tensor<64x784xf16>, %[[W:.+]]: tensor<128x784xf16>, %[[B:.+]]: tensor<128xf16>, %[[DY:.+]]: tensor<64x10xf16>, %[[W2:.+]]: tensor<10x128xf16>, %[[BETA:.+]]: f32, %[[F:.+]]: tensor<64x784xf32>)

// A forward layer: B transposed, an f16 bias, scale 1, no statistics.
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[S1:.+]] = tensor.from_elements %[[ONE]] : tensor<1xf32>
// CHECK: %[[H:.+]] = call @gs_gemm_64x128x784_tb_bias_f16_f16_nostats_entry(%[[X]], %[[W]], %[[S1]], %[[B]]) : (tensor<64x784xf16>, tensor<128x784xf16>, tensor<1xf32>, tensor<128xf16>) -> tensor<64x128xf16>

// A data gradient with its epilogue: the scale as the kernel reads it, the
// statistics back as the lowered !gs.stats.
// CHECK: %[[S2:.+]] = tensor.from_elements %[[BETA]] : tensor<1xf32>
// CHECK: %[[DX:.+]]:3 = call @gs_gemm_64x128x10_f16_entry(%[[DY]], %[[W2]], %[[S2]]) : (tensor<64x10xf16>, tensor<10x128xf16>, tensor<1xf32>) -> (tensor<64x128xf16>, tensor<7xf64>, tensor<4xi64>)

// The next scale, decided on the device from the statistics the epilogue
// left there and the weight's, computed on the host (cast to their lowered
// type for convert-gs-to-linalg).
// CHECK: %[[SW:.+]] = gs.grad_stats %[[W2]]
// CHECK: %[[SWT:.+]] = builtin.unrealized_conversion_cast %[[SW]] : !gs.stats to tensor<7xf64>
// CHECK: %[[NEXT:.+]]:2 = call @gs_scale_half_normal_k10_entry(%[[DX]]#1, %[[SWT]]) : (tensor<7xf64>, tensor<7xf64>) -> (tensor<1xf32>, tensor<1xf64>)
// CHECK: %[[NEXTS:.+]] = tensor.extract %[[NEXT]]#0[%{{.+}}] : tensor<1xf32>
// CHECK-NOT: gs.compute_scale

// A weight gradient (A transposed, f32), twice: one kernel.
// CHECK: call @gs_gemm_10x128x64_ta_f32_nostats_entry(%[[DY]], %[[H]], %{{.+}})
// CHECK: call @gs_gemm_10x128x64_ta_f32_nostats_entry(%[[DY]], %[[H]], %{{.+}})

// Left to convert-gs-to-linalg: FP32 operands, alpha != 1, a batched
// matmul.
// CHECK: gs.gemm %[[F]], %{{.+}} {transB} : tensor<64x784xf32>
// CHECK: gs.gemm %[[X]], %[[W]] {alpha
// CHECK: gs.matmul %{{.+}}, %{{.+}} : tensor<2x64x10xf16>
// CHECK: return %[[DX]]#0, %[[DX]]#2, %[[NEXTS]]

func.func @step(%x: tensor<64x784xf16>, %w: tensor<128x784xf16>, %b: tensor<128xf16>, %dy: tensor<64x10xf16>, %w2: tensor<10x128xf16>, %beta: f32, %f: tensor<64x784xf32>) -> (tensor<64x128xf16>, tensor<4xi64>, f32, tensor<10x128xf32>, tensor<10x128xf32>, tensor<64x128xf32>, tensor<64x128xf16>, tensor<2x64x128xf16>) {
  %h = gs.gemm %x, %w, %b {transB} : tensor<64x784xf16>, tensor<128x784xf16>, tensor<128xf16> -> tensor<64x128xf16>
  %dx, %stats, %counts = gs.scaled_contraction scale %beta : tensor<64x128xf16> {
    %p = gs.gemm %dy, %w2 : tensor<64x10xf16>, tensor<10x128xf16> -> tensor<64x128xf32>
    gs.yield %p : tensor<64x128xf32>
  }
  %sw = gs.grad_stats %w2 : tensor<10x128xf16>
  %next, %e = gs.compute_scale %stats, %sw {accum_length = 10 : i64, model = #gs.scale_model<half_normal>}
  %dw = gs.gemm %dy, %h {transA} : tensor<64x10xf16>, tensor<64x128xf16> -> tensor<10x128xf32>
  %dw2 = gs.gemm %dy, %h {transA} : tensor<64x10xf16>, tensor<64x128xf16> -> tensor<10x128xf32>
  %wf = gs.cast %w : tensor<128x784xf16> to tensor<128x784xf32>
  %g = gs.gemm %f, %wf {transB} : tensor<64x784xf32>, tensor<128x784xf32> -> tensor<64x128xf32>
  %a = gs.gemm %x, %w {transB, alpha = 2.0 : f32} : tensor<64x784xf16>, tensor<128x784xf16> -> tensor<64x128xf16>
  %dys = gs.reshape %dy : tensor<64x10xf16> -> tensor<1x64x10xf16>
  %dyb = gs.concat %dys, %dys <{axis = 0 : i64}> : tensor<1x64x10xf16>, tensor<1x64x10xf16>
  %bm = gs.matmul %dyb, %w2 : tensor<2x64x10xf16>, tensor<10x128xf16> -> tensor<2x64x128xf16>
  return %dx, %counts, %next, %dw, %dw2, %g, %a, %bm : tensor<64x128xf16>, tensor<4xi64>, f32, tensor<10x128xf32>, tensor<10x128xf32>, tensor<64x128xf32>, tensor<64x128xf16>, tensor<2x64x128xf16>
}

// Convolutions without groups as implicit GEMMs (the kernel takes the
// weight, the input and the output in their own shapes), a data gradient
// with its scaling epilogue; a grouped one stays.
// CHECK-LABEL: func.func @convolutions
// CHECK: call @gs_conv_2x3x9x9_k8x3x3_o5x5_s2x2_d1x1_p1x1_bias_f16_f16_nostats_entry(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) : (tensor<8x3x3x3xf16>, tensor<2x3x9x9xf16>, tensor<1xf32>, tensor<8xf16>) -> tensor<2x8x5x5xf16>
// CHECK: call @gs_convt_2x8x5x5_k3x3x3_o9x9_s2x2_d1x1_p1x1_f32_nostats_entry(%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<8x3x3x3xf16>, tensor<2x8x5x5xf16>, tensor<1xf32>) -> tensor<2x3x9x9xf32>
// CHECK: %[[DG:.+]]:3 = call @gs_convt_2x8x5x5_k3x3x3_o9x9_s2x2_d1x1_p1x1_f16_entry(%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<8x3x3x3xf16>, tensor<2x8x5x5xf16>, tensor<1xf32>) -> (tensor<2x3x9x9xf16>, tensor<7xf64>, tensor<4xi64>)
// CHECK: gs.conv %{{.+}}, %{{.+}} {group = 2 : i64}
// CHECK: return %{{.+}}, %{{.+}}, %{{.+}}, %[[DG]]#0, %[[DG]]#2
func.func @convolutions(%x: tensor<2x3x9x9xf16>, %w: tensor<8x3x3x3xf16>, %b: tensor<8xf16>, %g: tensor<2x4x5x5xf16>, %gw: tensor<4x2x3x3xf16>, %beta: f32) -> (tensor<2x8x5x5xf16>, tensor<2x3x9x9xf32>, tensor<2x4x3x3xf16>, tensor<2x3x9x9xf16>, tensor<4xi64>) {
  %y = gs.conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<2x3x9x9xf16>, tensor<8x3x3x3xf16>, tensor<8xf16> -> tensor<2x8x5x5xf16>
  %dx = gs.conv_transpose %y, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<2x8x5x5xf16>, tensor<8x3x3x3xf16> -> tensor<2x3x9x9xf32>
  %scaled, %stats, %counts = gs.scaled_contraction scale %beta : tensor<2x3x9x9xf16> {
    %p = gs.conv_transpose %y, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<2x8x5x5xf16>, tensor<8x3x3x3xf16> -> tensor<2x3x9x9xf32>
    gs.yield %p : tensor<2x3x9x9xf32>
  }
  %z = gs.conv %g, %gw {group = 2 : i64} : tensor<2x4x5x5xf16>, tensor<4x2x3x3xf16> -> tensor<2x4x3x3xf16>
  return %y, %dx, %z, %scaled, %counts : tensor<2x8x5x5xf16>, tensor<2x3x9x9xf32>, tensor<2x4x3x3xf16>, tensor<2x3x9x9xf16>, tensor<4xi64>
}

// A grouped convolution of 8 or more output channels a group: one implicit
// GEMM a group (the kernel takes the weight of C / G input channels and
// the bias of every output channel). A depthwise one (one output channel a
// group) and a transposed one of 4 output channels a group stay.
// CHECK-LABEL: func.func @grouped_convolutions
// CHECK: call @gs_conv_2x8x9x9_k16x3x3_o9x9_s1x1_d1x1_p1x1_g2_bias_f16_f16_nostats_entry(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) : (tensor<16x4x3x3xf16>, tensor<2x8x9x9xf16>, tensor<1xf32>, tensor<16xf16>) -> tensor<2x16x9x9xf16>
// CHECK: gs.conv %{{.+}}, %{{.+}} {group = 8 : i64
// CHECK: gs.conv_transpose %{{.+}}, %{{.+}} {group = 2 : i64
func.func @grouped_convolutions(%x: tensor<2x8x9x9xf16>, %w: tensor<16x4x3x3xf16>, %b: tensor<16xf16>, %dw: tensor<8x1x3x3xf16>) -> (tensor<2x16x9x9xf16>, tensor<2x8x9x9xf16>, tensor<2x8x9x9xf16>) {
  %y = gs.conv %x, %w, %b {group = 2 : i64, pads = array<i64: 1, 1, 1, 1>} : tensor<2x8x9x9xf16>, tensor<16x4x3x3xf16>, tensor<16xf16> -> tensor<2x16x9x9xf16>
  %d = gs.conv %x, %dw {group = 8 : i64, pads = array<i64: 1, 1, 1, 1>} : tensor<2x8x9x9xf16>, tensor<8x1x3x3xf16> -> tensor<2x8x9x9xf16>
  %t = gs.conv_transpose %y, %w {group = 2 : i64, pads = array<i64: 1, 1, 1, 1>} : tensor<2x16x9x9xf16>, tensor<16x4x3x3xf16> -> tensor<2x8x9x9xf16>
  return %y, %d, %t : tensor<2x16x9x9xf16>, tensor<2x8x9x9xf16>, tensor<2x8x9x9xf16>
}

// Left for the CPU: an empty batch, and more rows than a grid's y dimension
// takes in blocks (65535 x 64).
// CHECK-LABEL: func.func @too_small_or_tall
// CHECK: gs.gemm %{{.+}}, %{{.+}} : tensor<0x8xf16>
// CHECK: gs.gemm %{{.+}}, %{{.+}} : tensor<4194305x8xf16>
func.func @too_small_or_tall(%e: tensor<0x8xf16>, %t: tensor<4194305x8xf16>, %w: tensor<8x16xf16>) -> (tensor<0x16xf32>, tensor<4194305x16xf32>) {
  %0 = gs.gemm %e, %w : tensor<0x8xf16>, tensor<8x16xf16> -> tensor<0x16xf32>
  %1 = gs.gemm %t, %w : tensor<4194305x8xf16>, tensor<8x16xf16> -> tensor<4194305x16xf32>
  return %0, %1 : tensor<0x16xf32>, tensor<4194305x16xf32>
}

// A ReLU backward fused into the epilogue: the forward activation is the
// kernel's mask.
// CHECK-LABEL: func.func @relu_backward
// CHECK-SAME: (%[[DY:.+]]: tensor<16x8xf16>, %[[W:.+]]: tensor<8x32xf16>, %[[H:.+]]: tensor<16x32xf16>, %{{.+}}: f32)
// CHECK: call @gs_gemm_16x32x8_f16_relu_entry(%[[DY]], %[[W]], %{{.+}}, %[[H]]) : (tensor<16x8xf16>, tensor<8x32xf16>, tensor<1xf32>, tensor<16x32xf16>) -> (tensor<16x32xf16>, tensor<7xf64>, tensor<4xi64>)
func.func @relu_backward(%dy: tensor<16x8xf16>, %w: tensor<8x32xf16>, %h: tensor<16x32xf16>, %beta: f32) -> (tensor<16x32xf16>, tensor<4xi64>) {
  %dx, %s, %c = gs.scaled_contraction scale %beta relu_mask(%h : tensor<16x32xf16>) : tensor<16x32xf16> {
    %p = gs.gemm %dy, %w : tensor<16x8xf16>, tensor<8x32xf16> -> tensor<16x32xf32>
    gs.yield %p : tensor<16x32xf32>
  }
  return %dx, %c : tensor<16x32xf16>, tensor<4xi64>
}

// Scale decisions: one kernel per distinct decision (model, accumulation
// length, mask, threshold, bounds, roundings, operands), named after it; a
// scale a decision kernel wrote goes to the GEMM kernel that applies it as
// the one-element tensor it is, and gs.unify_scales is a kernel too.
// CHECK-LABEL: func.func @decisions
// CHECK: %[[SG:.+]] = gs.grad_stats
// CHECK-NEXT: %[[SGT:.+]] = builtin.unrealized_conversion_cast %[[SG]] : !gs.stats to tensor<7xf64>
// CHECK: %[[D0:.+]]:2 = call @gs_scale_log_normal_entry(%[[SGT]])
// CHECK: %[[D1:.+]]:2 = call @gs_scale_log_normal_entry(%{{.+}})
// CHECK: %[[D2:.+]]:2 = call @gs_scale_log_normal_1_entry(%{{.+}})
// CHECK: %[[D3:.+]]:2 = call @gs_scale_exponent_histogram_accum_entry(%[[SGT]], %{{.+}}, %{{.+}}) : (tensor<7xf64>, tensor<256xi64>, tensor<1xf32>) -> (tensor<1xf32>, tensor<1xf64>)
// CHECK: %[[U:.+]] = call @gs_unify_scales_2_entry(%[[D0]]#0, %[[D2]]#0, %{{.+}}, %{{.+}}) : (tensor<1xf32>, tensor<1xf32>, tensor<7xf64>, tensor<7xf64>) -> tensor<1xf32>
// CHECK: call @gs_gemm_16x16x16_f16_nostats_entry(%{{.+}}, %{{.+}}, %[[U]])
// CHECK-NOT: gs.compute_scale
// CHECK-NOT: gs.unify_scales
func.func @decisions(%g: tensor<16x16xf32>, %h: tensor<16x16xf16>, %w: tensor<16x16xf16>, %alpha: f32) -> (f32, f64, f32, f32, tensor<16x16xf16>) {
  %sg = gs.grad_stats %g : tensor<16x16xf32>
  %sh = gs.grad_stats %h : tensor<16x16xf16>
  %hist = gs.exponent_histogram %g : tensor<16x16xf32>
  %b0, %e0 = gs.compute_scale %sg {model = #gs.scale_model<log_normal>}
  %b1, %e1 = gs.compute_scale %sh {model = #gs.scale_model<log_normal>}
  %b2, %e2 = gs.compute_scale %sh {model = #gs.scale_model<log_normal>, threshold = 1.0e-2 : f64}
  %b3, %e3 = gs.compute_scale %sg histogram(%hist) alpha(%alpha) {model = #gs.scale_model<exponent_histogram>, max_accum_scale = 1.048576e+06 : f64}
  %u = gs.unify_scales %b0, %b2 stats %sg, %sh
  %dx, %stats, %counts = gs.scaled_contraction scale %u : tensor<16x16xf16> {
    %p = gs.gemm %h, %w : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    gs.yield %p : tensor<16x16xf32>
  }
  return %b1, %e1, %b3, %u, %dx : f32, f64, f32, f32, tensor<16x16xf16>
}

// The kernels and their entries, private, after the functions (all the
// functions' kernels).
// CHECK-DAG: func.func private @gs_gemm_64x128x784_tb_bias_f16_f16_nostats(%{{.+}}: memref<64x784xf16>, %{{.+}}: memref<128x784xf16>, %{{.+}}: memref<1xf32>, %{{.+}}: memref<128xf16>, %{{.+}}: memref<64x128xf16>)
// CHECK-DAG: func.func private @gs_gemm_64x128x10_f16(%{{.+}}: memref<64x10xf16>, %{{.+}}: memref<10x128xf16>, %{{.+}}: memref<1xf32>, %{{.+}}: memref<64x128xf16>, %{{.+}}: memref<2x10xf32>, %{{.+}}: memref<7xf64>, %{{.+}}: memref<4xi64>)
// CHECK-DAG: func.func private @gs_gemm_10x128x64_ta_f32_nostats(%{{.+}}: memref<64x10xf16>, %{{.+}}: memref<64x128xf16>, %{{.+}}: memref<1xf32>, %{{.+}}: memref<10x128xf32>)
// CHECK-DAG: func.func private @gs_gemm_64x128x10_f16_entry(
// CHECK-DAG: func.func private @gs_conv_2x3x9x9_k8x3x3_o5x5_s2x2_d1x1_p1x1_bias_f16_f16_nostats(%{{.+}}: memref<8x3x3x3xf16>, %{{.+}}: memref<2x3x9x9xf16>, %{{.+}}: memref<1xf32>, %{{.+}}: memref<8xf16>, %{{.+}}: memref<2x8x5x5xf16>)
// CHECK-DAG: func.func private @gs_convt_2x8x5x5_k3x3x3_o9x9_s2x2_d1x1_p1x1_f32_nostats(%{{.+}}: memref<8x3x3x3xf16>, %{{.+}}: memref<2x8x5x5xf16>, %{{.+}}: memref<1xf32>, %{{.+}}: memref<2x3x9x9xf32>)
// CHECK-DAG: func.func private @gs_conv_2x8x9x9_k16x3x3_o9x9_s1x1_d1x1_p1x1_g2_bias_f16_f16_nostats(%{{.+}}: memref<16x4x3x3xf16>, %{{.+}}: memref<2x8x9x9xf16>, %{{.+}}: memref<1xf32>, %{{.+}}: memref<16xf16>, %{{.+}}: memref<2x16x9x9xf16>)
// CHECK-DAG: func.func private @gs_gemm_16x32x8_f16_relu(%{{.+}}: memref<16x8xf16>, %{{.+}}: memref<8x32xf16>, %{{.+}}: memref<1xf32>, %{{.+}}: memref<16x32xf16>, %{{.+}}: memref<16x32xf16>, %{{.+}}: memref<1x10xf32>, %{{.+}}: memref<7xf64>, %{{.+}}: memref<4xi64>)
// CHECK-NOT: func.func private @gs_gemm_10x128x64_ta_f32_nostats_0

// CHECK-LABEL: func.func private @gs_scale_log_normal(
// CHECK-SAME: %{{.+}}: memref<7xf64>, %{{.+}}: memref<1xf32>, %{{.+}}: memref<1xf64>)
// CHECK: %[[ONE:.+]] = arith.constant 1 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[ONE]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]]) threads({{.*}}) in ({{.*}} = %[[ONE]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]])
// CHECK: math.exp
// CHECK: math.erfc
// CHECK: memref.store %{{.+}}, %{{.+}}[%{{.+}}] : memref<1xf32>
// CHECK: memref.store %{{.+}}, %{{.+}}[%{{.+}}] : memref<1xf64>
// CHECK: gpu.terminator
// CHECK-LABEL: func.func private @gs_scale_log_normal_entry(
// CHECK-SAME: %{{.+}}: tensor<7xf64>) -> (tensor<1xf32>, tensor<1xf64>)
// CHECK-LABEL: func.func private @gs_scale_log_normal_1(
// CHECK-LABEL: func.func private @gs_scale_exponent_histogram_accum(
// CHECK-SAME: %{{.+}}: memref<7xf64>, %{{.+}}: memref<256xi64>, %{{.+}}: memref<1xf32>, %{{.+}}: memref<1xf32>, %{{.+}}: memref<1xf64>)
// CHECK: scf.for
// CHECK: memref.load %{{.+}}[%{{.+}}] : memref<256xi64>
// CHECK-LABEL: func.func private @gs_unify_scales_2(
// CHECK-SAME: %{{.+}}: memref<1xf32>, %{{.+}}: memref<1xf32>, %{{.+}}: memref<7xf64>, %{{.+}}: memref<7xf64>, %{{.+}}: memref<1xf32>)
