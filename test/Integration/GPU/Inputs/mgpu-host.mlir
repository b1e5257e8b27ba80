// Host code that uses every GPU runtime call MLIR's lowering makes for a
// train step's needs: a kernel module, allocation, copies both ways, a
// launch, a join of two streams (events), deallocation.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @gs_axpy(%y: memref<?xf32>, %x: memref<?xf32>, %a: f32, %n: i32) kernel {
      gpu.return
    }
  }
  func.func @run(%hy: memref<?xf32>, %hx: memref<?xf32>, %a: f32, %n: i32, %count: index) {
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %s0 = gpu.wait async
    %s1 = gpu.wait async
    %y, %t1 = gpu.alloc async [%s0] (%count) : memref<?xf32>
    %x, %t2 = gpu.alloc async [%s1] (%count) : memref<?xf32>
    %t3 = gpu.memcpy async [%t1] %y, %hy : memref<?xf32>, memref<?xf32>
    %t4 = gpu.memcpy async [%t2] %x, %hx : memref<?xf32>, memref<?xf32>
    %joined = gpu.wait async [%t3, %t4]
    %t5 = gpu.launch_func async [%joined] @kernels::@gs_axpy blocks in (%count, %c1, %c1) threads in (%c256, %c1, %c1) args(%y : memref<?xf32>, %x : memref<?xf32>, %a : f32, %n : i32)
    %t6 = gpu.memcpy async [%t5] %hy, %y : memref<?xf32>, memref<?xf32>
    %t7 = gpu.dealloc async [%t6] %y : memref<?xf32>
    %t8 = gpu.dealloc async [%t7] %x : memref<?xf32>
    gpu.wait [%t8]
    return
  }
}
