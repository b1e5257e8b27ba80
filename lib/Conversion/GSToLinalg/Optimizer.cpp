//===- Optimizer.cpp - gs.optimizer_step to linalg -------------*- C++ -*-===//
//
// The update rules of ONNX's ai.onnx.preview.training operators (and plain
// SGD), elementwise in f32; step-dependent factors are scalars computed
// once outside the loop.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::to_linalg;

namespace {
struct OptimizerStepLowering : OpConversionPattern<OptimizerStepOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OptimizerStepOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ScalarArith s(rewriter, loc, rewriter.getF32Type());
    Value lr = adaptor.getLearningRate();
    Value step = adaptor.getStep();
    Value stepF =
        arith::SIToFPOp::create(rewriter, loc, rewriter.getF32Type(), step);
    Value started =
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sgt, step,
                              scalarConstant(rewriter, loc, step.getType(), 0));
    Attribute rule = op.getOptimizer();
    auto d = [](const APFloat &v) { return v.convertToDouble(); };

    // Step-dependent scalars.
    Value rate = lr, beta1 = Value();
    // Operands are named one by one below and in the update (C++ leaves the
    // evaluation order of arguments unspecified, and with it the order of
    // the ops they create).
    if (auto momentum = dyn_cast<MomentumAttr>(rule)) {
      Value beta = s.c(d(momentum.getBeta()));
      beta1 = s.select(started, beta, s.c(1.0));
    }
    if (auto adagrad = dyn_cast<AdagradAttr>(rule)) {
      Value decay = s.mul(stepF, s.c(d(adagrad.getDecayFactor())));
      rate = s.div(lr, s.add(s.c(1.0), decay));
    }
    if (auto adam = dyn_cast<AdamAttr>(rule)) {
      // lr * sqrt(1 - beta^t) / (1 - alpha^t).
      Value betaPower = s.pow(s.c(d(adam.getBeta())), stepF);
      Value alphaPower = s.pow(s.c(d(adam.getAlpha())), stepF);
      Value numerator = s.mul(lr, s.sqrt(s.sub(s.c(1.0), betaPower)));
      Value corrected = s.div(numerator, s.sub(s.c(1.0), alphaPower));
      rate = s.select(started, corrected, lr);
    }

    SmallVector<Value> inputs = {adaptor.getParam(), adaptor.getGradient()};
    llvm::append_range(inputs, adaptor.getState());
    SmallVector<Type> types(op->getResultTypes());
    SmallVector<Value> inits;
    for (Type type : types)
      inits.push_back(emptyTensor(rewriter, loc, cast<RankedTensorType>(type)));
    int64_t rank = cast<RankedTensorType>(types.front()).getRank();
    SmallVector<AffineMap> maps(inputs.size() + inits.size(),
                                rewriter.getMultiDimIdentityMap(rank));
    auto generic = linalg::GenericOp::create(
        rewriter, loc, types, inputs, inits, maps, parallelIterators(rank),
        [&](OpBuilder &b, Location l, ValueRange args) {
          ScalarArith f(b, l, b.getF32Type());
          Type element = args[0].getType();
          SmallVector<Value> in;
          for (Value v : args.take_front(inputs.size()))
            in.push_back(convertScalar(b, l, v, b.getF32Type()));
          Value x = in[0], g = in[1];
          SmallVector<Value> results =
              llvm::TypeSwitch<Attribute, SmallVector<Value>>(rule)
                  .Case([&](SGDAttr a) -> SmallVector<Value> {
                    Value reg =
                        f.add(g, f.mul(f.c(d(a.getNormCoefficient())), x));
                    return {f.sub(x, f.mul(lr, reg))};
                  })
                  .Case([&](MomentumAttr a) -> SmallVector<Value> {
                    Value reg =
                        f.add(g, f.mul(f.c(d(a.getNormCoefficient())), x));
                    Value alpha = f.c(d(a.getAlpha()));
                    Value decayed = f.mul(alpha, in[2]);
                    Value v = f.add(decayed, f.mul(beta1, reg));
                    Value direction = a.getMode() == MomentumMode::nesterov
                                          ? f.add(reg, f.mul(alpha, v))
                                          : v;
                    return {f.sub(x, f.mul(lr, direction)), v};
                  })
                  .Case([&](AdagradAttr a) -> SmallVector<Value> {
                    Value reg =
                        f.add(g, f.mul(f.c(d(a.getNormCoefficient())), x));
                    Value h = f.add(in[2], f.mul(reg, reg));
                    Value root = f.sqrt(h);
                    Value denominator = f.add(root, f.c(d(a.getEpsilon())));
                    return {f.sub(x, f.div(f.mul(rate, reg), denominator)), h};
                  })
                  .Case([&](AdamAttr a) -> SmallVector<Value> {
                    Value reg =
                        f.add(g, f.mul(f.c(d(a.getNormCoefficient())), x));
                    double alpha = d(a.getAlpha()), beta = d(a.getBeta());
                    Value vKept = f.mul(f.c(alpha), in[2]);
                    Value v = f.add(vKept, f.mul(f.c(1.0 - alpha), reg));
                    Value hKept = f.mul(f.c(beta), in[3]);
                    Value square = f.mul(reg, reg);
                    Value h = f.add(hKept, f.mul(f.c(1.0 - beta), square));
                    Value root = f.sqrt(h);
                    Value denominator = f.add(root, f.c(d(a.getEpsilon())));
                    Value updated =
                        f.sub(x, f.div(f.mul(rate, v), denominator));
                    Value decayed = f.mul(
                        f.c(1.0 - d(a.getNormCoefficientPost())), updated);
                    return {decayed, v, h};
                  });
          for (Value &r : results)
            r = convertScalar(b, l, r, element);
          linalg::YieldOp::create(b, l, results);
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};
} // namespace

void to_linalg::populateOptimizerPatterns(TypeConverter &converter,
                                          RewritePatternSet &patterns) {
  patterns.add<OptimizerStepLowering>(converter, patterns.getContext());
}
