// RUN: gs-opt %s --split-input-file --verify-diagnostics --convert-gs-to-linalg
// RUN: gs-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(convert-gs-to-linalg))'

// GSToLinalg.cpp rejects, before converting anything, what the lowering
// cannot express: gs.backward regions (autodiff differentiates them,
// gs-inline-backward inlines them), and unsigned integer tensors (its integer arithmetic is signless and
// signed). The pass fails at the first such op.

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

func.func @unsigned_operand(%x: tensor<4xui8>) -> tensor<4xf32> {
  // expected-error @+1 {{'gs.cast' op has an unsigned integer tensor ('tensor<4xui8>'), which the CPU lowering does not support}}
  %0 = gs.cast %x : tensor<4xui8> to tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @unsigned_result() -> tensor<2xui8> {
  // expected-error @+1 {{'gs.constant' op has an unsigned integer tensor ('tensor<2xui8>'), which the CPU lowering does not support}}
  %0 = gs.constant dense<[1, 2]> : tensor<2xui8>
  return %0 : tensor<2xui8>
}

// -----

func.func @unsigned_shape_op(%x: tensor<4xui8>) -> tensor<2x2xui8> {
  // expected-error @+1 {{'gs.reshape' op has an unsigned integer tensor ('tensor<4xui8>')}}
  %0 = gs.reshape %x : tensor<4xui8> -> tensor<2x2xui8>
  return %0 : tensor<2x2xui8>
}

// -----

// The check covers every gs op, also those this pass leaves to others.
gs.param buffer @counts = dense<0> : tensor<4xui8>

func.func @unsigned_param_read() -> tensor<4xui8> {
  // expected-error @+1 {{'gs.param.read' op has an unsigned integer tensor ('tensor<4xui8>')}}
  %0 = gs.param.read @counts : tensor<4xui8>
  return %0 : tensor<4xui8>
}
