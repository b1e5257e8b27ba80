// RUN: gs-opt %s --gs-lower-to-llvm-cpu=vector-bits=256 \
// RUN:   | mlir-translate --mlir-to-llvmir \
// RUN:   | opt -O3 -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 -S \
// RUN:   | FileCheck %s --implicit-check-not="load float" \
// RUN:       --implicit-check-not="store float" \
// RUN:       --implicit-check-not="load half" \
// RUN:       --implicit-check-not="fpext half"
// RUN: gs-opt %s --gs-lower-to-llvm-cpu=vector-bits=256 \
// RUN:   | mlir-translate --mlir-to-llvmir \
// RUN:   | opt -O3 -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 -S \
// RUN:   | FileCheck %s --check-prefix=NO-MEMCPY

// Temporaries come from the runtime's buffer cache through the generic
// aligned allocation function, whose result is noalias (as LLVM knows
// aligned_alloc's is): memory no other pointer reaches. An aligned malloc
// (pointer arithmetic through integers) hid that, so LLVM could not
// reorder a copy's loads past its stores and left every copy and
// elementwise loop of few iterations scalar. Here the im2col copies of two
// convolutions, FP16 (widened as it is copied) and FP32, and the FP16
// filter's widening run on vectors only.

// CHECK-LABEL: define void @convolution_f16(
// CHECK: call {{.*}} @_mlir_memref_to_llvm_aligned_alloc(i64 64,
// CHECK-LABEL: define void @convolution_f32(
// CHECK: call {{.*}} @_mlir_memref_to_llvm_aligned_alloc(i64 64,

// The loop nests are functions of their own (gs-outline-kernels).
// CHECK: define internal {{.*}} @convolution_f16_kernel_0(
// CHECK: fpext <8 x half> %{{.*}} to <8 x float>
// CHECK: store <8 x float>
// CHECK: define internal {{.*}} @convolution_f32_kernel_{{[0-9]+}}(
// CHECK: load <8 x float>
// CHECK: store <8 x float>
// Kernels may not call memcpy (no-builtin-memcpy): LLVM made each row of
// an im2col copy (28 floats of a 28x28 output) a call to it, 7% of the
// step of ResNet-18's 28x28 layer.
// NO-MEMCPY-LABEL: define internal {{.*}} @convolution_f16_kernel_0(
// NO-MEMCPY-NOT: memcpy
// NO-MEMCPY: ret void
// NO-MEMCPY-LABEL: define internal {{.*}} @convolution_f32_kernel_1(
// NO-MEMCPY-NOT: memcpy
// NO-MEMCPY: ret void
func.func @convolution_f16(%x: tensor<8x32x30x30xf16>, %w: tensor<32x32x3x3xf16>) -> tensor<8x32x28x28xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8x32x28x28xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x32x28x28xf32>) -> tensor<8x32x28x28xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<8x32x30x30xf16>, tensor<32x32x3x3xf16>) outs(%init : tensor<8x32x28x28xf32>) -> tensor<8x32x28x28xf32>
  return %y : tensor<8x32x28x28xf32>
}

func.func @convolution_f32(%x: tensor<8x32x30x30xf32>, %w: tensor<32x32x3x3xf32>) -> tensor<8x32x28x28xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8x32x28x28xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x32x28x28xf32>) -> tensor<8x32x28x28xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<8x32x30x30xf32>, tensor<32x32x3x3xf32>) outs(%init : tensor<8x32x28x28xf32>) -> tensor<8x32x28x28xf32>
  return %y : tensor<8x32x28x28xf32>
}
