// RUN: gs-opt %s --split-input-file --gs-slices-to-linalg | FileCheck %s

// A concatenation (a bucket of gradients): each insert_slice a generic over
// the destination that reads the piece at its clamped index inside the
// slice and keeps the destination outside it.
// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[A:.+]]: tensor<3xf32>, %[[B:.+]]: tensor<2xf32>)
// CHECK-NOT: tensor.insert_slice
// CHECK: %[[FIRST:.+]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<5xf32>)
// CHECK: ^bb0(%[[OLD:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[I:.+]] = linalg.index 0 : index
// CHECK: %[[REL:.+]] = arith.subi %[[I]], %c0
// CHECK: %[[AFTER:.+]] = arith.cmpi sge, %[[REL]], %c0
// CHECK: %[[BEFORE:.+]] = arith.cmpi slt, %[[REL]], %c3
// CHECK: %[[IN:.+]] = arith.andi %[[AFTER]], %[[BEFORE]]
// CHECK: %[[LOW:.+]] = arith.maxsi %[[REL]], %c0
// CHECK: %[[J:.+]] = arith.minsi %[[LOW]], %c2
// CHECK: %[[E:.+]] = tensor.extract %[[A]][%[[J]]] : tensor<3xf32>
// CHECK: %[[PICK:.+]] = arith.select %[[IN]], %[[E]], %[[OLD]] : f32
// CHECK: linalg.yield %[[PICK]]
// CHECK: %[[SECOND:.+]] = linalg.generic {{.*}} ins(%[[FIRST]] : tensor<5xf32>)
// CHECK: arith.subi %{{.*}}, %c3
// CHECK: tensor.extract %[[B]]
// CHECK: return %[[SECOND]]
func.func @concat(%a: tensor<3xf32>, %b: tensor<2xf32>) -> tensor<5xf32> {
  %e = tensor.empty() : tensor<5xf32>
  %0 = tensor.insert_slice %a into %e[0] [3] [1] : tensor<3xf32> into tensor<5xf32>
  %1 = tensor.insert_slice %b into %0[3] [2] [1] : tensor<2xf32> into tensor<5xf32>
  return %1 : tensor<5xf32>
}

// -----

// A strided, rank-reducing insert: the dropped dimension matches its
// offset only, the strided one every other index.
// CHECK-LABEL: func.func @strided_rank_reducing
// CHECK: linalg.generic
// CHECK: %[[I0:.+]] = linalg.index 0 : index
// CHECK: %[[R0:.+]] = arith.subi %[[I0]], %c1
// CHECK: arith.cmpi slt, %[[R0]], %c1
// CHECK: %[[I1:.+]] = linalg.index 1 : index
// CHECK: %[[R1:.+]] = arith.subi %[[I1]], %c2
// CHECK: arith.cmpi slt, %[[R1]], %c5
// CHECK: %[[PHASE:.+]] = arith.remsi %[[R1]], %c2
// CHECK: arith.cmpi eq, %[[PHASE]], %c0
// CHECK: %[[LOW:.+]] = arith.maxsi %[[R1]], %c0
// CHECK: %[[STEP:.+]] = arith.divui %[[LOW]], %c2
// CHECK: %[[J:.+]] = arith.minsi %[[STEP]], %c2
// CHECK: tensor.extract %{{.*}}[%[[J]]] : tensor<3xf32>
func.func @strided_rank_reducing(%row: tensor<3xf32>, %m: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = tensor.insert_slice %row into %m[1, 2] [1, 3] [1, 2] : tensor<3xf32> into tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Slices read out (gs.split's pieces): a generic over the slice reading the
// source at offset + index * stride; a dropped dimension at its offset.
// CHECK-LABEL: func.func @split
// CHECK-SAME: (%[[T:.+]]: tensor<4x10xf32>)
// CHECK-NOT: tensor.extract_slice
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<5xf32>)
// CHECK: %[[I:.+]] = linalg.index 0 : index
// CHECK: %[[S:.+]] = arith.muli %[[I]], %c2
// CHECK: %[[K:.+]] = arith.addi %[[S]], %c1
// CHECK: tensor.extract %[[T]][%c2, %[[K]]] : tensor<4x10xf32>
func.func @split(%t: tensor<4x10xf32>) -> tensor<5xf32> {
  %0 = tensor.extract_slice %t[2, 1] [1, 5] [1, 2] : tensor<4x10xf32> to tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// Inside a kernel or a linalg body slices stay.
// CHECK-LABEL: func.func @in_a_body
// CHECK: tensor.extract_slice
func.func @in_a_body(%t: tensor<4xf32>, %o: tensor<2xf32>) -> tensor<2xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%o : tensor<2xf32>) {
  ^bb0(%out: f32):
    %s = tensor.extract_slice %t[1] [2] [1] : tensor<4xf32> to tensor<2xf32>
    %c0 = arith.constant 0 : index
    %v = tensor.extract %s[%c0] : tensor<2xf32>
    linalg.yield %v : f32
  } -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
