//===- GSTrainingOps.td - Training structure ---------------*- tablegen -*-===//
//
// Trainable state, the backward region, optimizer updates and the training
// configuration.
//
//===----------------------------------------------------------------------===//

#ifndef GS_DIALECT_GS_IR_GSTRAININGOPS_TD
#define GS_DIALECT_GS_IR_GSTRAININGOPS_TD

/// Parameters live outside the SSA graph; reads and writes are effects on
/// this resource so that nothing reorders a read across an update.
def GS_ParamResource : Resource<"::mlir::gs::ParamResource">;

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

def GS_ParamOp : GS_Op<"param", [Symbol, HasParent<"::mlir::ModuleOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a named piece of training state with its initial value";
  let description = [{
    Declares a tensor that lives across training steps: a model weight
    (`trainable`), a model buffer such as a batch-norm running statistic
    (`buffer`), or training-only state such as an optimizer moment or a
    gradient-scale cache (`state`). Large initial values are
    `dense_resource` blobs, kept out of the context's uniqued attributes.

    A `copy` holds the trainable weight `of` names, rounded to its
    (narrower) element type to nearest even: the FP16 weight a
    mixed-precision step reads. What writes the weight writes the copy
    right after it (gs-fp16-weight-copies); the runtime derives it again
    wherever the host writes the weight, so checkpoints and exports leave
    it out.

    ```mlir
    gs.param trainable @fc1.weight = dense_resource<fc1_weight> : tensor<256x784xf32>
    gs.param state @fc1.weight.velocity = dense<0.0> : tensor<256x784xf32>
    gs.param copy @fc1.weight.fp16 of @fc1.weight = dense_resource<fc1_weight_fp16> : tensor<256x784xf16>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, GS_ParamKindAttr:$kind,
                   ElementsAttr:$initial_value,
                   OptionalAttr<FlatSymbolRefAttr>:$source);
  let assemblyFormat = [{
    custom<ParamKind>($kind) $sym_name (`of` $source^)? `=` $initial_value
    attr-dict
  }];
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$name, "::mlir::gs::ParamKind":$kind,
                   "::mlir::ElementsAttr":$initialValue), [{
      build($_builder, $_state, name, kind, initialValue,
            /*source=*/::mlir::FlatSymbolRefAttr());
    }]>
  ];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The tensor type of the state.
    ::mlir::RankedTensorType getType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getInitialValue().getType());
    }
    bool isTrainable() { return getKind() == ::mlir::gs::ParamKind::trainable; }
  }];
}

def GS_ParamReadOp : GS_Op<"param.read", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "read the current value of a parameter";
  let description = [{
    ```mlir
    %w = gs.param.read @fc1.weight : tensor<256x784xf32>
    ```
  }];
  let arguments = (ins Arg<FlatSymbolRefAttr, "the parameter",
                       [MemRead<GS_ParamResource>]>:$param);
  let results = (outs GS_Tensor:$result);
  let assemblyFormat = "$param attr-dict `:` type($result)";
}

def GS_ParamWriteOp : GS_Op<"param.write", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "overwrite a parameter";
  let description = [{
    Used for state the graph itself updates, such as batch-norm running
    statistics; optimizer updates use `gs.update`.

    ```mlir
    gs.param.write %new_mean, @bn1.running_mean : tensor<16xf32>
    ```
  }];
  let arguments = (ins GS_Tensor:$value,
                   Arg<FlatSymbolRefAttr, "the parameter",
                       [MemWrite<GS_ParamResource>]>:$param);
  let assemblyFormat = "$value `,` $param attr-dict `:` type($value)";
}

//===----------------------------------------------------------------------===//
// Training configuration
//===----------------------------------------------------------------------===//

def GS_TrainingOp : GS_Op<"training", [HasParent<"::mlir::ModuleOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "what to train: the forward function, its loss, the optimizer";
  let description = [{
    Names the forward function, which of its results is the loss (a float
    scalar), the optimizer applied to every `trainable` parameter and the
    initial learning rate. `gs-train-step` turns this into a train-step
    function, whose gradient request `gs-autodiff` fills.

    ```mlir
    gs.training @forward {loss = 0 : i64, optimizer = #gs.momentum<alpha = 9.000000e-01>, learning_rate = 1.000000e-01 : f32}
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$function,
                   DefaultValuedAttr<I64Attr, "0">:$loss,
                   GS_OptimizerAttrInterface:$optimizer,
                   F32Attr:$learning_rate);
  let assemblyFormat = "$function attr-dict";
}

//===----------------------------------------------------------------------===//
// Backward region
//===----------------------------------------------------------------------===//

def GS_BackwardOp : GS_Op<"backward", [RecursiveMemoryEffects,
    InferTypeOpAdaptor, AttrSizedOperandSegments,
    OptionalTypesMatchWith<"the seed has the type of `of`", "of", "seed",
                           "$_self">,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>]> {
  let summary = "gradients of a value with respect to other values";
  let description = [{
    Results are the gradients of `sum(seed * of)` with respect to each
    `wrt` value, with the `wrt` types: the vector-Jacobian product of the
    `seed`, which has the type of `of` and is all ones when absent (the
    gradient of `sum(of)`). An op with an empty region is a request (the
    ONNX `Gradient` operator imports to one); `gs-autodiff` fills the
    region with the adjoint computation: one block whose argument is the
    seed, terminated by `gs.yield`. Every gradient computation lives in
    such a region, which is where the gradient-scaling pass looks for
    casts, GEMMs and branches. It is built once; the passes after
    `gs-autodiff` transform it (loss scaling only sets the seed).

    ```mlir
    %g:2 = gs.backward %loss wrt %w1, %w2 : tensor<f32>, tensor<64x32xf32>, tensor<10x64xf32> {
    ^bb0(%seed: tensor<f32>):
      ...
      gs.yield %g1, %g2 : tensor<64x32xf32>, tensor<10x64xf32>
    }
    %h = gs.backward %loss wrt %w1 seed %s : tensor<f32>, tensor<64x32xf32>
    ```
  }];
  let arguments = (ins GS_FloatTensor:$of, Variadic<GS_FloatTensor>:$wrt,
                       Optional<GS_FloatTensor>:$seed);
  let results = (outs Variadic<GS_FloatTensor>:$gradients);
  let regions = (region MaxSizedRegion<1>:$body);
  let assemblyFormat = [{
    $of `wrt` $wrt (`seed` $seed^)? attr-dict `:` type($of) `,` type($wrt)
    ($body^)?
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$of, "::mlir::ValueRange":$wrt), [{
      build($_builder, $_state, of, wrt, /*seed=*/::mlir::Value());
    }]>,
  ];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// True once autodiff has built the adjoint computation.
    bool isComputed() { return !getBody().empty(); }
    /// The seed inside a computed region: the entry block's argument.
    ::mlir::BlockArgument getSeedArgument() {
      return getBody().front().getArgument(0);
    }
  }];
  let hasVerifier = 1;
}

def GS_YieldOp : GS_Op<"yield", [Pure, Terminator, ReturnLike,
    ParentOneOf<["::mlir::gs::BackwardOp",
                 "::mlir::gs::ScaledContractionOp"]>]> {
  let summary = "terminates a gs region with its values";
  let description = [{
    The gradients of a gs.backward region; the product of a
    gs.scaled_contraction.

    ```mlir
    gs.yield %g1, %g2 : tensor<64x32xf32>, tensor<10x64xf32>
    ```
  }];
  let arguments = (ins Variadic<GS_FloatTensor>:$gradients);
  let assemblyFormat = "($gradients^ `:` type($gradients))? attr-dict";
}

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

def GS_UpdateOp : GS_Op<"update", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "apply an optimizer step to a trainable parameter";
  let description = [{
    Reads `param` and its optimizer `state` parameters, applies the
    optimizer's rule with `gradient`, the learning rate and the step
    counter (0 on the first step), and writes them back. The state
    parameters are `state` kind, have the parameter's type, and number as
    many as the optimizer keeps.

    ```mlir
    gs.update @fc1.weight, %g, lr %lr, step %t state [@fc1.weight.velocity] {optimizer = #gs.momentum<>} : tensor<256x784xf32>
    ```
  }];
  let arguments = (ins
    Arg<FlatSymbolRefAttr, "the parameter",
        [MemRead<GS_ParamResource>, MemWrite<GS_ParamResource>]>:$param,
    GS_FloatTensor:$gradient, F32:$learning_rate, I64:$step,
    OptionalAttr<FlatSymbolRefArrayAttr>:$state,
    GS_OptimizerAttrInterface:$optimizer);
  let assemblyFormat = [{
    $param `,` $gradient `,` `lr` $learning_rate `,` `step` $step
    (`state` $state^)? attr-dict `:` type($gradient)
  }];
}

def GS_OptimizerStepOp : GS_Op<"optimizer_step", [Pure, InferTypeOpAdaptor,
    AllTypesMatch<["param", "gradient"]>]> {
  let summary = "one optimizer step as a pure function (ONNX training ops)";
  let description = [{
    The value semantics of ONNX's `Momentum`, `Adagrad` and `Adam` for one
    tensor: inputs in ONNX order (learning rate, step, parameter, gradient,
    state...), results the new parameter followed by the new state.
    `gs.update` is defined as reading, applying this, and writing back.

    ```mlir
    %x1, %v1 = gs.optimizer_step %r, %t, %x, %g, %v {optimizer = #gs.momentum<mode = nesterov>} : tensor<2xf32>, tensor<2xf32>
    ```
  }];
  let arguments = (ins F32:$learning_rate, I64:$step,
                   GS_FloatTensor:$param, GS_FloatTensor:$gradient,
                   Variadic<GS_FloatTensor>:$state,
                   GS_OptimizerAttrInterface:$optimizer);
  let results = (outs GS_FloatTensor:$new_param,
                  Variadic<GS_FloatTensor>:$new_state);
  let assemblyFormat = [{
    $learning_rate `,` $step `,` $param `,` $gradient (`,` $state^)? attr-dict
    `:` type($param) (`,` type($state)^)?
  }];
  let hasVerifier = 1;
}

#endif // GS_DIALECT_GS_IR_GSTRAININGOPS_TD
