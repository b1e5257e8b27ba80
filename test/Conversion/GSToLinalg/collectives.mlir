// RUN: gs-opt %s --split-input-file --convert-gs-to-linalg | FileCheck %s
// RUN: gs-opt %s --split-input-file --convert-gs-to-linalg="device-collectives=true" | FileCheck %s --check-prefix=DEVICE

// Collectives.cpp: gs.all_reduce starts where it stands, passing its
// input, flattened to one dimension, and a fresh buffer for the result to
// the runtime's gs_all_reduce_start_<reduction>_<type>
// (include/gs/Runtime/Collectives.h), and waits just before the result's
// first use (gs_all_reduce_wait_<type>, given both buffers again: the input
// stays alive until then); the ops in between run while it is in flight.
// gs.world_size asks the runtime.

// CHECK-DAG: func.func private @gs_all_reduce_start_sum_f32(memref<?xf32>, memref<?xf32>) -> i64
// CHECK-DAG: func.func private @gs_all_reduce_wait_f32(i64, memref<?xf32>, memref<?xf32>)
// CHECK-DAG: func.func private @gs_all_reduce_start_max_i64(memref<?xi64>, memref<?xi64>) -> i64
// CHECK-DAG: func.func private @gs_all_reduce_wait_i64(i64, memref<?xi64>, memref<?xi64>)
// CHECK-DAG: func.func private @gs_world_size() -> i64
// CHECK-LABEL: func.func @gradient
// CHECK-SAME: (%[[DW:.+]]: tensor<3x4xf32>)
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[DW]] {{\[}}[0, 1]] : tensor<3x4xf32> into tensor<12xf32>
// CHECK: %[[SOURCE:.+]] = bufferization.to_buffer %[[FLAT]] read_only : tensor<12xf32> to memref<12xf32>
// CHECK: %[[IN:.+]] = memref.cast %[[SOURCE]] : memref<12xf32> to memref<?xf32>
// CHECK: %[[RESULT:.+]] = memref.alloc() : memref<12xf32>
// CHECK: %[[OUT:.+]] = memref.cast %[[RESULT]] : memref<12xf32> to memref<?xf32>
// CHECK: %[[REQUEST:.+]] = call @gs_all_reduce_start_sum_f32(%[[IN]], %[[OUT]]) : (memref<?xf32>, memref<?xf32>) -> i64
// CHECK: %[[N:.+]] = call @gs_world_size() : () -> i64
// CHECK: %[[SOURCE_AGAIN:.+]] = bufferization.to_buffer %[[FLAT]] read_only : tensor<12xf32> to memref<12xf32>
// CHECK: %[[IN_AGAIN:.+]] = memref.cast %[[SOURCE_AGAIN]]
// CHECK: %[[OUT_AGAIN:.+]] = memref.cast %[[RESULT]]
// CHECK: call @gs_all_reduce_wait_f32(%[[REQUEST]], %[[IN_AGAIN]], %[[OUT_AGAIN]]) : (i64, memref<?xf32>, memref<?xf32>) -> ()
// CHECK: %[[SUM:.+]] = bufferization.to_tensor %[[RESULT]] restrict writable : memref<12xf32> to tensor<12xf32>
// CHECK: %[[SHAPED:.+]] = tensor.expand_shape %[[SUM]] {{\[}}[0, 1]] output_shape [3, 4] : tensor<12xf32> into tensor<3x4xf32>
// CHECK: return %[[SHAPED]], %[[N]]

// On device buffers the calls are gs_device_*, and the world size comes
// in a device buffer, read back as a tensor element (which
// gs-device-scalars moves onto the device with the code using it).
// DEVICE-DAG: func.func private @gs_device_all_reduce_start_sum_f32(memref<?xf32>, memref<?xf32>) -> i64
// DEVICE-DAG: func.func private @gs_device_all_reduce_wait_f32(i64, memref<?xf32>, memref<?xf32>)
// DEVICE-DAG: func.func private @gs_device_world_size(memref<?xi64>)
// DEVICE-LABEL: func.func @gradient
// DEVICE: %[[REQUEST:.+]] = call @gs_device_all_reduce_start_sum_f32(%{{.*}}, %{{.*}}) : (memref<?xf32>, memref<?xf32>) -> i64
// DEVICE: %[[SIZE:.+]] = memref.alloc() : memref<1xi64>
// DEVICE: %[[SIZE_OUT:.+]] = memref.cast %[[SIZE]] : memref<1xi64> to memref<?xi64>
// DEVICE: call @gs_device_world_size(%[[SIZE_OUT]]) : (memref<?xi64>) -> ()
// DEVICE: %[[SIZE_TENSOR:.+]] = bufferization.to_tensor %[[SIZE]] restrict writable : memref<1xi64> to tensor<1xi64>
// DEVICE: %[[SIZE_0D:.+]] = tensor.collapse_shape %[[SIZE_TENSOR]] [] : tensor<1xi64> into tensor<i64>
// DEVICE: %[[N:.+]] = tensor.extract %[[SIZE_0D]][] : tensor<i64>
// DEVICE: call @gs_device_all_reduce_wait_f32(%[[REQUEST]], %{{.*}}, %{{.*}}) : (i64, memref<?xf32>, memref<?xf32>) -> ()
// DEVICE: return %{{.*}}, %[[N]]
// DEVICE-NOT: @gs_world_size
func.func @gradient(%dw: tensor<3x4xf32>) -> (tensor<3x4xf32>, i64) {
  %g = gs.all_reduce sum %dw : tensor<3x4xf32>
  %n = gs.world_size : i64
  return %g, %n : tensor<3x4xf32>, i64
}

// CHECK-LABEL: func.func @counts
// CHECK: %[[REQUEST:.+]] = call @gs_all_reduce_start_max_i64(%{{.*}}, %{{.*}}) : (memref<?xi64>, memref<?xi64>) -> i64
// CHECK: call @gs_all_reduce_wait_i64(%[[REQUEST]], %{{.*}}, %{{.*}}) : (i64, memref<?xi64>, memref<?xi64>) -> ()
func.func @counts(%c: tensor<4xi64>) -> tensor<4xi64> {
  %m = gs.all_reduce max %c : tensor<4xi64>
  return %m : tensor<4xi64>
}

// A scalar (the loss) goes as one element.
// CHECK-LABEL: func.func @loss
// CHECK: tensor.expand_shape %{{.*}} [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK: call @gs_all_reduce_start_sum_f32
// CHECK: call @gs_all_reduce_wait_f32
// CHECK: tensor.collapse_shape %{{.*}} [] : tensor<1xf32> into tensor<f32>
func.func @loss(%l: tensor<f32>) -> tensor<f32> {
  %s = gs.all_reduce sum %l : tensor<f32>
  return %s : tensor<f32>
}

// -----

// Statistics: the stats reduction of their lowered tensor<7xf64>, which
// the scale decision then reads.
// CHECK-DAG: func.func private @gs_all_reduce_start_stats_f64(memref<?xf64>, memref<?xf64>) -> i64
// CHECK-DAG: func.func private @gs_all_reduce_wait_f64(i64, memref<?xf64>, memref<?xf64>)
// CHECK-LABEL: func.func @statistics
// CHECK: %[[STATS:.+]] = tensor.from_elements {{.*}} : tensor<7xf64>
// CHECK: bufferization.to_buffer %[[STATS]] read_only
// CHECK: %[[REQUEST:.+]] = call @gs_all_reduce_start_stats_f64(%{{.*}}, %{{.*}}) : (memref<?xf64>, memref<?xf64>) -> i64
// CHECK: call @gs_all_reduce_wait_f64(%[[REQUEST]], %{{.*}}, %{{.*}})
// CHECK: %[[SUMMED:.+]] = bufferization.to_tensor
// CHECK: tensor.extract %[[SUMMED]]

// A device transport has no custom reduction: the records are summed and
// maximized (both started, then both waited for), and the maximum
// magnitude (field 3) taken from the maxima.
// DEVICE-LABEL: func.func @statistics
// DEVICE: %[[RECORD:.+]] = tensor.from_elements {{.*}} : tensor<7xf64>
// DEVICE: bufferization.to_buffer %[[RECORD]] read_only
// DEVICE: %[[SUM_REQUEST:.+]] = call @gs_device_all_reduce_start_stats_sum_f64
// DEVICE: bufferization.to_buffer %[[RECORD]] read_only
// DEVICE: %[[MAX_REQUEST:.+]] = call @gs_device_all_reduce_start_stats_max_f64
// DEVICE: call @gs_device_all_reduce_wait_f64(%[[SUM_REQUEST]],
// DEVICE: %[[SUMS:.+]] = bufferization.to_tensor
// DEVICE: call @gs_device_all_reduce_wait_f64(%[[MAX_REQUEST]],
// DEVICE: %[[MAXIMA:.+]] = bufferization.to_tensor
// DEVICE: %[[MERGED:.+]] = linalg.generic {{.*}} ins(%[[SUMS]], %[[MAXIMA]] : tensor<7xf64>, tensor<7xf64>)
// DEVICE: ^bb0(%[[SUM:.+]]: f64, %[[MAX:.+]]: f64, %{{.+}}: f64):
// DEVICE: %[[I:.+]] = linalg.index 0 : index
// DEVICE: %[[FIELD:.+]] = arith.remui %[[I]], %c7
// DEVICE: %[[IS_MAX:.+]] = arith.cmpi eq, %[[FIELD]], %c3
// DEVICE: %[[PICK:.+]] = arith.select %[[IS_MAX]], %[[MAX]], %[[SUM]] : f64
// DEVICE: linalg.yield %[[PICK]]
// DEVICE: tensor.extract %[[MERGED]]
// DEVICE-NOT: gs_device_all_reduce_start_stats
func.func @statistics(%dy: tensor<8x16xf32>) -> f32 {
  %s = gs.grad_stats %dy : tensor<8x16xf32>
  %t = gs.all_reduce sum %s : !gs.stats
  %beta, %rate = gs.compute_scale %t {model = #gs.scale_model<log_normal>}
  return %beta : f32
}
