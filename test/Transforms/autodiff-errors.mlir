// The errors of gs-train-step and gs-autodiff on a gs.training, at the op
// they are about.
// RUN: gs-opt %s --split-input-file --verify-diagnostics --gs-train-step --gs-autodiff
// RUN: not gs-opt %s --split-input-file --gs-train-step=name= 2>&1 | FileCheck %s --check-prefix=EMPTY

// EMPTY: error: gs-train-step: name must not be empty

// gs-train-step trains a function with one block.
// expected-error @+1 {{'func.func' op must have a single block to be trained}}
func.func @forward(%x: tensor<2x4xf32>) -> tensor<f32> {
  cf.br ^next
^next:
  %l = gs.reduce_sum %x <{axes = array<i64: 0, 1>}> : tensor<2x4xf32>
  return %l : tensor<f32>
}
gs.training @forward {learning_rate = 0.1 : f32, optimizer = #gs.sgd<>}

// -----

// expected-error @+1 {{'func.func' op is a declaration; gs.training needs the body of the function it trains}}
func.func private @forward(tensor<2x4xf32>) -> tensor<f32>
gs.training @forward {learning_rate = 0.1 : f32, optimizer = #gs.sgd<>}
