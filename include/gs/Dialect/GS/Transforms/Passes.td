//===- Passes.td - Transformations of the gs dialect -------*- tablegen -*-===//

#ifndef GS_DIALECT_GS_TRANSFORMS_PASSES_TD
#define GS_DIALECT_GS_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def Autodiff : Pass<"gs-autodiff", "::mlir::ModuleOp"> {
  let summary = "Build the backward pass and the optimizer update";
  let description = [{
    Fills every empty `gs.backward` region (the ONNX `Gradient` operator)
    with the gradient computation, and turns a `gs.training` configuration
    into a train-step function: a copy of the forward function followed by a
    `gs.backward` region computing the gradient of the loss with respect to
    every trainable parameter, one `gs.update` per parameter with its
    optimizer state (new `state` parameters, zero-initialized) and the step
    counter (`@gs.step`, incremented after the updates).

    The gradient computation is one reverse walk over the forward ops, each
    contributing its vector-Jacobian product through
    `DifferentiableOpInterface`. A value with several uses gets its gradient
    contributions summed by one `gs.add_n`: the branch points the
    gradient-scaling pass looks for. Integer values, frozen parameters and
    values that do not reach the loss get no gradient.
  }];
  let options = [
    Option<"trainStepName", "train-step", "std::string",
           /*default=*/"\"train_step\"",
           "Name of the train-step function to create (empty: only fill "
           "gradient requests)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // GS_DIALECT_GS_TRANSFORMS_PASSES_TD
