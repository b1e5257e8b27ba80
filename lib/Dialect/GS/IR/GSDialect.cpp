//===- GSDialect.cpp - GradScale dialect registration ----------*- C++ -*-===//

#include "gs/Dialect/GS/IR/GSDialect.h"
#include "gs/Dialect/GS/IR/GSOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::gs;

#include "gs/Dialect/GS/IR/GSDialect.cpp.inc"

void GSDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "gs/Dialect/GS/IR/GSOps.cpp.inc"
      >();
  registerTypes();
  registerAttributes();
}

Operation *GSDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                          Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

#define GET_TYPEDEF_CLASSES
#include "gs/Dialect/GS/IR/GSTypes.cpp.inc"

void GSDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "gs/Dialect/GS/IR/GSTypes.cpp.inc"
      >();
}
