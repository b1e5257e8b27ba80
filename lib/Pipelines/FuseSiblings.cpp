//===- FuseSiblings.cpp - Passes over the same tensor as one ---*- C++ -*-===//
//
// Elementwise ops and reductions that read the same tensor, element by
// element over the same loops, become one linalg.generic: the tensor is
// read once, and what both computed from it is computed once. A gradient's
// rounding to FP16 and the counting of that rounding, or batch
// normalization's two sums over the same gradient, had each been a pass
// over memory of its own.
//
//===----------------------------------------------------------------------===//

#include "MoveDefinitions.h"
#include "gs/Conversion/LinalgReductions.h"
#include "gs/Pipelines/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::gs {
#define GEN_PASS_DEF_FUSESIBLINGS
#include "gs/Pipelines/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;

namespace {
/// The most operands and results of a fused op (each fusion copies both
/// ops' operands).
constexpr unsigned kMaxFusedOperands = 64;
constexpr unsigned kMaxFusedResults = 16;

/// Whether `map` reads dimensions in loop order, each at most once, or
/// the constant 0 (a broadcast along a unit dimension): no transpose,
/// window or gather.
bool readsInLoopOrder(AffineMap map) {
  int64_t last = -1;
  for (AffineExpr expr : map.getResults()) {
    if (auto constant = dyn_cast<AffineConstantExpr>(expr)) {
      if (constant.getValue() != 0)
        return false;
      continue;
    }
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim || static_cast<int64_t>(dim.getPosition()) <= last)
      return false;
    last = dim.getPosition();
  }
  return true;
}

/// Whether the body of `op` is arithmetic that LLVM vectorizes: no call
/// to libm (exp, log, tanh... of the math dialect would keep a fused loop
/// scalar where one of the two loops alone vectorized), no gather.
bool vectorizableBody(linalg::GenericOp op) {
  return llvm::all_of(op.getRegion().front(), [](Operation &inner) {
    // frem is a call to fmod.
    if (isa<linalg::YieldOp, linalg::IndexOp>(inner) ||
        (isa<arith::ArithDialect>(inner.getDialect()) &&
         !isa<arith::RemFOp>(inner)))
      return true;
    return isa<math::AbsFOp, math::AbsIOp, math::FmaOp, math::SqrtOp,
               math::CopySignOp, math::FloorOp, math::CeilOp,
               math::RoundEvenOp>(inner);
  });
}

/// Whether `op` may join a sibling in a kernel of gs-linalg-to-gpu: a
/// generic on static tensors reading its operands in loop order, of any
/// body.
bool isKernelCandidate(linalg::GenericOp op) {
  return op.hasPureTensorSemantics() && !op.hasDynamicShape() &&
         op.getNumLoops() > 0 &&
         llvm::all_of(op.getIndexingMapsArray(), readsInLoopOrder);
}

/// Whether `op` may join a sibling: a kernel candidate (above) with a
/// body LLVM vectorizes. (The GEMMs and convolutions are loops of register
/// blocks by now.)
bool isSiblingCandidate(linalg::GenericOp op) {
  return isKernelCandidate(op) && vectorizableBody(op);
}

/// Whether a kernel may split `op`'s reductions across a block's threads:
/// each output combined exactly in any order.
bool hasExactReductions(linalg::GenericOp op) {
  if (op.getNumReductionLoops() == 0)
    return false;
  std::optional<SmallVector<gs::OutputReduction>> reductions =
      gs::getOutputReductions(op);
  return reductions && !gs::isOrderDependent(*reductions);
}

/// Whether `first` and `second` fuse into one kernel as they are: the
/// same loops, and either both or neither a reduction a kernel may split.
bool runSameLoops(linalg::GenericOp first, linalg::GenericOp second) {
  return first.getIteratorTypesArray() == second.getIteratorTypesArray() &&
         hasExactReductions(first) == hasExactReductions(second);
}

/// Whether `first` and `second` run the same loops and read a common
/// tensor in full, element by element, the same way.
bool shareFullRead(linalg::GenericOp first, linalg::GenericOp second) {
  if (first.getStaticLoopRanges() != second.getStaticLoopRanges())
    return false;
  for (OpOperand *a : first.getDpsInputOperands()) {
    AffineMap map = first.getMatchingIndexingMap(a);
    if (!map.isIdentity())
      continue;
    for (OpOperand *b : second.getDpsInputOperands())
      if (b->get() == a->get() && second.getMatchingIndexingMap(b) == map)
        return true;
  }
  return false;
}

/// Where the op fusing `first` and `second` (later in the same block) can
/// be: at `second` where nothing between them reads `first`'s results (its
/// operands, defined before it, are there too), else at `first` where
/// `second`'s operands and the values its body uses from above are there
/// or are cheap to move there (empty tensors, constants and fills of them:
/// the outputs' initial values), which it moves. Null where neither works.
Operation *fusionPoint(linalg::GenericOp first, linalg::GenericOp second,
                       DominanceInfo &dominance) {
  Block *block = second->getBlock();
  if (llvm::all_of(first->getUsers(), [&](Operation *user) {
        Operation *ancestor = block->findAncestorOpInBlock(*user);
        return ancestor && second->isBeforeInBlock(ancestor);
      }))
    return second;
  SetVector<Value> captured;
  getUsedValuesDefinedAbove(second.getRegion(), captured);
  SmallVector<Value> used(second->getOperands());
  used.append(captured.begin(), captured.end());
  if (!gs::moveDefinitionsAbove(used, first, dominance))
    return nullptr;
  return first;
}

/// One generic at `point` computing both ops' results: their
/// inputs (one argument per distinct input and map), then their outputs,
/// with the loops that either reduces along as reductions. An output of
/// an elementwise op, written at every point, may then be indexed by a
/// loop the other op reduces along; each point still runs once, in the
/// loops' order, so every result is the same.
linalg::GenericOp fuse(RewriterBase &rewriter, linalg::GenericOp first,
                       linalg::GenericOp second, Operation *point) {
  SmallVector<Value> inputs;
  SmallVector<AffineMap> inputMaps;
  // Each op's input operands to their position in `inputs`.
  SmallVector<SmallVector<unsigned>> inputIndex(2);
  linalg::GenericOp ops[] = {first, second};
  for (auto [i, op] : llvm::enumerate(ops))
    for (OpOperand *input : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(input);
      unsigned index = inputs.size();
      for (unsigned j = 0; j < inputs.size(); ++j)
        if (inputs[j] == input->get() && inputMaps[j] == map)
          index = j;
      if (index == inputs.size()) {
        inputs.push_back(input->get());
        inputMaps.push_back(map);
      }
      inputIndex[i].push_back(index);
    }
  SmallVector<Value> inits;
  SmallVector<AffineMap> maps = inputMaps;
  SmallVector<Type> resultTypes;
  for (linalg::GenericOp op : ops)
    for (OpOperand &init : op.getDpsInitsMutable()) {
      inits.push_back(init.get());
      maps.push_back(op.getMatchingIndexingMap(&init));
      resultTypes.push_back(init.get().getType());
    }
  SmallVector<utils::IteratorType> iterators = first.getIteratorTypesArray();
  for (auto [merged, other] :
       llvm::zip_equal(iterators, second.getIteratorTypesArray()))
    if (other == utils::IteratorType::reduction)
      merged = utils::IteratorType::reduction;

  rewriter.setInsertionPoint(point);
  auto fused = linalg::GenericOp::create(rewriter, second.getLoc(), resultTypes,
                                         inputs, inits, maps, iterators);
  SmallVector<Type> argTypes;
  SmallVector<Location> argLocs;
  for (Value operand : fused->getOperands()) {
    argTypes.push_back(getElementTypeOrSelf(operand.getType()));
    argLocs.push_back(operand.getLoc());
  }
  Block *body = rewriter.createBlock(&fused.getRegion(), {}, argTypes, argLocs);
  SmallVector<Value> yielded;
  unsigned outputArg = inputs.size();
  for (auto [i, op] : llvm::enumerate(ops)) {
    Block &source = op.getRegion().front();
    IRMapping mapping;
    for (auto [k, index] : llvm::enumerate(inputIndex[i]))
      mapping.map(source.getArgument(k), body->getArgument(index));
    for (unsigned k = 0; k < op.getNumDpsInits(); ++k)
      mapping.map(source.getArgument(op.getNumDpsInputs() + k),
                  body->getArgument(outputArg++));
    for (Operation &inner : source.without_terminator())
      rewriter.clone(inner, mapping);
    for (Value value : source.getTerminator()->getOperands())
      yielded.push_back(mapping.lookupOrDefault(value));
  }
  linalg::YieldOp::create(rewriter, second.getLoc(), yielded);
  rewriter.replaceOp(first,
                     fused->getResults().take_front(first->getNumResults()));
  rewriter.replaceOp(second,
                     fused->getResults().take_back(second->getNumResults()));
  return fused;
}

struct FuseSiblingsPass : gs::impl::FuseSiblingsBase<FuseSiblingsPass> {
  using FuseSiblingsBase::FuseSiblingsBase;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::GenericOp> generics;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (sameLoops ? isKernelCandidate(op) : isSiblingCandidate(op))
        generics.push_back(op);
    });
    // The candidates not fused away, and the fused ops among them.
    DenseSet<Operation *> live;
    for (linalg::GenericOp op : generics)
      live.insert(op);
    SetVector<Operation *> fusedOps;
    DominanceInfo dominance;
    // An earlier sibling of `op` and where their fused op goes.
    auto siblingOf =
        [&](linalg::GenericOp op) -> std::pair<linalg::GenericOp, Operation *> {
      for (Value input : op.getDpsInputs())
        for (Operation *user : input.getUsers()) {
          auto sibling = dyn_cast<linalg::GenericOp>(user);
          if (!sibling || sibling == op || !live.contains(sibling) ||
              sibling->getBlock() != op->getBlock() ||
              !sibling->isBeforeInBlock(op) || !shareFullRead(sibling, op) ||
              (sameLoops && !runSameLoops(sibling, op)) ||
              sibling->getNumOperands() + op->getNumOperands() >
                  kMaxFusedOperands ||
              sibling->getNumResults() + op->getNumResults() > kMaxFusedResults)
            continue;
          if (Operation *point = fusionPoint(sibling, op, dominance))
            return {sibling, point};
        }
      return {};
    };
    for (linalg::GenericOp op : generics) {
      if (!live.contains(op))
        continue;
      // The earlier siblings of `op`, one at a time: each fusion makes a
      // new `op`, whose inputs are searched again.
      while (true) {
        auto [sibling, point] = siblingOf(op);
        if (!sibling)
          break;
        for (Operation *gone : {sibling.getOperation(), op.getOperation()}) {
          live.erase(gone);
          fusedOps.remove(gone);
        }
        op = fuse(rewriter, sibling, op, point);
        live.insert(op);
        fusedOps.insert(op);
      }
    }
    // What both ops computed from the same inputs, once: with dominance
    // computed afresh (the regions of the fused-away ops are gone, and a
    // fused op's region may have taken the address of one).
    DominanceInfo fusedDominance;
    for (Operation *op : fusedOps)
      eliminateCommonSubExpressions(rewriter, fusedDominance, op);
  }
};
} // namespace
