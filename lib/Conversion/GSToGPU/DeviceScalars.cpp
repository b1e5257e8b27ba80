//===- DeviceScalars.cpp - A step's scalar code onto tensors ----*- C++ -*-===//
//
// A step lowered to linalg still computes some scalars on the host from
// values its kernels produce: the statistics records of the telemetry, the
// all-finite flag and the skip decision it guards the update with, the
// step counters. On a GPU every such scalar is a read of device memory
// that waits for the device. This pass rewrites that code into linalg on
// tensors, which gs-linalg-to-gpu puts in kernels:
//
// - the skip guard (`scf.if %finite { ... gs.param.write ... }`) becomes
//   unconditional code whose writes store `select(%finite, new, old)`
//   (an FP16 weight copy: the rounding of its weight's select);
// - each scalar op on a value read from a tensor becomes a 0-d
//   linalg.generic, its result read back with `tensor.extract` (which the
//   next consumer's kernel reads on the device);
// - `tensor.from_elements` of such scalars becomes a generic that picks
//   each element by index.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/GSToGPU/KernelEntry.h"
#include "gs/Conversion/Passes.h"
#include "gs/Dialect/GS/IR/GSOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::gs {
#define GEN_PASS_DEF_DEVICESCALARS
#include "gs/Conversion/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;
using namespace mlir::gs;

namespace {
/// The 0-d tensor `value` was read from, if it is `tensor.extract %t[]`.
Value zeroRankSource(Value value) {
  auto extract = value.getDefiningOp<tensor::ExtractOp>();
  if (!extract || extract.getTensor().getType().getRank() != 0)
    return nullptr;
  return extract.getTensor();
}

/// Whether `value` was read from a tensor (on a GPU, from device memory);
/// the scalars this pass rewrites are read back from their tensors, so
/// this holds for them too.
bool readFromTensor(Value value) {
  return value.getDefiningOp<tensor::ExtractOp>() != nullptr;
}

/// A linalg.generic of parallel loops over `resultType` computing its one
/// result: those of `scalars` read from 0-d tensors come in as those
/// tensors, broadcast to every point; the others are used from above.
/// `body` builds the value at a point, given the mapping of the scalars
/// to their values in the body.
Value buildScalarGeneric(OpBuilder &b, Location loc,
                         RankedTensorType resultType, ArrayRef<Value> scalars,
                         function_ref<Value(OpBuilder &, IRMapping &)> body) {
  int64_t rank = resultType.getRank();
  MLIRContext *context = b.getContext();
  SmallVector<Value> inputs, sourced;
  for (Value scalar : scalars)
    if (Value source = zeroRankSource(scalar);
        source && !llvm::is_contained(sourced, scalar)) {
      inputs.push_back(source);
      sourced.push_back(scalar);
    }
  SmallVector<AffineMap> maps(inputs.size(),
                              AffineMap::get(rank, 0, {}, context));
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, context));
  Value init = tensor::EmptyOp::create(b, loc, resultType.getShape(),
                                       resultType.getElementType());
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nested, Location, ValueRange arguments) {
        IRMapping mapping;
        for (auto [scalar, argument] : llvm::zip(sourced, arguments))
          mapping.map(scalar, argument);
        Value result = body(nested, mapping);
        linalg::YieldOp::create(nested, loc, result);
      });
  return generic.getResult(0);
}

/// A scalar op on values read from tensors as a 0-d generic; its uses read
/// the result back.
void tensorizeScalarOp(Operation *op) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  auto type = RankedTensorType::get({}, op->getResult(0).getType());
  Value tensor =
      buildScalarGeneric(b, loc, type, llvm::to_vector(op->getOperands()),
                         [&](OpBuilder &nested, IRMapping &mapping) {
                           return nested.clone(*op, mapping)->getResult(0);
                         });
  Value scalar = tensor::ExtractOp::create(b, loc, tensor, ValueRange{});
  op->getResult(0).replaceAllUsesWith(scalar);
  op->erase();
}

/// `tensor.from_elements` of scalars read from tensors as a generic over
/// the elements that selects each by its index.
void tensorizeFromElements(tensor::FromElementsOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  RankedTensorType type = op.getType();
  SmallVector<Value> elements(op.getElements());
  Value tensor = buildScalarGeneric(
      b, loc, type, elements, [&](OpBuilder &nested, IRMapping &mapping) {
        auto lookup = [&](Value v) { return mapping.lookupOrDefault(v); };
        if (type.getRank() == 0)
          return lookup(elements.front());
        Value index = linalg::IndexOp::create(nested, loc, 0);
        Value picked = lookup(elements.back());
        for (int64_t i = static_cast<int64_t>(elements.size()) - 2; i >= 0;
             --i) {
          Value position = arith::ConstantIndexOp::create(nested, loc, i);
          Value here = arith::CmpIOp::create(
              nested, loc, arith::CmpIPredicate::eq, index, position);
          picked = arith::SelectOp::create(nested, loc, here,
                                           lookup(elements[i]), picked);
        }
        return picked;
      });
  op.getResult().replaceAllUsesWith(tensor);
  op.erase();
}

/// Whether the guard's block can run unconditionally: no effects but
/// parameter reads and writes, no results, no else branch.
bool isPredicable(scf::IfOp guard) {
  if (guard.getNumResults() != 0 || !guard.getElseRegion().empty())
    return false;
  for (Operation &op : guard.thenBlock()->without_terminator())
    if (!isa<ParamReadOp, ParamWriteOp>(op) && !isMemoryEffectFree(&op))
      return false;
  return true;
}

/// Whether `generic` rounds its one input elementwise (arith.truncf).
bool isElementwiseRounding(linalg::GenericOp generic) {
  Block *body = generic.getBody();
  return generic.getNumDpsInputs() == 1 && generic->getNumResults() == 1 &&
         generic.getNumParallelLoops() == generic.getNumLoops() &&
         llvm::all_of(generic.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isIdentity(); }) &&
         body->getOperations().size() == 2 &&
         isa<arith::TruncFOp>(body->front()) &&
         body->front().getOperand(0) == body->getArgument(0);
}

/// The write in `earlier` of the weight whose FP16 copy `write` writes,
/// where `write` stores the rounding of the value written there; else
/// null.
ParamWriteOp roundedWeightWrite(ParamWriteOp write,
                                ArrayRef<ParamWriteOp> earlier,
                                SymbolTableCollection &symbols) {
  auto copy =
      symbols.lookupNearestSymbolFrom<ParamOp>(write, write.getParamAttr());
  auto rounding = write.getValue().getDefiningOp<linalg::GenericOp>();
  if (!copy || copy.getKind() != ParamKind::copy || !rounding ||
      !isElementwiseRounding(rounding))
    return {};
  for (ParamWriteOp weight : earlier)
    if (weight.getParamAttr() == copy.getSourceAttr() &&
        weight.getValue() == rounding.getDpsInputs().front())
      return weight;
  return {};
}

/// Runs the guard's block unconditionally; each parameter it writes gets
/// `select(condition, new, old)`: old is the block's read of the parameter
/// before its write (the update's read), else a read before the block. An
/// FP16 weight copy written as the rounding of its weight's new value
/// (gs-fp16-weight-copies) gets the rounding of the weight's select
/// instead: on a skipped step that is the old copy, which a copy always
/// equals, so the old copy need not be read.
void predicateGuard(scf::IfOp guard, SymbolTableCollection &symbols) {
  Location loc = guard.getLoc();
  Value condition = guard.getCondition();
  OpBuilder b(guard);
  SmallVector<ParamWriteOp> writes;
  DenseMap<StringAttr, Value> old;
  DenseMap<Operation *, ParamWriteOp> roundedWeights;
  for (Operation &op : guard.thenBlock()->without_terminator()) {
    if (auto read = dyn_cast<ParamReadOp>(op)) {
      old.try_emplace(read.getParamAttr().getAttr(), read.getResult());
      continue;
    }
    auto write = dyn_cast<ParamWriteOp>(op);
    if (!write)
      continue;
    if (ParamWriteOp weight = roundedWeightWrite(write, writes, symbols))
      roundedWeights[write] = weight;
    writes.push_back(write);
    if (roundedWeights.contains(write))
      continue;
    Value &value = old[write.getParamAttr().getAttr()];
    if (!value)
      value = ParamReadOp::create(b, loc, write.getValue().getType(),
                                  write.getParamAttr());
  }
  for (Operation &op :
       llvm::make_early_inc_range(guard.thenBlock()->without_terminator()))
    op.moveBefore(guard);
  guard.erase();

  // The selects, each from the new value and the old: the rounding of a
  // weight's select is computed from the same two values, so that it joins
  // the weight's select (and the update) in one kernel.
  DenseMap<Operation *, std::pair<Value, Value>> selectedFrom;
  for (ParamWriteOp write : writes) {
    b.setInsertionPoint(write);
    Value updated = write.getValue();
    auto type = cast<RankedTensorType>(updated.getType());
    ParamWriteOp weight = roundedWeights.lookup(write);
    auto [fresh, kept] =
        weight ? selectedFrom.lookup(weight)
               : std::pair(updated, old[write.getParamAttr().getAttr()]);
    MLIRContext *context = b.getContext();
    AffineMap identity =
        AffineMap::getMultiDimIdentityMap(type.getRank(), context);
    Value init =
        tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
    SmallVector<utils::IteratorType> iterators(type.getRank(),
                                               utils::IteratorType::parallel);
    auto select = linalg::GenericOp::create(
        b, loc, type, ValueRange{fresh, kept}, ValueRange{init},
        SmallVector<AffineMap>(3, identity), iterators,
        [&](OpBuilder &nested, Location, ValueRange arguments) {
          Value value = arith::SelectOp::create(nested, loc, condition,
                                                arguments[0], arguments[1]);
          if (weight)
            value = arith::TruncFOp::create(nested, loc, type.getElementType(),
                                            value);
          linalg::YieldOp::create(nested, loc, value);
        });
    selectedFrom[write] = {fresh, kept};
    write.getValueMutable().assign(select.getResult(0));
  }
}

/// Whether `op` is scalar arithmetic (not on indices, not a constant).
bool isScalarArithmetic(Operation *op) {
  if (op->getNumResults() != 1 || op->getNumRegions() != 0 ||
      !isa_and_nonnull<arith::ArithDialect, math::MathDialect>(
          op->getDialect()) ||
      isa<arith::ConstantOp>(op) || !isMemoryEffectFree(op))
    return false;
  return op->getResult(0).getType().isIntOrFloat();
}

struct DeviceScalarsPass
    : mlir::gs::impl::DeviceScalarsBase<DeviceScalarsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Guards first: the code they held becomes straight-line host code.
    SmallVector<scf::IfOp> guards;
    module.walk([&](scf::IfOp guard) {
      if (isHostCode(guard) && isPredicable(guard))
        guards.push_back(guard);
    });
    SymbolTableCollection symbols;
    for (scf::IfOp guard : guards)
      predicateGuard(guard, symbols);

    // In program order: each rewritten scalar is read back from its
    // tensor, so that its users qualify in turn.
    SmallVector<Operation *> ops;
    module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isHostCode(op) &&
          (isScalarArithmetic(op) || isa<tensor::FromElementsOp>(op)))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (auto fromElements = dyn_cast<tensor::FromElementsOp>(op)) {
        if (llvm::any_of(fromElements.getElements(), readFromTensor))
          tensorizeFromElements(fromElements);
      } else if (llvm::any_of(op->getOperands(), readFromTensor)) {
        tensorizeScalarOp(op);
      }
    }
  }
};
} // namespace
