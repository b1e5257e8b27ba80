//===- ScalingUtils.cpp - Shared by the scaling passes ----------*- C++ -*-===//

#include "ScalingUtils.h"
#include "VJPUtils.h"

#include "gs/Support/Telemetry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::scaling_ir;
using vjp::isContraction;
using vjp::isHalf;
using vjp::typeOf;

llvm::DenseSet<Value> scaling_ir::gradientValues(Block &body, Value seed) {
  llvm::DenseSet<Value> grads = {seed};
  for (Operation &op : body)
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return grads.contains(v); }))
      grads.insert(op.result_begin(), op.result_end());
  return grads;
}

SmallVector<Operation *>
scaling_ir::gradientRoundings(Block &body, const llvm::DenseSet<Value> &grads) {
  SmallVector<Operation *> roundings;
  for (Operation &op : body) {
    if (auto cast = dyn_cast<CastOp>(op)) {
      if (grads.contains(cast.getInput()) &&
          typeOf(cast.getInput()).getElementType().isF32() &&
          isHalf(cast.getResult()))
        roundings.push_back(&op);
    } else if (isContraction(&op) && isHalf(op.getResult(0)) &&
               llvm::any_of(op.getOperands(),
                            [&](Value v) { return grads.contains(v); })) {
      roundings.push_back(&op);
    }
  }
  return roundings;
}

CastOp scaling_ir::exposeRounding(Operation *contraction) {
  Value result = contraction->getResult(0);
  RankedTensorType half = typeOf(result);
  SmallVector<OpOperand *> uses = llvm::map_to_vector(
      result.getUses(), [](OpOperand &use) { return &use; });
  result.setType(half.clone(Float32Type::get(contraction->getContext())));
  OpBuilder b(contraction->getContext());
  b.setInsertionPointAfter(contraction);
  auto cast = CastOp::create(b, contraction->getLoc(), half, result);
  for (OpOperand *use : uses)
    use->set(cast.getResult());
  return cast;
}

/// Where `loc` points, for people: a node name or file:line.
static std::string describe(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().getValue() + ":" + Twine(file.getLine())).str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location part : fused.getLocations())
      if (std::string text = describe(part); !text.empty())
        return text;
  return "";
}

/// A telemetry record of `numFields` f64s named `name`, NaN until written,
/// its gs.site attribute `site` and where `origin` points.
static FailureOr<ParamOp> createRecord(SymbolTable &symbols, Operation *anchor,
                                       const std::string &name,
                                       int64_t numFields, std::string site,
                                       Operation *origin) {
  OpBuilder b(anchor);
  auto type = RankedTensorType::get({numFields}, b.getF64Type());
  FailureOr<ParamOp> record = createState(
      symbols, anchor, name, type, b.getF64FloatAttr(NAN), "scaling telemetry");
  if (failed(record))
    return failure();
  if (std::string where = describe(origin->getLoc()); !where.empty())
    site += " at " + where;
  (*record)->setAttr("gs.site", b.getStringAttr(site));
  return record;
}

/// Writes `fields` (f64 scalars) into `record`.
static void writeRecord(OpBuilder &b, Location loc, ParamOp record,
                        ValueRange fields) {
  Value tensor =
      tensor::FromElementsOp::create(b, loc, record.getType(), fields);
  ParamWriteOp::create(b, loc, tensor, record.getSymName());
}

static Value widenToF64(OpBuilder &b, Location loc, Value value) {
  return arith::ExtFOp::create(b, loc, b.getF64Type(), value);
}

FailureOr<ParamOp> scaling_ir::createSiteRecord(SymbolTable &symbols,
                                                Operation *anchor,
                                                int64_t index,
                                                Operation *rounding) {
  std::string name = (telemetry::kSitePrefix + Twine(index)).str();
  std::string site =
      isa<CastOp>(rounding)
          ? "fT: FP32->FP16 cast of a gradient"
          : ("fG: FP16 result of " + rounding->getName().getStringRef() +
             " in the backward pass")
                .str();
  return createRecord(symbols, anchor, name, telemetry::NumRecordFields,
                      std::move(site), rounding);
}

void scaling_ir::writeSiteRecord(OpBuilder &b, Location loc, ParamOp record,
                                 Value alpha, Value beta, Value estimate,
                                 Value preCast) {
  Value nan;
  if (!estimate || !preCast)
    nan = arith::ConstantOp::create(b, loc, b.getF64FloatAttr(NAN));
  SmallVector<Value> fields;
  fields.push_back(widenToF64(b, loc, alpha));
  fields.push_back(widenToF64(b, loc, beta));
  fields.push_back(estimate ? estimate : nan);
  if (preCast) {
    Value counts = CastStatsOp::create(b, loc, preCast);
    for (int64_t i = 0; i < telemetry::NumCastCounts; ++i) {
      Value index = arith::ConstantIndexOp::create(b, loc, i);
      Value count = tensor::ExtractOp::create(b, loc, counts, index);
      fields.push_back(arith::SIToFPOp::create(b, loc, b.getF64Type(), count));
    }
  } else {
    fields.append(telemetry::NumCastCounts, nan);
  }
  writeRecord(b, loc, record, fields);
}

FailureOr<ParamOp> scaling_ir::createUnifyRecord(SymbolTable &symbols,
                                                 Operation *anchor,
                                                 int64_t index, Operation *op,
                                                 int64_t numParts) {
  std::string name = (telemetry::kUnifyPrefix + Twine(index)).str();
  std::string site = ("branch: " + Twine(numParts) + " gradients of " +
                      op->getName().getStringRef() + " brought to one scale")
                         .str();
  int64_t numFields = telemetry::unifyRecordFields(numParts);
  return createRecord(symbols, anchor, name, numFields, std::move(site), op);
}

void scaling_ir::writeUnifyRecord(OpBuilder &b, Location loc, ParamOp record,
                                  Value unified, ValueRange partScales,
                                  ValueRange factors) {
  SmallVector<Value> fields;
  fields.push_back(widenToF64(b, loc, unified));
  for (auto [scale, factor] : llvm::zip_equal(partScales, factors)) {
    fields.push_back(widenToF64(b, loc, scale));
    fields.push_back(widenToF64(b, loc, factor));
  }
  writeRecord(b, loc, record, fields);
}

Value scaling_ir::recordField(OpBuilder &b, Location loc, Value record,
                              int64_t field) {
  Value index = arith::ConstantIndexOp::create(b, loc, field);
  return tensor::ExtractOp::create(b, loc, record, index);
}

bool scaling_ir::guardUpdates(OpBuilder &b, BackwardOp backward, Value finite) {
  SmallVector<Operation *> guarded;
  for (Operation *op = backward->getNextNode(); op; op = op->getNextNode())
    if (isa<UpdateOp>(op) || (isa<ParamWriteOp>(op) &&
                              cast<ParamWriteOp>(op).getParam() == "gs.step"))
      guarded.push_back(op);
  if (guarded.empty())
    return false;
  b.setInsertionPoint(guarded.back());
  auto ifOp = scf::IfOp::create(b, backward.getLoc(), finite,
                                /*withElseRegion=*/false);
  for (Operation *op : guarded)
    op->moveBefore(ifOp.thenBlock()->getTerminator());
  b.setInsertionPointAfter(ifOp);
  return true;
}

FailureOr<ParamOp> scaling_ir::getOrCreateSkippedSteps(SymbolTable &symbols,
                                                       Operation *anchor) {
  return getOrCreateState(
      symbols, anchor, telemetry::kSkippedSteps,
      RankedTensorType::get({}, IntegerType::get(anchor->getContext(), 64)));
}

Value scaling_ir::readScalar(OpBuilder &b, Location loc, ParamOp param) {
  Value tensor =
      ParamReadOp::create(b, loc, param.getType(), param.getSymName());
  return tensor::ExtractOp::create(b, loc, tensor);
}

void scaling_ir::writeScalar(OpBuilder &b, Location loc, ParamOp param,
                             Value scalar) {
  Value tensor = tensor::FromElementsOp::create(b, loc, param.getType(),
                                                ValueRange{scalar});
  ParamWriteOp::create(b, loc, tensor, param.getSymName());
}

FailureOr<Value> scaling_ir::skipNonFiniteSteps(OpBuilder &b,
                                                BackwardOp backward,
                                                ValueRange gradients,
                                                SymbolTable &symbols,
                                                Operation *anchor) {
  Location loc = backward.getLoc();
  Value finite = AllFiniteOp::create(b, loc, gradients);
  if (!guardUpdates(b, backward, finite)) {
    finite.getDefiningOp()->erase();
    return Value();
  }
  FailureOr<ParamOp> skipped = getOrCreateSkippedSteps(symbols, anchor);
  if (failed(skipped))
    return failure();
  countSkippedStep(b, loc, *skipped, finite);
  return finite;
}

void scaling_ir::countSkippedStep(OpBuilder &b, Location loc, ParamOp counter,
                                  Value finite) {
  Value skips = readScalar(b, loc, counter);
  Value one = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(1));
  Value counted = arith::SelectOp::create(
      b, loc, finite, skips, arith::AddIOp::create(b, loc, skips, one));
  writeScalar(b, loc, counter, counted);
}
