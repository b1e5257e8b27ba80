//===- LinalgReductions.h - How a linalg.generic reduces --------*- C++ -*-===//
//
// The combining op of each output of a reducing linalg.generic and the
// value it starts from, shared by the passes that reorder a reduction:
// gs-split-reductions (for every target) and gs-linalg-to-gpu (across a
// block's threads).
//
//===----------------------------------------------------------------------===//

#ifndef GS_CONVERSION_LINALGREDUCTIONS_H
#define GS_CONVERSION_LINALGREDUCTIONS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::gs {

/// The op that combines output `output`'s running value with another in
/// the body of `op`: the body yields combiner(current, x), where `current`
/// (the output's block argument) has no other use, so `x` does not depend
/// on it. Null for any other body.
Operation *getReductionCombiner(linalg::GenericOp op, unsigned output);

/// The value a combiner leaves the other operand unchanged with.
struct CombinerIdentity {
  TypedAttr value;
  /// Whether the combined result is the same in any order (and, or, integer
  /// sums and products, max and min) rather than depending on it
  /// (floating-point sums and products).
  bool orderIndependent;
};

/// The identity of `combiner` (e.g. arith.andi) on `type`; nullopt for a
/// combiner without one or not known.
std::optional<CombinerIdentity> getCombinerIdentity(Operation *combiner,
                                                    Type type);

/// How one output of a reducing linalg.generic is combined.
struct OutputReduction {
  Operation *combiner;
  CombinerIdentity identity;
};

/// How output `output` of `op` is combined: its combiner
/// (getReductionCombiner) and that combiner's identity
/// (getCombinerIdentity); nullopt where it has neither.
std::optional<OutputReduction> getOutputReduction(linalg::GenericOp op,
                                                  unsigned output);

/// Each output's getOutputReduction, in output order; nullopt where an
/// output has none.
std::optional<SmallVector<OutputReduction>>
getOutputReductions(linalg::GenericOp op);

/// Whether one of `reductions` depends on the order it combines in (a
/// floating-point sum or product).
bool isOrderDependent(ArrayRef<OutputReduction> reductions);

/// Whether every output of `op` is written once per point (indexed by a
/// permutation of the loops: an elementwise op's, also where fused with a
/// reduction) or is a reduction (getOutputReduction) that `accept` takes,
/// given its initial value.
bool outputsWrittenOrReduced(
    linalg::GenericOp op,
    llvm::function_ref<bool(OpOperand &init, const OutputReduction &)> accept);

} // namespace mlir::gs

#endif // GS_CONVERSION_LINALGREDUCTIONS_H
