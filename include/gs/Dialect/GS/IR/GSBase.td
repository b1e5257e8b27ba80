//===- GSBase.td - GradScale dialect definition and constraints -*- tablegen -*-===//
//
// The `gs` dialect: ONNX-level tensor ops, training structure (parameters,
// the backward region, optimizer updates) and the gradient-scaling ops.
//
//===----------------------------------------------------------------------===//

#ifndef GS_DIALECT_GS_IR_GSBASE_TD
#define GS_DIALECT_GS_IR_GSBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def GS_Dialect : Dialect {
  let name = "gs";
  let cppNamespace = "::mlir::gs";
  let summary = "GradScale: training graphs with per-tensor gradient scaling";
  let description = [{
    The `gs` dialect models an ONNX training graph at tensor level. It holds

    * the forward operations of a model (linear algebra, elementwise,
      normalization, pooling, shape, reduction and loss operations) with
      value semantics on statically shaped tensors;
    * the training structure: trainable state as `gs.param` symbols, the
      `gs.backward` region that computes parameter gradients, `gs.update`
      applying an optimizer, and the `gs.training` configuration;
    * the gradient-scaling operations (`gs.grad_stats`, `gs.compute_scale`,
      `gs.rescale`, `gs.unscale`, `gs.unify_scales`) that give every
      gradient tensor its own power-of-two scale in mixed precision.

    Axis attributes are always normalized to non-negative values; the
    importer resolves ONNX's negative axes.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let extraClassDeclaration = [{
    void registerTypes();
    void registerAttributes();
  }];
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

/// FP16 and FP32 are what models train in; FP64 serves as a reference
/// precision (gradient checks against finite differences).
def GS_FloatElement : AnyTypeOf<[F16, F32, F64]>;

/// Integers are signless (two's complement, signed where it matters, as
/// ONNX's INT types) or unsigned (ONNX's UINT types): ops whose result
/// depends on the interpretation (division, ordering, widening) read it
/// from the type.
///
/// Any element type a gs tensor can hold:
def GS_Element : AnyTypeOf<[F16, F32, F64, I1, I8, I16, I32, I64, UI8, UI16,
                            UI32, UI64]>;

/// Statically shaped tensors: the dialect has no dynamic dimensions.
def GS_Tensor : StaticShapeTensorOf<[F16, F32, F64, I1, I8, I16, I32, I64,
                                     UI8, UI16, UI32, UI64]>;
def GS_FloatTensor : StaticShapeTensorOf<[F16, F32, F64]>;
def GS_NumericTensor : StaticShapeTensorOf<[F16, F32, F64, I8, I16, I32, I64,
                                            UI8, UI16, UI32, UI64]>;
def GS_IndexTensor : StaticShapeTensorOf<[I32, I64]>;
def GS_MaskTensor : StaticShapeTensorOf<[I1]>;
def GS_F32Scalar : 0DTensorOf<[F32]>;
def GS_I64Scalar : 0DTensorOf<[I64]>;

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

class GS_Op<string mnemonic, list<Trait> traits = []>
    : Op<GS_Dialect, mnemonic, traits>;

/// Elementwise unary math on float tensors.
class GS_UnaryOp<string mnemonic, list<Trait> traits = []>
    : GS_Op<mnemonic, !listconcat(traits,
          [Pure, SameOperandsAndResultType, ElementwiseMappable])> {
  let arguments = (ins GS_FloatTensor:$input);
  let results = (outs GS_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

/// Elementwise binary op with NumPy (multidirectional) broadcasting. The
/// result type is inferred; the operand types print once when equal.
class GS_BinaryOp<string mnemonic, Type operandType, list<Trait> traits = []>
    : GS_Op<mnemonic, !listconcat(traits,
          [Pure, SameOperandsAndResultElementType, InferTypeOpAdaptor])> {
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs operandType:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` custom<BinaryOperandTypes>(type($lhs), type($rhs))
  }];
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::mlir::gs::inferBroadcastResultType(
          loc, getOperationName(), adaptor.getLhs().getType(),
          adaptor.getRhs().getType(), types);
    }
    ::llvm::LogicalResult $cppClass::verify() {
      return ::mlir::gs::verifyByInference(*this);
    }
  }];
}

#endif // GS_DIALECT_GS_IR_GSBASE_TD
