// RUN: gs-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(gs-write-params-in-place))" | FileCheck %s
// RUN: gs-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(gs-write-params-in-place),one-shot-bufferize{bufferize-function-boundaries},canonicalize)" | FileCheck %s --check-prefix=BUFFERS

// An SGD-like update: the new weights, computed into an empty tensor and
// then copied into the parameter's global, are computed into the global
// (its init becomes the global, writable); the write stays as the
// result's use, a copy of the global into itself that bufferization drops.
// The old weights were copied where they were read.
memref.global "public" @w : memref<4x8xf32> = dense<1.0>

// CHECK-LABEL: func.func @update
// CHECK: %[[OLD:.+]] = linalg.copy
// CHECK: %[[W:.+]] = memref.get_global @w : memref<4x8xf32>
// CHECK: %[[INTO:.+]] = bufferization.to_tensor %[[W]] restrict writable : memref<4x8xf32> to tensor<4x8xf32>
// CHECK: %[[NEW:.+]] = linalg.generic {{.*}} ins(%[[OLD]], %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>) outs(%[[INTO]] : tensor<4x8xf32>)
// CHECK: bufferization.materialize_in_destination %[[NEW]] in writable

// BUFFERS-LABEL: func.func @update
// BUFFERS: %[[READ:.+]] = memref.get_global @w : memref<4x8xf32>
// BUFFERS: %[[OLD:.+]] = memref.alloc()
// BUFFERS: linalg.copy ins(%[[READ]] : memref<4x8xf32>) outs(%[[OLD]] : memref<4x8xf32>)
// BUFFERS: %[[W:.+]] = memref.get_global @w : memref<4x8xf32>
// BUFFERS: linalg.generic {{.*}} ins(%[[OLD]], %{{.*}} : memref<4x8xf32>, memref<4x8xf32, {{.*}}>) outs(%[[W]] : memref<4x8xf32>)
// BUFFERS-NOT: copy
// BUFFERS: return
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @update(%g: tensor<4x8xf32>) {
  %w = memref.get_global @w : memref<4x8xf32>
  %read = bufferization.to_tensor %w restrict : memref<4x8xf32> to tensor<4x8xf32>
  %e0 = tensor.empty() : tensor<4x8xf32>
  %old = linalg.copy ins(%read : tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %new = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%old, %g : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<4x8xf32>
  %w2 = memref.get_global @w : memref<4x8xf32>
  bufferization.materialize_in_destination %new in writable %w2 : (tensor<4x8xf32>, memref<4x8xf32>) -> ()
  return
}

// -----

// Left alone: the global is read between the op and the write (which must
// see the old value), an op whose payload reads its init, and an op that
// reads the global itself (not a copy of it).
memref.global "public" @w : memref<4xf32> = dense<1.0>

// CHECK-LABEL: func.func @read_between
// CHECK-NOT: restrict writable
// CHECK: bufferization.materialize_in_destination
#map = affine_map<(d0) -> (d0)>
func.func @read_between(%g: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %new = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%g : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  %w = memref.get_global @w : memref<4xf32>
  %read = bufferization.to_tensor %w restrict : memref<4xf32> to tensor<4xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %kept = linalg.copy ins(%read : tensor<4xf32>) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  bufferization.materialize_in_destination %new in writable %w : (tensor<4xf32>, memref<4xf32>) -> ()
  return %kept : tensor<4xf32>
}

// CHECK-LABEL: func.func @reads_init
// CHECK-NOT: restrict writable
// CHECK: bufferization.materialize_in_destination
func.func @reads_init(%g: tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %new = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%g : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %s = arith.addf %a, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %w = memref.get_global @w : memref<4xf32>
  bufferization.materialize_in_destination %new in writable %w : (tensor<4xf32>, memref<4xf32>) -> ()
  return
}

// CHECK-LABEL: func.func @reads_global
// CHECK-NOT: restrict writable
// CHECK: bufferization.materialize_in_destination
func.func @reads_global(%g: tensor<4xf32>) {
  %w = memref.get_global @w : memref<4xf32>
  %read = bufferization.to_tensor %w restrict : memref<4xf32> to tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %new = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
      ins(%read, %g : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  bufferization.materialize_in_destination %new in writable %w : (tensor<4xf32>, memref<4xf32>) -> ()
  return
}
