// RUN: gs-opt %s --gs-lower-to-llvm-cpu=vector-bits=256 | FileCheck %s
// RUN: gs-opt %s --gs-lower-to-llvm-cpu="vector-bits=256 kernel-schedule=false" | FileCheck %s --check-prefix=LOOPS

// gs to the LLVM dialect: results become caller-owned out-parameters (the
// output returned twice gets two buffers, the second a copy), the GEMM's
// register block becomes vector FMAs, the bias and ReLU one fused loop,
// and every temporary buffer is freed.

// CHECK: #[[$UNROLL:.*]] = #llvm.loop_annotation<unroll = #{{.*}}>
// CHECK-NOT: builtin.unrealized_conversion_cast
// CHECK-NOT: gs.
// Buffers from the runtime's buffer cache, fresh blocks (noalias).
// CHECK: llvm.func @_mlir_memref_to_llvm_aligned_alloc(i64, i64) -> (!llvm.ptr {llvm.noalias})
// CHECK-LABEL: llvm.func @forward(
// Three inputs and two out-parameters, each a memref descriptor: 7
// arguments for a 2-D memref, 5 for the 1-D bias, 33 in all.
// CHECK-SAME: %arg32: i64) {
// CHECK-NOT: llvm.return %
// The transposed weights, the GEMM (each register block zeroes its own
// outputs: no pass zeroing the whole output), bias and ReLU.
// CHECK: %[[A:.+]] = llvm.call @_mlir_memref_to_llvm_aligned_alloc
// CHECK: llvm.call @forward_kernel_0(
// CHECK: %[[B:.+]] = llvm.call @_mlir_memref_to_llvm_aligned_alloc
// CHECK: llvm.call @[[GEMM:forward_kernel_1]](
// CHECK: llvm.call @[[BIAS_RELU:forward_kernel_2]](
// CHECK: "llvm.intr.memcpy"
// CHECK-DAG: llvm.call @_mlir_memref_to_llvm_free(%[[A]])
// CHECK-DAG: llvm.call @_mlir_memref_to_llvm_free(%[[B]])
// CHECK: llvm.return{{$}}
// CHECK-NOT: llvm.call @{{(aligned_alloc|malloc|_mlir_memref_to_llvm_aligned_alloc)}}
// Each loop nest a function of its own (gs-outline-kernels).
// The register block's output rows 24 columns further along (the next
// panel's) prefetched into L2, a prefetch per line (gs-prefetch-block-outputs);
// its steps marked for LLVM to unroll (gs-unroll-register-block-steps).
// CHECK: llvm.func internal @[[GEMM]](
// CHECK-COUNT-8: "llvm.intr.prefetch"({{.*}}) <{cache = 1 : i32, hint = 2 : i32, rw = 0 : i32}>
// CHECK-NOT: llvm.intr.prefetch
// CHECK-COUNT-12: llvm.intr.fmuladd({{.*}}) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK: llvm.br {{.*}} {loop_annotation = #[[$UNROLL]]}
// CHECK: llvm.func internal @[[BIAS_RELU]](
// CHECK: llvm.fadd {{.*}} : f32
// CHECK-NEXT: llvm.intr.maximum({{.*}}) : (f32, f32) -> f32

// Without the kernel schedule: scalar loops, no vectors.
// LOOPS-LABEL: llvm.func @forward(
// LOOPS-NOT: vector<
// LOOPS: llvm.fmul {{.*}} : f32
// LOOPS-NEXT: llvm.fadd {{.*}} : f32
// LOOPS-NOT: vector<
func.func @forward(%x: tensor<16x32xf32>, %w: tensor<24x32xf32>, %b: tensor<24xf32>) -> (tensor<16x24xf32>, tensor<16x24xf32>) {
  %y = gs.gemm %x, %w, %b {transB} : tensor<16x32xf32>, tensor<24x32xf32>, tensor<24xf32> -> tensor<16x24xf32>
  %r = gs.relu %y : tensor<16x24xf32>
  return %r, %r : tensor<16x24xf32>, tensor<16x24xf32>
}
