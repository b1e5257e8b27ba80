//===- MixedPrecision.cpp - FP16 compute, FP32 master weights ---*- C++ -*-===//
//
// Puts the forward ops of each function with a gradient request (a train
// step, an ONNX Gradient) in mixed precision:
//   - GEMMs, matmuls and convolutions take FP16 operands (an FP32 master
//     weight gets an FP16 copy, one gs.cast per step) and produce FP16
//     activations, accumulating in FP32;
//   - elementwise, pooling, shape and dropout ops follow their operands:
//     FP16 when their float operands are FP16, constants or scalars; an op
//     that mixes FP16 with other FP32 values (a target, a parameter)
//     widens them to FP32, as autocast promotes: a mixed op never narrows,
//     so a model output compared with FP32 data stays FP32 up to its loss;
//   - batch and layer norm normalize an FP16 input with FP32 statistics,
//     scale and bias;
//   - softmax, log_softmax, the losses and reductions (and the `fp32-ops`)
//     run in FP32, their FP16 operands cast up.
// gs-autodiff then builds the backward region from these forward ops, so
// every precision boundary has its cast in both directions: the backward
// of the FP16->FP32 cast before the loss is the paper's fT cast (FP32->FP16
// of the loss gradient).
//
//===----------------------------------------------------------------------===//

#include "VJPUtils.h"

#include "gs/Dialect/GS/IR/GSOps.h"
#include "gs/Dialect/GS/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::gs {
#define GEN_PASS_DEF_MIXEDPRECISION
#include "gs/Dialect/GS/Transforms/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::vjp;

namespace {
/// What the policy does with an op's float operands.
enum class Placement {
  Half,      // cast to FP16: contractions
  Full,      // cast to FP32: losses, softmax, reductions, fp32-ops
  Follow,    // FP16 from FP16 operands and constants; mixed: FP32
  InputOnly, // normalization: only the normalized input follows
  Keep,      // untouched: casts, training structure
};

bool isFloatTensor(Value value) { return isDifferentiable(value); }

class Policy {
public:
  explicit Policy(ArrayRef<std::string> fp32Ops) {
    for (const std::string &name : fp32Ops)
      extraFullPrecision.insert(name);
  }

  Placement placementOf(Operation *op) const {
    if (!isa<GSDialect>(op->getDialect()) ||
        isa<CastOp, ConstantOp, ParamReadOp, ParamWriteOp, BackwardOp,
            UpdateOp>(op))
      return Placement::Keep;
    if (extraFullPrecision.contains(op->getName().getStringRef()))
      return Placement::Full;
    if (isa<GemmOp, MatMulOp, ConvOp, ConvTransposeOp>(op))
      return Placement::Half;
    if (isa<SoftmaxOp, LogSoftmaxOp, SoftmaxCrossEntropyOp, NLLLossOp,
            ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(op))
      return Placement::Full;
    if (isa<BatchNormOp, BatchNormInferenceOp, LayerNormOp>(op))
      return Placement::InputOnly;
    return Placement::Follow;
  }

private:
  llvm::StringSet<> extraFullPrecision;
};

/// `value` cast to `element` where it is a float tensor of another type.
Value castTo(OpBuilder &b, Location loc, Value value, Type element) {
  if (!isFloatTensor(value) || typeOf(value).getElementType() == element)
    return value;
  return CastOp::create(b, loc, typeOf(value).clone(element), value);
}

/// Recomputes the result types of `op` after its operands changed: by type
/// inference where the op has it, otherwise float results take the element
/// type of the first float operand (the ops that print their result type
/// keep their operand's element type).
LogicalResult retype(Operation *op) {
  if (auto infer = dyn_cast<InferTypeOpInterface>(op)) {
    SmallVector<Type> types;
    if (failed(infer.inferReturnTypes(
            op->getContext(), op->getLoc(), op->getOperands(),
            op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
            op->getRegions(), types)))
      return failure();
    for (auto [result, type] : llvm::zip(op->getResults(), types))
      result.setType(type);
    return success();
  }
  auto floatOperand = llvm::find_if(op->getOperands(), isFloatTensor);
  if (floatOperand == op->getOperands().end())
    return success();
  Type element = typeOf(*floatOperand).getElementType();
  for (Value result : op->getResults())
    if (isFloatTensor(result))
      result.setType(typeOf(result).clone(element));
  return success();
}

/// Applies the policy to the forward ops of `block` before `backward`.
LogicalResult convertForward(Block &block, BackwardOp backward,
                             const Policy &policy) {
  Type f16 = Float16Type::get(block.getParentOp()->getContext());
  Type f32 = Float32Type::get(block.getParentOp()->getContext());
  llvm::DenseMap<Value, Type> originalTypes;
  llvm::SmallPtrSet<Operation *, 32> converted;
  for (Operation &op :
       llvm::make_range(block.begin(), backward->getIterator())) {
    Placement placement = policy.placementOf(&op);
    if (placement == Placement::Keep)
      continue;
    OpBuilder b(&op);
    auto castOperands = [&](Type element, ArrayRef<unsigned> which) {
      for (unsigned i : which) {
        Value cast = castTo(b, op.getLoc(), op.getOperand(i), element);
        if (Operation *created = cast.getDefiningOp();
            created && cast != op.getOperand(i))
          converted.insert(created);
        op.setOperand(i, cast);
      }
    };
    SmallVector<unsigned> floats;
    for (auto [i, operand] : llvm::enumerate(op.getOperands()))
      if (isFloatTensor(operand) && !typeOf(operand).getElementType().isF64())
        floats.push_back(i);
    switch (placement) {
    case Placement::Half:
      castOperands(f16, floats);
      break;
    case Placement::Full:
      castOperands(f32, floats);
      break;
    case Placement::Follow: {
      auto half = [&](unsigned i) { return isHalf(op.getOperand(i)); };
      // Constants and scalars are weak, as 0-d tensors are in torch's
      // promotion: they take the FP16 operands' type.
      auto wide = [&](unsigned i) {
        Value operand = op.getOperand(i);
        return !isHalf(operand) && typeOf(operand).getRank() > 0 &&
               !matchPattern(operand, m_Constant());
      };
      if (llvm::any_of(floats, half))
        castOperands(llvm::any_of(floats, wide) ? f32 : f16, floats);
      break;
    }
    case Placement::InputOnly:
    case Placement::Keep:
      break;
    }
    for (Value result : op.getResults())
      originalTypes.try_emplace(result, result.getType());
    if (failed(retype(&op)))
      return op.emitOpError("has no valid type in mixed precision");
    converted.insert(&op);
  }

  // Uses outside the converted ops (returns, parameter writes, the
  // differentiated loss) see the types they saw before.
  for (auto &[value, type] : originalTypes) {
    if (value.getType() == type)
      continue;
    for (OpOperand &use : llvm::make_early_inc_range(value.getUses())) {
      if (converted.contains(use.getOwner()))
        continue;
      OpBuilder b(use.getOwner());
      use.set(castTo(b, value.getLoc(), value,
                     cast<RankedTensorType>(type).getElementType()));
    }
  }
  return success();
}

} // namespace

namespace {
struct MixedPrecisionPass : gs::impl::MixedPrecisionBase<MixedPrecisionPass> {
  using MixedPrecisionBase::MixedPrecisionBase;

  /// A misspelt name would keep nothing in FP32 without a word.
  LogicalResult checkFp32Ops() {
    for (const std::string &name : fp32Ops) {
      std::optional<RegisteredOperationName> op =
          RegisteredOperationName::lookup(name, &getContext());
      if (!op || !isa<GSDialect>(op->getDialect()))
        return emitError(getOperation()->getLoc())
               << "fp32-ops: '" << name << "' is not a gs operation";
    }
    return success();
  }

  void runOnOperation() override {
    if (failed(checkFp32Ops()))
      return signalPassFailure();
    Policy policy(fp32Ops);
    SmallVector<BackwardOp> backwards;
    getOperation().walk([&](BackwardOp op) { backwards.push_back(op); });
    for (BackwardOp backward : backwards) {
      if (backward.isComputed()) {
        backward.emitOpError(
            "is differentiated already: gs-mixed-precision changes the "
            "forward ops the backward region is built from, so it runs "
            "before gs-autodiff");
        return signalPassFailure();
      }
      if (failed(convertForward(*backward->getBlock(), backward, policy)))
        return signalPassFailure();
    }
  }
};
} // namespace
