// RUN: gs-opt %s --gs-gpu-gemm-kernel="m=70 n=50 k=40 bias=true relu-mask=true" --canonicalize --cse | FileCheck %s
// RUN: gs-opt %s --gs-gpu-gemm-kernel="m=70 n=50 k=40 trans-a=true trans-b=true output=f32 bias=true bias-type=f16" --canonicalize --cse | FileCheck %s --check-prefix=TRANSPOSED
// RUN: not gs-opt %s --gs-gpu-gemm-kernel="m=0 n=8 k=8" 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: not gs-opt %s --gs-gpu-gemm-kernel="name=taken m=8 n=8 k=8" 2>&1 | FileCheck %s --check-prefix=TAKEN

// The fused GEMM C = mask(f16(scale * A B + bias)) for A 70x40, B 40x50:
// a 1 x 2 grid of 64 x 64 tiles, 128 threads (2 x 2 warps of 32 x 32).
// (The tile-size choices and the pipeline depth: gemm-kernel-tiles.mlir.)
// Its last block sums the statistics' partials, with a ticket counter of
// the kernel's.
// CHECK: memref.global "private" @gemm_ticket : memref<1xi32> = dense<0> {gs.kernel_state}
// CHECK-LABEL: func.func @gemm(
// CHECK-SAME: %[[A:.*]]: memref<70x40xf16>, %[[B:.*]]: memref<40x50xf16>, %[[SCALE:.*]]: memref<1xf32>, %[[BIAS:.*]]: memref<50xf32>, %[[MASK:.*]]: memref<70x50xf16>, %[[C:.*]]: memref<70x50xf16>, %[[PARTIALS:.*]]: memref<2x10xf32>, %[[GRAD:.*]]: memref<7xf64>, %[[CAST:.*]]: memref<4xi64>)
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c2, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1)
// CHECK-SAME: workgroup(%[[AS:.*]] : memref<3x64x40xf16, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<3x32x72xf16, #gpu.address_space<workgroup>>, %[[RED:.*]] : memref<4x10xf32, #gpu.address_space<workgroup>>, %[[SUMS:.*]] : memref<32x10xf64, #gpu.address_space<workgroup>>, %[[FLAG:.*]] : memref<1xi32, #gpu.address_space<workgroup>>)

// A three-stage pipeline over the two k tiles of 32. A's rows (40 f16) are
// 16-byte aligned: cp.async, two chunks per thread; B's (50 f16) are not:
// guarded element copies. The prologue fills slots 0 and 1.
// CHECK-COUNT-2: nvgpu.device_async_copy %[[A]]{{.*}}, %[[AS]][%c0, {{.*}}], 8, %{{.*}} {bypassL1}
// CHECK-COUNT-16: memref.store %{{.*}}, %[[BS]][%c0,
// CHECK: nvgpu.device_async_create_group
// CHECK-COUNT-2: nvgpu.device_async_copy %[[A]]{{.*}}, %[[AS]][%c1, {{.*}}], 8, %{{.*}} {bypassL1}
// CHECK-COUNT-16: memref.store %{{.*}}, %[[BS]][%c1,
// CHECK: %[[PENDING:.*]] = nvgpu.device_async_create_group
// CHECK: scf.for %[[T:.*]] = %c0 to %c2 step %c1 iter_args({{.*}}) -> (vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>)
// CHECK-NEXT: nvgpu.device_async_wait %[[PENDING]] {numGroups = 1 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[SLOT:.*]] = arith.remui %[[T]], %c3
// Per k16: two A fragments (ldmatrix.x4), two B pairs (ldmatrix.x4.trans),
// eight mma.sync.
// CHECK-COUNT-2: nvgpu.ldmatrix %[[AS]][%[[SLOT]], {{.*}}] {numTiles = 4 : i32, transpose = false}
// CHECK-COUNT-2: nvgpu.ldmatrix %[[BS]][%[[SLOT]], {{.*}}] {numTiles = 4 : i32, transpose = true}
// CHECK-COUNT-8: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK-COUNT-2: nvgpu.ldmatrix %[[AS]]
// CHECK-COUNT-2: nvgpu.ldmatrix %[[BS]]
// CHECK-COUNT-8: nvgpu.mma.sync
// Then the copies of tile t + 2 into slot (t + 2) % 3.
// CHECK: %[[AHEAD:.*]] = arith.addi %[[T]], %c2
// CHECK: %[[NEXT:.*]] = arith.remui %[[AHEAD]], %c3
// CHECK-COUNT-2: nvgpu.device_async_copy %[[A]]{{.*}}, %[[AS]][%[[NEXT]], {{.*}}]
// CHECK-COUNT-16: memref.store %{{.*}}, %[[BS]][%[[NEXT]],
// CHECK: nvgpu.device_async_create_group
// CHECK-NEXT: scf.yield
// CHECK: nvgpu.device_async_wait %[[PENDING]] {numGroups = 0 : i32}

// The epilogue, per accumulator element: scale, bias, cast, the mask on
// what is stored (guarded by the bounds), and the statistics of the values
// before the mask.
// CHECK: %[[S:.*]] = memref.load %[[SCALE]][%c0]
// CHECK: %[[INSIDE:.*]] = arith.andi
// CHECK: %[[ACC:.*]] = vector.extract %{{.*}}#0[0, 0] : f32 from vector<2x2xf32>
// CHECK: %[[SCALED:.*]] = arith.mulf %[[ACC]], %[[S]] : f32
// CHECK: %[[BV:.*]] = memref.load %[[BIAS]]
// CHECK: %[[BIASED:.*]] = arith.addf %[[SCALED]], %[[BV]] : f32
// CHECK: %[[HALF:.*]] = arith.truncf %[[BIASED]] : f32 to f16
// CHECK: %[[FWD:.*]] = memref.load %[[MASK]]
// CHECK: %[[ACTIVE:.*]] = arith.cmpf ogt, %[[FWD]]
// CHECK: %[[MASKED:.*]] = arith.select %[[ACTIVE]], %[[HALF]]
// CHECK: scf.if %[[INSIDE]] {
// CHECK-NEXT: memref.store %[[MASKED]], %[[C]]
// CHECK: %[[WIDE:.*]] = arith.extf %[[HALF]] : f16 to f32
// CHECK: arith.select %[[INSIDE]], %[[WIDE]]
// CHECK: math.log %{{[^ ]*}} : f32
// CHECK: arith.cmpf oeq, %{{.*}}, %cst{{.*}} : f16

// Ten statistics, each reduced over the warp by five xor shuffles, then
// over the warps in shared memory, into the block's partial.
// CHECK-COUNT-50: gpu.shuffle  xor %{{.*}}, %c{{16|8|4|2|1}}_i32, %c32_i32 : f32
// CHECK: scf.if
// CHECK-COUNT-10: memref.store %{{.*}}, %[[RED]]
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[PARTIALS]]

// Then the block takes its ticket (LastBlock.h), and the last block to
// finish, its first warp, sums the partials in f64: lane l the blocks l,
// l + 32, ..., then lane 0 the lanes' sums in order.
// CHECK: nvvm.memory.barrier <gpu>
// CHECK-NEXT: gpu.barrier
// CHECK: memref.get_global @gemm_ticket
// CHECK: memref.atomic_rmw addi
// CHECK: memref.store %{{.*}}, %[[FLAG]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[FLAG]]
// CHECK: scf.if
// CHECK-NEXT: nvvm.memory.barrier <gpu>
// CHECK-NEXT: %[[LANES:.*]] = arith.cmpi ult, %[[LANE:.*]], %c32 : index
// CHECK-NEXT: scf.if %[[LANES]] {
// CHECK: scf.for %[[BLOCK:.*]] = %[[LANE]] to %c2 step %c32 iter_args(
// CHECK: memref.load %[[PARTIALS]][%[[BLOCK]], %c0]
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK-COUNT-10: memref.store %{{.*}}, %[[SUMS]][%[[LANE]],
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c1 iter_args(
// CHECK-COUNT-7: memref.store %{{.*}}, %[[GRAD]]
// CHECK-COUNT-4: arith.fptosi
// CHECK: } {gs.block_uniform}
// CHECK-NEXT: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return

// Transposed operands keep their stored orientation in shared memory (A^T
// as k x m tiles, B^T as n x k) and become fragments through ldmatrix:
// .trans for A^T, plain for B^T. The f16 bias is widened; C is f32, its
// statistics of the f32 values, the cast counts of their rounding.
// TRANSPOSED-LABEL: func.func @gemm(
// TRANSPOSED-SAME: %[[A:.*]]: memref<40x70xf16>, %[[B:.*]]: memref<50x40xf16>, %{{.*}}: memref<1xf32>, %[[BIAS:.*]]: memref<50xf16>, %[[C:.*]]: memref<70x50xf32>,
// TRANSPOSED: workgroup(%[[AS:.*]] : memref<3x32x72xf16, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<3x64x40xf16, #gpu.address_space<workgroup>>,
// TRANSPOSED: scf.for
// TRANSPOSED-COUNT-2: nvgpu.ldmatrix %[[AS]][{{.*}}] {numTiles = 4 : i32, transpose = true}
// TRANSPOSED-COUNT-2: nvgpu.ldmatrix %[[BS]][{{.*}}] {numTiles = 4 : i32, transpose = false}
// TRANSPOSED: %[[BV:.*]] = memref.load %[[BIAS]]
// TRANSPOSED: %[[WIDE:.*]] = arith.extf %[[BV]] : f16 to f32
// TRANSPOSED: %[[BIASED:.*]] = arith.addf %{{.*}}, %[[WIDE]] : f32
// TRANSPOSED: %[[HALF:.*]] = arith.truncf %[[BIASED]] : f32 to f16
// TRANSPOSED: memref.store %[[BIASED]], %[[C]]

// SHAPE: error: gemm kernel 'gemm': m, n and k must be positive
// TAKEN: error: gemm kernel 'taken': the module already has a symbol of that name

func.func private @taken()
