// RUN: gs-opt %s --split-input-file --verify-diagnostics --convert-gs-to-linalg
// RUN: gs-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(convert-gs-to-linalg))'

// GSToLinalg.cpp rejects, before converting anything, what the lowering
// cannot express: gs.backward regions (autodiff differentiates them,
// gs-inline-backward inlines them), and unsigned parameters (the training
// structure's lowering keeps element types as they are; unsigned tensors
// elsewhere lower to signless ones, integers.mlir). The pass fails at the
// first such op.

func.func @backward_request(%l: tensor<f32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'gs.backward' op must be differentiated (by gs-autodiff) before lowering}}
  %g = gs.backward %l wrt %w : tensor<f32>, tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

func.func @backward_region(%l: tensor<f32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'gs.backward' op must be inlined (by gs-inline-backward) before lowering}}
  %g = gs.backward %l wrt %w : tensor<f32>, tensor<4xf32> {
  ^bb0(%seed: tensor<f32>):
    gs.yield %w : tensor<4xf32>
  }
  return %g : tensor<4xf32>
}

// -----

// The check covers the training structure, which this pass leaves to others.
gs.param buffer @counts = dense<0> : tensor<4xui8>

func.func @unsigned_param_read() -> tensor<4xui8> {
  // expected-error @+1 {{'gs.param.read' op has an unsigned integer parameter ('tensor<4xui8>'), which the CPU lowering does not support}}
  %0 = gs.param.read @counts : tensor<4xui8>
  return %0 : tensor<4xui8>
}
