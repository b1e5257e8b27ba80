// RUN: gs-opt %s --split-input-file --gs-constants-in-kernels="max-bytes=64" | FileCheck %s

// A GEMM's scale of 1 and a one-hot's iota after bufferization: constant
// globals that the host reads and passes to kernels. Both kernels read them
// from copies in their gpu.modules; the arguments that carried them are
// gone from the gpu.funcs and from the launches, which two launches of one
// kernel share, and so are the host's reads.
// CHECK-LABEL: gpu.module @gemm
// CHECK-NEXT: memref.global "private" constant @scale : memref<1xf32> = dense<1.000000e+00>
// CHECK: gpu.func @gemm(%[[A:.+]]: memref<8xf16>, %[[C:.+]]: memref<8xf32>) kernel
// CHECK-NEXT: %[[S:.+]] = memref.get_global @scale : memref<1xf32>
// CHECK: memref.load %[[S]]
// CHECK-LABEL: gpu.module @one_hot
// CHECK-NEXT: memref.global "private" constant @iota : memref<1x4xi64>
// CHECK: gpu.func @one_hot(%{{.+}}: memref<8x1xi64>, %{{.+}}: memref<8x4xf32>) kernel
// CHECK-NEXT: memref.get_global @iota : memref<1x4xi64>
// CHECK-LABEL: func.func @step
// CHECK-NOT: memref.get_global
// CHECK: gpu.launch_func @gemm::@gemm {{.*}} args(%{{.+}} : memref<8xf16>, %{{.+}} : memref<8xf32>)
// CHECK-NEXT: gpu.launch_func @gemm::@gemm {{.*}} args(%{{.+}} : memref<8xf16>, %{{.+}} : memref<8xf32>)
// CHECK-NEXT: gpu.launch_func @one_hot::@one_hot {{.*}} args(%{{.+}} : memref<8x1xi64>, %{{.+}} : memref<8x4xf32>)
// CHECK-NEXT: return
module attributes {gpu.container_module} {
  memref.global "private" constant @scale : memref<1xf32> = dense<1.0>
  memref.global "private" constant @iota : memref<1x4xi64> = dense<[[0, 1, 2, 3]]>
  gpu.module @gemm {
    gpu.func @gemm(%a: memref<8xf16>, %s: memref<1xf32>, %c: memref<8xf32>) kernel {
      %c0 = arith.constant 0 : index
      %i = gpu.thread_id x
      %x = memref.load %a[%i] : memref<8xf16>
      %e = arith.extf %x : f16 to f32
      %scale = memref.load %s[%c0] : memref<1xf32>
      %y = arith.mulf %e, %scale : f32
      memref.store %y, %c[%i] : memref<8xf32>
      gpu.return
    }
  }
  gpu.module @one_hot {
    gpu.func @one_hot(%t: memref<8x1xi64>, %iota: memref<1x4xi64>, %out: memref<8x4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %i = gpu.thread_id x
      %j = gpu.thread_id y
      %label = memref.load %t[%i, %c0] : memref<8x1xi64>
      %k = memref.load %iota[%c0, %j] : memref<1x4xi64>
      %hit = arith.cmpi eq, %label, %k : i64
      %v = arith.uitofp %hit : i1 to f32
      memref.store %v, %out[%i, %j] : memref<8x4xf32>
      gpu.return
    }
  }
  func.func @step(%a: memref<8xf16>, %c: memref<8xf32>, %d: memref<8xf32>,
                  %t: memref<8x1xi64>, %out: memref<8x4xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %s = memref.get_global @scale : memref<1xf32>
    %s2 = memref.get_global @scale : memref<1xf32>
    %iota = memref.get_global @iota : memref<1x4xi64>
    gpu.launch_func @gemm::@gemm blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%a : memref<8xf16>, %s : memref<1xf32>, %c : memref<8xf32>)
    gpu.launch_func @gemm::@gemm blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%a : memref<8xf16>, %s2 : memref<1xf32>, %d : memref<8xf32>)
    gpu.launch_func @one_hot::@one_hot blocks in (%c1, %c1, %c1) threads in (%c8, %c4, %c1) args(%t : memref<8x1xi64>, %iota : memref<1x4xi64>, %out : memref<8x4xf32>)
    return
  }
}

// -----

// Kept as arguments: a constant the kernel writes (bufferization would
// not, but a kernel's stores must go to a buffer), one kernel launched
// with two different constants, a constant over max-bytes, a global that
// is not constant (a parameter), and a constant that the host also reads
// for another use, whose host read stays for it.
// CHECK-LABEL: gpu.module @writes
// CHECK-NOT: memref.global
// CHECK-LABEL: gpu.module @either
// CHECK-NOT: memref.global
// CHECK-LABEL: gpu.module @large
// CHECK-NOT: memref.global
// CHECK-LABEL: gpu.module @param
// CHECK-NOT: memref.global
// CHECK-LABEL: gpu.module @shared
// CHECK-NEXT: memref.global "private" constant @two
// CHECK: gpu.func @shared(%{{.+}}: memref<4xf32>) kernel
// CHECK-LABEL: func.func @kept
// CHECK: %[[ONE:.+]] = memref.get_global @one
// CHECK: %[[TWO:.+]] = memref.get_global @two
// CHECK: %[[LARGE:.+]] = memref.get_global @big
// CHECK: %[[W:.+]] = memref.get_global @w
// CHECK: %[[TWO2:.+]] = memref.get_global @two
// CHECK: gpu.launch_func @writes::@writes {{.*}} args(%[[ONE]] : memref<4xf32>)
// CHECK: gpu.launch_func @either::@either {{.*}} args(%[[ONE]] : memref<4xf32>,
// CHECK: gpu.launch_func @either::@either {{.*}} args(%[[TWO]] : memref<4xf32>,
// CHECK: gpu.launch_func @large::@large {{.*}} args(%[[LARGE]] : memref<32xf32>,
// CHECK: gpu.launch_func @param::@param {{.*}} args(%[[W]] : memref<4xf32>,
// CHECK: gpu.launch_func @shared::@shared {{.*}} args(%{{.+}} : memref<4xf32>)
// CHECK: memref.copy %[[TWO2]], %{{.+}}
module attributes {gpu.container_module} {
  memref.global "private" constant @one : memref<4xf32> = dense<1.0>
  memref.global "private" constant @two : memref<4xf32> = dense<2.0>
  memref.global "private" constant @big : memref<32xf32> = dense<3.0>
  memref.global "public" @w : memref<4xf32> = dense<4.0>
  gpu.module @writes {
    gpu.func @writes(%k: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %x = memref.load %k[%i] : memref<4xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %k[%i] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @either {
    gpu.func @either(%k: memref<4xf32>, %out: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %x = memref.load %k[%i] : memref<4xf32>
      memref.store %x, %out[%i] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @large {
    gpu.func @large(%k: memref<32xf32>, %out: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %x = memref.load %k[%i] : memref<32xf32>
      memref.store %x, %out[%i] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @param {
    gpu.func @param(%k: memref<4xf32>, %out: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %x = memref.load %k[%i] : memref<4xf32>
      memref.store %x, %out[%i] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @shared {
    gpu.func @shared(%k: memref<4xf32>, %out: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %x = memref.load %k[%i] : memref<4xf32>
      memref.store %x, %out[%i] : memref<4xf32>
      gpu.return
    }
  }
  func.func @kept(%out: memref<4xf32>, %host: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %one = memref.get_global @one : memref<4xf32>
    %two = memref.get_global @two : memref<4xf32>
    %large = memref.get_global @big : memref<32xf32>
    %w = memref.get_global @w : memref<4xf32>
    %two2 = memref.get_global @two : memref<4xf32>
    gpu.launch_func @writes::@writes blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%one : memref<4xf32>)
    gpu.launch_func @either::@either blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%one : memref<4xf32>, %out : memref<4xf32>)
    gpu.launch_func @either::@either blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%two : memref<4xf32>, %out : memref<4xf32>)
    gpu.launch_func @large::@large blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%large : memref<32xf32>, %out : memref<4xf32>)
    gpu.launch_func @param::@param blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%w : memref<4xf32>, %out : memref<4xf32>)
    gpu.launch_func @shared::@shared blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%two2 : memref<4xf32>, %out : memref<4xf32>)
    memref.copy %two2, %host : memref<4xf32> to memref<4xf32>
    return
  }
}

// -----

// Inline kernels (the emulated pipeline's): the read moves into the
// gpu.launch body, and the host's is erased once no launch uses it.
// CHECK-LABEL: func.func @inline
// CHECK-NOT: memref.get_global
// CHECK: gpu.launch
// CHECK-NEXT: %[[S:.+]] = memref.get_global @scale : memref<1xf32>
// CHECK: memref.load %[[S]]
// CHECK: gpu.launch
// CHECK-NEXT: %[[S2:.+]] = memref.get_global @scale : memref<1xf32>
// CHECK: memref.load %[[S2]]
// CHECK: return
module attributes {gpu.container_module} {
  memref.global "private" constant @scale : memref<1xf32> = dense<1.0>
  func.func @inline(%a: memref<8xf32>, %c: memref<8xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %s = memref.get_global @scale : memref<1xf32>
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
      %x = memref.load %a[%tx] : memref<8xf32>
      %scale = memref.load %s[%c0] : memref<1xf32>
      %y = arith.mulf %x, %scale : f32
      memref.store %y, %c[%tx] : memref<8xf32>
      gpu.terminator
    }
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
      %scale = memref.load %s[%c0] : memref<1xf32>
      memref.store %scale, %c[%tx] : memref<8xf32>
      gpu.terminator
    }
    return
  }
}

// -----

// An i1 takes a byte: 65 of them are over max-bytes, 64 are not.
// CHECK-LABEL: gpu.module @flags65
// CHECK-NOT: memref.global
// CHECK-LABEL: gpu.module @flags64
// CHECK-NEXT: memref.global "private" constant @bits64
// CHECK-LABEL: func.func @flags
// CHECK: %[[F65:.+]] = memref.get_global @bits65
// CHECK: gpu.launch_func @flags65::@flags65 {{.*}} args(%[[F65]] : memref<65xi1>,
// CHECK: gpu.launch_func @flags64::@flags64 {{.*}} args(%{{.+}} : memref<4xi1>)
module attributes {gpu.container_module} {
  memref.global "private" constant @bits65 : memref<65xi1> = dense<true>
  memref.global "private" constant @bits64 : memref<64xi1> = dense<true>
  gpu.module @flags65 {
    gpu.func @flags65(%k: memref<65xi1>, %out: memref<4xi1>) kernel {
      %i = gpu.thread_id x
      %x = memref.load %k[%i] : memref<65xi1>
      memref.store %x, %out[%i] : memref<4xi1>
      gpu.return
    }
  }
  gpu.module @flags64 {
    gpu.func @flags64(%k: memref<64xi1>, %out: memref<4xi1>) kernel {
      %i = gpu.thread_id x
      %x = memref.load %k[%i] : memref<64xi1>
      memref.store %x, %out[%i] : memref<4xi1>
      gpu.return
    }
  }
  func.func @flags(%out: memref<4xi1>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %f65 = memref.get_global @bits65 : memref<65xi1>
    %f64 = memref.get_global @bits64 : memref<64xi1>
    gpu.launch_func @flags65::@flags65 blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%f65 : memref<65xi1>, %out : memref<4xi1>)
    gpu.launch_func @flags64::@flags64 blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%f64 : memref<64xi1>, %out : memref<4xi1>)
    return
  }
}
