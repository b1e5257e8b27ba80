// gs-emulate-gpu's check-races: two threads of a block that access the
// same byte of shared memory between two barriers, one of them writing
// it, stop the program after the launch. Each thread t stores t, then
// reads what thread t - 1 stored (thread 0 its own): with a barrier
// between, every thread reads its neighbour's value; without one the
// emulation, which runs thread t - 1 before thread t, computes the same
// values by chance, and only check-races says that the kernel is wrong.
// Reading a byte that another thread then overwrites before the next
// barrier is a race too, and so is ldmatrix reading rows that other lanes
// stored before any barrier.
// RUN: rm -rf %t && mkdir -p %t
// RUN: gs-opt %s --gs-emulate-gpu=check-races=true -o %t/checked.mlir
// RUN: gs-run %t/checked.mlir --entry=ordered --output-dir=%t/ordered
// RUN: not --crash gs-run %t/checked.mlir --entry=read_after_write --output-dir=%t/raw 2>&1 | FileCheck %s --check-prefix=RAW
// RUN: not --crash gs-run %t/checked.mlir --entry=write_after_read --output-dir=%t/war 2>&1 | FileCheck %s --check-prefix=WAR
// RUN: not --crash gs-run %t/checked.mlir --entry=ldmatrix_early --output-dir=%t/ldmatrix 2>&1 | FileCheck %s --check-prefix=LDMATRIX
// RUN: gs-opt %s --gs-emulate-gpu -o %t/unchecked.mlir
// RUN: gs-run %t/unchecked.mlir --entry=read_after_write --output-dir=%t/hidden
// RUN: %onnx_python -c "import numpy as np; \
// RUN:   t = np.arange(64); want = np.maximum(t - 1, 0).astype(np.float32); \
// RUN:   o = [np.load('%t/ordered/output_%%d.npy' %% i) for i in range(3)]; \
// RUN:   h = np.load('%t/hidden/output_0.npy'); \
// RUN:   assert (o[0] == want).all(), o[0]; \
// RUN:   assert (o[1] == np.minimum(t + 1, 63)).all(), o[1]; \
// RUN:   assert (o[2][:, 0] == 8 * (np.arange(32) // 4) + 2 * (np.arange(32) %% 4)).all(), o[2]; \
// RUN:   assert (h == want).all(), h; \
// RUN:   print('PASS')" | FileCheck %s
// CHECK: PASS
// RAW: gs-emulate-gpu: in @neighbours_unordered, two threads of a block accessed the same shared memory, one of them writing it, with no barrier between them
// WAR: gs-emulate-gpu: in @overwrite_unordered, two threads of a block accessed the same shared memory, one of them writing it, with no barrier between them
// LDMATRIX: gs-emulate-gpu: in @ldmatrix_unordered, two threads of a block accessed the same shared memory, one of them writing it, with no barrier between them

!smem = memref<64xf32, #gpu.address_space<workgroup>>
!tile = memref<8x8xf16, #gpu.address_space<workgroup>>

// Thread t stores t and reads thread t - 1's value (thread 0 its own).
func.func @neighbours(%out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%smem : !smem) {
    %t = gpu.thread_id x
    %ti = arith.index_cast %t : index to i32
    %tf = arith.sitofp %ti : i32 to f32
    memref.store %tf, %smem[%t] : !smem
    gpu.barrier
    %before = arith.subi %t, %c1 : index
    %first = arith.cmpi eq, %t, %c0 : index
    %j = arith.select %first, %c0, %before : index
    %x = memref.load %smem[%j] : !smem
    memref.store %x, %out[%t] : memref<64xf32>
    gpu.terminator
  }
  return
}

func.func @neighbours_unordered(%out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%smem : !smem) {
    %t = gpu.thread_id x
    %ti = arith.index_cast %t : index to i32
    %tf = arith.sitofp %ti : i32 to f32
    memref.store %tf, %smem[%t] : !smem
    %before = arith.subi %t, %c1 : index
    %first = arith.cmpi eq, %t, %c0 : index
    %j = arith.select %first, %c0, %before : index
    %x = memref.load %smem[%j] : !smem
    memref.store %x, %out[%t] : memref<64xf32>
    gpu.terminator
  }
  return
}

// Thread t reads slot t + 1 (the last thread its own), then stores t + 1
// into slot t: a barrier must come between the read and the store.
func.func @overwrite(%out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%smem : !smem) {
    %t = gpu.thread_id x
    %ti = arith.index_cast %t : index to i32
    %tf = arith.sitofp %ti : i32 to f32
    memref.store %tf, %smem[%t] : !smem
    gpu.barrier
    %after = arith.addi %t, %c1 : index
    %j = arith.minui %after, %c63 : index
    %x = memref.load %smem[%j] : !smem
    memref.store %x, %out[%t] : memref<64xf32>
    gpu.barrier
    %one = arith.constant 1.0 : f32
    %next = arith.addf %tf, %one : f32
    memref.store %next, %smem[%t] : !smem
    gpu.terminator
  }
  return
}

func.func @overwrite_unordered(%out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%smem : !smem) {
    %t = gpu.thread_id x
    %ti = arith.index_cast %t : index to i32
    %tf = arith.sitofp %ti : i32 to f32
    memref.store %tf, %smem[%t] : !smem
    gpu.barrier
    %after = arith.addi %t, %c1 : index
    %j = arith.minui %after, %c63 : index
    %x = memref.load %smem[%j] : !smem
    memref.store %x, %out[%t] : memref<64xf32>
    %one = arith.constant 1.0 : f32
    %next = arith.addf %tf, %one : f32
    memref.store %next, %smem[%t] : !smem
    gpu.terminator
  }
  return
}

// Lane l stores elements 2l and 2l + 1 of an 8 x 8 tile (their flat
// indices as values); ldmatrix then gives lane l row l / 4, columns
// 2 (l % 4) and 2 (l % 4) + 1, of which the first is written out.
func.func @ldmatrix(%out: memref<32x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%tile : !tile) {
    %t = gpu.thread_id x
    %e = arith.muli %t, %c2 : index
    %row = arith.divui %e, %c8 : index
    %col = arith.remui %e, %c8 : index
    %col1 = arith.addi %col, %c1 : index
    %ei = arith.index_cast %e : index to i32
    %ef = arith.sitofp %ei : i32 to f16
    %one = arith.constant 1.0 : f16
    %ef1 = arith.addf %ef, %one : f16
    memref.store %ef, %tile[%row, %col] : !tile
    memref.store %ef1, %tile[%row, %col1] : !tile
    gpu.barrier
    %r = arith.remui %t, %c8 : index
    %m = nvgpu.ldmatrix %tile[%r, %c0] {numTiles = 1 : i32, transpose = false} : !tile -> vector<1x2xf16>
    %v = vector.extract %m[0, 0] : f16 from vector<1x2xf16>
    %vf = arith.extf %v : f16 to f32
    memref.store %vf, %out[%t, %c0] : memref<32x1xf32>
    gpu.terminator
  }
  return
}

func.func @ldmatrix_unordered(%out: memref<32x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%tile : !tile) {
    %t = gpu.thread_id x
    %e = arith.muli %t, %c2 : index
    %row = arith.divui %e, %c8 : index
    %col = arith.remui %e, %c8 : index
    %col1 = arith.addi %col, %c1 : index
    %ei = arith.index_cast %e : index to i32
    %ef = arith.sitofp %ei : i32 to f16
    %one = arith.constant 1.0 : f16
    %ef1 = arith.addf %ef, %one : f16
    memref.store %ef, %tile[%row, %col] : !tile
    memref.store %ef1, %tile[%row, %col1] : !tile
    %r = arith.remui %t, %c8 : index
    %m = nvgpu.ldmatrix %tile[%r, %c0] {numTiles = 1 : i32, transpose = false} : !tile -> vector<1x2xf16>
    %v = vector.extract %m[0, 0] : f16 from vector<1x2xf16>
    %vf = arith.extf %v : f16 to f32
    memref.store %vf, %out[%t, %c0] : memref<32x1xf32>
    gpu.terminator
  }
  return
}

func.func @ordered() -> (tensor<64xf32>, tensor<64xf32>, tensor<32x1xf32>) {
  %a = memref.alloc() : memref<64xf32>
  %b = memref.alloc() : memref<64xf32>
  %c = memref.alloc() : memref<32x1xf32>
  call @neighbours(%a) : (memref<64xf32>) -> ()
  call @overwrite(%b) : (memref<64xf32>) -> ()
  call @ldmatrix(%c) : (memref<32x1xf32>) -> ()
  %0 = bufferization.to_tensor %a restrict : memref<64xf32> to tensor<64xf32>
  %1 = bufferization.to_tensor %b restrict : memref<64xf32> to tensor<64xf32>
  %2 = bufferization.to_tensor %c restrict : memref<32x1xf32> to tensor<32x1xf32>
  return %0, %1, %2 : tensor<64xf32>, tensor<64xf32>, tensor<32x1xf32>
}

func.func @read_after_write() -> tensor<64xf32> {
  %a = memref.alloc() : memref<64xf32>
  call @neighbours_unordered(%a) : (memref<64xf32>) -> ()
  %0 = bufferization.to_tensor %a restrict : memref<64xf32> to tensor<64xf32>
  return %0 : tensor<64xf32>
}

func.func @write_after_read() -> tensor<64xf32> {
  %a = memref.alloc() : memref<64xf32>
  call @overwrite_unordered(%a) : (memref<64xf32>) -> ()
  %0 = bufferization.to_tensor %a restrict : memref<64xf32> to tensor<64xf32>
  return %0 : tensor<64xf32>
}

func.func @ldmatrix_early() -> tensor<32x1xf32> {
  %a = memref.alloc() : memref<32x1xf32>
  call @ldmatrix_unordered(%a) : (memref<32x1xf32>) -> ()
  %0 = bufferization.to_tensor %a restrict : memref<32x1xf32> to tensor<32x1xf32>
  return %0 : tensor<32x1xf32>
}
