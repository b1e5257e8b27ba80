// gs-data-parallel: the train step as one replica of a data-parallel step.
// RUN: gs-opt %s --gs-train="scaling=gs data-parallel=true" | FileCheck %s
// RUN: gs-opt %s --gs-train="scaling=gs interval=4 data-parallel=true" | FileCheck %s --check-prefix=INTERVAL
// RUN: gs-opt %s --gs-train="scaling=dynamic data-parallel=true" | FileCheck %s --check-prefix=DYNAMIC
// RUN: gs-opt %s --gs-train="scaling=gs" | FileCheck %s --check-prefix=ALONE
// RUN: gs-opt %s --gs-train="scaling=gs data-parallel=true bucket-bytes=0" | FileCheck %s --check-prefix=UNBUCKETED
// RUN: gs-opt %s --gs-train="scaling=gs data-parallel=true bucket-bytes=128" | FileCheck %s --check-prefix=UNBUCKETED
// The collectives lower to calls of the runtime.
// RUN: gs-opt %s --gs-train="scaling=gs data-parallel=true lower-to-llvm=true" | FileCheck %s --check-prefix=LLVM

gs.param trainable @w1 = dense<0.5> : tensor<8x4xf32>
gs.param trainable @w2 = dense<0.25> : tensor<3x8xf32>
gs.param buffer @running_mean = dense<0.0> : tensor<4xf32>
func.func @forward(%x: tensor<2x4xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w1 = gs.param.read @w1 : tensor<8x4xf32>
  %w2 = gs.param.read @w2 : tensor<3x8xf32>
  %m = gs.reduce_mean %x <{axes = array<i64: 0>}> : tensor<2x4xf32>
  gs.param.write %m, @running_mean : tensor<4xf32>
  %h = gs.gemm %x, %w1 {transB} : tensor<2x4xf32>, tensor<8x4xf32> -> tensor<2x8xf32>
  %r = gs.relu %h : tensor<2x8xf32>
  %y = gs.gemm %r, %w2 {transB} : tensor<2x8xf32>, tensor<3x8xf32> -> tensor<2x3xf32>
  %l, %lp = gs.softmax_cross_entropy %y, %t <{reduction = #gs.reduction<mean>}> : tensor<2x3xf32>, tensor<2xi64>
  return %l : tensor<f32>
}
gs.training @forward {learning_rate = 0.1 : f32, optimizer = #gs.momentum<>}

// The forward function is left alone.
// CHECK-LABEL: func.func @forward
// CHECK-NOT: gs.all_reduce
// CHECK: return

// CHECK-LABEL: func.func @train_step
// 1 / world size:
// CHECK: %[[N:.+]] = gs.world_size : i64
// CHECK: %[[NF:.+]] = arith.sitofp %[[N]] : i64 to f32
// CHECK: %[[INV:.+]] = arith.divf %{{.*}}, %[[NF]] : f32
// The buffer the forward writes: the ranks' mean.
// CHECK: %[[MEAN:.+]] = gs.reduce_mean
// CHECK: %[[MEANS:.+]] = gs.all_reduce sum %[[MEAN]] : tensor<4xf32>
// CHECK: %[[AVG:.+]] = gs.rescale %[[MEANS]], %[[INV]] : tensor<4xf32>
// CHECK: gs.param.write %[[AVG]], @running_mean
// The seed: this rank's share of the global batch mean.
// CHECK: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[SEED:.+]] = gs.rescale %[[ONE]], %[[INV]] : tensor<f32>
// CHECK: %[[G:.+]]:2 = gs.backward %{{.*}} wrt %{{.*}}, %{{.*}} seed %[[SEED]]
// The softmax cast (fT): its statistics summed over the ranks just before
// the decision, and its cast counts after they are taken.
// CHECK: %[[DY:.+]] = gs.grad_stats
// CHECK-NEXT: %[[DYS:.+]] = gs.all_reduce sum %[[DY]] : !gs.stats
// CHECK-NEXT: gs.compute_scale %[[DYS]] {model = #gs.scale_model<log_normal>}
// CHECK: %[[C0:.+]] = gs.cast_stats
// CHECK-NEXT: %[[C0S:.+]] = gs.all_reduce sum %[[C0]] : tensor<4xi64>
// CHECK: tensor.extract %[[C0S]]
// The hidden layer's data gradient (fG): the incoming gradient's statistics
// summed, and the other operand's (here a weight, the same on every rank,
// whose moments the sum keeps; an activation's would differ).
// CHECK: %[[D2:.+]] = gs.grad_stats %{{.*}} : tensor<2x3xf16>
// CHECK-NEXT: %[[W2:.+]] = gs.grad_stats %{{.*}} : tensor<3x8xf16>
// CHECK-NEXT: %[[D2S:.+]] = gs.all_reduce sum %[[D2]] : !gs.stats
// CHECK-NEXT: %[[W2S:.+]] = gs.all_reduce sum %[[W2]] : !gs.stats
// CHECK-NEXT: gs.compute_scale %[[D2S]], %[[W2S]] {accum_length = 3 : i64, model = #gs.scale_model<half_normal>}
// CHECK: gs.yield
// The gradients: summed before the non-finite check and the updates, in
// the order the backward pass computes them (the last layer's first, so
// that gs-overlap-collectives can start each bucket once its layers are
// done); these two small ones (96 and 128 bytes) in one bucket: flattened,
// joined, summed in one all-reduce and cut apart.
// CHECK: %[[F2:.+]] = gs.reshape %[[G]]#1 : tensor<3x8xf32> -> tensor<24xf32>
// CHECK-NEXT: %[[F1:.+]] = gs.reshape %[[G]]#0 : tensor<8x4xf32> -> tensor<32xf32>
// CHECK-NEXT: %[[BUCKET:.+]] = gs.concat %[[F2]], %[[F1]] <{axis = 0 : i64}> : tensor<24xf32>, tensor<32xf32>
// CHECK-NEXT: %[[SUMS:.+]] = gs.all_reduce sum %[[BUCKET]] : tensor<56xf32>
// CHECK-NEXT: %[[PARTS:.+]]:2 = gs.split %[[SUMS]] {axis = 0 : i64} : tensor<56xf32> -> tensor<24xf32>, tensor<32xf32>
// CHECK-NEXT: %[[DW2:.+]] = gs.reshape %[[PARTS]]#0 : tensor<24xf32> -> tensor<3x8xf32>
// CHECK-NEXT: %[[DW1:.+]] = gs.reshape %[[PARTS]]#1 : tensor<32xf32> -> tensor<8x4xf32>
// CHECK-NEXT: gs.all_finite %[[DW1]], %[[DW2]]
// CHECK: gs.update @w1, %[[DW1]]
// CHECK: gs.update @w2, %[[DW2]]

// With no buckets (in the order the backward pass computes them), or
// buckets no larger than the second gradient (which then goes alone, and
// the first, smaller, after it), one all-reduce each.
// UNBUCKETED-LABEL: func.func @train_step
// UNBUCKETED: %[[G:.+]]:2 = gs.backward
// UNBUCKETED-NOT: gs.concat
// UNBUCKETED-DAG: %[[DW2:.+]] = gs.all_reduce sum %[[G]]#1 : tensor<3x8xf32>
// UNBUCKETED-DAG: %[[DW1:.+]] = gs.all_reduce sum %[[G]]#0 : tensor<8x4xf32>
// UNBUCKETED: gs.all_finite %[[DW1]], %[[DW2]]
// UNBUCKETED: gs.update @w1, %[[DW1]]
// UNBUCKETED: gs.update @w2, %[[DW2]]
// The loss: the global batch's.
// CHECK: %[[LOSSES:.+]] = gs.all_reduce sum %loss : tensor<f32>
// CHECK-NEXT: %[[LOSS:.+]] = gs.rescale %[[LOSSES]], %[[INV]] : tensor<f32>
// CHECK-NEXT: return %[[LOSS]]

// With interval > 1 the statistics are summed where the decisions are made:
// inside the recompute branch, which every rank takes alike.
// INTERVAL-LABEL: func.func @train_step
// INTERVAL: scf.if
// INTERVAL-NEXT: %[[S:.+]] = gs.grad_stats
// INTERVAL-NEXT: %[[SUM:.+]] = gs.all_reduce sum %[[S]] : !gs.stats
// INTERVAL-NEXT: gs.compute_scale %[[SUM]]

// Dynamic loss scaling: the seed is the loss scale's share.
// DYNAMIC-LABEL: func.func @train_step
// DYNAMIC: %[[S:.+]] = gs.param.read @gs.loss_scale
// DYNAMIC: %[[SEED:.+]] = gs.rescale %{{.*}}, %{{.*}} : tensor<f32>
// DYNAMIC: gs.backward %{{.*}} seed %[[SEED]]
// DYNAMIC: %[[SUMS:.+]] = gs.all_reduce sum %{{.*}} : tensor<56xf32>
// DYNAMIC-NEXT: %[[PARTS:.+]]:2 = gs.split %[[SUMS]]
// DYNAMIC-NEXT: %[[DW2:.+]] = gs.reshape %[[PARTS]]#0
// DYNAMIC-NEXT: %[[DW1:.+]] = gs.reshape %[[PARTS]]#1
// DYNAMIC: gs.all_finite %[[DW1]], %[[DW2]] :

// ALONE-NOT: gs.all_reduce
// ALONE-NOT: gs.world_size

// LLVM-DAG: llvm.func @gs_all_reduce_start_stats_f64(!llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr, !llvm.ptr, i64, i64, i64) -> i64
// LLVM-DAG: llvm.func @gs_all_reduce_start_sum_f32(!llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr, !llvm.ptr, i64, i64, i64) -> i64
// LLVM-DAG: llvm.func @gs_all_reduce_start_sum_i64(!llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr, !llvm.ptr, i64, i64, i64) -> i64
// LLVM-DAG: llvm.func @gs_all_reduce_wait_f32(i64, !llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr, !llvm.ptr, i64, i64, i64)
// LLVM-DAG: llvm.func @gs_all_reduce_wait_f64(i64, !llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr, !llvm.ptr, i64, i64, i64)
// LLVM-DAG: llvm.func @gs_all_reduce_wait_i64(i64, !llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr, !llvm.ptr, i64, i64, i64)
// LLVM-DAG: llvm.func @gs_world_size() -> i64
