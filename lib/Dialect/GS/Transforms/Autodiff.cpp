//===- Autodiff.cpp - Reverse-mode differentiation of gs functions -------===//
//
// Fills each gs.backward request with its adjoint computation, once: one
// reverse walk over the forward ops from the seed, the region's argument.
// Each op on a path from a `wrt` value to the differentiated value
// contributes its vector-Jacobian product (DifferentiableOpInterface); a
// value with several contributions gets them summed by one gs.add_n.
//
//===----------------------------------------------------------------------===//

#include "VJPUtils.h"

#include "gs/Dialect/GS/IR/GSOps.h"
#include "gs/Dialect/GS/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::gs {
#define GEN_PASS_DEF_AUTODIFF
#include "gs/Dialect/GS/Transforms/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::vjp;

void mlir::gs::registerDifferentiableOpInterfaceModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, GSDialect *) {
    registerConvolutionVJPs(context);
    registerElementwiseVJPs(context);
    registerIndexingVJPs(context);
    registerLinearAlgebraVJPs(context);
    registerLossVJPs(context);
    registerNormalizationVJPs(context);
    registerShapeVJPs(context);
  });
}

namespace {
/// The gradient contributions of the values of one backward region.
class Adjoints {
public:
  explicit Adjoints(OpBuilder &builder) : builder(builder) {}

  void add(Value value, Value contribution) {
    contributions[value].push_back(contribution);
  }
  bool has(Value value) const { return contributions.contains(value); }

  /// The gradient of `value`: its one contribution, the gs.add_n of
  /// several, or null for none.
  Value get(Value value) {
    auto it = contributions.find(value);
    if (it == contributions.end())
      return Value();
    SmallVector<Value, 2> &terms = it->second;
    if (terms.size() > 1) {
      Value sum = AddNOp::create(builder, value.getLoc(), terms);
      terms.assign(1, sum);
    }
    return terms.front();
  }

private:
  OpBuilder &builder;
  llvm::DenseMap<Value, SmallVector<Value, 2>> contributions;
};

} // namespace

LogicalResult mlir::gs::differentiate(BackwardOp backward) {
  Block *block = backward->getBlock();
  auto forward = llvm::make_range(block->begin(), backward->getIterator());

  // Values that depend on a wrt value through float computations.
  llvm::DenseSet<Value> active;
  for (Value wrt : backward.getWrt())
    active.insert(wrt);
  for (Operation &op : forward)
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return active.contains(v); }))
      for (Value result : op.getResults())
        if (isDifferentiable(result))
          active.insert(result);

  // The region is a function of the seed, the gradient of `of`.
  OpBuilder builder(backward.getContext());
  Value of = backward.getOf();
  Block *body = builder.createBlock(&backward.getBody(), {}, of.getType(),
                                    backward.getLoc());
  Adjoints adjoints(builder);
  adjoints.add(of, body->getArgument(0));

  for (Operation &op : llvm::reverse(forward)) {
    if (!llvm::any_of(op.getResults(),
                      [&](Value v) { return adjoints.has(v); }) ||
        !llvm::any_of(op.getOperands(),
                      [&](Value v) { return active.contains(v); }))
      continue;
    auto differentiable = dyn_cast<DifferentiableOpInterface>(op);
    if (!differentiable)
      return op.emitOpError("is on the path from the differentiated value to "
                            "a gradient input, but has no gradient");
    SmallVector<Value> resultGradients;
    for (Value result : op.getResults())
      resultGradients.push_back(adjoints.get(result));
    SmallVector<Value> operandGradients;
    if (failed(differentiable.buildVJP(builder, resultGradients,
                                       operandGradients)))
      return failure();
    if (operandGradients.size() != op.getNumOperands())
      return op.emitOpError("built ")
             << operandGradients.size() << " operand gradients for "
             << op.getNumOperands() << " operands";
    for (auto [operand, gradient] :
         llvm::zip(op.getOperands(), operandGradients))
      if (gradient && active.contains(operand))
        adjoints.add(operand, gradient);
  }

  SmallVector<Value> gradients;
  for (Value wrt : backward.getWrt()) {
    Value gradient = adjoints.get(wrt);
    gradients.push_back(
        gradient ? gradient
                 : splat(builder, backward.getLoc(), typeOf(wrt), 0.0));
  }
  YieldOp::create(builder, backward.getLoc(), gradients);

  // VJPs build the gradients of every operand; drop those nothing needs
  // (inputs, frozen parameters).
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body)))
    if (isOpTriviallyDead(&op))
      op.erase();
  return success();
}

namespace {
struct AutodiffPass : gs::impl::AutodiffBase<AutodiffPass> {
  using AutodiffBase::AutodiffBase;

  void runOnOperation() override {
    SmallVector<BackwardOp> requests;
    getOperation()->walk([&](BackwardOp op) {
      if (!op.isComputed())
        requests.push_back(op);
    });
    for (BackwardOp request : requests)
      if (failed(differentiate(request)))
        return signalPassFailure();
  }
};
} // namespace
