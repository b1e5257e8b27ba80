// RUN: gs-opt %s --split-input-file --gs-linalg-to-gpu --cse | FileCheck %s
// RUN: gs-opt %s --split-input-file --gs-linalg-to-gpu="register-blocks=false" | FileCheck %s --check-prefix=OFF
// RUN: gs-opt %s --split-input-file --gs-linalg-to-gpu --gs-emulate-gpu --gs-lower-to-llvm-cpu -o /dev/null

// A GEMM of 1024 x 512 points over k = 64: B does not vary along the rows,
// so each thread takes 4 rows, 256 apart; A does not vary along the
// columns, and 2 more (256 apart) leave 65536 threads. Per k: 4 loads of
// A and 2 of B for 8 products, each sum carried on its own, stored at its
// point.
// CHECK-LABEL: func.func private @gs_reduce_1024x512x64(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<1024x64xf32>, %[[B:[a-z0-9]+]]: memref<64x512xf32>, %[[C:[a-z0-9]+]]: memref<1024x512xf32>)
// CHECK-DAG: %[[C256:.+]] = arith.constant 256 : index
// CHECK: gpu.launch blocks({{.*}}) in (%{{.+}} = %[[C256]], {{.*}}) threads({{.*}}) in (%{{.+}} = %[[C256]],
// CHECK: %[[POINT:.+]] = arith.addi
// CHECK: %[[J0:.+]] = arith.remui %[[POINT]], %[[C256]] : index
// CHECK: %[[I0:.+]] = arith.divui %[[POINT]], %[[C256]] : index
// CHECK: %[[I1:.+]] = arith.addi %[[I0]], %[[C256]] : index
// CHECK: %[[I2:.+]] = arith.addi %[[I0]], %c512 : index
// CHECK: %[[I3:.+]] = arith.addi %[[I0]], %c768 : index
// CHECK: %[[J1:.+]] = arith.addi %[[J0]], %[[C256]] : index
// CHECK: %[[SUMS:.+]]:8 = scf.for %[[K:[a-z0-9]+]] = {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK: %[[A0:.+]] = memref.load %[[A]][%[[I0]], %[[K]]]
// CHECK: %[[B0:.+]] = memref.load %[[B]][%[[K]], %[[J0]]]
// CHECK: arith.mulf %[[A0]], %[[B0]]
// CHECK: %[[B1:.+]] = memref.load %[[B]][%[[K]], %[[J1]]]
// CHECK: arith.mulf %[[A0]], %[[B1]]
// CHECK: memref.load %[[A]][%[[I1]], %[[K]]]
// CHECK-NOT: memref.load %[[B]]
// CHECK: memref.load %[[A]][%[[I2]], %[[K]]]
// CHECK-NOT: memref.load %[[B]]
// CHECK: memref.load %[[A]][%[[I3]], %[[K]]]
// CHECK-NOT: memref.load
// CHECK: scf.yield
// CHECK: memref.store %[[SUMS]]#0, %[[C]][%[[I0]], %[[J0]]]
// CHECK: memref.store %[[SUMS]]#1, %[[C]][%[[I0]], %[[J1]]]
// CHECK: memref.store %[[SUMS]]#2, %[[C]][%[[I1]], %[[J0]]]
// CHECK: memref.store %[[SUMS]]#7, %[[C]][%[[I3]], %[[J1]]]
// OFF-LABEL: func.func private @gs_reduce_1024x512x64(
// OFF: gpu.launch blocks({{.*}}) in (%{{.+}} = %c2048,
// OFF: scf.for {{.*}} -> (f32) {
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @gemm(%a: tensor<1024x64xf32>, %b: tensor<64x512xf32>) -> tensor<1024x512xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1024x512xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%empty : tensor<1024x512xf32>) -> tensor<1024x512xf32>
  %r = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<1024x64xf32>, tensor<64x512xf32>) outs(%zeros : tensor<1024x512xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1024x512xf32>
  return %r : tensor<1024x512xf32>
}

// -----

// A point per thread: a reduction shorter than 32 (k = 16); too few
// points to spare threads for blocks (the MLP's eval GEMM at batch 64:
// 8192); no input the same along a parallel loop (row sums).
// CHECK-LABEL: func.func private @gs_reduce_1024x512x16(
// CHECK: scf.for {{.*}} -> (f32) {
// CHECK-LABEL: func.func private @gs_reduce_64x128x784(
// CHECK: scf.for {{.*}} -> (f32) {
// CHECK-LABEL: func.func private @gs_reduce_1024x512x64(
// CHECK: scf.for {{.*}} -> (f32) {
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
#x = affine_map<(m, n, k) -> (m, n, k)>
func.func @unblocked(%a: tensor<1024x16xf32>, %b: tensor<16x512xf32>, %x: tensor<64x784xf32>, %w: tensor<784x128xf32>, %rows: tensor<1024x512x64xf32>) -> (tensor<1024x512xf32>, tensor<64x128xf32>, tensor<1024x512xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1024x512xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%empty : tensor<1024x512xf32>) -> tensor<1024x512xf32>
  %short = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<1024x16xf32>, tensor<16x512xf32>) outs(%zeros : tensor<1024x512xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1024x512xf32>
  %empty2 = tensor.empty() : tensor<64x128xf32>
  %zeros2 = linalg.fill ins(%zero : f32) outs(%empty2 : tensor<64x128xf32>) -> tensor<64x128xf32>
  %few = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<64x784xf32>, tensor<784x128xf32>) outs(%zeros2 : tensor<64x128xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x128xf32>
  %sums = linalg.generic {indexing_maps = [#x, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%rows : tensor<1024x512x64xf32>) outs(%zeros : tensor<1024x512xf32>) {
  ^bb0(%p: f32, %acc: f32):
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1024x512xf32>
  return %short, %few, %sums : tensor<1024x512xf32>, tensor<64x128xf32>, tensor<1024x512xf32>
}
