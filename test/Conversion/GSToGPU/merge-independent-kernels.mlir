// RUN: gs-opt %s --split-input-file --gs-merge-independent-kernels | FileCheck %s

// The optimizer's tail: the update of a weight (3 blocks of 4 x 2
// threads), of its bias (one block of 4) and a step counter (one thread),
// each on a parameter of its own, all reading the skip flag. They run side
// by side in one launch of 3 + 1 + 1 blocks of 8 threads: each block runs
// the body of the kernel it belongs to, with that kernel's block index
// (from the merged one less the kernel's first block) and thread indices
// (x and y of the 4 x 2 block from the linear one), on the threads below
// its block's size. The kernels' modules are erased.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK-NOT: gpu.module
// CHECK-LABEL: func.func @updates
// CHECK: memref.get_global @step
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1 : index
// CHECK: %[[FIVE:.+]] = arith.constant 5 : index
// CHECK: %[[EIGHT:.+]] = arith.constant 8 : index
// CHECK: gpu.launch blocks(%[[BX:[a-z0-9_]+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[FIVE]], %{{.+}} = %[[ONE]], %{{.+}} = %[[ONE]]) threads(%[[TX:[a-z0-9_]+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[EIGHT]], %{{.+}} = %[[ONE]], %{{.+}} = %[[ONE]]) module(@gs_parallel_0_kernel) function(@gs_parallel_0_kernel)
// The weight's blocks 0 to 2, all 8 threads.
// CHECK: %[[S0:.+]] = arith.constant 0 : index
// CHECK: %[[E0:.+]] = arith.constant 3 : index
// CHECK: %[[A0:.+]] = arith.cmpi uge, %[[BX]], %[[S0]]
// CHECK: %[[B0:.+]] = arith.cmpi ult, %[[BX]], %[[E0]]
// CHECK: %[[IN0:.+]] = arith.andi %[[A0]], %[[B0]]
// CHECK: scf.if %[[IN0]] {
// CHECK: %[[PB0:.+]] = arith.subi %[[BX]], %[[S0]]
// CHECK: %[[FOUR:.+]] = arith.constant 4 : index
// CHECK: %[[TWO:.+]] = arith.constant 2 : index
// CHECK: %[[YZ:.+]] = arith.divui %[[TX]], %[[FOUR]]
// CHECK: %[[X:.+]] = arith.remui %[[TX]], %[[FOUR]]
// CHECK: %[[Y:.+]] = arith.remui %[[YZ]], %[[TWO]]
// CHECK: memref.store %{{.+}}, %{{.+}}[%[[PB0]], %[[X]], %[[Y]]] : memref<3x4x2xf32>
// The bias's block 3, its 4 threads.
// CHECK: %[[S1:.+]] = arith.constant 3 : index
// CHECK: %[[E1:.+]] = arith.constant 4 : index
// CHECK: %[[A1:.+]] = arith.cmpi uge, %[[BX]], %[[S1]]
// CHECK: %[[B1:.+]] = arith.cmpi ult, %[[BX]], %[[E1]]
// CHECK: %[[BLOCKS1:.+]] = arith.andi %[[A1]], %[[B1]]
// CHECK: %[[N1:.+]] = arith.constant 4 : index
// CHECK: %[[T1:.+]] = arith.cmpi ult, %[[TX]], %[[N1]]
// CHECK: %[[IN1:.+]] = arith.andi %[[BLOCKS1]], %[[T1]]
// CHECK: scf.if %[[IN1]] {
// CHECK: memref.store %{{.+}}, %{{.+}}[%[[TX]]] : memref<4xf32>
// The counter's block 4, its one thread.
// CHECK: %[[S2:.+]] = arith.constant 4 : index
// CHECK: %[[E2:.+]] = arith.constant 5 : index
// CHECK: arith.cmpi uge, %[[BX]], %[[S2]]
// CHECK: arith.cmpi ult, %[[BX]], %[[E2]]
// CHECK: scf.if
// CHECK: memref.store %{{.+}}, %{{.+}}[] : memref<i64>
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch_func
// CHECK: return
module attributes {gpu.container_module} {
  memref.global "public" @w : memref<24xf32> = dense<1.0>
  memref.global "public" @b : memref<4xf32> = dense<1.0>
  memref.global "public" @step : memref<i64> = dense<0>
  gpu.module @update_w {
    gpu.func @update_w(%skip: memref<i1>, %g: memref<3x4x2xf32>, %w: memref<3x4x2xf32>) kernel {
      %blk = gpu.block_id x
      %x = gpu.thread_id x
      %y = gpu.thread_id y
      %s = memref.load %skip[] : memref<i1>
      %gv = memref.load %g[%blk, %x, %y] : memref<3x4x2xf32>
      %wv = memref.load %w[%blk, %x, %y] : memref<3x4x2xf32>
      %d = arith.subf %wv, %gv : f32
      %n = arith.select %s, %wv, %d : f32
      memref.store %n, %w[%blk, %x, %y] : memref<3x4x2xf32>
      gpu.return
    }
  }
  gpu.module @update_b {
    gpu.func @update_b(%skip: memref<i1>, %g: memref<4xf32>, %b: memref<4xf32>) kernel {
      %x = gpu.thread_id x
      %s = memref.load %skip[] : memref<i1>
      %gv = memref.load %g[%x] : memref<4xf32>
      %bv = memref.load %b[%x] : memref<4xf32>
      %d = arith.subf %bv, %gv : f32
      %n = arith.select %s, %bv, %d : f32
      memref.store %n, %b[%x] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @count {
    gpu.func @count(%skip: memref<i1>, %step: memref<i64>) kernel {
      %one = arith.constant 1 : i64
      %zero = arith.constant 0 : i64
      %s = memref.load %skip[] : memref<i1>
      %old = memref.load %step[] : memref<i64>
      %inc = arith.select %s, %zero, %one : i64
      %new = arith.addi %old, %inc : i64
      memref.store %new, %step[] : memref<i64>
      gpu.return
    }
  }
  func.func @updates(%skip: memref<i1>, %gw: memref<24xf32>, %gb: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %w = memref.get_global @w : memref<24xf32>
    %wv = memref.expand_shape %w [[0, 1, 2]] output_shape [3, 4, 2] : memref<24xf32> into memref<3x4x2xf32>
    %gwv = memref.expand_shape %gw [[0, 1, 2]] output_shape [3, 4, 2] : memref<24xf32> into memref<3x4x2xf32>
    gpu.launch_func @update_w::@update_w blocks in (%c3, %c1, %c1) threads in (%c4, %c2, %c1) args(%skip : memref<i1>, %gwv : memref<3x4x2xf32>, %wv : memref<3x4x2xf32>)
    %b = memref.get_global @b : memref<4xf32>
    gpu.launch_func @update_b::@update_b blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%skip : memref<i1>, %gb : memref<4xf32>, %b : memref<4xf32>)
    %step = memref.get_global @step : memref<i64>
    gpu.launch_func @count::@count blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%skip : memref<i1>, %step : memref<i64>)
    return
  }
}

// -----

// Not side by side: a kernel that reads what the one before it wrote (the
// sum of a split reduction's partials, over two blocks), two kernels that
// write one allocation through two views of it, and a run of single-block
// kernels only (left to gs-merge-single-block-kernels). The cast after the
// sum reads none of what the sum writes: those two run side by side.
// Copies end runs.
// CHECK-LABEL: func.func @dependent
// CHECK: gpu.launch_func @partials::@partials
// CHECK-NEXT: arith.constant
// CHECK: gpu.launch blocks
// CHECK: gpu.terminator
// CHECK-NEXT: }
// CHECK-NEXT: memref.copy
// CHECK-NEXT: gpu.launch_func @fill::@fill
// CHECK-NEXT: gpu.launch_func @fill::@fill
// CHECK-NEXT: memref.copy
// CHECK-NEXT: gpu.launch_func @one::@one
// CHECK-NEXT: gpu.launch_func @one::@one
// CHECK-NEXT: return
module attributes {gpu.container_module} {
  gpu.module @partials {
    gpu.func @partials(%in: memref<2x4xf32>, %out: memref<2xf32>) kernel {
      %blk = gpu.block_id x
      %c0 = arith.constant 0 : index
      %x = memref.load %in[%blk, %c0] : memref<2x4xf32>
      memref.store %x, %out[%blk] : memref<2xf32>
      gpu.return
    }
  }
  gpu.module @sum {
    gpu.func @sum(%in: memref<2xf32>, %out: memref<f32>) kernel {
      %c0 = arith.constant 0 : index
      %x = memref.load %in[%c0] : memref<2xf32>
      memref.store %x, %out[] : memref<f32>
      gpu.return
    }
  }
  gpu.module @cast {
    gpu.func @cast(%in: memref<2x4xf32>, %out: memref<2x4xf16>) kernel {
      %blk = gpu.block_id x
      %i = gpu.thread_id x
      %x = memref.load %in[%blk, %i] : memref<2x4xf32>
      %h = arith.truncf %x : f32 to f16
      memref.store %h, %out[%blk, %i] : memref<2x4xf16>
      gpu.return
    }
  }
  gpu.module @fill {
    gpu.func @fill(%out: memref<2x4xf32>) kernel {
      %blk = gpu.block_id x
      %i = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %out[%blk, %i] : memref<2x4xf32>
      gpu.return
    }
  }
  gpu.module @one {
    gpu.func @one(%out: memref<f32>) kernel {
      %one = arith.constant 1.0 : f32
      memref.store %one, %out[] : memref<f32>
      gpu.return
    }
  }
  func.func @dependent(%in: memref<2x4xf32>, %sum: memref<f32>, %half: memref<2x4xf16>, %a: memref<f32>, %b: memref<f32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %partial = memref.alloc() : memref<2xf32>
    %alloc = memref.alloc() : memref<8xf32>
    %first = memref.expand_shape %alloc [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
    %second = memref.expand_shape %alloc [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
    gpu.launch_func @partials::@partials blocks in (%c2, %c1, %c1) threads in (%c1, %c1, %c1) args(%in : memref<2x4xf32>, %partial : memref<2xf32>)
    gpu.launch_func @sum::@sum blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%partial : memref<2xf32>, %sum : memref<f32>)
    gpu.launch_func @cast::@cast blocks in (%c2, %c1, %c1) threads in (%c4, %c1, %c1) args(%in : memref<2x4xf32>, %half : memref<2x4xf16>)
    memref.copy %a, %b : memref<f32> to memref<f32>
    gpu.launch_func @fill::@fill blocks in (%c2, %c1, %c1) threads in (%c4, %c1, %c1) args(%first : memref<2x4xf32>)
    gpu.launch_func @fill::@fill blocks in (%c2, %c1, %c1) threads in (%c4, %c1, %c1) args(%second : memref<2x4xf32>)
    memref.copy %a, %b : memref<f32> to memref<f32>
    gpu.launch_func @one::@one blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<f32>)
    gpu.launch_func @one::@one blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<f32>)
    return
  }
}
