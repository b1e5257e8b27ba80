// RUN: gs-opt %s --gs-gpu-gemm-kernel="m=64 n=64 k=64 statistics=false wgmma=true" --canonicalize --cse | FileCheck %s
// RUN: gs-opt %s --gs-gpu-gemm-kernel="m=4096 n=4096 k=4096 trans-a=true trans-b=true wgmma=true" | FileCheck %s --check-prefix=LARGE
// RUN: not gs-opt %s --gs-gpu-gemm-kernel="m=64 n=64 k=64 block-m=32 wgmma=true" 2>&1 | FileCheck %s --check-prefix=WARPGROUPS
// RUN: not gs-opt %s --gs-gpu-gemm-kernel="m=64 n=64 k=64 block-k=48 wgmma=true" 2>&1 | FileCheck %s --check-prefix=BLOCK-K
// RUN: not gs-opt %s --gs-gpu-gemm-kernel="m=64 n=512 k=64 block-n=512 wgmma=true" 2>&1 | FileCheck %s --check-prefix=BLOCK-N
// RUN: gs-opt %s --gs-gpu-gemm-kernel="m=4096 n=4096 k=4096 stages=4 wgmma=true" | FileCheck %s --check-prefix=DYNAMIC
// RUN: gs-opt %s --gs-gpu-gemm-kernel="m=1100 n=1030 k=200 wgmma=true" | FileCheck %s --check-prefix=GUARDED
// RUN: not gs-opt %s --gs-gpu-gemm-kernel="m=4096 n=4096 k=4096 block-k=64 stages=8 wgmma=true" 2>&1 | FileCheck %s --check-prefix=TOO-DEEP
// RUN: gs-opt %s --gs-gpu-gemm-kernel="m=64 n=64 k=64 statistics=false wgmma=true wgmma-in-flight=1" --canonicalize --cse | FileCheck %s --check-prefix=IN-FLIGHT
// RUN: gs-opt %s --gs-gpu-gemm-kernel="m=4096 n=4096 k=4096 wgmma=true wgmma-in-flight=1" | FileCheck %s --check-prefix=IN-FLIGHT-LARGE
// RUN: not gs-opt %s --gs-gpu-gemm-kernel="m=64 n=64 k=64 stages=2 wgmma=true wgmma-in-flight=1" 2>&1 | FileCheck %s --check-prefix=IN-FLIGHT-STAGES
// RUN: not gs-opt %s --gs-gpu-gemm-kernel="m=64 n=64 k=64 wgmma=true wgmma-in-flight=2" 2>&1 | FileCheck %s --check-prefix=IN-FLIGHT-TWO
// RUN: not gs-opt %s --gs-gpu-gemm-kernel="m=64 n=64 k=64 wgmma-in-flight=1" 2>&1 | FileCheck %s --check-prefix=IN-FLIGHT-MMA-SYNC

// The wgmma variant: one warpgroup (128 threads) of m64n64k16 on a 64 x 64
// block. Both operands' k tiles share one f16 buffer, with 1024 bytes of
// room: the kernel aligns the tiles to the next 1024-byte boundary of its
// shared-memory address, where the swizzle patterns repeat.
// CHECK-LABEL: func.func @gemm(
// CHECK: %[[ZERO:.*]] = llvm.mlir.zero : !llvm.struct<({{(f32, )+}}f32)>
// CHECK: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1) workgroup(%[[SMEM:.*]] : memref<12800xf16, #gpu.address_space<workgroup>>)
// CHECK: %[[ADDRESS:.*]] = memref.extract_aligned_pointer_as_index %[[SMEM]]
// CHECK: %[[PAST:.*]] = arith.remui %[[ADDRESS]], %c1024
// CHECK: %[[DISTANCE:.*]] = arith.subi %c1024, %[[PAST]]
// CHECK: %[[START:.*]] = arith.remui %[[DISTANCE]], %c1024
// A (K-major, 64-byte rows: k tiles of 32): a chunk's 16 bytes at (row % 8)
// * 64 + (row / 8) * 512 + chunk * 16, their chunk bits 4-5 XOR bits 7-8.
// CHECK: %[[SWIZZLED:.*]] = arith.xori
// CHECK: %[[BYTE:.*]] = arith.addi %[[START]], %[[SWIZZLED]]
// CHECK: %[[ELEMENT:.*]] = arith.divui %[[BYTE]], %c2
// CHECK: nvgpu.device_async_copy %arg0[{{.*}}], %[[SMEM]][%[[ELEMENT]]], 8, {{.*}} {bypassL1}
// The main loop carries wgmma's accumulator fragment. Each k tile: the
// copies' wait, the proxy fence, the barrier, wgmma's register fence, two
// m64n64k16 on descriptors (A: 64-byte swizzle, mode 2 in bits 62-63, SBO
// 512 / 16; B: N-major, 128-byte swizzle, mode 1, LBO 4096 / 16, SBO
// 1024 / 16: the constants 0x8000002000010000 and 0x4000004001000000),
// committed as one group; the next tile's copies; the wait.
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (!llvm.struct<
// CHECK-NEXT: nvgpu.device_async_wait
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: %[[DA:.*]] = arith.ori %{{.*}}, %c-9223371899415756800_i64 : i64
// CHECK: %[[DB:.*]] = arith.ori %{{.*}}, %c4611686293322072064_i64 : i64
// CHECK: %[[D1:.*]] = nvvm.wgmma.mma_async %[[DA]], %[[DB]], %[[ACC]], <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>]
// CHECK: %[[D2:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[D1]], <m = 64, n = 64, k = 16>
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvgpu.device_async_create_group
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: scf.yield %[[D2]]
// The epilogue reads the fragment's 32 registers where wgmma's layout puts
// them.
// CHECK-COUNT-32: llvm.extractvalue

// 4096^3 with both operands transposed: 128 x 128 blocks of two
// warpgroups (256 threads), two stages, two blocks per multiprocessor; A
// M-major (col), B K-major (col) for m64n128k16.
// LARGE: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c256{{.*}}) workgroup(%{{.*}} : memref<16896xf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<8x10xf32, #gpu.address_space<workgroup>>)
// LARGE-COUNT-2: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <col>], B[<f16>, <one>, <col>]
// The statistics' ln|x| is the approximate log (lg2.approx on the GPU).
// LARGE: math.log %{{.*}} fastmath<afn> : f32
// LARGE: } {nvvm.minctasm = 2 : i32}

// WARPGROUPS: error: gemm kernel 'gemm': wgmma needs blocks of whole warpgroups along m: block-m a multiple of 64, warps-m = block-m / 16, warps-n = 1
// BLOCK-K: error: gemm kernel 'gemm': wgmma's K-major tiles need block-k 16, 32 or 64 (rows of 32, 64 or 128 bytes)
// BLOCK-N: error: gemm kernel 'gemm': wgmma needs block-n a multiple of 16, at most 256

// Four 128 x 128 x 32 stages (65 KiB with the room to align) do not fit
// static shared memory: the operands' buffer and, after it, the
// statistics' are views of the launch's dynamic shared memory, and no
// static buffer lies beside them.
// DYNAMIC: %[[BYTES:.*]] = arith.constant 66880 : i32
// DYNAMIC: gpu.launch {{.*}} dynamic_shared_memory_size %[[BYTES]] {
// DYNAMIC: %[[RAW:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// DYNAMIC: %[[VIEW:.*]] = memref.view %[[RAW]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<33280xf16, #gpu.address_space<workgroup>>
// DYNAMIC: memref.view %[[RAW]][%c66560{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8x10xf32, #gpu.address_space<workgroup>>
// DYNAMIC: memref.extract_aligned_pointer_as_index %[[VIEW]]
// Large, but B's rows (n = 1030) are copied element by element: one
// block per multiprocessor, no register cap (ptxas: 201 registers, where
// the cap of 128 spilled 136 bytes).
// GUARDED: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c256{{.*}})
// GUARDED-NOT: nvvm.minctasm
// TOO-DEEP: error: gemm kernel 'gemm': the tiles need 263488 bytes of shared memory, over the 232448 a block may have on sm_90

// One group of wgmmas in flight (three stages): one tile copied ahead, not
// two; each iteration waits for every copy group (the tile's), issues its
// wgmmas, copies the next tile and waits for all wgmma groups but its
// own; the epilogue waits for that one.
// IN-FLIGHT: nvgpu.device_async_create_group
// IN-FLIGHT-NOT: nvgpu.device_async_create_group
// IN-FLIGHT: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (!llvm.struct<
// IN-FLIGHT-NEXT: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// IN-FLIGHT: %[[D1:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[ACC]]
// IN-FLIGHT: %[[D2:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[D1]]
// IN-FLIGHT-NEXT: nvvm.wgmma.commit.group.sync.aligned
// IN-FLIGHT: nvgpu.device_async_create_group
// IN-FLIGHT-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// IN-FLIGHT-NEXT: scf.yield %[[D2]]
// IN-FLIGHT: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// IN-FLIGHT-NEXT: nvvm.wgmma.wait.group.sync.aligned 0

// At 4096^3 the 128 x 128 blocks get three stages (dynamic shared memory).
// IN-FLIGHT-LARGE: gpu.launch {{.*}} dynamic_shared_memory_size
// IN-FLIGHT-LARGE: nvvm.wgmma.wait.group.sync.aligned 1

// IN-FLIGHT-STAGES: error: gemm kernel 'gemm': a wgmma group in flight needs at least 3 stages (the slot it reads, the one computed, one filling)
// IN-FLIGHT-TWO: error: gemm kernel 'gemm': wgmma-in-flight must be 0 or 1
// IN-FLIGHT-MMA-SYNC: error: gemm kernel 'gemm': wgmma-in-flight needs wgmma
