//===- GSAttrInterfaces.td - GradScale attribute interfaces -*- tablegen -*-===//

#ifndef GS_DIALECT_GS_IR_GSATTRINTERFACES_TD
#define GS_DIALECT_GS_IR_GSATTRINTERFACES_TD

include "mlir/IR/OpBase.td"

def GS_OptimizerAttrInterface : AttrInterface<"OptimizerAttrInterface"> {
  let cppNamespace = "::mlir::gs";
  let description = [{
    An optimizer: the hyperparameters of one update rule of ONNX's
    `ai.onnx.preview.training` domain (or plain SGD). The learning rate and
    the step counter are operands of the update, not part of the attribute,
    so that a schedule can change them between steps.
  }];
  let methods = [
    InterfaceMethod<
      "Names of the per-parameter state tensors the rule keeps, in the order "
      "of the ONNX operator's inputs (e.g. `velocity`; `moment1`, `moment2`).",
      "::llvm::ArrayRef<::llvm::StringLiteral>", "getStateNames">,
  ];
  let extraSharedClassDeclaration = [{
    /// Number of per-parameter state tensors.
    unsigned getNumStateTensors() { return $_attr.getStateNames().size(); }
  }];
}

#endif // GS_DIALECT_GS_IR_GSATTRINTERFACES_TD
