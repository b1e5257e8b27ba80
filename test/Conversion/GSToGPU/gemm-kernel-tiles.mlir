// The thread-block tiles and the pipeline depth chosen for the shape, and
// set by hand.
// RUN: gs-opt %s --gs-gpu-gemm-kernel="m=4096 n=4096 k=4096" | FileCheck %s --check-prefix=LARGE
// RUN: gs-opt %s --gs-gpu-gemm-kernel="m=20 n=24 k=64" | FileCheck %s --check-prefix=SMALL
// RUN: gs-opt %s --gs-gpu-gemm-kernel="m=100 n=100 k=64 block-m=32 block-n=64 warps-m=1 warps-n=2 stages=4" | FileCheck %s --check-prefix=MANUAL
// RUN: gs-opt %s --gs-gpu-gemm-kernel="m=64 n=64 k=64 statistics=false" | FileCheck %s --check-prefix=NOSTATS
// RUN: not gs-opt %s --gs-gpu-gemm-kernel="m=64 n=64 k=64 stages=1" 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not gs-opt %s --gs-gpu-gemm-kernel="m=512 n=512 k=64 block-m=256 block-n=256 warps-m=2 warps-n=4 stages=2" 2>&1 | FileCheck %s --check-prefix=SHARED
// RUN: not gs-opt %s --gs-gpu-gemm-kernel="m=64 n=64 k=64 block-m=40" 2>&1 | FileCheck %s --check-prefix=TILE

// m, n >= 1024: 128 x 128 blocks of 2 x 4 warps (64 x 32 each), two
// stages: a 32 x 32 grid.
// LARGE: gpu.launch blocks({{.*}}) in ({{.*}} = %c32{{.*}}, {{.*}} = %c32{{.*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c256
// LARGE-SAME: workgroup({{.*}} : memref<2x128x40xf16, #gpu.address_space<workgroup>>, {{.*}} : memref<2x32x136xf16, #gpu.address_space<workgroup>>, {{.*}} : memref<8x10xf32, #gpu.address_space<workgroup>>)
// LARGE-COUNT-32: nvgpu.mma.sync
// Its 1024 blocks' partials: a second launch of one warp.
// LARGE: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c32

// m and n <= 32: one warp, one 32 x 32 block, which sums its partial
// itself (the lanes' sums and the last block's flag in shared memory).
// SMALL: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c32
// SMALL-SAME: workgroup({{.*}} : memref<3x32x40xf16, #gpu.address_space<workgroup>>, {{.*}} : memref<3x32x40xf16, #gpu.address_space<workgroup>>, {{.*}} : memref<1x10xf32, #gpu.address_space<workgroup>>, {{.*}} : memref<32x10xf64, #gpu.address_space<workgroup>>, {{.*}} : memref<1xi32, #gpu.address_space<workgroup>>)
// SMALL-NOT: gpu.launch

// MANUAL: gpu.launch blocks({{.*}}) in ({{.*}} = %c2{{.*}}, {{.*}} = %c4{{.*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c64
// MANUAL-SAME: workgroup({{.*}} : memref<4x32x40xf16, #gpu.address_space<workgroup>>, {{.*}} : memref<4x32x72xf16, #gpu.address_space<workgroup>>, {{.*}} : memref<2x10xf32, #gpu.address_space<workgroup>>, {{.*}} : memref<32x10xf64, #gpu.address_space<workgroup>>, {{.*}} : memref<1xi32, #gpu.address_space<workgroup>>)
// MANUAL: nvgpu.device_async_wait %{{.*}} {numGroups = 2 : i32}

// Without the statistics (the baseline of their cost): C alone, no
// reduction scratch, no shuffles, no second launch.
// NOSTATS: func.func @gemm(%{{.*}}: memref<64x64xf16>, %{{.*}}: memref<64x64xf16>, %{{.*}}: memref<1xf32>, %{{.*}}: memref<64x64xf16>) {
// NOSTATS: gpu.launch
// NOSTATS-SAME: workgroup({{.*}} : memref<3x64x40xf16, #gpu.address_space<workgroup>>, {{.*}} : memref<3x32x72xf16, #gpu.address_space<workgroup>>)
// NOSTATS-NOT: gpu.shuffle
// NOSTATS-NOT: gpu.launch
// NOSTATS: return

// STAGES: error: gemm kernel 'gemm': the pipeline needs at least 2 stages
// SHARED: error: gemm kernel 'gemm': the tiles need {{[0-9]+}} bytes of shared memory, over the 49152 of a static allocation
// TILE: error: gemm kernel 'gemm': the block tile must be a multiple of 16 x 16 per warp and of 16 in k
