// RUN: gs-opt %s --split-input-file --verify-diagnostics --gs-device-memory | FileCheck %s
// RUN: gs-opt %s --split-input-file --verify-diagnostics --gs-device-memory=queue=true | FileCheck %s --check-prefix=QUEUE

// A step's host code after bufferization and outlining: the parameters
// become leading arguments of the public function in module order (the
// constant global does not), a parameter's read copy and the result's
// copy become gpu.memcpy, buffers gpu.alloc freed after their last use
// (through the view for %h), the constant a device copy.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[W:.*]]: memref<4x8xf32> {gs.param = @w},
// CHECK-SAME: %[[S:.*]]: memref<i64> {gs.param = @counter},
// CHECK-SAME: %[[X:.*]]: memref<2x4xf32> {onnx.name = "x"},
// CHECK-SAME: %[[LOSS:.*]]: memref<f32>)
// CHECK: %[[HOST:.*]] = memref.get_global @__constant_8xf32
// CHECK-NEXT: %[[BIAS:.*]] = gpu.alloc () : memref<8xf32>
// CHECK-NEXT: gpu.memcpy %[[BIAS]], %[[HOST]]
// CHECK-NEXT: %[[WCOPY:.*]] = gpu.alloc () : memref<4x8xf32>
// CHECK-NEXT: gpu.memcpy %[[WCOPY]], %[[W]]
// CHECK-NEXT: %[[H:.*]] = gpu.alloc () : memref<2x8xf32>
// CHECK-NEXT: gpu.launch_func @k::@k {{.*}} args(%[[X]] : memref<2x4xf32>, %[[WCOPY]] : memref<4x8xf32>, %[[BIAS]] : memref<8xf32>, %[[H]] : memref<2x8xf32>)
// CHECK-NEXT: gpu.dealloc %[[WCOPY]]
// CHECK-NEXT: gpu.dealloc %[[BIAS]]
// CHECK-NEXT: %[[FLAT:.*]] = memref.collapse_shape %[[H]]
// CHECK-NEXT: %[[L:.*]] = gpu.alloc () : memref<f32>
// CHECK-NEXT: gpu.launch_func @r::@r {{.*}} args(%[[FLAT]] : memref<16xf32>, %[[L]] : memref<f32>, %[[S]] : memref<i64>)
// CHECK-NEXT: gpu.dealloc %[[H]]
// CHECK-NEXT: gpu.memcpy %[[LOSS]], %[[L]]
// CHECK-NEXT: gpu.dealloc %[[L]]
// CHECK-NEXT: return
// With queue=true the same ops, each queued after the previous one on
// one stream, and no wait at the end.
// QUEUE-LABEL: func.func @step(
// QUEUE: %[[T0:.*]] = gpu.wait async
// QUEUE: %[[HOST:.*]] = memref.get_global @__constant_8xf32
// QUEUE-NEXT: %[[BIAS:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] () : memref<8xf32>
// QUEUE-NEXT: %[[T2:.*]] = gpu.memcpy async [%[[T1]]] %[[BIAS]], %[[HOST]]
// QUEUE-NEXT: %[[WCOPY:.*]], %[[T3:.*]] = gpu.alloc async [%[[T2]]] () : memref<4x8xf32>
// QUEUE-NEXT: %[[T4:.*]] = gpu.memcpy async [%[[T3]]] %[[WCOPY]]
// QUEUE-NEXT: %[[H:.*]], %[[T5:.*]] = gpu.alloc async [%[[T4]]] () : memref<2x8xf32>
// QUEUE-NEXT: %[[T6:.*]] = gpu.launch_func async [%[[T5]]] @k::@k
// QUEUE-NOT: gpu.wait
// QUEUE: gpu.dealloc async
// QUEUE-NOT: gpu.wait
// QUEUE: return
module attributes {gpu.container_module} {
  memref.global "public" @w : memref<4x8xf32> = dense<1.0>
  memref.global "private" constant @__constant_8xf32 : memref<8xf32> = dense<0.5>
  memref.global "public" @counter : memref<i64> = dense<0>
  gpu.module @k {
    gpu.func @k(%x: memref<2x4xf32>, %w: memref<4x8xf32>, %b: memref<8xf32>, %h: memref<2x8xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @r {
    gpu.func @r(%h: memref<16xf32>, %l: memref<f32>, %s: memref<i64>) kernel {
      gpu.return
    }
  }
  func.func @step(%x: memref<2x4xf32> {onnx.name = "x"}, %loss: memref<f32>) {
    %c1 = arith.constant 1 : index
    %bias = memref.get_global @__constant_8xf32 : memref<8xf32>
    %w = memref.get_global @w : memref<4x8xf32>
    %wcopy = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
    linalg.copy ins(%w : memref<4x8xf32>) outs(%wcopy : memref<4x8xf32>)
    %h = memref.alloc() : memref<2x8xf32>
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<2x4xf32>, %wcopy : memref<4x8xf32>, %bias : memref<8xf32>, %h : memref<2x8xf32>)
    %flat = memref.collapse_shape %h [[0, 1]] : memref<2x8xf32> into memref<16xf32>
    %l = memref.alloc() : memref<f32>
    %s = memref.get_global @counter : memref<i64>
    gpu.launch_func @r::@r blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%flat : memref<16xf32>, %l : memref<f32>, %s : memref<i64>)
    memref.copy %l, %loss : memref<f32> to memref<f32>
    return
  }
}

// -----

// A private function gets no parameters: it may not read one.
module {
  memref.global "public" @w : memref<4xf32> = dense<1.0>
  func.func private @helper() {
    // expected-error @+1 {{gs-device-memory: parameter @w is accessed outside a public function; inline the functions that access parameters first}}
    %w = memref.get_global @w : memref<4xf32>
    return
  }
}

// -----

// Host code may not touch device memory.
func.func @host_read(%x: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{gs-device-memory: host code would access device memory: memref.load}}
  %v = memref.load %x[%c0] : memref<4xf32>
  return %v : f32
}

// -----

func.func @strided_copy(%x: memref<4x4xf32>, %y: memref<4x2xf32>) {
  %s = memref.subview %x[0, 0] [4, 2] [1, 1] : memref<4x4xf32> to memref<4x2xf32, strided<[4, 1]>>
  // expected-error @+1 {{gs-device-memory: a copy between buffers that are not contiguous and alike: 'memref<4x2xf32, strided<[4, 1]>>' to 'memref<4x2xf32>'}}
  memref.copy %s, %y : memref<4x2xf32, strided<[4, 1]>> to memref<4x2xf32>
  return
}

// -----

// expected-error @+1 {{gs-device-memory: host code must be straight-line (one block)}}
func.func @branches(%c: i1) {
  cf.cond_br %c, ^a, ^b
^a:
  return
^b:
  return
}

// -----

func.func @escapes() -> memref<4xf32> {
  %a = memref.alloc() : memref<4xf32>
  // expected-error @+1 {{gs-device-memory: a function returns a buffer; pass results as out-parameters}}
  return %a : memref<4xf32>
}
