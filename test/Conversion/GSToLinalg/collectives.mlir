// RUN: gs-opt %s --split-input-file --convert-gs-to-linalg | FileCheck %s

// Collectives.cpp: gs.all_reduce passes its input, flattened to one
// dimension, and a fresh buffer for the result to the runtime's
// gs_all_reduce_<reduction>_<type> (include/gs/Runtime/Collectives.h);
// gs.world_size asks the runtime.

// CHECK-DAG: func.func private @gs_all_reduce_sum_f32(memref<?xf32>, memref<?xf32>)
// CHECK-DAG: func.func private @gs_all_reduce_max_i64(memref<?xi64>, memref<?xi64>)
// CHECK-DAG: func.func private @gs_world_size() -> i64
// CHECK-LABEL: func.func @gradient
// CHECK-SAME: (%[[DW:.+]]: tensor<3x4xf32>)
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[DW]] {{\[}}[0, 1]] : tensor<3x4xf32> into tensor<12xf32>
// CHECK: %[[SOURCE:.+]] = bufferization.to_buffer %[[FLAT]] read_only : tensor<12xf32> to memref<12xf32>
// CHECK: %[[RESULT:.+]] = memref.alloc() : memref<12xf32>
// CHECK: %[[IN:.+]] = memref.cast %[[SOURCE]] : memref<12xf32> to memref<?xf32>
// CHECK: %[[OUT:.+]] = memref.cast %[[RESULT]] : memref<12xf32> to memref<?xf32>
// CHECK: call @gs_all_reduce_sum_f32(%[[IN]], %[[OUT]]) : (memref<?xf32>, memref<?xf32>) -> ()
// CHECK: %[[SUM:.+]] = bufferization.to_tensor %[[RESULT]] restrict writable : memref<12xf32> to tensor<12xf32>
// CHECK: %[[SHAPED:.+]] = tensor.expand_shape %[[SUM]] {{\[}}[0, 1]] output_shape [3, 4] : tensor<12xf32> into tensor<3x4xf32>
// CHECK: %[[N:.+]] = call @gs_world_size() : () -> i64
// CHECK: return %[[SHAPED]], %[[N]]
func.func @gradient(%dw: tensor<3x4xf32>) -> (tensor<3x4xf32>, i64) {
  %g = gs.all_reduce sum %dw : tensor<3x4xf32>
  %n = gs.world_size : i64
  return %g, %n : tensor<3x4xf32>, i64
}

// CHECK-LABEL: func.func @counts
// CHECK: call @gs_all_reduce_max_i64(%{{.*}}, %{{.*}}) : (memref<?xi64>, memref<?xi64>) -> ()
func.func @counts(%c: tensor<4xi64>) -> tensor<4xi64> {
  %m = gs.all_reduce max %c : tensor<4xi64>
  return %m : tensor<4xi64>
}

// A scalar (the loss) goes as one element.
// CHECK-LABEL: func.func @loss
// CHECK: tensor.expand_shape %{{.*}} [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK: call @gs_all_reduce_sum_f32
// CHECK: tensor.collapse_shape %{{.*}} [] : tensor<1xf32> into tensor<f32>
func.func @loss(%l: tensor<f32>) -> tensor<f32> {
  %s = gs.all_reduce sum %l : tensor<f32>
  return %s : tensor<f32>
}

// -----

// Statistics: the stats reduction of their lowered tensor<7xf64>, which
// the scale decision then reads.
// CHECK: func.func private @gs_all_reduce_stats_f64(memref<?xf64>, memref<?xf64>)
// CHECK-LABEL: func.func @statistics
// CHECK: %[[STATS:.+]] = tensor.from_elements {{.*}} : tensor<7xf64>
// CHECK: bufferization.to_buffer %[[STATS]] read_only
// CHECK: call @gs_all_reduce_stats_f64(%{{.*}}, %{{.*}}) : (memref<?xf64>, memref<?xf64>) -> ()
// CHECK: %[[SUMMED:.+]] = bufferization.to_tensor
// CHECK: tensor.extract %[[SUMMED]]
func.func @statistics(%dy: tensor<8x16xf32>) -> f32 {
  %s = gs.grad_stats %dy : tensor<8x16xf32>
  %t = gs.all_reduce sum %s : !gs.stats
  %beta, %rate = gs.compute_scale %t {model = #gs.scale_model<log_normal>}
  return %beta : f32
}
