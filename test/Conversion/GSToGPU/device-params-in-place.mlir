// RUN: gs-opt %s --split-input-file --gs-device-params-in-place | FileCheck %s

// An optimizer update after bufferization: the weight and its momentum
// are read by copying their globals, the kernel stores the new values in
// new buffers, which are copied into the globals. The kernel loads each
// element of both copies at the indices where the same thread stores it
// (gs.per_thread_outputs): it reads and writes the globals themselves, and
// no copy is left. The forward kernel before it reads the weight's global
// too (a read before the write needs no copy).
// CHECK-LABEL: func.func @step
// CHECK-NOT: copy
// CHECK: %[[W:.+]] = memref.get_global @w
// CHECK: gpu.launch_func @forward::@forward {{.*}} args(%[[W]] : memref<8xf32>,
// CHECK: %[[V:.+]] = memref.get_global @v
// CHECK: %[[NEWW:.+]] = memref.get_global @w
// CHECK: %[[NEWV:.+]] = memref.get_global @v
// CHECK: gpu.launch_func @update::@update {{.*}} args(%[[W]] : memref<8xf32>, %{{.+}} : memref<8xf32>, %[[V]] : memref<8xf32>, %[[NEWW]] : memref<8xf32>, %[[NEWV]] : memref<8xf32>)
// CHECK-NOT: copy
// CHECK: return
module attributes {gpu.container_module} {
  memref.global "public" @w : memref<8xf32> = dense<1.0>
  memref.global "public" @v : memref<8xf32> = dense<0.0>
  gpu.module @forward {
    gpu.func @forward(%w: memref<8xf32>, %y: memref<f32>) kernel {
      %c0 = arith.constant 0 : index
      %x = memref.load %w[%c0] : memref<8xf32>
      memref.store %x, %y[] : memref<f32>
      gpu.return
    }
  }
  gpu.module @update {
    gpu.func @update(%w: memref<8xf32>, %g: memref<8xf32>, %v: memref<8xf32>,
                     %neww: memref<8xf32>, %newv: memref<8xf32>)
        kernel attributes {gs.per_thread_outputs} {
      %i = gpu.thread_id x
      %cw = memref.load %w[%i] : memref<8xf32>
      %cg = memref.load %g[%i] : memref<8xf32>
      %cv = memref.load %v[%i] : memref<8xf32>
      %m = arith.addf %cv, %cg : f32
      %n = arith.subf %cw, %m : f32
      memref.store %n, %neww[%i] : memref<8xf32>
      memref.store %m, %newv[%i] : memref<8xf32>
      gpu.return
    }
  }
  func.func @step(%g: memref<8xf32>, %y: memref<f32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %0 = memref.get_global @w : memref<8xf32>
    %w = memref.alloc() : memref<8xf32>
    linalg.copy ins(%0 : memref<8xf32>) outs(%w : memref<8xf32>)
    gpu.launch_func @forward::@forward blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%w : memref<8xf32>, %y : memref<f32>)
    %1 = memref.get_global @v : memref<8xf32>
    %v = memref.alloc() : memref<8xf32>
    linalg.copy ins(%1 : memref<8xf32>) outs(%v : memref<8xf32>)
    %neww = memref.alloc() : memref<8xf32>
    %newv = memref.alloc() : memref<8xf32>
    gpu.launch_func @update::@update blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%w : memref<8xf32>, %g : memref<8xf32>, %v : memref<8xf32>, %neww : memref<8xf32>, %newv : memref<8xf32>)
    %2 = memref.get_global @w : memref<8xf32>
    memref.copy %neww, %2 : memref<8xf32> to memref<8xf32>
    %3 = memref.get_global @v : memref<8xf32>
    memref.copy %newv, %3 : memref<8xf32> to memref<8xf32>
    return
  }
}

// -----

// Reshapes: the kernel reads the copy through an expand_shape and its
// output is collapsed into the global; it reads and writes the global
// through expand_shapes of it.
// CHECK-LABEL: func.func @reshaped
// CHECK-NOT: copy
// CHECK: %[[M:.+]] = memref.get_global @mean : memref<8xf32>
// CHECK: %[[OLD:.+]] = memref.expand_shape %[[M]] {{\[\[}}0, 1]] output_shape [1, 8]
// CHECK: %[[M2:.+]] = memref.get_global @mean : memref<8xf32>
// CHECK: %[[NEW:.+]] = memref.expand_shape %[[M2]] {{\[\[}}0, 1]] output_shape [1, 8]
// CHECK: gpu.launch_func @running::@running {{.*}} args(%[[OLD]] : memref<1x8xf32>, %{{.+}} : memref<1x8xf32>, %[[NEW]] : memref<1x8xf32>)
// CHECK-NOT: copy
// CHECK: return
module attributes {gpu.container_module} {
  memref.global "public" @mean : memref<8xf32> = dense<0.0>
  gpu.module @running {
    gpu.func @running(%old: memref<1x8xf32>, %batch: memref<1x8xf32>,
                      %new: memref<1x8xf32>)
        kernel attributes {gs.per_thread_outputs} {
      %c0 = arith.constant 0 : index
      %i = gpu.thread_id x
      %a = memref.load %old[%c0, %i] : memref<1x8xf32>
      %b = memref.load %batch[%c0, %i] : memref<1x8xf32>
      %s = arith.addf %a, %b : f32
      memref.store %s, %new[%c0, %i] : memref<1x8xf32>
      gpu.return
    }
  }
  func.func @reshaped(%batch: memref<1x8xf32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %0 = memref.get_global @mean : memref<8xf32>
    %copy = memref.alloc() : memref<8xf32>
    linalg.copy ins(%0 : memref<8xf32>) outs(%copy : memref<8xf32>)
    %old = memref.expand_shape %copy [[0, 1]] output_shape [1, 8] : memref<8xf32> into memref<1x8xf32>
    %new = memref.alloc() : memref<1x8xf32>
    gpu.launch_func @running::@running blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%old : memref<1x8xf32>, %batch : memref<1x8xf32>, %new : memref<1x8xf32>)
    %flat = memref.collapse_shape %new [[0, 1]] : memref<1x8xf32> into memref<8xf32>
    %1 = memref.get_global @mean : memref<8xf32>
    memref.copy %flat, %1 : memref<8xf32> to memref<8xf32>
    return
  }
}

// -----

// What keeps a read's copy: a kernel without gs.per_thread_outputs, one
// that reads another element than it stores, and a reader after the
// write. The writes themselves still go to the globals.
// CHECK-LABEL: func.func @kept
// CHECK: linalg.copy ins(%{{.+}} : memref<8xf32>) outs(%[[A:.+]] : memref<8xf32>)
// CHECK: linalg.copy ins(%{{.+}} : memref<8xf32>) outs(%[[B:.+]] : memref<8xf32>)
// CHECK: linalg.copy ins(%{{.+}} : memref<8xf32>) outs(%[[C:.+]] : memref<8xf32>)
// CHECK: %[[GA:.+]] = memref.get_global @a
// CHECK: gpu.launch_func @shared::@shared {{.*}} args(%[[A]] : memref<8xf32>, %[[GA]] : memref<8xf32>)
// CHECK: %[[GB:.+]] = memref.get_global @b
// CHECK: gpu.launch_func @reversed::@reversed {{.*}} args(%[[B]] : memref<8xf32>, %[[GB]] : memref<8xf32>)
// CHECK: %[[GC:.+]] = memref.get_global @c
// CHECK: gpu.launch_func @own::@own {{.*}} args(%[[C]] : memref<8xf32>, %[[GC]] : memref<8xf32>)
// CHECK: gpu.launch_func @late::@late {{.*}} args(%[[C]] : memref<8xf32>,
// CHECK-NOT: memref.copy
// CHECK: return
module attributes {gpu.container_module} {
  memref.global "public" @a : memref<8xf32> = dense<1.0>
  memref.global "public" @b : memref<8xf32> = dense<1.0>
  memref.global "public" @c : memref<8xf32> = dense<1.0>
  gpu.module @shared {
    gpu.func @shared(%in: memref<8xf32>, %out: memref<8xf32>) kernel {
      %i = gpu.thread_id x
      %x = memref.load %in[%i] : memref<8xf32>
      memref.store %x, %out[%i] : memref<8xf32>
      gpu.return
    }
  }
  gpu.module @reversed {
    gpu.func @reversed(%in: memref<8xf32>, %out: memref<8xf32>)
        kernel attributes {gs.per_thread_outputs} {
      %c7 = arith.constant 7 : index
      %i = gpu.thread_id x
      %j = arith.subi %c7, %i : index
      %x = memref.load %in[%j] : memref<8xf32>
      memref.store %x, %out[%i] : memref<8xf32>
      gpu.return
    }
  }
  gpu.module @own {
    gpu.func @own(%in: memref<8xf32>, %out: memref<8xf32>)
        kernel attributes {gs.per_thread_outputs} {
      %i = gpu.thread_id x
      %x = memref.load %in[%i] : memref<8xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %out[%i] : memref<8xf32>
      gpu.return
    }
  }
  gpu.module @late {
    gpu.func @late(%in: memref<8xf32>, %out: memref<f32>) kernel {
      %c0 = arith.constant 0 : index
      %x = memref.load %in[%c0] : memref<8xf32>
      memref.store %x, %out[] : memref<f32>
      gpu.return
    }
  }
  func.func @kept(%y: memref<f32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %0 = memref.get_global @a : memref<8xf32>
    %a = memref.alloc() : memref<8xf32>
    linalg.copy ins(%0 : memref<8xf32>) outs(%a : memref<8xf32>)
    %1 = memref.get_global @b : memref<8xf32>
    %b = memref.alloc() : memref<8xf32>
    linalg.copy ins(%1 : memref<8xf32>) outs(%b : memref<8xf32>)
    %2 = memref.get_global @c : memref<8xf32>
    %c = memref.alloc() : memref<8xf32>
    linalg.copy ins(%2 : memref<8xf32>) outs(%c : memref<8xf32>)
    %newa = memref.alloc() : memref<8xf32>
    gpu.launch_func @shared::@shared blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%a : memref<8xf32>, %newa : memref<8xf32>)
    %3 = memref.get_global @a : memref<8xf32>
    memref.copy %newa, %3 : memref<8xf32> to memref<8xf32>
    %newb = memref.alloc() : memref<8xf32>
    gpu.launch_func @reversed::@reversed blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%b : memref<8xf32>, %newb : memref<8xf32>)
    %4 = memref.get_global @b : memref<8xf32>
    memref.copy %newb, %4 : memref<8xf32> to memref<8xf32>
    %newc = memref.alloc() : memref<8xf32>
    gpu.launch_func @own::@own blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%c : memref<8xf32>, %newc : memref<8xf32>)
    %5 = memref.get_global @c : memref<8xf32>
    memref.copy %newc, %5 : memref<8xf32> to memref<8xf32>
    gpu.launch_func @late::@late blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%c : memref<8xf32>, %y : memref<f32>)
    return
  }
}

// -----

// What keeps a write's copy: the global read between the kernel and the
// copy (by a kernel that must see the old value), and a buffer that is
// read as well as written by its kernel.
// CHECK-LABEL: func.func @kept_writes
// CHECK: gpu.launch_func @fill::@fill {{.*}} args(%[[NEW:.+]] : memref<8xf32>)
// CHECK: gpu.launch_func @peek::@peek {{.*}} args(%[[OLD:.+]] : memref<8xf32>,
// CHECK: memref.copy %[[NEW]], %{{.+}} : memref<8xf32> to memref<8xf32>
// CHECK: gpu.launch_func @twice::@twice {{.*}} args(%[[ACC:.+]] : memref<8xf32>)
// CHECK: memref.copy %[[ACC]], %{{.+}} : memref<8xf32> to memref<8xf32>
module attributes {gpu.container_module} {
  memref.global "public" @p : memref<8xf32> = dense<1.0>
  memref.global "public" @q : memref<8xf32> = dense<1.0>
  gpu.module @fill {
    gpu.func @fill(%out: memref<8xf32>) kernel attributes {gs.per_thread_outputs} {
      %i = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %out[%i] : memref<8xf32>
      gpu.return
    }
  }
  gpu.module @peek {
    gpu.func @peek(%in: memref<8xf32>, %out: memref<f32>) kernel {
      %c0 = arith.constant 0 : index
      %x = memref.load %in[%c0] : memref<8xf32>
      memref.store %x, %out[] : memref<f32>
      gpu.return
    }
  }
  gpu.module @twice {
    gpu.func @twice(%acc: memref<8xf32>) kernel {
      %i = gpu.thread_id x
      %x = memref.load %acc[%i] : memref<8xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %acc[%i] : memref<8xf32>
      gpu.return
    }
  }
  func.func @kept_writes(%y: memref<f32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %new = memref.alloc() : memref<8xf32>
    gpu.launch_func @fill::@fill blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%new : memref<8xf32>)
    %0 = memref.get_global @p : memref<8xf32>
    gpu.launch_func @peek::@peek blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%0 : memref<8xf32>, %y : memref<f32>)
    memref.copy %new, %0 : memref<8xf32> to memref<8xf32>
    %acc = memref.alloc() : memref<8xf32>
    gpu.launch_func @twice::@twice blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%acc : memref<8xf32>)
    %1 = memref.get_global @q : memref<8xf32>
    memref.copy %acc, %1 : memref<8xf32> to memref<8xf32>
    return
  }
}

// -----

// The same for a kernel not outlined (gs-lower-to-cuda's emulated
// kernels): the update's gpu.launch loads and stores the global.
// CHECK-LABEL: func.func @inline_launch
// CHECK-NOT: copy
// CHECK: %[[W:.+]] = memref.get_global @w
// CHECK: %[[NEW:.+]] = memref.get_global @w
// CHECK: gpu.launch
// CHECK: memref.load %[[W]][
// CHECK: memref.store %{{.+}}, %[[NEW]][
// CHECK: } {gs.per_thread_outputs}
// CHECK-NOT: copy
// CHECK: return
module {
  memref.global "public" @w : memref<8xf32> = dense<1.0>
  func.func @inline_launch(%g: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %0 = memref.get_global @w : memref<8xf32>
    %w = memref.alloc() : memref<8xf32>
    linalg.copy ins(%0 : memref<8xf32>) outs(%w : memref<8xf32>)
    %new = memref.alloc() : memref<8xf32>
    gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
               threads(%tx, %ty, %tz) in (%u = %c8, %v = %c1, %t = %c1) {
      %a = memref.load %w[%tx] : memref<8xf32>
      %b = memref.load %g[%tx] : memref<8xf32>
      %d = arith.subf %a, %b : f32
      memref.store %d, %new[%tx] : memref<8xf32>
      gpu.terminator
    } {gs.per_thread_outputs}
    %1 = memref.get_global @w : memref<8xf32>
    memref.copy %new, %1 : memref<8xf32> to memref<8xf32>
    return
  }
}

// -----

// A result's out-parameter is written the same way: the loss kernel
// stores into the argument instead of a buffer copied there. Not where a
// launch between the kernel and the copy uses the argument.
// CHECK-LABEL: func.func @out_parameter
// CHECK-SAME: (%[[X:.+]]: memref<8xf32>, %[[LOSS:.+]]: memref<f32>, %[[OTHER:.+]]: memref<f32>)
// CHECK: gpu.launch_func @total::@total {{.*}} args(%[[X]] : memref<8xf32>, %[[LOSS]] : memref<f32>)
// CHECK-NOT: memref.copy %{{.+}}, %[[LOSS]]
// CHECK: gpu.launch_func @total::@total {{.*}} args(%[[X]] : memref<8xf32>, %[[KEPT:.+]] : memref<f32>)
// CHECK: gpu.launch_func @total::@total {{.*}} args(%[[X]] : memref<8xf32>, %[[OTHER]] : memref<f32>)
// CHECK: memref.copy %[[KEPT]], %[[OTHER]]
module attributes {gpu.container_module} {
  gpu.module @total {
    gpu.func @total(%x: memref<8xf32>, %out: memref<f32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %x[%c0] : memref<8xf32>
      memref.store %v, %out[] : memref<f32>
      gpu.return
    }
  }
  func.func @out_parameter(%x: memref<8xf32>, %loss: memref<f32>, %other: memref<f32>) {
    %c1 = arith.constant 1 : index
    %l = memref.alloc() : memref<f32>
    gpu.launch_func @total::@total blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<8xf32>, %l : memref<f32>)
    memref.copy %l, %loss : memref<f32> to memref<f32>
    %k = memref.alloc() : memref<f32>
    gpu.launch_func @total::@total blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<8xf32>, %k : memref<f32>)
    gpu.launch_func @total::@total blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<8xf32>, %other : memref<f32>)
    memref.copy %k, %other : memref<f32> to memref<f32>
    return
  }
}
