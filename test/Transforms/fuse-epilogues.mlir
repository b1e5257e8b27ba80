// RUN: gs-opt %s --split-input-file --gs-fuse-epilogues | FileCheck %s

// A data gradient as gs-gradient-scaling leaves it: the FP32 product, the
// rescale by its scale, the counts of the rounding, the cast, and the
// statistics of the cast result that the next scale reads. One op.
// CHECK-LABEL: func.func @data_gradient
// CHECK-SAME: (%[[DY:.+]]: tensor<4x3xf16>, %[[W:.+]]: tensor<3x8xf16>, %[[BETA:.+]]: f32)
// CHECK:      %[[DX:.+]], %[[S:.+]], %[[C:.+]] = gs.scaled_contraction scale %[[BETA]] : tensor<4x8xf16> {
// CHECK-NEXT:   %[[P:.+]] = gs.gemm %[[DY]], %[[W]] : tensor<4x3xf16>, tensor<3x8xf16> -> tensor<4x8xf32>
// CHECK-NEXT:   gs.yield %[[P]] : tensor<4x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[SW:.+]] = gs.grad_stats %[[W]]
// CHECK-NEXT: %{{.+}}, %{{.+}} = gs.compute_scale %[[S]], %[[SW]]
// CHECK-NEXT: return %[[DX]], %[[C]], %[[S]]
func.func @data_gradient(%dy: tensor<4x3xf16>, %w: tensor<3x8xf16>, %beta: f32) -> (tensor<4x8xf16>, tensor<4xi64>, !gs.stats) {
  %acc = gs.gemm %dy, %w : tensor<4x3xf16>, tensor<3x8xf16> -> tensor<4x8xf32>
  %r = gs.rescale %acc, %beta : tensor<4x8xf32>
  %counts = gs.cast_stats %r : tensor<4x8xf32>
  %dx = gs.cast %r : tensor<4x8xf32> to tensor<4x8xf16>
  %s = gs.grad_stats %dx : tensor<4x8xf16>
  %sw = gs.grad_stats %w : tensor<3x8xf16>
  %b, %e = gs.compute_scale %s, %sw {accum_length = 8 : i64, model = #gs.scale_model<half_normal>}
  %s2 = gs.grad_stats %dx : tensor<4x8xf16>
  return %dx, %counts, %s2 : tensor<4x8xf16>, tensor<4xi64>, !gs.stats
}

// -----

// Transposed operands, gs.matmul and a convolution's data gradient
// (gs.conv_transpose) fuse too; without telemetry there are no counts to
// replace.
// CHECK-LABEL: func.func @contractions
// CHECK: gs.scaled_contraction scale %{{.+}} : tensor<4x8xf16> {
// CHECK-NEXT: gs.gemm %{{.+}}, %{{.+}} {transA, transB} : tensor<3x4xf16>, tensor<8x3xf16> -> tensor<4x8xf32>
// CHECK: gs.scaled_contraction scale %{{.+}} : tensor<4x8xf16> {
// CHECK-NEXT: gs.matmul
// CHECK: gs.scaled_contraction scale %{{.+}} : tensor<2x3x9x9xf16> {
// CHECK-NEXT: gs.conv_transpose
// CHECK-NOT: gs.rescale
func.func @contractions(%a: tensor<3x4xf16>, %b: tensor<8x3xf16>, %c: tensor<4x3xf16>, %d: tensor<3x8xf16>, %g: tensor<2x8x5x5xf16>, %k: tensor<8x3x3x3xf16>, %beta: f32) -> (tensor<4x8xf16>, tensor<4x8xf16>, tensor<2x3x9x9xf16>) {
  %acc = gs.gemm %a, %b {transA, transB} : tensor<3x4xf16>, tensor<8x3xf16> -> tensor<4x8xf32>
  %r = gs.rescale %acc, %beta : tensor<4x8xf32>
  %x = gs.cast %r : tensor<4x8xf32> to tensor<4x8xf16>
  %acc2 = gs.matmul %c, %d : tensor<4x3xf16>, tensor<3x8xf16> -> tensor<4x8xf32>
  %r2 = gs.rescale %acc2, %beta : tensor<4x8xf32>
  %y = gs.cast %r2 : tensor<4x8xf32> to tensor<4x8xf16>
  %acc3 = gs.conv_transpose %g, %k {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<2x8x5x5xf16>, tensor<8x3x3x3xf16> -> tensor<2x3x9x9xf32>
  %r3 = gs.rescale %acc3, %beta : tensor<2x3x9x9xf32>
  %z = gs.cast %r3 : tensor<2x3x9x9xf32> to tensor<2x3x9x9xf16>
  return %x, %y, %z : tensor<4x8xf16>, tensor<4x8xf16>, tensor<2x3x9x9xf16>
}

// -----

// Left alone: an accumulator something else reads (the exponent-histogram
// model measures it), rescaled values something else reads, a GEMM with C,
// a rescale that is not of a contraction.
// CHECK-LABEL: func.func @not_fused
// CHECK-NOT: gs.scaled_contraction
// CHECK-COUNT-4: gs.rescale
func.func @not_fused(%a: tensor<4x3xf16>, %b: tensor<3x8xf16>, %c: tensor<8xf32>, %fa: tensor<4x3xf32>, %beta: f32) -> (tensor<4x8xf16>, tensor<256xi64>, tensor<4x8xf16>, tensor<4x8xf32>, tensor<4x8xf16>, tensor<4x3xf16>) {
  %acc = gs.gemm %a, %b : tensor<4x3xf16>, tensor<3x8xf16> -> tensor<4x8xf32>
  %h = gs.exponent_histogram %acc : tensor<4x8xf32>
  %r = gs.rescale %acc, %beta : tensor<4x8xf32>
  %x = gs.cast %r : tensor<4x8xf32> to tensor<4x8xf16>
  %acc2 = gs.gemm %a, %b : tensor<4x3xf16>, tensor<3x8xf16> -> tensor<4x8xf32>
  %r2 = gs.rescale %acc2, %beta : tensor<4x8xf32>
  %y = gs.cast %r2 : tensor<4x8xf32> to tensor<4x8xf16>
  %acc3 = gs.gemm %a, %b, %c : tensor<4x3xf16>, tensor<3x8xf16>, tensor<8xf32> -> tensor<4x8xf32>
  %r3 = gs.rescale %acc3, %beta : tensor<4x8xf32>
  %z = gs.cast %r3 : tensor<4x8xf32> to tensor<4x8xf16>
  %acc4 = gs.relu %fa : tensor<4x3xf32>
  %r4 = gs.rescale %acc4, %beta : tensor<4x3xf32>
  %u = gs.cast %r4 : tensor<4x3xf32> to tensor<4x3xf16>
  return %x, %h, %y, %r2, %z, %u : tensor<4x8xf16>, tensor<256xi64>, tensor<4x8xf16>, tensor<4x8xf32>, tensor<4x8xf16>, tensor<4x3xf16>
}

// -----

// A ReLU's backward after the cast, gs.where(gs.compare gt %h, 0, dx, +0),
// joins the epilogue as the op's relu_mask: the statistics stay those of
// the values before it; what only the mask used goes.
// CHECK-LABEL: func.func @relu_backward
// CHECK-SAME: (%[[DY:.+]]: tensor<4x3xf16>, %[[W:.+]]: tensor<3x8xf16>, %[[H:.+]]: tensor<4x8xf16>, %[[BETA:.+]]: f32)
// CHECK-NEXT: %[[DX:.+]], %[[S:.+]], %{{.+}} = gs.scaled_contraction scale %[[BETA]] relu_mask(%[[H]] : tensor<4x8xf16>) : tensor<4x8xf16> {
// CHECK-NEXT:   gs.gemm
// CHECK-NEXT:   gs.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[DX]], %[[S]]
func.func @relu_backward(%dy: tensor<4x3xf16>, %w: tensor<3x8xf16>, %h: tensor<4x8xf16>, %beta: f32) -> (tensor<4x8xf16>, !gs.stats) {
  %acc = gs.gemm %dy, %w : tensor<4x3xf16>, tensor<3x8xf16> -> tensor<4x8xf32>
  %r = gs.rescale %acc, %beta : tensor<4x8xf32>
  %dx = gs.cast %r : tensor<4x8xf32> to tensor<4x8xf16>
  %s = gs.grad_stats %dx : tensor<4x8xf16>
  %zero = gs.constant dense<0.0> : tensor<f16>
  %active = gs.compare gt, %h, %zero : tensor<4x8xf16>, tensor<f16>
  %zero2 = gs.constant dense<0.0> : tensor<f16>
  %masked = gs.where %active, %dx, %zero2 : tensor<4x8xi1>, tensor<4x8xf16>, tensor<f16>
  return %masked, %s : tensor<4x8xf16>, !gs.stats
}

// -----

// Not a ReLU's backward the kernel takes, or not only one: another
// comparison, a nonzero fill, a -0 fill, a mask that broadcasts, a result
// read unmasked too, an f32 mask, a mask computed after the product.
// CHECK-LABEL: func.func @not_relu_backward
// CHECK-NOT: relu_mask
// CHECK-COUNT-7: gs.where
// CHECK-NOT: relu_mask
func.func @not_relu_backward(%dy: tensor<4x3xf16>, %w: tensor<3x8xf16>, %h: tensor<4x8xf16>, %row: tensor<1x8xf16>, %h32: tensor<4x8xf32>, %beta: f32) -> (tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>) {
  %zero = gs.constant dense<0.0> : tensor<f16>
  %negzero = gs.constant dense<-0.0> : tensor<f16>
  %zero32 = gs.constant dense<0.0> : tensor<f32>
  %one = gs.constant dense<1.0> : tensor<f16>
  %gt = gs.compare gt, %h, %zero : tensor<4x8xf16>, tensor<f16>
  %acc = gs.gemm %dy, %w : tensor<4x3xf16>, tensor<3x8xf16> -> tensor<4x8xf32>
  %r = gs.rescale %acc, %beta : tensor<4x8xf32>
  %x = gs.cast %r : tensor<4x8xf32> to tensor<4x8xf16>
  %lt = gs.compare lt, %h, %zero : tensor<4x8xf16>, tensor<f16>
  %a = gs.where %lt, %x, %zero : tensor<4x8xi1>, tensor<4x8xf16>, tensor<f16>
  %acc2 = gs.gemm %dy, %w : tensor<4x3xf16>, tensor<3x8xf16> -> tensor<4x8xf32>
  %r2 = gs.rescale %acc2, %beta : tensor<4x8xf32>
  %y = gs.cast %r2 : tensor<4x8xf32> to tensor<4x8xf16>
  %b = gs.where %gt, %y, %one : tensor<4x8xi1>, tensor<4x8xf16>, tensor<f16>
  %acc3 = gs.gemm %dy, %w : tensor<4x3xf16>, tensor<3x8xf16> -> tensor<4x8xf32>
  %r3 = gs.rescale %acc3, %beta : tensor<4x8xf32>
  %z = gs.cast %r3 : tensor<4x8xf32> to tensor<4x8xf16>
  %c = gs.where %gt, %z, %negzero : tensor<4x8xi1>, tensor<4x8xf16>, tensor<f16>
  %acc4 = gs.gemm %dy, %w : tensor<4x3xf16>, tensor<3x8xf16> -> tensor<4x8xf32>
  %r4 = gs.rescale %acc4, %beta : tensor<4x8xf32>
  %u = gs.cast %r4 : tensor<4x8xf32> to tensor<4x8xf16>
  %rowgt = gs.compare gt, %row, %zero : tensor<1x8xf16>, tensor<f16>
  %d = gs.where %rowgt, %u, %zero : tensor<1x8xi1>, tensor<4x8xf16>, tensor<f16>
  %acc5 = gs.gemm %dy, %w : tensor<4x3xf16>, tensor<3x8xf16> -> tensor<4x8xf32>
  %r5 = gs.rescale %acc5, %beta : tensor<4x8xf32>
  %v = gs.cast %r5 : tensor<4x8xf32> to tensor<4x8xf16>
  %e = gs.where %gt, %v, %zero : tensor<4x8xi1>, tensor<4x8xf16>, tensor<f16>
  %acc6 = gs.gemm %dy, %w : tensor<4x3xf16>, tensor<3x8xf16> -> tensor<4x8xf32>
  %r6 = gs.rescale %acc6, %beta : tensor<4x8xf32>
  %t = gs.cast %r6 : tensor<4x8xf32> to tensor<4x8xf16>
  %gt32 = gs.compare gt, %h32, %zero32 : tensor<4x8xf32>, tensor<f32>
  %f = gs.where %gt32, %t, %zero : tensor<4x8xi1>, tensor<4x8xf16>, tensor<f16>
  %acc7 = gs.gemm %dy, %w : tensor<4x3xf16>, tensor<3x8xf16> -> tensor<4x8xf32>
  %r7 = gs.rescale %acc7, %beta : tensor<4x8xf32>
  %q = gs.cast %r7 : tensor<4x8xf32> to tensor<4x8xf16>
  %late = gs.relu %h : tensor<4x8xf16>
  %lategt = gs.compare gt, %late, %zero : tensor<4x8xf16>, tensor<f16>
  %g = gs.where %lategt, %q, %zero : tensor<4x8xi1>, tensor<4x8xf16>, tensor<f16>
  return %a, %b, %c, %d, %e, %v, %f, %g : tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>
}
