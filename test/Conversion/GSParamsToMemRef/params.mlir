// RUN: gs-opt %s --split-input-file --convert-gs-params-to-memref \
// RUN:   | FileCheck %s --implicit-check-not=gs.param \
// RUN:       --implicit-check-not=gs.training --implicit-check-not=gs.update
// RUN: gs-opt %s --split-input-file --convert-gs-params-to-memref \
// RUN:   --convert-gs-to-linalg \
// RUN:   | FileCheck %s --check-prefix=LINALG --implicit-check-not=gs.
// RUN: gs-opt %s --split-input-file \
// RUN:   --convert-gs-params-to-memref=updates-only \
// RUN:   | FileCheck %s --check-prefix=UPDATES --implicit-check-not=memref. \
// RUN:       --implicit-check-not=gs.training --implicit-check-not=gs.update

// GSParamsToMemRef.cpp: every gs.param becomes a public, mutable, 64-byte
// aligned memref.global holding its initial value; gs.param.read is
// memref.get_global seen as a tensor (copied when the function writes the
// parameter later, so that the write cannot change what was read);
// gs.param.write materializes the value into the global; gs.update expands
// into reads, gs.optimizer_step and writes; gs.training is dropped.

// CHECK-DAG:   memref.global "public" @fc.weight : memref<4x3xf32> = dense<1.000000e+00> {alignment = 64 : i64}
// CHECK-DAG:   memref.global "public" @bn.running_mean : memref<4xf32> = dense<0.000000e+00> {alignment = 64 : i64}
// CHECK-DAG:   memref.global "public" @step : memref<i64> = dense<0> {alignment = 64 : i64}
// CHECK-NOT:   memref.global {{.*}} constant
gs.param trainable @fc.weight = dense<1.0> : tensor<4x3xf32>
gs.param buffer @bn.running_mean = dense<0.0> : tensor<4xf32>
gs.param state @step = dense<0> : tensor<i64>
gs.training @forward {learning_rate = 0.1 : f32, optimizer = #gs.sgd<>}

// A function that only reads: the global itself, no copy.
// CHECK-LABEL: func.func @forward(
// CHECK:         %[[M:.*]] = memref.get_global @fc.weight : memref<4x3xf32>
// CHECK-NEXT:    %[[W:.*]] = bufferization.to_tensor %[[M]] restrict : memref<4x3xf32> to tensor<4x3xf32>
// CHECK-NOT:     linalg.copy
// CHECK:         gs.gemm %{{.*}}, %[[W]]
func.func @forward(%x: tensor<2x3xf32>) -> tensor<f32> {
  %w = gs.param.read @fc.weight : tensor<4x3xf32>
  %y = gs.gemm %x, %w {transB} : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<2x4xf32>
  %l = gs.reduce_sum %y <{axes = array<i64: 0, 1>}> : tensor<2x4xf32>
  return %l : tensor<f32>
}

// A read before a write of the same parameter is copied; a read after the
// write in the same block is the value written.
// CHECK-LABEL: func.func @read_write_read(
// CHECK-SAME:      %[[V:.*]]: tensor<4xf32>)
// CHECK:         %[[M0:.*]] = memref.get_global @bn.running_mean : memref<4xf32>
// CHECK-NEXT:    %[[T0:.*]] = bufferization.to_tensor %[[M0]] restrict : memref<4xf32> to tensor<4xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:    %[[OLD:.*]] = linalg.copy ins(%[[T0]] : tensor<4xf32>) outs(%[[E]] : tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[M1:.*]] = memref.get_global @bn.running_mean : memref<4xf32>
// CHECK-NEXT:    bufferization.materialize_in_destination %[[V]] in writable %[[M1]] : (tensor<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT:    return %[[OLD]], %[[V]]
func.func @read_write_read(%v: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %old = gs.param.read @bn.running_mean : tensor<4xf32>
  gs.param.write %v, @bn.running_mean : tensor<4xf32>
  %new = gs.param.read @bn.running_mean : tensor<4xf32>
  return %old, %new : tensor<4xf32>, tensor<4xf32>
}

// A region between the write and the read may write the parameter: the
// read reads the global.
// CHECK-LABEL: func.func @read_after_region(
// CHECK:         scf.if
// CHECK:         }
// CHECK-NEXT:    %[[M:.*]] = memref.get_global @bn.running_mean : memref<4xf32>
// CHECK-NEXT:    %[[NEW:.*]] = bufferization.to_tensor %[[M]] restrict
// CHECK-NEXT:    return %[[NEW]]
func.func @read_after_region(%v: tensor<4xf32>, %w: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  gs.param.write %v, @bn.running_mean : tensor<4xf32>
  scf.if %c {
    gs.param.write %w, @bn.running_mean : tensor<4xf32>
  }
  %new = gs.param.read @bn.running_mean : tensor<4xf32>
  return %new : tensor<4xf32>
}

// Rank-0 parameters work the same way.
// CHECK-LABEL: func.func @count(
// CHECK:         %[[M:.*]] = memref.get_global @step : memref<i64>
// CHECK-NEXT:    bufferization.to_tensor %[[M]] restrict : memref<i64> to tensor<i64>
// CHECK:         linalg.copy
// CHECK:         bufferization.materialize_in_destination %{{.*}} in writable %{{.*}} : (tensor<i64>, memref<i64>) -> ()
func.func @count() {
  %t = gs.param.read @step : tensor<i64>
  %one = gs.constant dense<1> : tensor<i64>
  %t1 = gs.add %t, %one : tensor<i64>
  gs.param.write %t1, @step : tensor<i64>
  return
}

// After gs-to-linalg no gs op or attribute is left (--implicit-check-not).
// LINALG:      memref.global "public" @fc.weight
// LINALG:      linalg.matmul

// -----

// gs.update reads the parameter and its optimizer state (copies, since
// they are written back), applies gs.optimizer_step and writes every
// result back to its parameter.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME:      %[[G:.*]]: tensor<4x3xf32>, %[[LR:.*]]: f32, %[[T:.*]]: i64)
// CHECK:         %[[MW:.*]] = memref.get_global @w : memref<4x3xf32>
// CHECK-NEXT:    %[[TW:.*]] = bufferization.to_tensor %[[MW]] restrict
// CHECK:         %[[W:.*]] = linalg.copy ins(%[[TW]] : tensor<4x3xf32>)
// CHECK:         %[[MV:.*]] = memref.get_global @w.moment1 : memref<4x3xf32>
// CHECK-NEXT:    %[[TV:.*]] = bufferization.to_tensor %[[MV]] restrict
// CHECK:         %[[V:.*]] = linalg.copy ins(%[[TV]] : tensor<4x3xf32>)
// CHECK:         %[[MH:.*]] = memref.get_global @w.moment2 : memref<4x3xf32>
// CHECK-NEXT:    %[[TH:.*]] = bufferization.to_tensor %[[MH]] restrict
// CHECK:         %[[H:.*]] = linalg.copy ins(%[[TH]] : tensor<4x3xf32>)
// CHECK:         %[[NEW:.*]], %[[STATE:.*]]:2 = gs.optimizer_step %[[LR]], %[[T]], %[[W]], %[[G]], %[[V]], %[[H]] {optimizer = #gs.adam<>} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
// CHECK-NEXT:    %[[MW2:.*]] = memref.get_global @w : memref<4x3xf32>
// CHECK-NEXT:    bufferization.materialize_in_destination %[[NEW]] in writable %[[MW2]]
// CHECK-NEXT:    %[[MV2:.*]] = memref.get_global @w.moment1 : memref<4x3xf32>
// CHECK-NEXT:    bufferization.materialize_in_destination %[[STATE]]#0 in writable %[[MV2]]
// CHECK-NEXT:    %[[MH2:.*]] = memref.get_global @w.moment2 : memref<4x3xf32>
// CHECK-NEXT:    bufferization.materialize_in_destination %[[STATE]]#1 in writable %[[MH2]]
// CHECK-NEXT:    return
gs.param trainable @w = dense<1.0> : tensor<4x3xf32>
gs.param state @w.moment1 = dense<0.0> : tensor<4x3xf32>
gs.param state @w.moment2 = dense<0.0> : tensor<4x3xf32>

func.func @train_step(%g: tensor<4x3xf32>, %lr: f32, %t: i64) {
  gs.update @w, %g, lr %lr, step %t state [@w.moment1, @w.moment2] {optimizer = #gs.adam<>} : tensor<4x3xf32>
  return
}

// With updates-only, the update expands into the parameter accesses it is
// defined as, and the parameters stay gs ops.
// UPDATES-LABEL: func.func @train_step(
// UPDATES-SAME:      %[[G:.*]]: tensor<4x3xf32>, %[[LR:.*]]: f32, %[[T:.*]]: i64)
// UPDATES-NEXT:    %[[W:.*]] = gs.param.read @w : tensor<4x3xf32>
// UPDATES-NEXT:    %[[V:.*]] = gs.param.read @w.moment1 : tensor<4x3xf32>
// UPDATES-NEXT:    %[[H:.*]] = gs.param.read @w.moment2 : tensor<4x3xf32>
// UPDATES-NEXT:    %[[NEW:.*]], %[[STATE:.*]]:2 = gs.optimizer_step %[[LR]], %[[T]], %[[W]], %[[G]], %[[V]], %[[H]] {optimizer = #gs.adam<>}
// UPDATES-NEXT:    gs.param.write %[[NEW]], @w
// UPDATES-NEXT:    gs.param.write %[[STATE]]#0, @w.moment1
// UPDATES-NEXT:    gs.param.write %[[STATE]]#1, @w.moment2
// UPDATES-NEXT:    return

// The optimizer step then becomes one generic with three results.
// LINALG-LABEL: func.func @train_step(
// LINALG:         %{{.*}}:3 = linalg.generic
// LINALG:         return

// -----

// An update without optimizer state (SGD): one read, one write.
// CHECK-LABEL: func.func @sgd_step(
// CHECK-SAME:      %[[G:.*]]: tensor<8xf16>, %[[LR:.*]]: f32, %[[T:.*]]: i64)
// CHECK:         memref.get_global @b : memref<8xf16>
// CHECK:         %[[B:.*]] = linalg.copy
// CHECK:         %[[NEW:.*]] = gs.optimizer_step %[[LR]], %[[T]], %[[B]], %[[G]] {optimizer = #gs.sgd<>} : tensor<8xf16>
// CHECK-NEXT:    %[[MB:.*]] = memref.get_global @b : memref<8xf16>
// CHECK-NEXT:    bufferization.materialize_in_destination %[[NEW]] in writable %[[MB]] : (tensor<8xf16>, memref<8xf16>) -> ()
// CHECK-NEXT:    return
gs.param trainable @b = dense<0.0> : tensor<8xf16>

func.func @sgd_step(%g: tensor<8xf16>, %lr: f32, %t: i64) {
  gs.update @b, %g, lr %lr, step %t {optimizer = #gs.sgd<>} : tensor<8xf16>
  return
}
