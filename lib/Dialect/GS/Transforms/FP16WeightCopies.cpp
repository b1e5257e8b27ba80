//===- FP16WeightCopies.cpp - FP16 weights the update writes --*- C++ -*-===//
//
// A mixed-precision step casts each FP32 master weight to FP16 in its
// forward pass. This pass keeps that FP16 weight as a parameter of its
// own (gs.param copy), which the casts read and which every write of the
// weight writes again: the rounding moves into the update.
//
//===----------------------------------------------------------------------===//

#include "gs/Dialect/GS/IR/GSOps.h"
#include "gs/Dialect/GS/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::gs {
#define GEN_PASS_DEF_FP16WEIGHTCOPIES
#include "gs/Dialect/GS/Transforms/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;
using namespace mlir::gs;

static APFloat roundToHalf(APFloat value) {
  bool losesInfo;
  value.convert(APFloat::IEEEhalf(), APFloat::rmNearestTiesToEven, &losesInfo);
  return value;
}

/// `value` (FP32) rounded to `type` (FP16) to nearest even, or null where
/// its attribute kind holds no data this pass reads.
static ElementsAttr roundInitialValue(ElementsAttr value, RankedTensorType type,
                                      StringRef blobName) {
  if (auto dense = dyn_cast<DenseFPElementsAttr>(value)) {
    if (dense.isSplat())
      return DenseElementsAttr::get(
          type, roundToHalf(dense.getSplatValue<APFloat>()));
    SmallVector<APFloat> rounded;
    rounded.reserve(dense.getNumElements());
    for (APFloat element : dense.getValues<APFloat>())
      rounded.push_back(roundToHalf(element));
    return DenseElementsAttr::get(type, rounded);
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(value);
  if (!resource)
    return {};
  AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  int64_t count = type.getNumElements();
  if (!blob ||
      blob->getData().size() != static_cast<size_t>(count) * sizeof(float) ||
      blob->getDataAlignment() < alignof(float))
    return {};
  ArrayRef<float> floats(
      reinterpret_cast<const float *>(blob->getData().data()), count);
  SmallVector<uint16_t> halves;
  halves.reserve(count);
  for (float element : floats)
    halves.push_back(static_cast<uint16_t>(
        roundToHalf(APFloat(element)).bitcastToAPInt().getZExtValue()));
  return DenseResourceElementsAttr::get(
      type, blobName,
      HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef(halves)));
}

/// The trainable FP32 weight `cast` rounds to FP16, read straight before.
static ParamOp castWeight(CastOp cast, SymbolTable &symbols) {
  auto read = cast.getInput().getDefiningOp<ParamReadOp>();
  if (!read || !cast.getType().getElementType().isF16())
    return {};
  auto param = symbols.lookup<ParamOp>(read.getParam());
  if (!param || !param.isTrainable() ||
      !param.getType().getElementType().isF32())
    return {};
  return param;
}

/// The parameter `op` writes, if it is a write.
static std::optional<StringRef> writtenParam(Operation *op) {
  if (auto update = dyn_cast<UpdateOp>(op))
    return update.getParam();
  if (auto write = dyn_cast<ParamWriteOp>(op))
    return write.getParam();
  return std::nullopt;
}

namespace {
struct FP16WeightCopiesPass
    : gs::impl::FP16WeightCopiesBase<FP16WeightCopiesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);

    // The casts that may read a copy: those before any write of their
    // weight in their function. And every write of each parameter.
    llvm::MapVector<ParamOp, SmallVector<CastOp>> casts;
    llvm::StringMap<SmallVector<Operation *>> writes;
    module.walk([&](Operation *op) {
      if (std::optional<StringRef> name = writtenParam(op))
        writes[*name].push_back(op);
    });
    for (auto function : module.getOps<func::FuncOp>()) {
      llvm::StringSet<> written;
      function.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (std::optional<StringRef> name = writtenParam(op))
          written.insert(*name);
        else if (auto cast = dyn_cast<CastOp>(op))
          if (ParamOp weight = castWeight(cast, symbols))
            if (!written.contains(weight.getSymName()))
              casts[weight].push_back(cast);
      });
    }

    for (auto &[weight, weightCasts] : casts) {
      RankedTensorType type =
          weight.getType().clone(Float16Type::get(&getContext()));
      std::string name = (weight.getSymName() + ".fp16").str();
      ElementsAttr initial =
          roundInitialValue(weight.getInitialValue(), type, name);
      if (!initial)
        continue;
      OpBuilder b(&getContext());
      b.setInsertionPointAfter(weight);
      auto copy =
          ParamOp::create(b, weight.getLoc(), name, ParamKind::copy, initial,
                          FlatSymbolRefAttr::get(weight.getSymNameAttr()));
      symbols.insert(copy);
      auto copyName = FlatSymbolRefAttr::get(copy.getSymNameAttr());

      for (CastOp cast : weightCasts) {
        Operation *read = cast.getInput().getDefiningOp();
        b.setInsertionPoint(cast);
        cast.replaceAllUsesWith(
            ParamReadOp::create(b, cast.getLoc(), type, copyName).getResult());
        cast.erase();
        if (read->use_empty())
          read->erase();
      }

      // Each write of the weight writes its rounding to the copy.
      for (Operation *write : writes.lookup(weight.getSymName())) {
        b.setInsertionPointAfter(write);
        Location loc = write->getLoc();
        Value value = isa<ParamWriteOp>(write)
                          ? cast<ParamWriteOp>(write).getValue()
                          : ParamReadOp::create(
                                b, loc, weight.getType(),
                                FlatSymbolRefAttr::get(weight.getSymNameAttr()))
                                .getResult();
        ParamWriteOp::create(b, loc, CastOp::create(b, loc, type, value),
                             copyName);
      }
    }
  }
};
} // namespace
