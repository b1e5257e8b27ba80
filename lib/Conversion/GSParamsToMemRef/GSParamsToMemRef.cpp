//===- GSParamsToMemRef.cpp - gs.param state to memref globals -*- C++ -*-===//

#include "gs/Conversion/Passes.h"
#include "gs/Dialect/GS/IR/GSOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/CallInterfaces.h"

namespace mlir::gs {
#define GEN_PASS_DEF_CONVERTGSPARAMSTOMEMREF
#include "gs/Conversion/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;
using namespace mlir::gs;

/// gs.update is defined as: read the parameter and its optimizer state,
/// apply gs.optimizer_step, write them back.
static void expandUpdate(UpdateOp update, SymbolTable &symbols) {
  OpBuilder b(update);
  Location loc = update.getLoc();
  Type type = update.getGradient().getType();
  SmallVector<FlatSymbolRefAttr> state;
  if (ArrayAttr names = update.getStateAttr())
    llvm::append_range(state, names.getAsRange<FlatSymbolRefAttr>());
  Value param = ParamReadOp::create(b, loc, type, update.getParamAttr());
  SmallVector<Value> stateValues;
  for (FlatSymbolRefAttr name : state)
    stateValues.push_back(ParamReadOp::create(b, loc, type, name));
  SmallVector<Type> resultTypes(1 + state.size(), type);
  auto step = OptimizerStepOp::create(
      b, loc, resultTypes, update.getLearningRate(), update.getStep(), param,
      update.getGradient(), stateValues, update.getOptimizer());
  ParamWriteOp::create(b, loc, step.getNewParam(), update.getParamAttr());
  for (auto [value, name] : llvm::zip(step.getNewState(), state))
    ParamWriteOp::create(b, loc, value, name);
  update.erase();
}

/// Replaces `read` by the value written to its parameter earlier in its
/// block, where nothing between them may write the parameter (an update
/// followed by what reads the new value, such as its FP16 copy).
static void forwardWrittenValue(ParamReadOp read) {
  for (Operation *op = read->getPrevNode(); op; op = op->getPrevNode()) {
    if (auto write = dyn_cast<ParamWriteOp>(op)) {
      if (write.getParam() != read.getParam())
        continue;
      read.replaceAllUsesWith(write.getValue());
      read.erase();
      return;
    }
    // What may write parameters: nested regions, calls, updates.
    if (op->getNumRegions() != 0 || isa<CallOpInterface, UpdateOp>(op))
      return;
  }
}

namespace {
struct ConvertGSParamsToMemRefPass
    : mlir::gs::impl::ConvertGSParamsToMemRefBase<ConvertGSParamsToMemRefPass> {
  using ConvertGSParamsToMemRefBase::ConvertGSParamsToMemRefBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    module.walk([&](UpdateOp update) { expandUpdate(update, symbols); });
    SmallVector<ParamReadOp> reads;
    module.walk([&](ParamReadOp read) { reads.push_back(read); });
    for (ParamReadOp read : reads)
      forwardWrittenValue(read);

    // The training configuration has served autodiff; nothing executes it.
    for (TrainingOp training :
         llvm::make_early_inc_range(module.getOps<TrainingOp>()))
      training.erase();
    if (updatesOnly)
      return;

    OpBuilder b(&getContext());
    for (ParamOp param : llvm::make_early_inc_range(module.getOps<ParamOp>())) {
      RankedTensorType type = param.getType();
      b.setInsertionPoint(param);
      memref::GlobalOp::create(b, param.getLoc(), param.getSymNameAttr(),
                               b.getStringAttr("public"),
                               TypeAttr::get(MemRefType::get(
                                   type.getShape(), type.getElementType())),
                               param.getInitialValue(), /*constant=*/UnitAttr(),
                               b.getI64IntegerAttr(64));
      param.erase();
    }

    WalkResult result = module.walk([&](func::FuncOp function) {
      if (failed(lowerAccesses(function)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  /// Reads and writes of one function.
  LogicalResult lowerAccesses(func::FuncOp function) {
    // Which parameters the function writes, and its ops in order.
    llvm::DenseMap<Operation *, unsigned> order;
    llvm::StringMap<unsigned> lastWrite;
    unsigned position = 0;
    function.walk([&](Operation *op) {
      order[op] = position++;
      if (auto write = dyn_cast<ParamWriteOp>(op))
        lastWrite[write.getParam()] = order[op];
    });
    OpBuilder b(&getContext());
    auto global = [&](Location loc, FlatSymbolRefAttr name, Type tensorType) {
      auto type = cast<RankedTensorType>(tensorType);
      return memref::GetGlobalOp::create(
          b, loc, MemRefType::get(type.getShape(), type.getElementType()),
          name);
    };
    WalkResult result = function.walk([&](Operation *op) {
      if (auto read = dyn_cast<ParamReadOp>(op)) {
        b.setInsertionPoint(read);
        Location loc = read.getLoc();
        Value value = bufferization::ToTensorOp::create(
            b, loc, read.getType(),
            global(loc, read.getParamAttr(), read.getType()), b.getUnitAttr(),
            UnitAttr());
        // A later write to the parameter must not change what was read.
        auto it = lastWrite.find(read.getParam());
        if (it != lastWrite.end() && it->second > order[read])
          value = linalg::CopyOp::create(b, loc, ValueRange{value},
                                         ValueRange{tensor::EmptyOp::create(
                                             b, loc, read.getType().getShape(),
                                             read.getType().getElementType())})
                      ->getResult(0);
        read.replaceAllUsesWith(value);
        read.erase();
      } else if (auto write = dyn_cast<ParamWriteOp>(op)) {
        b.setInsertionPoint(write);
        Location loc = write.getLoc();
        bufferization::MaterializeInDestinationOp::create(
            b, loc, TypeRange(), write.getValue(),
            global(loc, write.getParamAttr(), write.getValue().getType()),
            /*restrict=*/false, /*writable=*/true);
        write.erase();
      }
      return WalkResult::advance();
    });
    return failure(result.wasInterrupted());
  }
};
} // namespace
