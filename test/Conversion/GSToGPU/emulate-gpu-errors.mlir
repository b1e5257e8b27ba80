// RUN: gs-opt %s --gs-emulate-gpu --split-input-file --verify-diagnostics

// A shuffle only some threads reach has no emulation (nor a meaning).
func.func @divergent(%out: memref<32xf32>, %p: i1) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = arith.constant 1.0 : f32
    %one = arith.constant 1 : i32
    %width = arith.constant 32 : i32
    scf.if %p {
      // expected-error @+1 {{'gpu.shuffle' op is emulated only where every thread reaches it: nested in scf.for loops and block-uniform scf.ifs, not in 'scf.if'}}
      %s, %ok = gpu.shuffle xor %v, %one, %width : f32
      memref.store %s, %out[%tx] : memref<32xf32>
    }
    gpu.terminator
  }
  return
}

// -----

func.func @dynamic(%out: memref<32xf32>, %n: index) {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'gpu.launch' op is emulated only with constant grid and block sizes}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}

// -----

func.func @two_dimensional() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  // expected-error @+1 {{'gpu.launch' op is emulated only with one-dimensional thread blocks}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c2, %sy = %c2, %sz = %c1) {
    gpu.terminator
  }
  return
}

// -----

func.func @partial_warp(%out: memref<16xf32>) {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  // expected-error @+1 {{'gpu.launch' op uses warp-level operations with 16 threads per block, not whole warps}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
    %v = arith.constant 1.0 : f32
    %one = arith.constant 1 : i32
    %width = arith.constant 32 : i32
    %r, %valid = gpu.shuffle xor %v, %one, %width : f32
    gpu.terminator
  }
  return
}

// -----

func.func @narrow_shuffle(%out: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = arith.constant 1.0 : f32
    %one = arith.constant 1 : i32
    %width = arith.constant 16 : i32
    // expected-error @+1 {{'gpu.shuffle' op is emulated only over the whole warp (width 32)}}
    %s, %ok = gpu.shuffle xor %v, %one, %width : f32
    memref.store %s, %out[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

// -----

func.func @loop_bound(%out: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %n = arith.addi %tx, %c1 : index
    // expected-error @+1 {{'scf.for' op is emulated only with bounds uniform over the thread block}}
    scf.for %i = %c0 to %n step %c1 {
      gpu.barrier
    }
    gpu.terminator
  }
  return
}

// -----

func.func @subgroup_reduce(%out: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = arith.constant 1.0 : f32
    // expected-error @+1 {{'gpu.subgroup_reduce' op has no CPU emulation}}
    %s = gpu.subgroup_reduce add %v : (f32) -> f32
    memref.store %s, %out[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

// -----

// wgmma runs on warpgroups of 128 threads.
func.func @partial_warpgroup(%da: i64, %db: i64) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  // expected-error @+1 {{'gpu.launch' op uses wgmma with 64 threads per block, not whole warpgroups}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %z = llvm.mlir.zero : !llvm.struct<(f32, f32, f32, f32)>
    %d = nvvm.wgmma.mma_async %da, %db, %z, <m = 64, n = 8, k = 16>, D[<f32>, <one>, <wrapped>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
    gpu.terminator
  }
  return
}

// -----

// Of the NVVM dialect, the emulation knows wgmma and its fences only.
func.func @nvvm(%out: memref<32xi32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{'nvvm.read.ptx.sreg.laneid' op has no CPU emulation}}
    %lane = nvvm.read.ptx.sreg.laneid : i32
    memref.store %lane, %out[%tx] : memref<32xi32>
    gpu.terminator
  }
  return
}

// -----

// Dynamic shared memory is laid out at emulation time: its size must be
// known.
func.func @dynamic_shared(%bytes: i32) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  // expected-error @+1 {{'gpu.launch' op is emulated only with a constant dynamic shared memory size}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             dynamic_shared_memory_size %bytes {
    gpu.terminator
  }
  return
}

// -----

// A deferred copy lands at the byte its destination's layout puts it at,
// which a view at a dynamic offset does not say.
func.func @destination_at_dynamic_offset(%src: memref<64xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%smem : memref<2x64xf16, #gpu.address_space<workgroup>>) {
    %at = arith.muli %tx, %c2 : index
    scf.for %i = %c0 to %c2 step %c1 {
      %row = memref.subview %smem[%i, 0] [1, 64] [1, 1] : memref<2x64xf16, #gpu.address_space<workgroup>> to memref<64xf16, strided<[1], offset: ?>, #gpu.address_space<workgroup>>
      // expected-error @+1 {{'nvgpu.device_async_copy' op is emulated deferred only into a destination of static strides and offset (gs-emulate-gpu{defer-async=false} completes it where it is issued)}}
      %token = nvgpu.device_async_copy %src[%at], %row[%at], 2 : memref<64xf16> to memref<64xf16, strided<[1], offset: ?>, #gpu.address_space<workgroup>>
    }
    %group = nvgpu.device_async_create_group
    nvgpu.device_async_wait %group
    gpu.terminator
  }
  return
}
