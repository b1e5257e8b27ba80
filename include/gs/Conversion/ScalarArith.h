//===- ScalarArith.h - Short names for scalar float arithmetic --*- C++ -*-===//
//
// Scalar float arithmetic in one type, for the scalar computations of the
// lowerings (optimizer updates, scale decisions on the host and the
// device).
//
//===----------------------------------------------------------------------===//

#ifndef GS_CONVERSION_SCALARARITH_H
#define GS_CONVERSION_SCALARARITH_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"

#include <cmath>

namespace mlir::gs {

class ScalarArith {
public:
  ScalarArith(OpBuilder &b, Location loc, FloatType type)
      : b(b), loc(loc), type(type) {}

  Value c(double v) {
    return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, v));
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value min(Value x, Value y) {
    return arith::MinimumFOp::create(b, loc, x, y);
  }
  Value max(Value x, Value y) {
    return arith::MaximumFOp::create(b, loc, x, y);
  }
  Value sqrt(Value x) { return math::SqrtOp::create(b, loc, x); }
  Value exp(Value x) { return math::ExpOp::create(b, loc, x); }
  Value log(Value x) { return math::LogOp::create(b, loc, x); }
  Value erf(Value x) { return math::ErfOp::create(b, loc, x); }
  Value erfc(Value x) { return math::ErfcOp::create(b, loc, x); }
  Value pow(Value x, Value y) { return math::PowFOp::create(b, loc, x, y); }
  Value lt(Value x, Value y) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, y);
  }
  Value le(Value x, Value y) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, x, y);
  }
  Value select(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  /// Whether `x` is finite (false for NaN).
  Value isFinite(Value x) {
    return lt(math::AbsFOp::create(b, loc, x), c(INFINITY));
  }

protected:
  OpBuilder &b;
  Location loc;
  FloatType type;
};

} // namespace mlir::gs

#endif // GS_CONVERSION_SCALARARITH_H
