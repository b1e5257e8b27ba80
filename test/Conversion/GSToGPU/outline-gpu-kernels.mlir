// RUN: gs-opt %s --gs-outline-gpu-kernels | FileCheck %s

// Each launch's nvvm.* attributes and gs.per_thread_outputs land on its
// own gpu.func, paired by the launches' order in the function; other
// attributes stay behind, and a launch_func already there keeps its
// kernel as it is.
// CHECK: gpu.module @existing
// CHECK: gpu.func @existing() kernel attributes {nvvm.maxnreg = 32 : i32}
// CHECK-LABEL: func.func @two_launches
// CHECK: gpu.launch_func @two_launches_kernel::@two_launches_kernel
// CHECK: gpu.launch_func @existing::@existing
// CHECK: gpu.launch_func @two_launches_kernel_0::@two_launches_kernel
// CHECK: gpu.module @two_launches_kernel
// CHECK: gpu.func @two_launches_kernel({{.*}}) kernel attributes {known_block_size = array<i32: 4, 1, 1>, known_grid_size = array<i32: 1, 1, 1>, nvvm.minctasm = 2 : i32} {
// CHECK: gpu.module @two_launches_kernel_0
// CHECK: gpu.func @two_launches_kernel({{.*}}) kernel attributes {gs.per_thread_outputs, known_block_size = array<i32: 2, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
module attributes {gpu.container_module} {
  gpu.module @existing {
    gpu.func @existing() kernel attributes {nvvm.maxnreg = 32 : i32} {
      gpu.return
    }
  }
  func.func @two_launches(%m: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %v = arith.constant 1.0 : f32
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%x = %c4, %y = %c1, %z = %c1) {
      memref.store %v, %m[%tx] : memref<4xf32>
      gpu.terminator
    } {nvvm.minctasm = 2 : i32, gs.note = "not an NVVM attribute"}
    gpu.launch_func @existing::@existing blocks in (%c1, %c1, %c1)
        threads in (%c1, %c1, %c1)
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%x = %c2, %y = %c1, %z = %c1) {
      memref.store %v, %m[%tx] : memref<4xf32>
      gpu.terminator
    } {gs.per_thread_outputs}
    return
  }
}
