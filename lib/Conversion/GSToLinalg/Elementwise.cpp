//===- Elementwise.cpp - Elementwise gs ops to linalg.generic --*- C++ -*-===//
//
// Every elementwise op becomes one broadcasting linalg.generic. What it
// computes per element is its entry in the ScalarOp table below.
// Transcendental functions of f16 values are evaluated in f32 and rounded
// once; +, -, *, /, max, min and comparisons are exact or correctly rounded
// in f16 itself.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cmath>
#include <type_traits>

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::to_linalg;

static bool isFloat(Value v) { return isa<FloatType>(v.getType()); }

/// Applies a float function in f32 when `x` is f16, rounding once.
static Value inF32(OpBuilder &b, Location loc, Value x,
                   function_ref<Value(Value)> fn) {
  Type type = x.getType();
  if (!type.isF16())
    return fn(x);
  Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), x);
  return arith::TruncFOp::create(b, loc, type, fn(wide));
}

//===----------------------------------------------------------------------===//
// The table: one entry per elementwise op
//===----------------------------------------------------------------------===//

namespace {
template <typename OpTy> struct ScalarOp;

template <> struct ScalarOp<AddOp> {
  static Value build(OpBuilder &b, Location loc, ValueRange a, AddOp) {
    return isFloat(a[0])
               ? arith::AddFOp::create(b, loc, a[0], a[1]).getResult()
               : arith::AddIOp::create(b, loc, a[0], a[1]).getResult();
  }
};
template <> struct ScalarOp<SubOp> {
  static Value build(OpBuilder &b, Location loc, ValueRange a, SubOp) {
    return isFloat(a[0])
               ? arith::SubFOp::create(b, loc, a[0], a[1]).getResult()
               : arith::SubIOp::create(b, loc, a[0], a[1]).getResult();
  }
};
template <> struct ScalarOp<MulOp> {
  static Value build(OpBuilder &b, Location loc, ValueRange a, MulOp) {
    return isFloat(a[0])
               ? arith::MulFOp::create(b, loc, a[0], a[1]).getResult()
               : arith::MulIOp::create(b, loc, a[0], a[1]).getResult();
  }
};
/// Integer division that cannot trap: `x / 0` is 0 and the signed
/// `MIN / -1` wraps to MIN, as NumPy computes them.
static Value divideIntegers(OpBuilder &b, Location loc, Value x, Value y,
                            bool isUnsigned) {
  Type type = x.getType();
  unsigned width = type.getIntOrFloatBitWidth();
  auto constant = [&](const APInt &v) -> Value {
    return arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, v));
  };
  auto equal = [&](Value v, Value w) -> Value {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, v, w);
  };
  Value zero = constant(APInt::getZero(width));
  Value one = constant(APInt(width, 1));
  Value byZero = equal(y, zero);
  Value unsafe = byZero;
  if (!isUnsigned) {
    // Named one by one: argument evaluation order is unspecified.
    Value isMin = equal(x, constant(APInt::getSignedMinValue(width)));
    Value isMinusOne = equal(y, constant(APInt::getAllOnes(width)));
    Value overflow = arith::AndIOp::create(b, loc, isMin, isMinusOne);
    unsafe = arith::OrIOp::create(b, loc, unsafe, overflow);
  }
  Value divisor = arith::SelectOp::create(b, loc, unsafe, one, y);
  Value quotient =
      isUnsigned
          ? arith::DivUIOp::create(b, loc, x, divisor).getResult()
          : arith::DivSIOp::create(b, loc, x, divisor).getResult();
  return arith::SelectOp::create(b, loc, byZero, zero, quotient);
}

template <> struct ScalarOp<DivOp> {
  static Value build(OpBuilder &b, Location loc, ValueRange a, DivOp op) {
    if (isFloat(a[0]))
      return arith::DivFOp::create(b, loc, a[0], a[1]);
    return divideIntegers(b, loc, a[0], a[1], isUnsignedElement(op.getType()));
  }
};
template <> struct ScalarOp<MaxOp> {
  static Value build(OpBuilder &b, Location loc, ValueRange a, MaxOp op) {
    if (isFloat(a[0]))
      return arith::MaximumFOp::create(b, loc, a[0], a[1]);
    if (isUnsignedElement(op.getType()))
      return arith::MaxUIOp::create(b, loc, a[0], a[1]);
    return arith::MaxSIOp::create(b, loc, a[0], a[1]);
  }
};
template <> struct ScalarOp<MinOp> {
  static Value build(OpBuilder &b, Location loc, ValueRange a, MinOp op) {
    if (isFloat(a[0]))
      return arith::MinimumFOp::create(b, loc, a[0], a[1]);
    if (isUnsignedElement(op.getType()))
      return arith::MinUIOp::create(b, loc, a[0], a[1]);
    return arith::MinSIOp::create(b, loc, a[0], a[1]);
  }
};
template <> struct ScalarOp<PowOp> {
  static Value build(OpBuilder &b, Location loc, ValueRange a, PowOp) {
    Value exponent = a[1];
    return inF32(b, loc, a[0], [&](Value x) -> Value {
      Value e = convertScalar(b, loc, exponent, x.getType());
      return math::PowFOp::create(b, loc, x, e);
    });
  }
};
template <> struct ScalarOp<AddNOp> {
  static Value build(OpBuilder &b, Location loc, ValueRange a, AddNOp op) {
    Value sum = a[0];
    for (Value v : a.drop_front())
      sum = isFloat(sum) ? arith::AddFOp::create(b, loc, sum, v).getResult()
                         : arith::AddIOp::create(b, loc, sum, v).getResult();
    return sum;
  }
};
template <> struct ScalarOp<NegOp> {
  static Value build(OpBuilder &b, Location loc, ValueRange a, NegOp) {
    return arith::NegFOp::create(b, loc, a[0]);
  }
};
template <> struct ScalarOp<AbsOp> {
  static Value build(OpBuilder &b, Location loc, ValueRange a, AbsOp) {
    return math::AbsFOp::create(b, loc, a[0]);
  }
};
template <> struct ScalarOp<ReluOp> {
  static Value build(OpBuilder &b, Location loc, ValueRange a, ReluOp) {
    Value zero = scalarConstant(b, loc, a[0].getType(), 0.0);
    return arith::MaximumFOp::create(b, loc, a[0], zero);
  }
};
template <> struct ScalarOp<LeakyReluOp> {
  static Value build(OpBuilder &b, Location loc, ValueRange a, LeakyReluOp op) {
    Value x = a[0];
    Value zero = scalarConstant(b, loc, x.getType(), 0.0);
    Value alpha =
        scalarConstant(b, loc, x.getType(), op.getAlpha().convertToDouble());
    Value negative =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero);
    Value scaled = arith::MulFOp::create(b, loc, x, alpha);
    return arith::SelectOp::create(b, loc, negative, scaled, x);
  }
};
template <> struct ScalarOp<SigmoidOp> {
  static Value build(OpBuilder &b, Location loc, ValueRange a, SigmoidOp) {
    return inF32(b, loc, a[0], [&](Value x) -> Value {
      Value one = scalarConstant(b, loc, x.getType(), 1.0);
      Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
      return arith::DivFOp::create(b, loc, one,
                                   arith::AddFOp::create(b, loc, one, e));
    });
  }
};
template <> struct ScalarOp<TanhOp> {
  static Value build(OpBuilder &b, Location loc, ValueRange a, TanhOp) {
    return inF32(b, loc, a[0], [&](Value x) -> Value {
      return math::TanhOp::create(b, loc, x);
    });
  }
};
template <> struct ScalarOp<ExpOp> {
  static Value build(OpBuilder &b, Location loc, ValueRange a, ExpOp) {
    return inF32(b, loc, a[0], [&](Value x) -> Value {
      return math::ExpOp::create(b, loc, x);
    });
  }
};
template <> struct ScalarOp<LogOp> {
  static Value build(OpBuilder &b, Location loc, ValueRange a, LogOp) {
    return inF32(b, loc, a[0], [&](Value x) -> Value {
      return math::LogOp::create(b, loc, x);
    });
  }
};
template <> struct ScalarOp<SqrtOp> {
  static Value build(OpBuilder &b, Location loc, ValueRange a, SqrtOp) {
    return inF32(b, loc, a[0], [&](Value x) -> Value {
      return math::SqrtOp::create(b, loc, x);
    });
  }
};
template <> struct ScalarOp<ErfOp> {
  static Value build(OpBuilder &b, Location loc, ValueRange a, ErfOp) {
    return inF32(b, loc, a[0], [&](Value x) -> Value {
      return math::ErfOp::create(b, loc, x);
    });
  }
};
template <> struct ScalarOp<CastOp> {
  static Value build(OpBuilder &b, Location loc, ValueRange a, CastOp op) {
    return convertScalar(b, loc, a[0], op.getInput().getType().getElementType(),
                         op.getType().getElementType());
  }
};

template <> struct ScalarOp<CompareOp> {
  static Value build(OpBuilder &b, Location loc, ValueRange a, CompareOp op) {
    if (isFloat(a[0])) {
      // Ordered, except `ne`: a NaN compares unequal to everything.
      arith::CmpFPredicate predicate = arith::CmpFPredicate::OEQ;
      switch (op.getPredicate()) {
      case ComparePredicate::eq:
        predicate = arith::CmpFPredicate::OEQ;
        break;
      case ComparePredicate::ne:
        predicate = arith::CmpFPredicate::UNE;
        break;
      case ComparePredicate::lt:
        predicate = arith::CmpFPredicate::OLT;
        break;
      case ComparePredicate::le:
        predicate = arith::CmpFPredicate::OLE;
        break;
      case ComparePredicate::gt:
        predicate = arith::CmpFPredicate::OGT;
        break;
      case ComparePredicate::ge:
        predicate = arith::CmpFPredicate::OGE;
        break;
      }
      return arith::CmpFOp::create(b, loc, predicate, a[0], a[1]);
    }
    // Booleans order false < true, as unsigned integers do; signless
    // integers are signed.
    bool isUnsigned = a[0].getType().isInteger(1) ||
                  isUnsignedElement(op.getLhs().getType());
    arith::CmpIPredicate predicate = arith::CmpIPredicate::eq;
    switch (op.getPredicate()) {
    case ComparePredicate::eq:
      predicate = arith::CmpIPredicate::eq;
      break;
    case ComparePredicate::ne:
      predicate = arith::CmpIPredicate::ne;
      break;
    case ComparePredicate::lt:
      predicate =
          isUnsigned ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt;
      break;
    case ComparePredicate::le:
      predicate =
          isUnsigned ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle;
      break;
    case ComparePredicate::gt:
      predicate =
          isUnsigned ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt;
      break;
    case ComparePredicate::ge:
      predicate =
          isUnsigned ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge;
      break;
    }
    return arith::CmpIOp::create(b, loc, predicate, a[0], a[1]);
  }
};
template <> struct ScalarOp<AndOp> {
  static Value build(OpBuilder &b, Location loc, ValueRange a, AndOp) {
    return arith::AndIOp::create(b, loc, a[0], a[1]);
  }
};
template <> struct ScalarOp<OrOp> {
  static Value build(OpBuilder &b, Location loc, ValueRange a, OrOp) {
    return arith::OrIOp::create(b, loc, a[0], a[1]);
  }
};
template <> struct ScalarOp<XorOp> {
  static Value build(OpBuilder &b, Location loc, ValueRange a, XorOp) {
    return arith::XOrIOp::create(b, loc, a[0], a[1]);
  }
};
template <> struct ScalarOp<NotOp> {
  static Value build(OpBuilder &b, Location loc, ValueRange a, NotOp) {
    Value one = arith::ConstantIntOp::create(b, loc, 1, 1);
    return arith::XOrIOp::create(b, loc, a[0], one);
  }
};
template <> struct ScalarOp<WhereOp> {
  static Value build(OpBuilder &b, Location loc, ValueRange a, WhereOp) {
    return arith::SelectOp::create(b, loc, a[0], a[1], a[2]);
  }
};

/// One linalg.generic per elementwise op, computing its table entry.
template <typename OpTy>
struct ElementwiseLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = signlessType(cast<RankedTensorType>(op->getResult(0).getType()));
    Value result =
        elementwise(rewriter, op.getLoc(), type, adaptor.getOperands(),
                    [&](OpBuilder &b, Location loc, ValueRange args) {
                      return ScalarOp<OpTy>::build(b, loc, args, op);
                    });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Constants, scaling, dropout
//===----------------------------------------------------------------------===//

struct ConstantLowering : OpConversionPattern<ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = signlessType(op.getType());
    Attribute value = op.getValue();
    if (type != op.getType()) {
      // The same bits under the signless type.
      if (auto dense = dyn_cast<DenseElementsAttr>(value))
        value = dense.bitcast(type.getElementType());
      else if (auto resource = dyn_cast<DenseResourceElementsAttr>(value))
        value = DenseResourceElementsAttr::get(type, resource.getRawHandle());
      else
        return rewriter.notifyMatchFailure(op, "unexpected constant value");
    }
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, type,
                                                   cast<TypedAttr>(value));
    return success();
  }
};

/// `input * scale` (RescaleOp) or `input / scale` (UnscaleOp), computed in
/// f32 and rounded once; an unscaling by a power of two multiplies by the
/// (exact) reciprocal, computed once.
template <typename OpTy> struct ScaleLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value scale = adaptor.getOperands()[1];
    bool divide = false;
    if constexpr (std::is_same_v<OpTy, UnscaleOp>) {
      divide = !op.getPowerOfTwo();
      if (!divide) {
        Value one = arith::ConstantOp::create(rewriter, op.getLoc(),
                                              rewriter.getF32FloatAttr(1.0));
        scale = arith::DivFOp::create(rewriter, op.getLoc(), one, scale);
      }
    }
    auto type = cast<RankedTensorType>(op.getType());
    Value result = elementwise(
        rewriter, op.getLoc(), type, adaptor.getOperands()[0],
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return inF32(b, loc, args[0], [&](Value x) -> Value {
            return divide ? arith::DivFOp::create(b, loc, x, scale).getResult()
                          : arith::MulFOp::create(b, loc, x, scale).getResult();
          });
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Training-mode dropout: element i of the tensor is kept when a
/// counter-based hash (splitmix64) of (seed, offset, i) mapped to [0, 1) is
/// at least `ratio`; kept elements are scaled by 1 / (1 - ratio).
struct DropoutLowering : OpConversionPattern<DropoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DropoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getResult().getType());
    auto maskType = cast<RankedTensorType>(op.getMask().getType());
    double ratio = op.getRatio().convertToDouble();
    if (!op.getTraining() || ratio == 0.0) {
      Value mask = arith::ConstantOp::create(
          rewriter, loc, DenseElementsAttr::get(maskType, true));
      rewriter.replaceOp(op, {adaptor.getInput(), mask});
      return success();
    }
    Type i64 = rewriter.getI64Type();
    Value offset = adaptor.getOffset() ? adaptor.getOffset()
                                       : scalarConstant(rewriter, loc, i64, 0);
    int64_t rank = type.getRank();
    SmallVector<AffineMap> maps(3, rewriter.getMultiDimIdentityMap(rank));
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type, maskType}, adaptor.getInput(),
        ValueRange{emptyTensor(rewriter, loc, type),
                   emptyTensor(rewriter, loc, maskType)},
        maps, parallelIterators(rank),
        [&](OpBuilder &b, Location l, ValueRange args) {
          auto c = [&](uint64_t v) {
            return arith::ConstantOp::create(
                b, l, b.getIntegerAttr(i64, static_cast<int64_t>(v)));
          };
          // Row-major linear index of the element.
          Value index = c(0);
          for (int64_t d = 0; d < rank; ++d) {
            Value i = arith::IndexCastOp::create(
                b, l, i64, linalg::IndexOp::create(b, l, d));
            index = arith::AddIOp::create(
                b, l, arith::MulIOp::create(b, l, index, c(type.getDimSize(d))),
                i);
          }
          Value seed =
              c(static_cast<uint64_t>(op.getSeed()) * 0x9E3779B97F4A7C15ull);
          Value stream =
              arith::MulIOp::create(b, l, offset, c(0xD1B54A32D192ED03ull));
          Value z = arith::AddIOp::create(
              b, l, arith::AddIOp::create(b, l, seed, stream), index);
          auto mix = [&](Value v, uint64_t shift, uint64_t factor) {
            Value x = arith::XOrIOp::create(
                b, l, v, arith::ShRUIOp::create(b, l, v, c(shift)));
            return factor
                       ? arith::MulIOp::create(b, l, x, c(factor)).getResult()
                       : x;
          };
          z = mix(z, 30, 0xBF58476D1CE4E5B9ull);
          z = mix(z, 27, 0x94D049BB133111EBull);
          z = mix(z, 31, 0);
          // The top 24 bits as a float in [0, 1).
          Value bits = arith::ShRUIOp::create(b, l, z, c(40));
          Value bitsAsFloat =
              arith::UIToFPOp::create(b, l, b.getF32Type(), bits);
          Value u = arith::MulFOp::create(
              b, l, bitsAsFloat,
              scalarConstant(b, l, b.getF32Type(), 1.0 / (1 << 24)));
          Value keep = arith::CmpFOp::create(
              b, l, arith::CmpFPredicate::OGE, u,
              scalarConstant(b, l, b.getF32Type(), ratio));
          Value x = args[0];
          Value scaled = arith::MulFOp::create(
              b, l, x, scalarConstant(b, l, x.getType(), 1.0 / (1.0 - ratio)));
          Value zero = scalarConstant(b, l, x.getType(), 0.0);
          Value y = arith::SelectOp::create(b, l, keep, scaled, zero);
          linalg::YieldOp::create(b, l, ValueRange{y, keep});
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};
} // namespace

void to_linalg::populateElementwisePatterns(TypeConverter &converter,
                                            RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns
      .add<ElementwiseLowering<AddOp>, ElementwiseLowering<SubOp>,
           ElementwiseLowering<MulOp>, ElementwiseLowering<DivOp>,
           ElementwiseLowering<MaxOp>, ElementwiseLowering<MinOp>,
           ElementwiseLowering<PowOp>, ElementwiseLowering<AddNOp>,
           ElementwiseLowering<NegOp>, ElementwiseLowering<AbsOp>,
           ElementwiseLowering<ReluOp>, ElementwiseLowering<LeakyReluOp>,
           ElementwiseLowering<SigmoidOp>, ElementwiseLowering<TanhOp>,
           ElementwiseLowering<ExpOp>, ElementwiseLowering<LogOp>,
           ElementwiseLowering<SqrtOp>, ElementwiseLowering<ErfOp>,
           ElementwiseLowering<CastOp>, ElementwiseLowering<CompareOp>,
           ElementwiseLowering<WhereOp>, ElementwiseLowering<AndOp>,
           ElementwiseLowering<OrOp>, ElementwiseLowering<XorOp>,
           ElementwiseLowering<NotOp>, ConstantLowering,
           ScaleLowering<RescaleOp>, ScaleLowering<UnscaleOp>, DropoutLowering>(
          converter, context);
}
