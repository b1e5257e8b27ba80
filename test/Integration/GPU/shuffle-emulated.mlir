// gs-emulate-gpu's shuffles against the PTX ISA's shfl.sync (width 32):
// xor, down, up and idx over two warps, values and valid flags, and a
// value carried across a barrier and a loop with a warp-level op inside.
// RUN: rm -rf %t && mkdir -p %t
// RUN: gs-opt %s --gs-emulate-gpu -o %t/emulated.mlir
// RUN: gs-run %t/emulated.mlir --entry=shuffles --output-dir=%t
// RUN: %onnx_python -c "import numpy as np; \
// RUN:   got, valid = np.load('%t/output_0.npy'), np.load('%t/output_1.npy'); \
// RUN:   t = np.arange(64); lane, base = t %% 32, t - t %% 32; \
// RUN:   rules = [(lane ^ 5, True), (lane + 3, lane + 3 < 32), (lane - 2, lane >= 2), (np.full(64, 7), True)]; \
// RUN:   want = np.array([np.where(ok, base + src, t) for src, ok in rules], np.float32); \
// RUN:   want_valid = np.array([np.broadcast_to(ok, (64,)) for _, ok in rules], np.float32); \
// RUN:   assert (got[:4] == want).all(), got[:4] - want; assert (valid == want_valid).all(), valid; \
// RUN:   assert (got[4] == 2 * t + 3).all(), got[4]; print('PASS')" | FileCheck %s
// CHECK: PASS

func.func @kernel(%out: memref<5x64xf32>, %valid: memref<4x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %t = gpu.thread_id x
    %ti = arith.index_cast %t : index to i32
    %v = arith.sitofp %ti : i32 to f32
    %width = arith.constant 32 : i32
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %i5 = arith.constant 5 : i32
    %i3 = arith.constant 3 : i32
    %i2 = arith.constant 2 : i32
    %i7 = arith.constant 7 : i32
    %x, %xv = gpu.shuffle xor %v, %i5, %width : f32
    %d, %dv = gpu.shuffle down %v, %i3, %width : f32
    %u, %uv = gpu.shuffle up %v, %i2, %width : f32
    %i, %iv = gpu.shuffle idx %v, %i7, %width : f32
    memref.store %x, %out[%c0, %t] : memref<5x64xf32>
    memref.store %d, %out[%c1, %t] : memref<5x64xf32>
    memref.store %u, %out[%c2, %t] : memref<5x64xf32>
    memref.store %i, %out[%c3, %t] : memref<5x64xf32>
    %flags = vector.from_elements %xv, %dv, %uv, %iv : vector<4xi1>
    %f = arith.uitofp %flags : vector<4xi1> to vector<4xf32>
    %f0 = vector.extract %f[0] : f32 from vector<4xf32>
    %f1 = vector.extract %f[1] : f32 from vector<4xf32>
    %f2 = vector.extract %f[2] : f32 from vector<4xf32>
    %f3 = vector.extract %f[3] : f32 from vector<4xf32>
    memref.store %f0, %valid[%c0, %t] : memref<4x64xf32>
    memref.store %f1, %valid[%c1, %t] : memref<4x64xf32>
    memref.store %f2, %valid[%c2, %t] : memref<4x64xf32>
    memref.store %f3, %valid[%c3, %t] : memref<4x64xf32>
    gpu.barrier
    // A value carried through a loop with shuffles in it: each of three
    // steps takes the partner's partner (the thread itself) plus 1, so the
    // loop gives t + 3, and the sum after it 2t + 3.
    %acc = scf.for %k = %c0 to %c3 step %c1 iter_args(%a = %v) -> (f32) {
      %p, %pv = gpu.shuffle xor %a, %i5, %width : f32
      %q, %qv = gpu.shuffle xor %p, %i5, %width : f32
      %s = arith.addf %q, %one : f32
      scf.yield %s : f32
    }
    %sum = arith.addf %acc, %v : f32
    // gpu.block_dim and gpu.grid_dim are the launch's sizes: 64 * 1 - 64.
    %bd = gpu.block_dim x
    %gd = gpu.grid_dim x
    %size = arith.muli %bd, %gd : index
    %sizei = arith.index_cast %size : index to i32
    %sizef = arith.sitofp %sizei : i32 to f32
    %c64f = arith.constant 64.0 : f32
    %extra = arith.subf %sizef, %c64f : f32
    %r = arith.addf %sum, %extra : f32
    memref.store %r, %out[%c4, %t] : memref<5x64xf32>
    gpu.terminator
  }
  return
}

func.func @shuffles() -> (tensor<5x64xf32>, tensor<4x64xf32>) {
  %out = memref.alloc() : memref<5x64xf32>
  %valid = memref.alloc() : memref<4x64xf32>
  call @kernel(%out, %valid) : (memref<5x64xf32>, memref<4x64xf32>) -> ()
  %0 = bufferization.to_tensor %out restrict : memref<5x64xf32> to tensor<5x64xf32>
  %1 = bufferization.to_tensor %valid restrict : memref<4x64xf32> to tensor<4x64xf32>
  return %0, %1 : tensor<5x64xf32>, tensor<4x64xf32>
}
