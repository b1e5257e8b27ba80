// gs-overlap-collectives: every all-reduce moves up to where its input is
// ready (with the ops that only build that input), so that its lowering
// starts it there and the ops in between run while it is in flight.
// RUN: gs-opt %s --split-input-file --gs-overlap-collectives | FileCheck %s

// An inlined backward pass: the last layer's weight gradient is ready
// before the first layer's is computed. Its unscaling and its all-reduce
// move up to just after it; the bucket of the two others (flattened,
// joined) moves to just after the later of them. Uses stay where they are.
// CHECK-LABEL: func.func @backward
// CHECK: %[[DW3:.+]] = gs.gemm %{{.*}}, %{{.*}} {transA}
// CHECK-NEXT: %[[U3:.+]] = gs.unscale %[[DW3]], %{{.*}} : tensor<8x8xf32>
// CHECK-NEXT: %[[SUM3:.+]] = gs.all_reduce sum %[[U3]] : tensor<8x8xf32>
// CHECK-NEXT: %[[DX2:.+]] = gs.gemm
// CHECK-NEXT: %[[DW2:.+]] = gs.gemm %[[DX2]], %{{.*}} {transA}
// CHECK-NEXT: %[[F2:.+]] = gs.reshape %[[DW2]] : tensor<8x4xf32> -> tensor<32xf32>
// CHECK-NEXT: %[[DW1:.+]] = gs.gemm %[[DX2]], %{{.*}} {transA}
// CHECK-NEXT: %[[F1:.+]] = gs.reshape %[[DW1]] : tensor<8x4xf32> -> tensor<32xf32>
// CHECK-NEXT: %[[BUCKET:.+]] = gs.concat %[[F2]], %[[F1]]
// CHECK-NEXT: %[[SUMS:.+]] = gs.all_reduce sum %[[BUCKET]] : tensor<64xf32>
// CHECK-NEXT: gs.exp
// CHECK-NEXT: %[[PARTS:.+]]:2 = gs.split %[[SUMS]]
// CHECK: gs.all_finite %[[SUM3]], %{{.*}}, %{{.*}}
func.func @backward(%dy: tensor<8x8xf32>, %h: tensor<8x8xf32>, %w: tensor<8x8xf32>,
                    %x: tensor<8x4xf32>, %scale: f32)
    -> (tensor<8x8xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x8xf32>, i1) {
  %dw3 = gs.gemm %dy, %h {transA} : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %dx2 = gs.gemm %dy, %w : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %dw2 = gs.gemm %dx2, %x {transA} : tensor<8x8xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
  %dw1 = gs.gemm %dx2, %x {transA} : tensor<8x8xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
  %later = gs.exp %dx2 : tensor<8x8xf32>
  %u3 = gs.unscale %dw3, %scale : tensor<8x8xf32>
  %sum3 = gs.all_reduce sum %u3 : tensor<8x8xf32>
  %f2 = gs.reshape %dw2 : tensor<8x4xf32> -> tensor<32xf32>
  %f1 = gs.reshape %dw1 : tensor<8x4xf32> -> tensor<32xf32>
  %bucket = gs.concat %f2, %f1 <{axis = 0 : i64}> : tensor<32xf32>, tensor<32xf32>
  %sums = gs.all_reduce sum %bucket : tensor<64xf32>
  %parts:2 = gs.split %sums {axis = 0 : i64} : tensor<64xf32> -> tensor<32xf32>, tensor<32xf32>
  %g2 = gs.reshape %parts#0 : tensor<32xf32> -> tensor<8x4xf32>
  %g1 = gs.reshape %parts#1 : tensor<32xf32> -> tensor<8x4xf32>
  %finite = gs.all_finite %sum3, %g2, %g1 : tensor<8x8xf32>, tensor<8x4xf32>, tensor<8x4xf32>
  return %sum3, %g2, %g1, %later, %finite : tensor<8x8xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x8xf32>, i1
}

// -----

// Statistics summed just before the decision move up to where they are
// taken; two all-reduces of one op's result keep their order; an input
// the function receives is summed at its start. An op building the input
// that something else reads too stays where it is.
// CHECK-LABEL: func.func @statistics
// CHECK-NEXT: %[[ARG_SUM:.+]] = gs.all_reduce sum %{{.*}} : tensor<4xf32>
// CHECK-NEXT: %[[DY:.+]] = gs.exp
// CHECK-NEXT: %[[A:.+]] = gs.all_reduce sum %[[DY]] : tensor<8x8xf32>
// CHECK-NEXT: %[[B:.+]] = gs.all_reduce max %[[DY]] : tensor<8x8xf32>
// CHECK-NEXT: %[[S1:.+]] = gs.grad_stats %[[DY]]
// CHECK-NEXT: %[[T1:.+]] = gs.all_reduce sum %[[S1]] : !gs.stats
// CHECK-NEXT: gs.cast %[[DY]] : tensor<8x8xf32> to tensor<8x8xf16>
// CHECK-NEXT: gs.log
// CHECK-NEXT: %[[U:.+]] = gs.unscale
// CHECK-NEXT: %[[US:.+]] = gs.all_reduce sum %[[U]]
// CHECK-NEXT: gs.compute_scale %[[T1]]
// CHECK-NEXT: return {{.*}}, %[[A]], %[[B]], {{.*}}, %[[ARG_SUM]], %[[US]], %[[U]] :
func.func @statistics(%x: tensor<8x8xf32>, %v: tensor<4xf32>, %scale: f32)
    -> (f32, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf16>, tensor<4xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %dy = gs.exp %x : tensor<8x8xf32>
  %s1 = gs.grad_stats %dy : tensor<8x8xf32>
  %c = gs.cast %dy : tensor<8x8xf32> to tensor<8x8xf16>
  %l = gs.log %x : tensor<8x8xf32>
  %u = gs.unscale %l, %scale : tensor<8x8xf32>
  %a = gs.all_reduce sum %dy : tensor<8x8xf32>
  %b = gs.all_reduce max %dy : tensor<8x8xf32>
  %t1 = gs.all_reduce sum %s1 : !gs.stats
  %beta, %rate = gs.compute_scale %t1 {model = #gs.scale_model<log_normal>}
  %vs = gs.all_reduce sum %v : tensor<4xf32>
  %us = gs.all_reduce sum %u : tensor<8x8xf32>
  return %beta, %a, %b, %c, %vs, %us, %u : f32, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf16>, tensor<4xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}
