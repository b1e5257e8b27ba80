//===- TrainingOps.cpp - Parameters, backward, updates ---------*- C++ -*-===//

#include "OpUtils.h"
#include "gs/Dialect/GS/IR/GSOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::gs;

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

LogicalResult ParamOp::verify() {
  auto type = dyn_cast<RankedTensorType>(getInitialValue().getType());
  if (!type || !type.hasStaticShape())
    return emitOpError("expects a statically shaped tensor initial value, got ")
           << getInitialValue().getType();
  if (isTrainable() && !isa<Float16Type, Float32Type>(type.getElementType()))
    return emitOpError("trainable parameters must be f16 or f32, got ")
           << type.getElementType();
  if ((getKind() == ParamKind::copy) != static_cast<bool>(getSourceAttr()))
    return emitOpError("names the weight it copies ('of') if and only if it "
                       "is a copy");
  return success();
}

LogicalResult ParamOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  if (!getSourceAttr())
    return success();
  auto source =
      symbolTable.lookupNearestSymbolFrom<ParamOp>(*this, getSourceAttr());
  if (!source || !source.isTrainable())
    return emitOpError("copies ")
           << getSourceAttr() << ", which is not a trainable gs.param";
  RankedTensorType type = getType(), sourceType = source.getType();
  if (type.getShape() != sourceType.getShape() ||
      !type.getElementType().isF16() || !sourceType.getElementType().isF32())
    return emitOpError("must be the FP16 copy of an FP32 weight of its "
                       "shape, got ")
           << type << " for " << sourceType;
  return success();
}

/// Looks up the gs.param `name` refers to, or reports why it can't.
static FailureOr<ParamOp> lookupParam(Operation *user,
                                      SymbolTableCollection &symbolTable,
                                      FlatSymbolRefAttr name) {
  auto param = symbolTable.lookupNearestSymbolFrom<ParamOp>(user, name);
  if (!param)
    return user->emitOpError("refers to ")
           << name << ", which is not a gs.param";
  return param;
}

/// Checks that a value moved in or out of a parameter has its type.
static LogicalResult checkParamType(Operation *user, ParamOp param, Type type) {
  if (param.getType() != type)
    return user->emitOpError("type ")
           << type << " differs from the type " << param.getType() << " of @"
           << param.getSymName();
  return success();
}

LogicalResult
ParamReadOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<ParamOp> param = lookupParam(*this, symbolTable, getParamAttr());
  if (failed(param))
    return failure();
  return checkParamType(*this, *param, getType());
}

LogicalResult
ParamWriteOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<ParamOp> param = lookupParam(*this, symbolTable, getParamAttr());
  if (failed(param))
    return failure();
  return checkParamType(*this, *param, getValue().getType());
}

//===----------------------------------------------------------------------===//
// TrainingOp
//===----------------------------------------------------------------------===//

LogicalResult TrainingOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto function = symbolTable.lookupNearestSymbolFrom<func::FuncOp>(
      *this, getFunctionAttr());
  if (!function)
    return emitOpError("refers to ")
           << getFunctionAttr() << ", which is not a func.func";
  int64_t numResults = function.getFunctionType().getNumResults();
  int64_t loss = getLossAttr().getInt();
  if (loss < 0 || loss >= numResults)
    return emitOpError("loss index ")
           << loss << " is out of range for " << getFunctionAttr() << " with "
           << numResults << " results";
  Type lossType = function.getFunctionType().getResult(loss);
  auto lossTensor = dyn_cast<RankedTensorType>(lossType);
  if (!lossTensor || lossTensor.getRank() != 0 ||
      !isa<FloatType>(lossTensor.getElementType()))
    return emitOpError("loss must be a float scalar tensor, got ") << lossType;
  if (!(getLearningRate().convertToDouble() > 0.0))
    return emitOpError("learning rate must be positive");
  return success();
}

//===----------------------------------------------------------------------===//
// BackwardOp
//===----------------------------------------------------------------------===//

LogicalResult BackwardOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location>,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  llvm::append_range(types, adaptor.getWrt().getTypes());
  return success();
}

LogicalResult BackwardOp::verify() {
  if (getWrt().empty())
    return emitOpError("expects at least one value to differentiate against");
  return success();
}

void BackwardOp::getAsmBlockArgumentNames(Region &region,
                                          OpAsmSetValueNameFn setNameFn) {
  if (!region.empty() && region.getNumArguments() == 1)
    setNameFn(region.getArgument(0), "seed");
}

LogicalResult BackwardOp::verifyRegions() {
  if (!isComputed())
    return success();
  Block &body = getBody().front();
  if (body.getNumArguments() != 1 ||
      body.getArgument(0).getType() != getOf().getType())
    return emitOpError("expects its region to take one argument, the seed, "
                       "of type ")
           << getOf().getType();
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError("expects its region to end in gs.yield");
  if (yield.getGradients().getTypes() != getResultTypes())
    return emitOpError("yields ")
           << yield.getGradients().size()
           << " gradients whose types differ from the results' types";
  return success();
}

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

/// Checks that an update carries as many state tensors as its optimizer
/// keeps.
static LogicalResult
checkStateCount(Operation *op, OptimizerAttrInterface optimizer, size_t given) {
  unsigned expected = optimizer.getNumStateTensors();
  if (given != expected)
    return op->emitOpError("optimizer keeps ")
           << expected << " state tensors per parameter, but " << given
           << " are given";
  return success();
}

LogicalResult UpdateOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<ParamOp> param = lookupParam(*this, symbolTable, getParamAttr());
  if (failed(param))
    return failure();
  if (!param->isTrainable())
    return emitOpError("updates @")
           << param->getSymName() << ", which is not trainable";
  if (failed(checkParamType(*this, *param, getGradient().getType())))
    return failure();
  ArrayAttr stateNames = getStateAttr() ? getStateAttr() : ArrayAttr();
  size_t numState = stateNames ? stateNames.size() : 0;
  if (failed(checkStateCount(*this, getOptimizer(), numState)))
    return failure();
  if (!stateNames)
    return success();
  for (auto stateName : stateNames.getAsRange<FlatSymbolRefAttr>()) {
    FailureOr<ParamOp> state = lookupParam(*this, symbolTable, stateName);
    if (failed(state))
      return failure();
    if (state->getKind() != ParamKind::state)
      return emitOpError("optimizer state @")
             << state->getSymName() << " must be a 'state' parameter";
    if (failed(checkParamType(*this, *state, getGradient().getType())))
      return failure();
  }
  return success();
}

LogicalResult OptimizerStepOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location>,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  types.push_back(adaptor.getParam().getType());
  llvm::append_range(types, adaptor.getState().getTypes());
  return success();
}

LogicalResult OptimizerStepOp::verify() {
  if (failed(checkStateCount(*this, getOptimizer(), getState().size())))
    return failure();
  for (Value state : getState())
    if (state.getType() != getParam().getType())
      return emitOpError("expects optimizer state of the parameter's type ")
             << getParam().getType() << ", got " << state.getType();
  return success();
}
