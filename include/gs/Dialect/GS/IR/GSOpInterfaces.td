//===- GSOpInterfaces.td - GradScale op interfaces ---------*- tablegen -*-===//

#ifndef GS_DIALECT_GS_IR_GSOPINTERFACES_TD
#define GS_DIALECT_GS_IR_GSOPINTERFACES_TD

include "mlir/IR/OpBase.td"

def GS_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::mlir::gs";
  let description = [{
    An op whose vector-Jacobian product (VJP) autodiff can build: given the
    gradients of the loss with respect to the op's results, the ops that
    compute the gradients with respect to its operands. `gs-autodiff` is one
    reverse walk over the forward ops calling this; it knows no op by name.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds, at the builder's insertion point, the gradients of the
        operands from `resultGradients` (one per result, in order; a null
        value where no gradient flows into that result). Fills
        `operandGradients` with one value per operand, of the operand's
        type, or null where the operand gets no gradient (integer operands,
        masks). Fails, with an error on the op, for attribute combinations
        it cannot differentiate.
      }], "::llvm::LogicalResult", "buildVJP",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ValueRange":$resultGradients,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGradients)>,
  ];
}

#endif // GS_DIALECT_GS_IR_GSOPINTERFACES_TD
