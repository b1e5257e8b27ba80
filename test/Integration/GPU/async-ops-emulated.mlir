// gs-emulate-gpu's cp.async completes as late as the PTX ISA lets it, and
// what a wgmma.mma_async reads must not change until every warpgroup is
// past the wait that retires it. A 3-stage cp.async pipeline that waits
// for all but the newest group (as the GEMM kernels do) reads every tile;
// one that waits for all but the newest two reads tiles still in flight,
// NaN here. A wgmma followed by a copy elsewhere computes A B^T; followed
// by a copy over its A before its wait, it stops the program. Completing
// each copy where it is issued and checking no wgmma (defer-async=false)
// hides both. A thread with more copies pending than its queue holds (80
// of 4 bytes) lands its oldest early.
// RUN: rm -rf %t && mkdir -p %t/deferred %t/immediate %t/immediate-race
// RUN: gs-opt %s --gs-emulate-gpu -o %t/deferred.mlir
// RUN: gs-run %t/deferred.mlir --entry=pipelines --output-dir=%t/deferred
// RUN: not --crash gs-run %t/deferred.mlir --entry=wgmma_race --output-dir=%t/race 2>&1 | FileCheck %s --check-prefix=RACE
// RUN: gs-opt %s --gs-emulate-gpu=defer-async=false -o %t/immediate.mlir
// RUN: gs-run %t/immediate.mlir --entry=pipelines --output-dir=%t/immediate
// RUN: gs-run %t/immediate.mlir --entry=wgmma_race --output-dir=%t/immediate-race
// RUN: %onnx_python -c "import numpy as np; \
// RUN:   d = [np.load('%t/deferred/output_%%d.npy' %% i) for i in range(4)]; \
// RUN:   i = [np.load('%t/immediate/output_%%d.npy' %% i) for i in range(4)]; \
// RUN:   i.append(np.load('%t/immediate-race/output_0.npy')); \
// RUN:   t = np.arange(64); j = (4 * t + 5) %% 256; \
// RUN:   want = sum(k * 256 + j for k in range(4)).astype(np.float32); \
// RUN:   u = np.arange(32); c = np.arange(80)[:, None] * 32 + (u + 1) %% 32; \
// RUN:   many = ((2 * c) %% 1024 + (2 * c + 1) %% 1024).sum(0).astype(np.float32); \
// RUN:   assert (d[0] == want).all(), d[0] - want; \
// RUN:   assert np.isnan(d[1]).all(), d[1]; \
// RUN:   assert (i[0] == want).all() and (i[1] == want).all(), (i[0], i[1]); \
// RUN:   assert (d[2] == many).all() and (i[2] == many).all(), (d[2] - many, i[2] - many); \
// RUN:   m, n, k = np.arange(64)[:, None], np.arange(8)[:, None], np.arange(16)[None, :]; \
// RUN:   a = (((m %% 8) * 8 + (m // 8) * 128 + k %% 8 + (k // 8) * 64) %% 7 - 3).astype(np.float32); \
// RUN:   b = (((n %% 8) * 8 + k %% 8 + (k // 8) * 64) %% 5 - 2).astype(np.float32); \
// RUN:   ab = np.sort((a @ b.T).ravel()); assert ab.any(); \
// RUN:   assert (np.sort(d[3].ravel()) == ab).all(), d[3]; \
// RUN:   assert (np.sort(i[3].ravel()) == ab).all() and (np.sort(i[4].ravel()) == ab).all(), (i[3], i[4]); \
// RUN:   print('PASS')" | FileCheck %s
// CHECK: PASS
// RACE: gs-emulate-gpu: in @wgmma_then_copy, shared memory a wgmma.mma_async reads changed before every warpgroup was past the wgmma.wait_group that retires it and a barrier

!smem = memref<3x256xf16, #gpu.address_space<workgroup>>

// Tile k of src is row k; each thread copies 4 halves of it and reads the
// 6th from its own chunk's start, another thread's.
func.func @wait_all_but_newest(%src: memref<4x256xf16>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%smem : !smem) {
    %t = gpu.thread_id x
    %col = arith.muli %t, %c4 : index
    %t0 = nvgpu.device_async_copy %src[%c0, %col], %smem[%c0, %col], 4 : memref<4x256xf16> to !smem
    %g0 = nvgpu.device_async_create_group %t0
    %t1 = nvgpu.device_async_copy %src[%c1, %col], %smem[%c1, %col], 4 : memref<4x256xf16> to !smem
    %g1 = nvgpu.device_async_create_group %t1
    %sum = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
      nvgpu.device_async_wait %g1 {numGroups = 1 : i32}
      gpu.barrier
      %slot = arith.remui %k, %c3 : index
      %j0 = arith.addi %col, %c5 : index
      %j = arith.remui %j0, %c256 : index
      %x = memref.load %smem[%slot, %j] : !smem
      %xf = arith.extf %x : f16 to f32
      %next_acc = arith.addf %acc, %xf : f32
      gpu.barrier
      // Tile k + 2 into the slot tile k - 1 used; past the last, zeros.
      %ahead = arith.addi %k, %c2 : index
      %next = arith.remui %ahead, %c3 : index
      %inside = arith.cmpi ult, %ahead, %c4 : index
      %count = arith.select %inside, %c4, %c0 : index
      %row = arith.minui %ahead, %c3 : index
      %tn = nvgpu.device_async_copy %src[%row, %col], %smem[%next, %col], 4, %count : memref<4x256xf16> to !smem
      %gn = nvgpu.device_async_create_group %tn
      scf.yield %next_acc : f32
    }
    nvgpu.device_async_wait %g1 {numGroups = 0 : i32}
    memref.store %sum, %out[%t] : memref<64xf32>
    gpu.terminator
  }
  return
}

// The same pipeline waiting for all but the newest two groups: tile k may
// still be in flight when it is read.
func.func @wait_all_but_newest_two(%src: memref<4x256xf16>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%smem : !smem) {
    %t = gpu.thread_id x
    %col = arith.muli %t, %c4 : index
    %t0 = nvgpu.device_async_copy %src[%c0, %col], %smem[%c0, %col], 4 : memref<4x256xf16> to !smem
    %g0 = nvgpu.device_async_create_group %t0
    %t1 = nvgpu.device_async_copy %src[%c1, %col], %smem[%c1, %col], 4 : memref<4x256xf16> to !smem
    %g1 = nvgpu.device_async_create_group %t1
    %sum = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
      nvgpu.device_async_wait %g1 {numGroups = 2 : i32}
      gpu.barrier
      %slot = arith.remui %k, %c3 : index
      %j0 = arith.addi %col, %c5 : index
      %j = arith.remui %j0, %c256 : index
      %x = memref.load %smem[%slot, %j] : !smem
      %xf = arith.extf %x : f16 to f32
      %next_acc = arith.addf %acc, %xf : f32
      gpu.barrier
      %ahead = arith.addi %k, %c2 : index
      %next = arith.remui %ahead, %c3 : index
      %inside = arith.cmpi ult, %ahead, %c4 : index
      %count = arith.select %inside, %c4, %c0 : index
      %row = arith.minui %ahead, %c3 : index
      %tn = nvgpu.device_async_copy %src[%row, %col], %smem[%next, %col], 4, %count : memref<4x256xf16> to !smem
      %gn = nvgpu.device_async_create_group %tn
      scf.yield %next_acc : f32
    }
    nvgpu.device_async_wait %g1 {numGroups = 0 : i32}
    memref.store %sum, %out[%t] : memref<64xf32>
    gpu.terminator
  }
  return
}

// Each of 32 threads issues 80 copies of 2 halves (chunk i * 32 + t) in one
// group, then sums the next thread's.
func.func @many_pending(%src: memref<5120xf16>, %out: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %c80 = arith.constant 80 : index
  %zero = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%smem : memref<5120xf16, #gpu.address_space<workgroup>>) {
    %t = gpu.thread_id x
    %last = scf.for %i = %c0 to %c80 step %c1 iter_args(%unused = %zero) -> (f32) {
      %row = arith.muli %i, %c32 : index
      %chunk = arith.addi %row, %t : index
      %at = arith.muli %chunk, %c2 : index
      %token = nvgpu.device_async_copy %src[%at], %smem[%at], 2 : memref<5120xf16> to memref<5120xf16, #gpu.address_space<workgroup>>
      scf.yield %unused : f32
    }
    %group = nvgpu.device_async_create_group
    nvgpu.device_async_wait %group {numGroups = 0 : i32}
    gpu.barrier
    %t1 = arith.addi %t, %c1 : index
    %other = arith.remui %t1, %c32 : index
    %sum = scf.for %i = %c0 to %c80 step %c1 iter_args(%acc = %last) -> (f32) {
      %row = arith.muli %i, %c32 : index
      %chunk = arith.addi %row, %other : index
      %at = arith.muli %chunk, %c2 : index
      %at1 = arith.addi %at, %c1 : index
      %x = memref.load %smem[%at] : memref<5120xf16, #gpu.address_space<workgroup>>
      %y = memref.load %smem[%at1] : memref<5120xf16, #gpu.address_space<workgroup>>
      %xf = arith.extf %x : f16 to f32
      %yf = arith.extf %y : f16 to f32
      %s = arith.addf %xf, %yf : f32
      %a = arith.addf %acc, %s : f32
      scf.yield %a : f32
    }
    memref.store %sum, %out[%t] : memref<32xf32>
    gpu.terminator
  }
  return
}

!wgsmem = memref<3072xf16, #gpu.address_space<workgroup>>
!acc = !llvm.struct<(f32, f32, f32, f32)>

// One m64n8k16 wgmma of a warpgroup: A (64 x 16) at half 0 and B (8 x 16)
// at half 1024, both K-major without swizzling (core matrices of 8 rows of
// 16 bytes, 128 bytes apart along k, 256 along m or n), then a copy of 8
// other halves of A a thread to half `%to` + 8t: 2048 (free) or 0 (over
// A, before the wgmma's wait).
func.func @wgmma_then_copy(%a: memref<1024xf16>, %b: memref<128xf16>, %to: index, %out: memref<128x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %c512 = arith.constant 512 : index
  %c1024 = arith.constant 1024 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1)
             workgroup(%smem : !wgsmem) {
    %t = gpu.thread_id x
    %first = arith.muli %t, %c8 : index
    scf.for %e = %c0 to %c8 step %c1 {
      %at = arith.addi %first, %e : index
      %x = memref.load %a[%at] : memref<1024xf16>
      memref.store %x, %smem[%at] : !wgsmem
    }
    %writes_b = arith.cmpi ult, %t, %c16 : index
    scf.if %writes_b {
      scf.for %e = %c0 to %c8 step %c1 {
        %at = arith.addi %first, %e : index
        %x = memref.load %b[%at] : memref<128xf16>
        %to_b = arith.addi %at, %c1024 : index
        memref.store %x, %smem[%to_b] : !wgsmem
      }
    }
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
    gpu.barrier
    %base = memref.extract_aligned_pointer_as_index %smem : !wgsmem -> index
    %base64 = arith.index_cast %base : index to i64
    %c4_i64 = arith.constant 4 : i64
    %c2048_i64 = arith.constant 2048 : i64
    // Leading byte offset 128 and stride byte offset 256, each >> 4.
    %offsets = arith.constant 68720001024 : i64
    %a_start = arith.shrui %base64, %c4_i64 : i64
    %desc_a = arith.ori %a_start, %offsets : i64
    %b_address = arith.addi %base64, %c2048_i64 : i64
    %b_start = arith.shrui %b_address, %c4_i64 : i64
    %desc_b = arith.ori %b_start, %offsets : i64
    %zero = llvm.mlir.zero : !acc
    nvvm.wgmma.fence.aligned
    %d = nvvm.wgmma.mma_async %desc_a, %desc_b, %zero, <m = 64, n = 8, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : !acc -> !acc
    nvvm.wgmma.commit.group.sync.aligned
    %to_t = arith.addi %to, %first : index
    %shifted = arith.addi %first, %c512 : index
    %other = arith.remui %shifted, %c1024 : index
    %token = nvgpu.device_async_copy %a[%other], %smem[%to_t], 8 : memref<1024xf16> to !wgsmem
    %group = nvgpu.device_async_create_group %token
    nvvm.wgmma.wait.group.sync.aligned 0
    nvgpu.device_async_wait %group {numGroups = 0 : i32}
    %d0 = llvm.extractvalue %d[0] : !acc
    %d1 = llvm.extractvalue %d[1] : !acc
    %d2 = llvm.extractvalue %d[2] : !acc
    %d3 = llvm.extractvalue %d[3] : !acc
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    memref.store %d0, %out[%t, %c0] : memref<128x4xf32>
    memref.store %d1, %out[%t, %c1] : memref<128x4xf32>
    memref.store %d2, %out[%t, %c2] : memref<128x4xf32>
    memref.store %d3, %out[%t, %c3] : memref<128x4xf32>
    gpu.terminator
  }
  return
}

// A's halves h are h mod 7 - 3, B's h mod 5 - 2.
func.func @wgmma_operands() -> (memref<1024xf16>, memref<128xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c128 = arith.constant 128 : index
  %c1024 = arith.constant 1024 : index
  %wa = memref.alloc() : memref<1024xf16>
  scf.for %h = %c0 to %c1024 step %c1 {
    %r = arith.remui %h, %c7 : index
    %ri = arith.index_cast %r : index to i32
    %rf = arith.sitofp %ri : i32 to f16
    %three = arith.constant 3.0 : f16
    %v = arith.subf %rf, %three : f16
    memref.store %v, %wa[%h] : memref<1024xf16>
  }
  %wb = memref.alloc() : memref<128xf16>
  scf.for %h = %c0 to %c128 step %c1 {
    %r = arith.remui %h, %c5 : index
    %ri = arith.index_cast %r : index to i32
    %rf = arith.sitofp %ri : i32 to f16
    %two = arith.constant 2.0 : f16
    %v = arith.subf %rf, %two : f16
    memref.store %v, %wb[%h] : memref<128xf16>
  }
  return %wa, %wb : memref<1024xf16>, memref<128xf16>
}

// The wgmma followed by a copy over its A before its wait.
func.func @wgmma_race() -> tensor<128x4xf32> {
  %c0 = arith.constant 0 : index
  %wa, %wb = call @wgmma_operands() : () -> (memref<1024xf16>, memref<128xf16>)
  %over_a = memref.alloc() : memref<128x4xf32>
  call @wgmma_then_copy(%wa, %wb, %c0, %over_a) : (memref<1024xf16>, memref<128xf16>, index, memref<128x4xf32>) -> ()
  %0 = bufferization.to_tensor %over_a restrict : memref<128x4xf32> to tensor<128x4xf32>
  return %0 : tensor<128x4xf32>
}

func.func @pipelines() -> (tensor<64xf32>, tensor<64xf32>, tensor<32xf32>, tensor<128x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  %c2048 = arith.constant 2048 : index
  %c5120 = arith.constant 5120 : index
  %tiles = memref.alloc() : memref<4x256xf16>
  scf.for %k = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c256 step %c1 {
      %base = arith.muli %k, %c256 : index
      %v = arith.addi %base, %j : index
      %vi = arith.index_cast %v : index to i32
      %vf = arith.sitofp %vi : i32 to f16
      memref.store %vf, %tiles[%k, %j] : memref<4x256xf16>
    }
  }
  %flat = memref.alloc() : memref<5120xf16>
  scf.for %j = %c0 to %c5120 step %c1 {
    %v = arith.remui %j, %c1024 : index
    %vi = arith.index_cast %v : index to i32
    %vf = arith.sitofp %vi : i32 to f16
    memref.store %vf, %flat[%j] : memref<5120xf16>
  }
  %wa, %wb = call @wgmma_operands() : () -> (memref<1024xf16>, memref<128xf16>)
  %right = memref.alloc() : memref<64xf32>
  %early = memref.alloc() : memref<64xf32>
  %many = memref.alloc() : memref<32xf32>
  %elsewhere = memref.alloc() : memref<128x4xf32>
  call @wait_all_but_newest(%tiles, %right) : (memref<4x256xf16>, memref<64xf32>) -> ()
  call @wait_all_but_newest_two(%tiles, %early) : (memref<4x256xf16>, memref<64xf32>) -> ()
  call @many_pending(%flat, %many) : (memref<5120xf16>, memref<32xf32>) -> ()
  call @wgmma_then_copy(%wa, %wb, %c2048, %elsewhere) : (memref<1024xf16>, memref<128xf16>, index, memref<128x4xf32>) -> ()
  %0 = bufferization.to_tensor %right restrict : memref<64xf32> to tensor<64xf32>
  %1 = bufferization.to_tensor %early restrict : memref<64xf32> to tensor<64xf32>
  %2 = bufferization.to_tensor %many restrict : memref<32xf32> to tensor<32xf32>
  %3 = bufferization.to_tensor %elsewhere restrict : memref<128x4xf32> to tensor<128x4xf32>
  return %0, %1, %2, %3 : tensor<64xf32>, tensor<64xf32>, tensor<32xf32>, tensor<128x4xf32>
}
