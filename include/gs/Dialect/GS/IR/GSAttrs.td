//===- GSAttrs.td - GradScale attributes and enums ---------*- tablegen -*-===//

#ifndef GS_DIALECT_GS_IR_GSATTRS_TD
#define GS_DIALECT_GS_IR_GSATTRS_TD

include "gs/Dialect/GS/IR/GSBase.td"
include "gs/Dialect/GS/IR/GSAttrInterfaces.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def GS_Reduction : I32EnumAttr<"Reduction", "loss reduction", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"sum", 1>,
    I32EnumAttrCase<"mean", 2>]> {
  let cppNamespace = "::mlir::gs";
  let genSpecializedAttr = 0;
}
def GS_ReductionAttr : EnumAttr<GS_Dialect, GS_Reduction, "reduction"> {
  let assemblyFormat = "`<` $value `>`";
}

def GS_ComparePredicate : I32EnumAttr<"ComparePredicate",
    "elementwise comparison", [
    I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
    I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
    I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::mlir::gs";
}

def GS_ParamKind : I32EnumAttr<"ParamKind", "role of a piece of training state", [
    I32EnumAttrCase<"trainable", 0>, I32EnumAttrCase<"buffer", 1>,
    I32EnumAttrCase<"state", 2>, I32EnumAttrCase<"copy", 3>]> {
  let cppNamespace = "::mlir::gs";
  let genSpecializedAttr = 0;
  let description = [{
    `trainable`: a model weight the optimizer updates. `buffer`: model state
    that is not trained but belongs to the model (batch-norm running
    statistics); exported with the weights. `state`: training-only state
    (optimizer moments, loss/gradient scale state, step counters);
    checkpointed but not exported. `copy`: a trainable weight in the
    precision the step reads it (FP16), written with it; derived, so
    neither checkpointed nor exported.
  }];
}
def GS_ParamKindAttr : EnumAttr<GS_Dialect, GS_ParamKind, "param_kind"> {
  let assemblyFormat = "`<` $value `>`";
}

def GS_ScaleModel : I32EnumAttr<"ScaleModel", "statistical model of a gradient", [
    I32EnumAttrCase<"half_normal", 0>, I32EnumAttrCase<"log_normal", 1>,
    I32EnumAttrCase<"exponent_histogram", 2>]> {
  let cppNamespace = "::mlir::gs";
  let genSpecializedAttr = 0;
}
def GS_ScaleModelAttr : EnumAttr<GS_Dialect, GS_ScaleModel, "scale_model"> {
  let assemblyFormat = "`<` $value `>`";
}

def GS_Rounding : I32EnumAttr<"Rounding", "power-of-two rounding of a scale", [
    I32EnumAttrCase<"up", 0>, I32EnumAttrCase<"down", 1>,
    I32EnumAttrCase<"none", 2>]> {
  let cppNamespace = "::mlir::gs";
  let genSpecializedAttr = 0;
}
def GS_RoundingAttr : EnumAttr<GS_Dialect, GS_Rounding, "rounding"> {
  let assemblyFormat = "`<` $value `>`";
}

def GS_CollectiveReduction : I32EnumAttr<"CollectiveReduction",
    "how gs.all_reduce combines the ranks' values", [
    I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"max", 1>]> {
  let cppNamespace = "::mlir::gs";
}

def GS_MomentumMode : I32EnumAttr<"MomentumMode", "momentum update rule", [
    I32EnumAttrCase<"standard", 0>, I32EnumAttrCase<"nesterov", 1>]> {
  let cppNamespace = "::mlir::gs";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Optimizer attributes
//===----------------------------------------------------------------------===//

class GS_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<GS_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

/// A double-precision hyperparameter, printed in shortest round-trip form.
class GS_F64Parameter<string desc, string default>
    : APFloatParameter<desc> {
  let parser = "::mlir::gs::parseF64Parameter($_parser)";
  let printer = "$_printer.printFloat($_self)";
  let defaultValue = "::llvm::APFloat(" # default # ")";
}

def GS_SGDAttr : GS_Attr<"SGD", "sgd",
    [DeclareAttrInterfaceMethods<GS_OptimizerAttrInterface>]> {
  let summary = "plain stochastic gradient descent";
  let description = [{
    `x_new = x - lr * (g + norm_coefficient * x)`. Keeps no state.

    ```mlir
    #gs.sgd<norm_coefficient = 1.0e-04>
    ```
  }];
  let parameters = (ins
    GS_F64Parameter<"L2 regularization coefficient", "0.0">:$norm_coefficient);
  let assemblyFormat = "`<` struct(params) `>`";
}

def GS_MomentumAttr : GS_Attr<"Momentum", "momentum",
    [DeclareAttrInterfaceMethods<GS_OptimizerAttrInterface>]> {
  let summary = "SGD with momentum (ONNX Momentum, standard or Nesterov)";
  let description = [{
    ONNX `ai.onnx.preview.training.Momentum`: with
    `g' = g + norm_coefficient * x`, `v_new = alpha * v + beta * g'` (at
    step 0 the gradient coefficient is 1 instead of `beta`); standard: `x_new = x - lr * v_new`; Nesterov:
    `x_new = x - lr * (g' + alpha * v_new)`. With `beta = 1` this is
    PyTorch's `SGD(momentum=alpha, dampening=0)`. State: `velocity`.

    ```mlir
    #gs.momentum<alpha = 9.0e-01, beta = 1.0, mode = nesterov>
    ```
  }];
  let parameters = (ins
    GS_F64Parameter<"decay of the accumulated velocity", "0.9">:$alpha,
    GS_F64Parameter<"coefficient of the gradient", "1.0">:$beta,
    GS_F64Parameter<"L2 regularization coefficient", "0.0">:$norm_coefficient,
    DefaultValuedParameter<"::mlir::gs::MomentumMode",
        "::mlir::gs::MomentumMode::standard", "update rule">:$mode);
  let assemblyFormat = "`<` struct(params) `>`";
}

def GS_AdagradAttr : GS_Attr<"Adagrad", "adagrad",
    [DeclareAttrInterfaceMethods<GS_OptimizerAttrInterface>]> {
  let summary = "Adagrad (ONNX Adagrad)";
  let description = [{
    ONNX `ai.onnx.preview.training.Adagrad`: `r = lr / (1 + T *
    decay_factor)`, `g' = g + norm_coefficient * x`, `h_new = h + g' * g'`,
    `x_new = x - r * g' / (sqrt(h_new) + epsilon)`. State: `accumulator`.

    ```mlir
    #gs.adagrad<decay_factor = 0.1, epsilon = 1.0e-06>
    ```
  }];
  let parameters = (ins
    GS_F64Parameter<"learning-rate decay per step", "0.0">:$decay_factor,
    GS_F64Parameter<"denominator guard", "0.0">:$epsilon,
    GS_F64Parameter<"L2 regularization coefficient", "0.0">:$norm_coefficient);
  let assemblyFormat = "`<` struct(params) `>`";
}

def GS_AdamAttr : GS_Attr<"Adam", "adam",
    [DeclareAttrInterfaceMethods<GS_OptimizerAttrInterface>]> {
  let summary = "Adam (ONNX Adam)";
  let description = [{
    ONNX `ai.onnx.preview.training.Adam`: `g' = g + norm_coefficient * x`,
    `v_new = alpha * v + (1 - alpha) * g'`,
    `h_new = beta * h + (1 - beta) * g' * g'`, and with step `T > 0`
    `r = lr * sqrt(1 - beta^T) / (1 - alpha^T)` (at `T = 0`, `r = lr`),
    `x_new = x - r * v_new / (sqrt(h_new) + epsilon)`, finally
    `x_new -= norm_coefficient_post * x_new`. State: `moment1`, `moment2`.

    ```mlir
    #gs.adam<alpha = 9.0e-01, beta = 9.99e-01, epsilon = 1.0e-08>
    ```
  }];
  let parameters = (ins
    GS_F64Parameter<"decay of the first moment", "0.9">:$alpha,
    GS_F64Parameter<"decay of the second moment", "0.999">:$beta,
    GS_F64Parameter<"denominator guard", "0.0">:$epsilon,
    GS_F64Parameter<"L2 regularization coefficient", "0.0">:$norm_coefficient,
    GS_F64Parameter<"weight decay after the update", "0.0">:$norm_coefficient_post);
  let assemblyFormat = "`<` struct(params) `>`";
}

#endif // GS_DIALECT_GS_IR_GSATTRS_TD
