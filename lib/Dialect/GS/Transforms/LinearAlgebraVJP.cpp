//===- LinearAlgebraVJP.cpp - Gradients of GEMMs and matmuls ----*- C++ -*-===//
//
// The gradients of a GEMM are GEMMs (two per op: the backward GEMMs whose
// outputs the gradient-scaling pass measures), built with transpose flags
// rather than explicit transposes.
//
//===----------------------------------------------------------------------===//

#include "VJPUtils.h"

#include "gs/Dialect/GS/IR/GSOps.h"

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::vjp;

namespace {
/// `alpha * op(a) * op(b)`, where `op` transposes when asked.
Value gemm(OpBuilder &b, Location loc, Value lhs, bool transLhs, Value rhs,
           bool transRhs, double alpha) {
  return GemmOp::create(b, loc, lhs, rhs, /*c=*/Value(),
                        transLhs ? b.getUnitAttr() : UnitAttr(),
                        transRhs ? b.getUnitAttr() : UnitAttr(),
                        b.getF32FloatAttr(alpha), b.getF32FloatAttr(1.0));
}

/// Y = alpha * op(A) op(B) + beta * C.
///   dA = alpha * g op(B)^T      (transposed back when transA)
///   dB = alpha * op(A)^T g      (transposed back when transB)
///   dC = beta * g, summed to C's shape.
struct GemmVJP : DifferentiableOpInterface::ExternalModel<GemmVJP, GemmOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    auto gemmOp = cast<GemmOp>(op);
    Location loc = op->getLoc();
    Value a = gemmOp.getA(), bMat = gemmOp.getB(), g = gradients[0];
    bool transA = gemmOp.getTransA(), transB = gemmOp.getTransB();
    double alpha = gemmOp.getAlpha().convertToDouble();
    Value ga = castLike(b, loc, g, typeOf(a));
    Value gb = castLike(b, loc, g, typeOf(bMat));

    Value da = transA ? gemm(b, loc, bMat, transB, ga, true, alpha)
                      : gemm(b, loc, ga, false, bMat, !transB, alpha);
    Value db = transB ? gemm(b, loc, gb, true, a, transA, alpha)
                      : gemm(b, loc, a, !transA, gb, false, alpha);
    operandGradients.push_back(castLike(b, loc, da, typeOf(a)));
    operandGradients.push_back(castLike(b, loc, db, typeOf(bMat)));
    if (Value c = gemmOp.getC()) {
      double beta = gemmOp.getBeta().convertToDouble();
      Value scaled =
          beta == 1.0
              ? g
              : MulOp::create(b, loc, g,
                              scalar(b, loc, typeOf(g).getElementType(), beta))
                    .getResult();
      operandGradients.push_back(unbroadcast(b, loc, scaled, typeOf(c)));
    }
    return success();
  }
};

/// The last two dimensions of `value` swapped.
Value transposeLastTwo(OpBuilder &b, Location loc, Value value) {
  int64_t rank = typeOf(value).getRank();
  SmallVector<int64_t> permutation(rank);
  for (int64_t d = 0; d < rank; ++d)
    permutation[d] = d;
  std::swap(permutation[rank - 1], permutation[rank - 2]);
  return TransposeOp::create(b, loc, value, permutation);
}

/// `type` with a 1 inserted at `position` (negative: from the end).
RankedTensorType insertOne(RankedTensorType type, int64_t position) {
  SmallVector<int64_t> shape(type.getShape());
  if (position < 0)
    position += shape.size() + 1;
  shape.insert(shape.begin() + position, 1);
  return type.clone(shape);
}

/// NumPy matmul: a 1-D operand becomes a row (left) or column (right)
/// matrix, then dA = g B^T and dB = A^T g, summed over broadcast batches.
struct MatMulVJP
    : DifferentiableOpInterface::ExternalModel<MatMulVJP, MatMulOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    auto matmul = cast<MatMulOp>(op);
    Location loc = op->getLoc();
    Value lhs = matmul.getLhs(), rhs = matmul.getRhs(), g = gradients[0];
    RankedTensorType lhsType = typeOf(lhs), rhsType = typeOf(rhs);
    RankedTensorType gType = typeOf(g);
    if (lhsType.getRank() == 1) {
      lhs = reshape(b, loc, lhs, insertOne(lhsType, 0));
      gType = insertOne(gType, -2);
    }
    if (rhsType.getRank() == 1) {
      rhs = reshape(b, loc, rhs, insertOne(rhsType, 1));
      gType = insertOne(gType, -1);
    }
    g = reshape(b, loc, g, gType);
    Value gForLhs = castLike(b, loc, g, lhsType);
    Value rhsT = transposeLastTwo(b, loc, rhs);
    Value dLhs = MatMulOp::create(b, loc, gForLhs, rhsT);
    Value lhsT = transposeLastTwo(b, loc, lhs);
    Value gForRhs = castLike(b, loc, g, rhsType);
    Value dRhs = MatMulOp::create(b, loc, lhsT, gForRhs);
    operandGradients.push_back(
        reshape(b, loc, unbroadcast(b, loc, dLhs, typeOf(lhs)), lhsType));
    operandGradients.push_back(
        reshape(b, loc, unbroadcast(b, loc, dRhs, typeOf(rhs)), rhsType));
    return success();
  }
};
} // namespace

void mlir::gs::registerLinearAlgebraVJPs(MLIRContext *context) {
  GemmOp::attachInterface<GemmVJP>(*context);
  MatMulOp::attachInterface<MatMulVJP>(*context);
}
