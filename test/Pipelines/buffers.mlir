// RUN: gs-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(separate-returned-buffers))' | FileCheck %s --check-prefix=SEPARATE
// RUN: gs-opt %s --split-input-file --convert-strided-copy-to-linalg | FileCheck %s --check-prefix=STRIDED

// A buffer returned twice: the second result gets a copy of its own.
// SEPARATE-LABEL: func.func @twice
// SEPARATE: %[[A:.+]] = memref.alloc() : memref<4xf32>
// SEPARATE: %[[B:.+]] = memref.alloc() : memref<4xf32>
// SEPARATE: memref.copy %[[A]], %[[B]]
// SEPARATE: return %[[A]], %[[B]]
func.func @twice() -> (memref<4xf32>, memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  return %a, %a : memref<4xf32>, memref<4xf32>
}

// -----

// A copy into a strided subview becomes a linalg.copy (loops, no runtime
// library); a contiguous copy stays memref.copy (a memcpy).
// STRIDED-LABEL: func.func @copies
// STRIDED: %[[SUB:.+]] = memref.subview
// STRIDED: linalg.copy ins(%{{.*}} : memref<2x2xf32>) outs(%[[SUB]] : memref<2x2xf32, strided<[4, 1], offset: 5>>)
// STRIDED: memref.copy %{{.*}}, %{{.*}} : memref<2x2xf32> to memref<2x2xf32>
func.func @copies(%src: memref<2x2xf32>, %dst: memref<4x4xf32>, %flat: memref<2x2xf32>) {
  %sub = memref.subview %dst[1, 1] [2, 2] [1, 1] : memref<4x4xf32> to memref<2x2xf32, strided<[4, 1], offset: 5>>
  memref.copy %src, %sub : memref<2x2xf32> to memref<2x2xf32, strided<[4, 1], offset: 5>>
  memref.copy %src, %flat : memref<2x2xf32> to memref<2x2xf32>
  return
}
