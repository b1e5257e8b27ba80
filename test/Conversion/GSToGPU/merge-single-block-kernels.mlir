// RUN: gs-opt %s --split-input-file --gs-merge-single-block-kernels | FileCheck %s

// Three single-block kernels in a row (a sum of one thread, a record of
// seven, a 4 x 2 block), an allocation and a view between them: one launch
// of one block of 8 threads where the last was. Each body runs on the
// threads below its own block's size, with its own thread indices (x and y
// of the 4 x 2 block from the linear index) and sizes, a barrier between
// two bodies. The kernels' modules, no longer launched, are erased; the
// one that a later launch still uses stays.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK-NOT: gpu.module @sum
// CHECK-NOT: gpu.module @record
// CHECK: gpu.module @square
// CHECK-NOT: gpu.module
// CHECK-LABEL: func.func @bookkeeping
// CHECK: %[[BUF:.+]] = memref.alloc() : memref<7xf32>
// CHECK: %[[VIEW:.+]] = memref.expand_shape
// CHECK: %[[ONE:.+]] = arith.constant 1 : index
// CHECK: %[[EIGHT:.+]] = arith.constant 8 : index
// CHECK: gpu.launch blocks(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %[[ONE]], %{{.+}} = %[[ONE]], %{{.+}} = %[[ONE]]) threads(%[[TX:[a-z0-9_]+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[EIGHT]], %{{.+}} = %[[ONE]], %{{.+}} = %[[ONE]]) module(@gs_sequence_0_kernel) function(@gs_sequence_0_kernel)
// CHECK: %[[C1:.+]] = arith.constant 1 : index
// CHECK: %[[IN1:.+]] = arith.cmpi ult, %[[TX]], %[[C1]]
// CHECK: scf.if %[[IN1]] {
// CHECK: scf.for
// CHECK: memref.store %{{.+}}, %{{.+}}[] : memref<f32>
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK: %[[C7:.+]] = arith.constant 7 : index
// CHECK: %[[IN7:.+]] = arith.cmpi ult, %[[TX]], %[[C7]]
// CHECK: scf.if %[[IN7]] {
// CHECK: %[[SEVEN:.+]] = arith.constant 7 : index
// CHECK: memref.store %{{.+}}, %[[BUF]][%[[TX]]] : memref<7xf32>
// CHECK: %{{.+}} = arith.addi %[[TX]], %[[SEVEN]]
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: scf.if
// CHECK: %[[FOUR:.+]] = arith.constant 4 : index
// CHECK: %[[TWO:.+]] = arith.constant 2 : index
// CHECK: %[[YZ:.+]] = arith.divui %[[TX]], %[[FOUR]]
// CHECK: %[[X:.+]] = arith.remui %[[TX]], %[[FOUR]]
// CHECK: %[[Y:.+]] = arith.remui %[[YZ]], %[[TWO]]
// CHECK: memref.store %{{.+}}, %[[VIEW]][%[[X]], %[[Y]]] : memref<4x2xf32>
// CHECK-NEXT: gpu.terminator
// CHECK-NOT: gpu.launch_func @sum
// CHECK-NOT: gpu.launch_func @record
// CHECK: gpu.launch_func @square::@square blocks in (%{{.+}}) threads in (%{{.+}})
// CHECK-NEXT: return
module attributes {gpu.container_module} {
  gpu.module @sum {
    gpu.func @sum(%in: memref<8xf32>, %out: memref<f32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %zero = arith.constant 0.0 : f32
      %s = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> f32 {
        %x = memref.load %in[%i] : memref<8xf32>
        %a = arith.addf %acc, %x : f32
        scf.yield %a : f32
      }
      memref.store %s, %out[] : memref<f32>
      gpu.return
    }
  }
  gpu.module @record {
    gpu.func @record(%sum: memref<f32>, %out: memref<7xf32>) kernel {
      %i = gpu.thread_id x
      %n = gpu.block_dim x
      %x = memref.load %sum[] : memref<f32>
      memref.store %x, %out[%i] : memref<7xf32>
      %past = arith.addi %i, %n : index
      gpu.return
    }
  }
  gpu.module @square {
    gpu.func @square(%out: memref<4x2xf32>) kernel {
      %x = gpu.thread_id x
      %y = gpu.thread_id y
      %b = gpu.block_id x
      %g = gpu.grid_dim x
      %one = arith.constant 1.0 : f32
      memref.store %one, %out[%x, %y] : memref<4x2xf32>
      gpu.return
    }
  }
  func.func @bookkeeping(%in: memref<8xf32>, %sum: memref<f32>, %square: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c7 = arith.constant 7 : index
    gpu.launch_func @sum::@sum blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%in : memref<8xf32>, %sum : memref<f32>)
    %buf = memref.alloc() : memref<7xf32>
    gpu.launch_func @record::@record blocks in (%c1, %c1, %c1) threads in (%c7, %c1, %c1) args(%sum : memref<f32>, %buf : memref<7xf32>)
    %view = memref.expand_shape %square [[0, 1]] output_shape [4, 2] : memref<8xf32> into memref<4x2xf32>
    gpu.launch_func @square::@square blocks in (%c1, %c1, %c1) threads in (%c4, %c2, %c1) args(%view : memref<4x2xf32>)
    %c3 = arith.constant 3 : index
    gpu.launch_func @square::@square blocks in (%c3, %c1, %c1) threads in (%c4, %c2, %c1) args(%view : memref<4x2xf32>)
    return
  }
}

// -----

// Runs end at a copy and at a launch of more than one block that writes
// what they access; a kernel with a barrier (a split reduction's) or
// shared memory is not merged with a kernel of more threads, whose block
// it would have to run on: no run here has two launches.
// CHECK-LABEL: func.func @broken
// CHECK-NOT: gpu.launch blocks
// CHECK: gpu.launch_func @one::@one
// CHECK-NEXT: memref.copy
// CHECK-NEXT: gpu.launch_func @one::@one
// CHECK-NEXT: gpu.launch_func @one::@one blocks in (%{{.+}}, %{{.+}}, %{{.+}}) threads
// CHECK-NEXT: gpu.launch_func @one::@one
// CHECK-NEXT: gpu.launch_func @synced::@synced
// CHECK-NEXT: gpu.launch_func @one::@one
// CHECK-NEXT: gpu.launch_func @shared::@shared
// CHECK-NEXT: return
module attributes {gpu.container_module} {
  gpu.module @one {
    gpu.func @one(%out: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %out[%i] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @synced {
    gpu.func @synced(%out: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      gpu.barrier
      memref.store %one, %out[%i] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @shared {
    gpu.func @shared(%out: memref<4xf32>) workgroup(%partial: memref<4xf32, #gpu.address_space<workgroup>>) kernel {
      %i = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %partial[%i] : memref<4xf32, #gpu.address_space<workgroup>>
      memref.store %one, %out[%i] : memref<4xf32>
      gpu.return
    }
  }
  func.func @broken(%a: memref<4xf32>, %b: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @one::@one blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%a : memref<4xf32>)
    memref.copy %a, %b : memref<4xf32> to memref<4xf32>
    gpu.launch_func @one::@one blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%b : memref<4xf32>)
    gpu.launch_func @one::@one blocks in (%c2, %c1, %c1) threads in (%c4, %c1, %c1) args(%b : memref<4xf32>)
    gpu.launch_func @one::@one blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%b : memref<4xf32>)
    gpu.launch_func @synced::@synced blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @one::@one blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%b : memref<4xf32>)
    gpu.launch_func @shared::@shared blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
}

// -----

// Kernels that work across their block (a barrier, a shuffle, shared
// memory: a reduction's last stage, a GEMM's statistics) join a run when
// their block is its largest: they run on every thread of the merged
// block, outside any condition, and their shared memory is the merged
// launch's, side by side. A smaller kernel runs below its own size.
// CHECK-LABEL: func.func @whole_blocks
// CHECK: gpu.launch blocks({{.+}}) in ({{.+}}) threads(%[[TX:[a-z0-9_]+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[C8:[a-z0-9_]+]], {{.+}}) module(@gs_sequence_0_kernel) function(@gs_sequence_0_kernel) workgroup(%[[SUMS:.+]] : memref<8xf32, #gpu.address_space<workgroup>>, %[[LANES:.+]] : memref<32xf32, #gpu.address_space<workgroup>>) {
// CHECK: scf.if
// CHECK: memref.store {{.+}} : memref<4xf32>
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: scf.if
// CHECK: memref.store %{{.+}}, %[[SUMS]][%[[TX]]]
// CHECK-NEXT: gpu.barrier
// CHECK: memref.load %[[SUMS]]
// CHECK: gpu.barrier
// CHECK-NOT: scf.if
// CHECK: gpu.shuffle xor
// CHECK: memref.store %{{.+}}, %[[LANES]]
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch_func
// CHECK: return

// A whole-block kernel whose block is smaller than the run's ends the run,
// and so does shared memory past 48 KiB: nothing here is merged.
// CHECK-LABEL: func.func @no_room
// CHECK-NOT: gpu.launch blocks
// CHECK: gpu.launch_func @one::@one
// CHECK-NEXT: gpu.launch_func @reduce::@reduce
// CHECK-NEXT: gpu.launch_func @big::@big
// CHECK-NEXT: gpu.launch_func @big::@big
// CHECK-NEXT: return
module attributes {gpu.container_module} {
  gpu.module @one {
    gpu.func @one(%out: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %out[%i] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @reduce {
    gpu.func @reduce(%in: memref<8xf32>, %out: memref<f32>) workgroup(%sums: memref<8xf32, #gpu.address_space<workgroup>>) kernel {
      %i = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %x = memref.load %in[%i] : memref<8xf32>
      memref.store %x, %sums[%i] : memref<8xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %first = memref.load %sums[%c0] : memref<8xf32, #gpu.address_space<workgroup>>
      memref.store %first, %out[] : memref<f32>
      gpu.return
    }
  }
  gpu.module @lanes {
    gpu.func @lanes(%out: memref<32xf32>) workgroup(%lanes: memref<32xf32, #gpu.address_space<workgroup>>) kernel {
      %i = gpu.thread_id x
      %c1 = arith.constant 1 : i32
      %c32 = arith.constant 32 : i32
      %one = arith.constant 1.0 : f32
      %x, %valid = gpu.shuffle xor %one, %c1, %c32 : f32
      memref.store %x, %lanes[%i] : memref<32xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%i] : memref<32xf32>
      gpu.return
    }
  }
  gpu.module @big {
    gpu.func @big(%out: memref<8xf32>) workgroup(%buffer: memref<8192xf32, #gpu.address_space<workgroup>>) kernel {
      %i = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %buffer[%i] : memref<8192xf32, #gpu.address_space<workgroup>>
      memref.store %one, %out[%i] : memref<8xf32>
      gpu.return
    }
  }
  func.func @whole_blocks(%a: memref<4xf32>, %in: memref<8xf32>, %sum: memref<f32>, %lanes: memref<32xf32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @one::@one blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @reduce::@reduce blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%in : memref<8xf32>, %sum : memref<f32>)
    gpu.launch_func @lanes::@lanes blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%lanes : memref<32xf32>)
    return
  }
  func.func @no_room(%a: memref<4xf32>, %in: memref<8xf32>, %sum: memref<f32>, %b: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @one::@one blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @reduce::@reduce blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%in : memref<8xf32>, %sum : memref<f32>)
    gpu.launch_func @big::@big blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%b : memref<8xf32>)
    gpu.launch_func @big::@big blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%b : memref<8xf32>)
    return
  }
}

// -----

// Inline kernels (the emulated pipeline's): the launches' block and thread
// indices and sizes are block arguments, which the merged body replaces.
// CHECK-LABEL: func.func @inline
// CHECK: gpu.launch blocks(%[[BX:[a-z0-9_]+]], %{{.+}}, %{{.+}}) in ({{.+}}) threads(%[[TX:[a-z0-9_]+]], %{{.+}}, %{{.+}}) in
// CHECK: %[[C2:.+]] = arith.constant 2 : index
// CHECK: %[[IN:.+]] = arith.cmpi ult, %[[TX]], %[[C2]]
// CHECK: scf.if %[[IN]] {
// CHECK: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[N:.+]] = arith.constant 2 : index
// CHECK: %[[I:.+]] = arith.addi %[[TX]], %[[N]]
// CHECK: %[[J:.+]] = arith.addi %[[I]], %[[BX]]
// CHECK: memref.store %{{.+}}, %{{.+}}[%[[J]]]
// CHECK: gpu.barrier
// CHECK: memref.load %{{.+}}[%[[TX]]]
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
module attributes {gpu.container_module} {
  func.func @inline(%a: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c2, %sy = %c1, %sz = %c1) {
      %one = arith.constant 1.0 : f32
      %i = arith.addi %tx, %sx : index
      %j = arith.addi %i, %bx : index
      memref.store %one, %a[%j] : memref<8xf32>
      gpu.terminator
    }
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
      %x = memref.load %a[%tx] : memref<8xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %a[%tx] : memref<8xf32>
      gpu.terminator
    }
    return
  }
}

// -----

// A run goes on past a kernel independent of its kernels (the GEMM of one
// gradient between the bookkeeping of another): @first and @last run as
// one kernel after @wide (not in @wide's last block: @last would then run
// before @wide). A kernel that reads what the run wrote, or writes what it
// read, ends it; there each @last runs in the last block of the @wide
// before it.
// CHECK-LABEL: func.func @past_independent
// CHECK: gpu.launch_func @wide::@wide
// CHECK: gpu.launch blocks{{.+}}module(@gs_sequence_0_kernel)
// CHECK-NOT: gpu.launch_func
// CHECK: return
// CHECK-LABEL: func.func @past_dependent
// CHECK-NOT: gs_sequence
// CHECK: gpu.launch_func @first::@first
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.launch blocks{{.+}}module(@wide_then_0_kernel)
// CHECK: gpu.launch blocks{{.+}}module(@wide_then_1_kernel)
// CHECK-NOT: gpu.launch
// CHECK: return
module attributes {gpu.container_module} {
  gpu.module @first {
    gpu.func @first(%in: memref<4xf32>, %out: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %x = memref.load %in[%i] : memref<4xf32>
      memref.store %x, %out[%i] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @wide {
    gpu.func @wide(%in: memref<4xf32>, %out: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %x = memref.load %in[%i] : memref<4xf32>
      memref.store %x, %out[%i] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @last {
    gpu.func @last(%out: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %out[%i] : memref<4xf32>
      gpu.return
    }
  }
  func.func @past_independent(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32>, %d: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @first::@first blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%a : memref<4xf32>, %b : memref<4xf32>)
    gpu.launch_func @wide::@wide blocks in (%c8, %c1, %c1) threads in (%c4, %c1, %c1) args(%a : memref<4xf32>, %c : memref<4xf32>)
    gpu.launch_func @last::@last blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%d : memref<4xf32>)
    return
  }
  func.func @past_dependent(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @first::@first blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%a : memref<4xf32>, %b : memref<4xf32>)
    gpu.launch_func @wide::@wide blocks in (%c8, %c1, %c1) threads in (%c4, %c1, %c1) args(%b : memref<4xf32>, %c : memref<4xf32>)
    gpu.launch_func @last::@last blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%c : memref<4xf32>)
    gpu.launch_func @wide::@wide blocks in (%c8, %c1, %c1) threads in (%c4, %c1, %c1) args(%c : memref<4xf32>, %a : memref<4xf32>)
    gpu.launch_func @last::@last blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%c : memref<4xf32>)
    return
  }
}

// -----

// A split reduction's partial sums in a kernel of several blocks, then its
// last sum and a record of it in kernels of one block: the last block of
// the first to finish runs the others. Each thread fences its writes, the
// block's thread 0 takes a ticket of the kernel's counter (reset by the
// last block), and the block that took the last ticket, told so through
// shared memory, runs the bodies of the run, each on the threads below its
// block size, as block 0. The whole-block last sum has the host's block
// size.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: memref.global "private" @partials_then_0_ticket : memref<1xi32> = dense<0> {gs.kernel_state}
// CHECK-NOT: gpu.module @partials
// CHECK-NOT: gpu.module @total
// CHECK-NOT: gpu.module @record
// CHECK-LABEL: func.func @finish
// CHECK: gpu.launch blocks(%[[BX:[a-z0-9_]+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c3{{[_0-9]*}}, {{.+}}) threads(%[[TX:[a-z0-9_]+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c4{{[_0-9]*}}, {{.+}}) module(@partials_then_0_kernel) function(@partials_then_0_kernel) workgroup(%[[FLAG:.+]] : memref<1xi32, #gpu.address_space<workgroup>>, %[[SUMS:.+]] : memref<4xf32, #gpu.address_space<workgroup>>, %[[TOTALS:.+]] : memref<4xf32, #gpu.address_space<workgroup>>)
// CHECK: memref.store %{{.+}}, %[[SUMS]]
// CHECK: memref.store %{{.+}}, %arg1[%[[BX]]]
// CHECK: nvvm.memory.barrier <gpu>
// CHECK-NEXT: gpu.barrier
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[TX]], %[[C0:.+]] :
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-NEXT: %[[COUNTER:.+]] = memref.get_global @partials_then_0_ticket : memref<1xi32>
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[TICKET:.+]] = memref.atomic_rmw addi %[[ONE]], %[[COUNTER]][%[[C0]]]
// CHECK-NEXT: nvvm.memory.barrier <gpu>
// CHECK-NEXT: %[[LAST_TICKET:.+]] = arith.constant 2 : i32
// CHECK-NEXT: %[[IS_LAST:.+]] = arith.cmpi eq, %[[TICKET]], %[[LAST_TICKET]]
// CHECK-NEXT: scf.if %[[IS_LAST]] {
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK-NEXT: memref.store %[[ZERO]], %[[COUNTER]][%[[C0]]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[SET:.+]] = arith.extui %[[IS_LAST]] : i1 to i32
// CHECK-NEXT: memref.store %[[SET]], %[[FLAG]][%[[C0]]]
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[READ:.+]] = memref.load %[[FLAG]][%[[C0]]]
// CHECK-NEXT: %[[NO:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[LAST:.+]] = arith.cmpi ne, %[[READ]], %[[NO]]
// CHECK-NEXT: scf.if %[[LAST]] {
// CHECK-NEXT: nvvm.memory.barrier <gpu>
// CHECK: memref.load %arg1
// CHECK: memref.store %{{.+}}, %[[TOTALS]]
// CHECK: memref.store %{{.+}}, %arg2[]
// CHECK: gpu.barrier
// CHECK: %[[TWO:.+]] = arith.constant 2 : index
// CHECK: %[[IN:.+]] = arith.cmpi ult, %[[TX]], %[[TWO]]
// CHECK-NEXT: scf.if %[[IN]] {
// CHECK: memref.load %arg2[]
// CHECK: memref.store %{{.+}}, %arg3
// CHECK: } {gs.block_uniform}
// CHECK-NEXT: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return

module attributes {gpu.container_module} {
  gpu.module @partials {
    gpu.func @partials(%in: memref<12xf32>, %partial: memref<3xf32>) workgroup(%sums : memref<4xf32, #gpu.address_space<workgroup>>) kernel {
      %b = gpu.block_id x
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %base = arith.muli %b, %c4 : index
      %i = arith.addi %base, %t : index
      %x = memref.load %in[%i] : memref<12xf32>
      memref.store %x, %sums[%t] : memref<4xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        %s = memref.load %sums[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
        memref.store %s, %partial[%b] : memref<3xf32>
      }
      gpu.return
    }
  }
  gpu.module @total {
    gpu.func @total(%partial: memref<3xf32>, %sum: memref<f32>) workgroup(%totals : memref<4xf32, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c3 = arith.constant 3 : index
      %zero = arith.constant 0.0 : f32
      %inside = arith.cmpi ult, %t, %c3 : index
      %x = scf.if %inside -> f32 {
        %p = memref.load %partial[%t] : memref<3xf32>
        scf.yield %p : f32
      } else {
        scf.yield %zero : f32
      }
      memref.store %x, %totals[%t] : memref<4xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        %s = memref.load %totals[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
        memref.store %s, %sum[] : memref<f32>
      }
      gpu.return
    }
  }
  gpu.module @record {
    gpu.func @record(%sum: memref<f32>, %log: memref<2xf32>) kernel {
      %t = gpu.thread_id x
      %s = memref.load %sum[] : memref<f32>
      memref.store %s, %log[%t] : memref<2xf32>
      gpu.return
    }
  }
  func.func @finish(%in: memref<12xf32>, %partial: memref<3xf32>, %sum: memref<f32>, %log: memref<2xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @partials::@partials blocks in (%c3, %c1, %c1) threads in (%c4, %c1, %c1) args(%in : memref<12xf32>, %partial : memref<3xf32>)
    gpu.launch_func @total::@total blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%partial : memref<3xf32>, %sum : memref<f32>)
    gpu.launch_func @record::@record blocks in (%c1, %c1, %c1) threads in (%c2, %c1, %c1) args(%sum : memref<f32>, %log : memref<2xf32>)
    return
  }
}

// -----
// Not in the last block: of a kernel of more blocks than all run at once
// (129 > 128), of another block size than a whole-block kernel of the run
// (8 threads, not 4), or past a copy.
// CHECK-LABEL: func.func @not_finished
// CHECK-NOT: _then_
// CHECK: return
module attributes {gpu.container_module} {
  gpu.module @partials {
    gpu.func @partials(%in: memref<12xf32>, %partial: memref<3xf32>) workgroup(%sums : memref<4xf32, #gpu.address_space<workgroup>>) kernel {
      %b = gpu.block_id x
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %base = arith.muli %b, %c4 : index
      %i = arith.addi %base, %t : index
      %x = memref.load %in[%i] : memref<12xf32>
      memref.store %x, %sums[%t] : memref<4xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        %s = memref.load %sums[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
        memref.store %s, %partial[%b] : memref<3xf32>
      }
      gpu.return
    }
  }
  gpu.module @total {
    gpu.func @total(%partial: memref<3xf32>, %sum: memref<f32>) workgroup(%totals : memref<4xf32, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c3 = arith.constant 3 : index
      %zero = arith.constant 0.0 : f32
      %inside = arith.cmpi ult, %t, %c3 : index
      %x = scf.if %inside -> f32 {
        %p = memref.load %partial[%t] : memref<3xf32>
        scf.yield %p : f32
      } else {
        scf.yield %zero : f32
      }
      memref.store %x, %totals[%t] : memref<4xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        %s = memref.load %totals[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
        memref.store %s, %sum[] : memref<f32>
      }
      gpu.return
    }
  }
  gpu.module @record {
    gpu.func @record(%sum: memref<f32>, %log: memref<2xf32>) kernel {
      %t = gpu.thread_id x
      %s = memref.load %sum[] : memref<f32>
      memref.store %s, %log[%t] : memref<2xf32>
      gpu.return
    }
  }
  func.func @not_finished(%in: memref<12xf32>, %partial: memref<3xf32>, %sum: memref<f32>, %log: memref<2xf32>, %copy: memref<2xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c129 = arith.constant 129 : index
    gpu.launch_func @partials::@partials blocks in (%c129, %c1, %c1) threads in (%c4, %c1, %c1) args(%in : memref<12xf32>, %partial : memref<3xf32>)
    gpu.launch_func @record::@record blocks in (%c1, %c1, %c1) threads in (%c2, %c1, %c1) args(%sum : memref<f32>, %log : memref<2xf32>)
    gpu.launch_func @partials::@partials blocks in (%c2, %c1, %c1) threads in (%c8, %c1, %c1) args(%in : memref<12xf32>, %partial : memref<3xf32>)
    gpu.launch_func @total::@total blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%partial : memref<3xf32>, %sum : memref<f32>)
    gpu.launch_func @partials::@partials blocks in (%c3, %c1, %c1) threads in (%c4, %c1, %c1) args(%in : memref<12xf32>, %partial : memref<3xf32>)
    memref.copy %log, %copy : memref<2xf32> to memref<2xf32>
    gpu.launch_func @record::@record blocks in (%c1, %c1, %c1) threads in (%c2, %c1, %c1) args(%sum : memref<f32>, %log : memref<2xf32>)
    return
  }
}
