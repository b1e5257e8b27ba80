//===- GSOps.cpp - GradScale op definitions and custom syntax --*- C++ -*-===//
//
// Instantiates the generated op classes and the custom assembly directives
// they use. The verifiers, inference and folders of each op family live in
// their own files.
//
//===----------------------------------------------------------------------===//

#include "gs/Dialect/GS/IR/GSOps.h"
#include "OpUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::gs;

std::string mlir::gs::formatShape(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(shape, os, "x");
  return text;
}

LogicalResult mlir::gs::reportResultTypeMismatch(Operation *op,
                                                 TypeRange inferred) {
  std::string expected, actual;
  llvm::raw_string_ostream expectedOs(expected), actualOs(actual);
  llvm::interleaveComma(inferred, expectedOs);
  llvm::interleaveComma(op->getResultTypes(), actualOs);
  return op->emitOpError("result type(s) ")
         << actual << " differ from the inferred " << expected;
}

bool mlir::gs::isCompatibleContractionResult(TypeRange inferred,
                                             TypeRange actual) {
  if (inferred.size() != 1 || actual.size() != 1)
    return false;
  auto want = dyn_cast<RankedTensorType>(inferred.front());
  auto have = dyn_cast<RankedTensorType>(actual.front());
  if (!want || !have || want.getShape() != have.getShape())
    return false;
  Type wantElement = want.getElementType();
  Type haveElement = have.getElementType();
  return wantElement == haveElement ||
         (wantElement.isF16() && haveElement.isF32());
}

/// Fills in the ONNX defaults of a window's geometry (stride 1, no padding,
/// dilation 1) without checking it.
WindowGeometry mlir::gs::makeGeometry(int64_t spatialRank,
                                      ArrayRef<int64_t> strides,
                                      ArrayRef<int64_t> pads,
                                      ArrayRef<int64_t> dilations) {
  WindowGeometry g;
  auto orDefault = [&](ArrayRef<int64_t> values, int64_t fallback) {
    return values.empty() ? SmallVector<int64_t>(spatialRank, fallback)
                          : SmallVector<int64_t>(values);
  };
  g.strides = orDefault(strides, 1);
  g.dilations = orDefault(dilations, 1);
  if (pads.empty()) {
    g.padsBegin.assign(spatialRank, 0);
    g.padsEnd.assign(spatialRank, 0);
  } else {
    g.padsBegin.assign(pads.begin(), pads.begin() + pads.size() / 2);
    g.padsEnd.assign(pads.begin() + pads.size() / 2, pads.end());
  }
  return g;
}

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

/// `type` when both operands have it, `lhs-type, rhs-type` otherwise.
static ParseResult parseBinaryOperandTypes(OpAsmParser &parser, Type &lhs,
                                           Type &rhs) {
  if (parser.parseType(lhs))
    return failure();
  if (succeeded(parser.parseOptionalComma()))
    return parser.parseType(rhs);
  rhs = lhs;
  return success();
}

static void printBinaryOperandTypes(OpAsmPrinter &printer, Operation *,
                                    Type lhs, Type rhs) {
  printer << lhs;
  if (lhs != rhs)
    printer << ", " << rhs;
}

/// The kind of a gs.param as a bare keyword: `trainable`, `buffer`, `state`.
static ParseResult parseParamKind(OpAsmParser &parser, ParamKindAttr &kind) {
  StringRef keyword;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<ParamKind> value = symbolizeParamKind(keyword);
  if (!value)
    return parser.emitError(loc, "expected parameter kind 'trainable', "
                                 "'buffer' or 'state', got '")
           << keyword << "'";
  kind = ParamKindAttr::get(parser.getContext(), *value);
  return success();
}

static void printParamKind(OpAsmPrinter &printer, Operation *,
                           ParamKindAttr kind) {
  printer << stringifyParamKind(kind.getValue());
}

#include "gs/Dialect/GS/IR/GSOpInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "gs/Dialect/GS/IR/GSOps.cpp.inc"
