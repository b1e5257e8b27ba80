// The bundled examples verify and canonicalize; `make demo` imports the
// ONNX one.
// RUN: gs-opt %gs_src_root/examples/mlp.mlir --canonicalize | FileCheck %s
// RUN: gs-opt %gs_src_root/examples/mlp.onnxtext --onnx-shape=x=32x8 --onnx-train="optimizer=momentum lr=0.05" | FileCheck %s --check-prefix=ONNX

// CHECK-COUNT-4: gs.param trainable
// CHECK-LABEL: func.func @forward
// CHECK: gs.reshape %{{.*}} : tensor<64x1x28x28xf32> -> tensor<64x784xf32>
// CHECK: gs.gemm
// CHECK: gs.relu
// CHECK: gs.gemm
// CHECK: gs.softmax_cross_entropy
// CHECK: gs.training @forward

// ONNX-COUNT-4: gs.param trainable
// ONNX: func.func @forward(%{{.*}}: tensor<32x8xf32> {onnx.input_index = 0 : i64, onnx.name = "x"}, %{{.*}}: tensor<32xi64> {onnx.input_index = 1 : i64, onnx.name = "labels"}) -> (tensor<f32> {onnx.name = "loss"})
// ONNX: gs.gemm {{.*}} -> tensor<32x4xf32>
// ONNX: gs.relu
// ONNX: gs.gemm {{.*}} -> tensor<32x3xf32>
// ONNX: gs.softmax_cross_entropy
// ONNX: gs.training @forward {learning_rate = 5.000000e-02 : f32, optimizer = #gs.momentum<>}
