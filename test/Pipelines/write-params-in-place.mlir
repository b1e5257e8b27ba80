// RUN: gs-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(gs-write-params-in-place))" | FileCheck %s
// RUN: gs-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(gs-write-params-in-place),one-shot-bufferize{bufferize-function-boundaries},canonicalize)" | FileCheck %s --check-prefix=BUFFERS

// An SGD-like update: the new weights, computed into an empty tensor and
// then copied into the parameter's global, are computed into the global
// (its init becomes the global, writable); the write stays as the
// result's use, a copy of the global into itself that bufferization drops.
// The old weights were copied where they were read; the update reads each
// element where it writes it, so it reads the global itself: no copy.
memref.global "public" @w : memref<4x8xf32> = dense<1.0>

// CHECK-LABEL: func.func @update
// CHECK-NOT: linalg.copy
// CHECK: %[[R:.+]] = memref.get_global @w : memref<4x8xf32>
// CHECK: %[[READ:.+]] = bufferization.to_tensor %[[R]] restrict : memref<4x8xf32> to tensor<4x8xf32>
// CHECK-NOT: linalg.copy
// CHECK: %[[W:.+]] = memref.get_global @w : memref<4x8xf32>
// CHECK: %[[INTO:.+]] = bufferization.to_tensor %[[W]] restrict writable : memref<4x8xf32> to tensor<4x8xf32>
// CHECK: %[[NEW:.+]] = linalg.generic {{.*}} ins(%[[READ]], %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>) outs(%[[INTO]] : tensor<4x8xf32>)
// CHECK: bufferization.materialize_in_destination %[[NEW]] in writable

// BUFFERS-LABEL: func.func @update
// BUFFERS: %[[READ:.+]] = memref.get_global @w : memref<4x8xf32>
// BUFFERS-NOT: copy
// BUFFERS: %[[W:.+]] = memref.get_global @w : memref<4x8xf32>
// BUFFERS: linalg.generic {{.*}} ins(%[[READ]], %{{.*}} : memref<4x8xf32>, memref<4x8xf32, {{.*}}>) outs(%[[W]] : memref<4x8xf32>)
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

// -----

// A forward pass and an update. The forward's read (a matmul, before the
// update writes) needs no copy; the update reading the old weights
// transposed would read elements it has already overwritten: that copy
// stays. A read after the write (returned) keeps its copy too.
memref.global "public" @w : memref<4x4xf32> = dense<1.0>

// CHECK-LABEL: func.func @forward_and_update
// CHECK: %[[R:.+]] = bufferization.to_tensor %{{.*}} restrict : memref<4x4xf32> to tensor<4x4xf32>
// CHECK: linalg.matmul ins(%{{.*}}, %[[R]] : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK: %[[T:.+]] = linalg.copy ins(%{{.*}} : tensor<4x4xf32>)
// CHECK: %[[LATE:.+]] = linalg.copy ins(%{{.*}} : tensor<4x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[T]], %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>) outs(%{{.*}} : tensor<4x4xf32>)
// CHECK: return %{{.*}}, %[[LATE]]
#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
func.func @forward_and_update(%x: tensor<4x4xf32>, %g: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %w = memref.get_global @w : memref<4x4xf32>
  %read = bufferization.to_tensor %w restrict : memref<4x4xf32> to tensor<4x4xf32>
  %e0 = tensor.empty() : tensor<4x4xf32>
  %old = linalg.copy ins(%read : tensor<4x4xf32>) outs(%e0 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %y = linalg.matmul ins(%x, %old : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %read2 = bufferization.to_tensor %w restrict : memref<4x4xf32> to tensor<4x4xf32>
  %e2 = tensor.empty() : tensor<4x4xf32>
  %old2 = linalg.copy ins(%read2 : tensor<4x4xf32>) outs(%e2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e4 = tensor.empty() : tensor<4x4xf32>
  %late = linalg.copy ins(%read2 : tensor<4x4xf32>) outs(%e4 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e3 = tensor.empty() : tensor<4x4xf32>
  %new = linalg.generic {indexing_maps = [#t, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%old2, %g : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e3 : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<4x4xf32>
  %w2 = memref.get_global @w : memref<4x4xf32>
  bufferization.materialize_in_destination %new in writable %w2 : (tensor<4x4xf32>, memref<4x4xf32>) -> ()
  return %y, %late : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// The copy of a read that a reshape moved (the copy of the expanded global
// into an expanded empty tensor) goes too: the reshape reads the global.
memref.global "public" @w : memref<4x4xf32> = dense<1.0>

// CHECK-LABEL: func.func @reshaped_read
// CHECK: %[[R:.+]] = bufferization.to_tensor %{{.*}} restrict : memref<4x4xf32> to tensor<4x4xf32>
// CHECK: %[[X:.+]] = tensor.expand_shape %[[R]]
// CHECK-NOT: linalg.copy
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<1x4x4xf32>)
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @reshaped_read(%g: tensor<4x4xf32>) -> tensor<1x4x4xf32> {
  %w = memref.get_global @w : memref<4x4xf32>
  %read = bufferization.to_tensor %w restrict : memref<4x4xf32> to tensor<4x4xf32>
  %e0 = tensor.empty() : tensor<4x4xf32>
  %x = tensor.expand_shape %read [[0, 1], [2]] output_shape [1, 4, 4] : tensor<4x4xf32> into tensor<1x4x4xf32>
  %xe = tensor.expand_shape %e0 [[0, 1], [2]] output_shape [1, 4, 4] : tensor<4x4xf32> into tensor<1x4x4xf32>
  %old = linalg.copy ins(%x : tensor<1x4x4xf32>) outs(%xe : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  %e1 = tensor.empty() : tensor<1x4x4xf32>
  %y = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%old : tensor<1x4x4xf32>) outs(%e1 : tensor<1x4x4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %d = arith.mulf %a, %a : f32
    linalg.yield %d : f32
  } -> tensor<1x4x4xf32>
  %e3 = tensor.empty() : tensor<4x4xf32>
  %new = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<4x4xf32>) outs(%e3 : tensor<4x4xf32>) {
  ^bb0(%b: f32, %out: f32):
    linalg.yield %b : f32
  } -> tensor<4x4xf32>
  %w2 = memref.get_global @w : memref<4x4xf32>
  bufferization.materialize_in_destination %new in writable %w2 : (tensor<4x4xf32>, memref<4x4xf32>) -> ()
  return %y : tensor<1x4x4xf32>
}
