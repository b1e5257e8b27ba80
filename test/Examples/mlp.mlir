// The bundled example that `make demo` runs verifies and canonicalizes.
// RUN: gs-opt %gs_src_root/examples/mlp.mlir --canonicalize | FileCheck %s

// CHECK-COUNT-4: gs.param trainable
// CHECK-LABEL: func.func @forward
// CHECK: gs.reshape %{{.*}} : tensor<64x1x28x28xf32> -> tensor<64x784xf32>
// CHECK: gs.gemm
// CHECK: gs.relu
// CHECK: gs.gemm
// CHECK: gs.softmax_cross_entropy
// CHECK: gs.training @forward
