//===- TrainingState.cpp - State parameters the passes create ---*- C++ -*-===//

#include "TrainingState.h"

using namespace mlir;
using namespace mlir::gs;

FailureOr<ParamOp> mlir::gs::createState(SymbolTable &symbols,
                                         Operation *anchor, StringRef name,
                                         RankedTensorType type, Attribute fill,
                                         StringRef purpose) {
  if (symbols.lookup(name))
    return anchor->emitOpError("needs the symbol @")
           << name << " for " << purpose << ", but it is taken (was the "
           << "scaling pass run already?)";
  OpBuilder b(anchor);
  auto param =
      ParamOp::create(b, anchor->getLoc(), name, ParamKind::state,
                      cast<ElementsAttr>(DenseElementsAttr::get(type, fill)));
  symbols.insert(param);
  return param;
}

FailureOr<ParamOp> mlir::gs::getOrCreateState(SymbolTable &symbols,
                                              Operation *anchor, StringRef name,
                                              RankedTensorType type) {
  if (auto existing = symbols.lookup<ParamOp>(name)) {
    if (existing.getType() != type || existing.getKind() != ParamKind::state)
      return existing.emitOpError("is needed as training state of type ")
             << type << ", but is not";
    return existing;
  }
  if (symbols.lookup(name))
    return anchor->emitOpError("needs the symbol @")
           << name << " for training state, but it is taken";
  OpBuilder b(anchor);
  auto zeros = cast<ElementsAttr>(
      DenseElementsAttr::get(type, b.getZeroAttr(type.getElementType())));
  auto param =
      ParamOp::create(b, anchor->getLoc(), name, ParamKind::state, zeros);
  symbols.insert(param);
  return param;
}
