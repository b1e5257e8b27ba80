// Inputs of test/Lint/argument-order.test: lines 6, 8 and 10 build IR in
// two arguments of one call; the rest do not.
void sample(OpBuilder &b, Location loc, Value x, Value y) {
  auto twice = [&](Value v) { return arith::AddFOp::create(b, loc, v, v); };
  ScalarArith s(b, loc, b.getF32Type());
  Value bad = arith::AddFOp::create(b, loc, arith::NegFOp::create(b, loc, x),
                                    arith::NegFOp::create(b, loc, y));
  Value worse = combine(twice(x), helper(b, loc, y));
  Value inList = combine(ValueRange{twice(x), helper(b, loc, y)});
  Value scalar = s.mul(s.c(2.0), s.add(x, y));
  Value nested = arith::AddFOp::create(b, loc, x, twice(y));
  Value pure = combine(x.getType(), typeOf(y), twice(x));
  auto generic = linalg::GenericOp::create(
      b, loc, emptyTensor(b, loc, type), parallelIterators(2),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(nb, l, helper(nb, l, args[0]));
      });
}
