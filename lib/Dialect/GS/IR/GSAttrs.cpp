//===- GSAttrs.cpp - GradScale attributes and enums ------------*- C++ -*-===//

#include "gs/Dialect/GS/IR/GSAttrs.h"
#include "gs/Dialect/GS/IR/GSDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::gs;

#include "gs/Dialect/GS/IR/GSAttrInterfaces.cpp.inc"
#include "gs/Dialect/GS/IR/GSEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "gs/Dialect/GS/IR/GSAttrs.cpp.inc"

FailureOr<APFloat> mlir::gs::parseF64Parameter(AsmParser &parser) {
  APFloat value(0.0);
  if (parser.parseFloat(APFloat::IEEEdouble(), value))
    return failure();
  return value;
}

void GSDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "gs/Dialect/GS/IR/GSAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

ArrayRef<StringLiteral> SGDAttr::getStateNames() const { return {}; }

ArrayRef<StringLiteral> MomentumAttr::getStateNames() const {
  static constexpr StringLiteral names[] = {"velocity"};
  return names;
}

ArrayRef<StringLiteral> AdagradAttr::getStateNames() const {
  static constexpr StringLiteral names[] = {"accumulator"};
  return names;
}

ArrayRef<StringLiteral> AdamAttr::getStateNames() const {
  static constexpr StringLiteral names[] = {"moment1", "moment2"};
  return names;
}
