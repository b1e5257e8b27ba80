// A run of single-block kernels in the last block of the kernel before it
// (gs-merge-single-block-kernels), emulated: a block's partial sums, then
// their total (a whole-block kernel with a barrier) and a record of it,
// launched twice so that the second launch finds the ticket counter reset
// by the first. The emulation takes the ticket protocol as the GPU would:
// only the block that takes the last ticket runs the total and the record,
// which also counts how often it ran (once per launch). check-races:
// the partial sums, the flag and the total in shared memory are ordered
// by barriers.
// RUN: rm -rf %t && mkdir -p %t
// RUN: gs-opt %s --gs-merge-single-block-kernels -o %t/merged.mlir
// RUN: FileCheck %s --check-prefix=MERGED --input-file=%t/merged.mlir
// RUN: gs-opt %t/merged.mlir --gs-emulate-gpu=check-races=true -o %t/emulated.mlir
// RUN: gs-run %t/emulated.mlir --entry=sums --output-dir=%t
// RUN: %onnx_python -c "import numpy as np; \
// RUN:   x = np.arange(128, dtype=np.float32); \
// RUN:   want = [2 * x.sum(), 2 * (x + 1).sum()]; \
// RUN:   got, runs = np.load('%t/output_0.npy'), np.load('%t/output_1.npy'); \
// RUN:   assert (got == np.array([[w, 10 * w] for w in want], np.float32)).all(), got; \
// RUN:   assert runs == 2, runs; \
// RUN:   print('PASS')" | FileCheck %s
// CHECK: PASS

// MERGED: memref.global "private" @gs_launch_then_0_ticket : memref<1xi32> = dense<0> {gs.kernel_state}
// MERGED-LABEL: func.func @kernels
// MERGED: gpu.launch {{.+}} module(@gs_launch_then_0_kernel)
// MERGED: } {gs.block_uniform}
// MERGED-NOT: gpu.launch
// MERGED: return

func.func @kernels(%in: memref<128xf32>, %partial: memref<4xf32>,
                   %total: memref<f32>, %record: memref<2xf32>,
                   %runs: memref<f32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  // Each block: doubles its 32 inputs in shared memory, then thread 0
  // sums them.
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%doubled : memref<32xf32, #gpu.address_space<workgroup>>) {
    %c0 = arith.constant 0 : index
    %c1_ = arith.constant 1 : index
    %c32_ = arith.constant 32 : index
    %base = arith.muli %bx, %c32_ : index
    %i = arith.addi %base, %tx : index
    %x = memref.load %in[%i] : memref<128xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %doubled[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %first = arith.cmpi eq, %tx, %c0 : index
    scf.if %first {
      %zero = arith.constant 0.0 : f32
      %s = scf.for %k = %c0 to %c32_ step %c1_ iter_args(%acc = %zero) -> (f32) {
        %v = memref.load %doubled[%k] : memref<32xf32, #gpu.address_space<workgroup>>
        %a = arith.addf %acc, %v : f32
        scf.yield %a : f32
      }
      memref.store %s, %partial[%bx] : memref<4xf32>
    }
    gpu.terminator
  }
  // The total of the partial sums: a whole-block kernel of the same block
  // size.
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%sums : memref<32xf32, #gpu.address_space<workgroup>>) {
    %c0 = arith.constant 0 : index
    %c1_ = arith.constant 1 : index
    %c4_ = arith.constant 4 : index
    %zero = arith.constant 0.0 : f32
    %inside = arith.cmpi ult, %tx, %c4_ : index
    %p = scf.if %inside -> f32 {
      %v = memref.load %partial[%tx] : memref<4xf32>
      scf.yield %v : f32
    } else {
      scf.yield %zero : f32
    }
    memref.store %p, %sums[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %first = arith.cmpi eq, %tx, %c0 : index
    scf.if %first {
      %s = scf.for %k = %c0 to %c4_ step %c1_ iter_args(%acc = %zero) -> (f32) {
        %v = memref.load %sums[%k] : memref<32xf32, #gpu.address_space<workgroup>>
        %a = arith.addf %acc, %v : f32
        scf.yield %a : f32
      }
      memref.store %s, %total[] : memref<f32>
    }
    gpu.terminator
  }
  // A record of one thread: the total and ten times it; one more run.
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %c1_ = arith.constant 1 : index
    %ten = arith.constant 10.0 : f32
    %t = memref.load %total[] : memref<f32>
    %r = arith.mulf %t, %ten : f32
    memref.store %t, %record[%c0] : memref<2xf32>
    memref.store %r, %record[%c1_] : memref<2xf32>
    %n = memref.load %runs[] : memref<f32>
    %one = arith.constant 1.0 : f32
    %more = arith.addf %n, %one : f32
    memref.store %more, %runs[] : memref<f32>
    gpu.terminator
  }
  return
}

func.func @sums() -> (tensor<2x2xf32>, tensor<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %one = arith.constant 1.0 : f32
  %in = memref.alloc() : memref<128xf32>
  %partial = memref.alloc() : memref<4xf32>
  %total = memref.alloc() : memref<f32>
  %records = memref.alloc() : memref<2x2xf32>
  %runs = memref.alloc() : memref<f32>
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %runs[] : memref<f32>
  scf.for %i = %c0 to %c128 step %c1 {
    %ii = arith.index_cast %i : index to i32
    %x = arith.sitofp %ii : i32 to f32
    memref.store %x, %in[%i] : memref<128xf32>
  }
  %first = memref.subview %records[0, 0] [1, 2] [1, 1] : memref<2x2xf32> to memref<2xf32, strided<[1]>>
  %first_record = memref.alloc() : memref<2xf32>
  call @kernels(%in, %partial, %total, %first_record, %runs) : (memref<128xf32>, memref<4xf32>, memref<f32>, memref<2xf32>, memref<f32>) -> ()
  memref.copy %first_record, %first : memref<2xf32> to memref<2xf32, strided<[1]>>
  // Again on x + 1.
  scf.for %i = %c0 to %c128 step %c1 {
    %x = memref.load %in[%i] : memref<128xf32>
    %y = arith.addf %x, %one : f32
    memref.store %y, %in[%i] : memref<128xf32>
  }
  %second = memref.subview %records[1, 0] [1, 2] [1, 1] : memref<2x2xf32> to memref<2xf32, strided<[1], offset: 2>>
  %second_record = memref.alloc() : memref<2xf32>
  call @kernels(%in, %partial, %total, %second_record, %runs) : (memref<128xf32>, memref<4xf32>, memref<f32>, memref<2xf32>, memref<f32>) -> ()
  memref.copy %second_record, %second : memref<2xf32> to memref<2xf32, strided<[1], offset: 2>>
  %result = bufferization.to_tensor %records restrict : memref<2x2xf32> to tensor<2x2xf32>
  %count = bufferization.to_tensor %runs restrict : memref<f32> to tensor<f32>
  return %result, %count : tensor<2x2xf32>, tensor<f32>
}
