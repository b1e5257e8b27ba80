// RUN: gs-opt %s --gs-outline-kernels --split-input-file | FileCheck %s
// RUN: gs-opt %s --gs-outline-kernels --split-input-file \
// RUN:   | gs-opt --convert-scf-to-cf --convert-to-llvm \
// RUN:            --gs-mark-distinct-buffers-noalias --split-input-file \
// RUN:   | FileCheck %s --check-prefix=LLVM

// Two loop nests the same but for their buffers share one function; the
// views they read are recomputed inside it from the buffers viewed, and
// the constants with them.

// CHECK-LABEL: func.func @step(
// CHECK-SAME:      %[[X:.*]]: memref<4x8xf32>
// CHECK:         %[[A:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK:         %[[B:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK:         %[[C:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK:         %[[D:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK-NEXT:    call @[[DOUBLE:step_kernel_0]](%[[A]], %[[B]])
// CHECK-NEXT:    call @[[DOUBLE]](%[[C]], %[[D]])
// CHECK:         call @[[ROWS:step_kernel_2]](%[[X]], %[[A]])
// CHECK-NEXT:    return

// CHECK:       func.func private @[[DOUBLE]](%[[IN:.*]]: memref<4x8xf32>, %[[OUT:.*]]: memref<4x8xf32>)
// CHECK-SAME:      attributes {gs.distinct_buffers, llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline", "no-builtin-memcpy", "no-builtin-memmove"]}
// CHECK-NEXT:    linalg.generic
// CHECK-SAME:      ins(%[[IN]] : memref<4x8xf32>) outs(%[[OUT]] : memref<4x8xf32>)
// CHECK:         return

// A function argument may be any caller's buffer: no gs.distinct_buffers.
// CHECK:       func.func private @[[ROWS]](%[[XA:.*]]: memref<4x8xf32>, %[[AA:.*]]: memref<4x8xf32>)
// CHECK-SAME:      attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline", "no-builtin-memcpy", "no-builtin-memmove"]}
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[ROW:.*]] = memref.subview %[[AA]][0, 0] [1, 8] [1, 1]
// CHECK:         scf.for %{{.*}} = %[[ZERO]] to %[[TWO]] step %[[ONE]]
// CHECK:           memref.load %[[XA]]
// CHECK:           memref.store %{{.*}}, %[[ROW]]
// CHECK:         return

// LLVM-LABEL: llvm.func @step(
// LLVM:       llvm.func internal @step_kernel_0(%{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: i64,
// LLVM-SAME:      passthrough = ["noinline", "no-builtin-memcpy", "no-builtin-memmove"]
// LLVM:       llvm.func internal @step_kernel_2(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64,
// LLVM-NOT:   gs.distinct_buffers

#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @step(%x: memref<4x8xf32>) {
  %a = memref.alloc() : memref<4x8xf32>
  %b = memref.alloc() : memref<4x8xf32>
  %c = memref.alloc() : memref<4x8xf32>
  %d = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x8xf32>) outs(%b : memref<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sum = arith.addf %in, %in : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<4x8xf32>) outs(%d : memref<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sum = arith.addf %in, %in : f32
    linalg.yield %sum : f32
  }
  %zero = arith.constant 0 : index
  %one = arith.constant 1 : index
  %two = arith.constant 2 : index
  %row = memref.subview %a[0, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<8xf32, strided<[1]>>
  scf.for %i = %zero to %two step %one {
    %v = memref.load %x[%i, %i] : memref<4x8xf32>
    memref.store %v, %row[%i] : memref<8xf32, strided<[1]>>
  }
  return
}

// -----

// One global reached through two get_global ops: not distinct buffers. A
// loop with a result returns it; a kernel inside an scf.if is outlined
// from there.

// CHECK-LABEL: memref.global "private" @w
// CHECK-LABEL: func.func @globals(
// CHECK:         %[[W1:.*]] = memref.get_global @w
// CHECK:         %[[W2:.*]] = memref.get_global @w
// CHECK:         %[[SUM:.*]] = call @[[SUM_KERNEL:globals_kernel_0]](%[[W1]])
// CHECK:         scf.if
// CHECK-NEXT:      call @[[COPY_KERNEL:globals_kernel_1]](%[[W1]], %[[W2]])
// CHECK:         return %[[SUM]]

// CHECK:       func.func private @[[SUM_KERNEL]](%{{.*}}: memref<4xf32>) -> f32
// CHECK-SAME:      gs.distinct_buffers
// CHECK:         %[[R:.*]] = scf.for
// CHECK:         return %[[R]] : f32
// CHECK:       func.func private @[[COPY_KERNEL]](
// CHECK-SAME:      attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline", "no-builtin-memcpy", "no-builtin-memmove"]} {
// CHECK-NEXT:    linalg.copy

// A global taken as an argument and reached by a get_global inside the
// kernel too: not distinct either.
// CHECK:       func.func private @global_inside_kernel_{{[0-9]+}}(%{{.*}}: memref<4xf32>)
// CHECK-SAME:      attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline", "no-builtin-memcpy", "no-builtin-memmove"]} {
// CHECK:           memref.get_global @v

memref.global "private" @w : memref<4xf32> = dense<1.0>
func.func @globals(%flag: i1) -> f32 {
  %w1 = memref.get_global @w : memref<4xf32>
  %w2 = memref.get_global @w : memref<4xf32>
  %zero = arith.constant 0 : index
  %one = arith.constant 1 : index
  %four = arith.constant 4 : index
  %init = arith.constant 0.0 : f32
  %sum = scf.for %i = %zero to %four step %one iter_args(%acc = %init) -> f32 {
    %v = memref.load %w1[%i] : memref<4xf32>
    %next = arith.addf %acc, %v : f32
    scf.yield %next : f32
  }
  scf.if %flag {
    linalg.copy ins(%w1 : memref<4xf32>) outs(%w2 : memref<4xf32>)
  }
  return %sum : f32
}

memref.global "private" @v : memref<4xf32> = dense<0.0>
func.func @global_inside() {
  %v = memref.get_global @v : memref<4xf32>
  %zero = arith.constant 0 : index
  %one = arith.constant 1 : index
  %four = arith.constant 4 : index
  scf.for %i = %zero to %four step %one {
    %again = memref.get_global @v : memref<4xf32>
    %x = memref.load %again[%i] : memref<4xf32>
    memref.store %x, %v[%i] : memref<4xf32>
  }
  return
}
