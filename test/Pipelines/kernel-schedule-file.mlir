// A transform-dialect file replaces the built-in schedule.
// RUN: gs-opt %s --gs-cpu-kernel-schedule=schedule-file=%S/Inputs/tile-matmul-8x16.mlir | FileCheck %s
// RUN: echo 'module {}' > %t.mlir
// RUN: not gs-opt %s --gs-cpu-kernel-schedule=schedule-file=%t.mlir 2>&1 | FileCheck %s --check-prefix=NO-ENTRY
// RUN: not gs-opt %s --gs-cpu-kernel-schedule=schedule-file=%t.missing.mlir 2>&1 | FileCheck %s --check-prefix=MISSING

// CHECK-LABEL: func.func @matmul
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c8
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c16
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x32xf32>, tensor<32x16xf32>) outs(%{{.*}} : tensor<8x16xf32>)
// CHECK-NOT: vector.fma

// NO-ENTRY: error: schedule file '{{.*}}.mlir' has no transform.named_sequence @__transform_main
// MISSING: error: failed to open transform file: cannot open input file '{{.*}}.missing.mlir': No such file or directory
func.func @matmul(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>, %c: tensor<64x48xf32>) -> tensor<64x48xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x48xf32>) outs(%c : tensor<64x48xf32>) -> tensor<64x48xf32>
  return %r : tensor<64x48xf32>
}
