//===- SlicesToLinalg.cpp - Static tensor slices as kernels -----*- C++ -*-===//
//
// A static tensor.insert_slice or tensor.extract_slice in a step's host
// code becomes a linalg.generic (see the pass description), which
// gs-linalg-to-gpu turns into a kernel: device memory is only copied
// whole.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/GSToGPU/KernelEntry.h"
#include "gs/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::gs {
#define GEN_PASS_DEF_SLICESTOLINALG
#include "gs/Conversion/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;

namespace {
/// Whether `slice` (an insert or extract) is host code of static offsets,
/// sizes and strides, from and to tensors of static shapes (its operand 0,
/// the source, and its result).
bool isStaticHostSlice(OffsetSizeAndStrideOpInterface slice) {
  auto staticShape = [](Value value) {
    return cast<RankedTensorType>(value.getType()).hasStaticShape();
  };
  return gs::isHostCode(slice) && staticShape(slice->getOperand(0)) &&
         staticShape(slice->getResult(0)) &&
         !ShapedType::isDynamicShape(slice.getStaticOffsets()) &&
         !ShapedType::isDynamicShape(slice.getStaticSizes()) &&
         !ShapedType::isDynamicShape(slice.getStaticStrides());
}

/// The generic that computes `insert`'s result, element by element.
Value buildInsertGeneric(OpBuilder &b, tensor::InsertSliceOp insert) {
  Location loc = insert.getLoc();
  RankedTensorType destType = insert.getDestType();
  int64_t rank = destType.getRank();
  ArrayRef<int64_t> offsets = insert.getStaticOffsets();
  ArrayRef<int64_t> sizes = insert.getStaticSizes();
  ArrayRef<int64_t> strides = insert.getStaticStrides();
  llvm::SmallBitVector dropped = insert.getDroppedDims();
  Value piece = insert.getSource();
  MLIRContext *context = b.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, context);
  Value init = tensor::EmptyOp::create(b, loc, destType.getShape(),
                                       destType.getElementType());
  auto generic = linalg::GenericOp::create(
      b, loc, destType, ValueRange{insert.getDest()}, ValueRange{init},
      SmallVector<AffineMap>{identity, identity},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nested, Location loc, ValueRange arguments) {
        auto constant = [&](int64_t value) -> Value {
          return arith::ConstantIndexOp::create(nested, loc, value);
        };
        auto both = [&](Value a, Value c) -> Value {
          return a ? arith::AndIOp::create(nested, loc, a, c).getResult() : c;
        };
        Value inside;
        SmallVector<Value> pieceIndices;
        for (int64_t d = 0; d < rank; ++d) {
          Value index = linalg::IndexOp::create(nested, loc, d);
          Value relative =
              arith::SubIOp::create(nested, loc, index, constant(offsets[d]));
          int64_t span = (sizes[d] - 1) * strides[d] + 1;
          // offset <= index < offset + span, on the stride's grid.
          inside = both(inside, arith::CmpIOp::create(nested, loc,
                                                      arith::CmpIPredicate::sge,
                                                      relative, constant(0)));
          inside =
              both(inside,
                   arith::CmpIOp::create(nested, loc, arith::CmpIPredicate::slt,
                                         relative, constant(span)));
          if (strides[d] != 1) {
            Value phase = arith::RemSIOp::create(nested, loc, relative,
                                                 constant(strides[d]));
            inside = both(inside, arith::CmpIOp::create(
                                      nested, loc, arith::CmpIPredicate::eq,
                                      phase, constant(0)));
          }
          if (dropped.test(d))
            continue;
          // The piece's index, clamped into it: read in bounds, then
          // selected only inside.
          Value clamped =
              arith::MaxSIOp::create(nested, loc, relative, constant(0));
          if (strides[d] != 1)
            clamped = arith::DivUIOp::create(nested, loc, clamped,
                                             constant(strides[d]));
          clamped = arith::MinSIOp::create(nested, loc, clamped,
                                           constant(sizes[d] - 1));
          pieceIndices.push_back(clamped);
        }
        Value element =
            tensor::ExtractOp::create(nested, loc, piece, pieceIndices);
        Value picked =
            arith::SelectOp::create(nested, loc, inside, element, arguments[0]);
        linalg::YieldOp::create(nested, loc, picked);
      });
  return generic.getResult(0);
}

/// The generic that computes `extract`'s result: each element read from
/// the source at offset + index * stride.
Value buildExtractGeneric(OpBuilder &b, tensor::ExtractSliceOp extract) {
  Location loc = extract.getLoc();
  RankedTensorType type = extract.getType();
  int64_t sourceRank = extract.getSourceType().getRank();
  ArrayRef<int64_t> offsets = extract.getStaticOffsets();
  ArrayRef<int64_t> strides = extract.getStaticStrides();
  llvm::SmallBitVector dropped = extract.getDroppedDims();
  Value source = extract.getSource();
  int64_t rank = type.getRank();
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  auto generic = linalg::GenericOp::create(
      b, loc, type, ValueRange{}, ValueRange{init},
      SmallVector<AffineMap>{
          AffineMap::getMultiDimIdentityMap(rank, b.getContext())},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nested, Location loc, ValueRange) {
        SmallVector<Value> indices;
        int64_t resultDim = 0;
        for (int64_t d = 0; d < sourceRank; ++d) {
          Value offset =
              arith::ConstantIndexOp::create(nested, loc, offsets[d]);
          if (dropped.test(d)) {
            indices.push_back(offset);
            continue;
          }
          Value index = linalg::IndexOp::create(nested, loc, resultDim++);
          if (strides[d] != 1)
            index = arith::MulIOp::create(
                nested, loc, index,
                arith::ConstantIndexOp::create(nested, loc, strides[d]));
          indices.push_back(arith::AddIOp::create(nested, loc, index, offset));
        }
        Value element = tensor::ExtractOp::create(nested, loc, source, indices);
        linalg::YieldOp::create(nested, loc, element);
      });
  return generic.getResult(0);
}

struct SlicesToLinalgPass
    : mlir::gs::impl::SlicesToLinalgBase<SlicesToLinalgPass> {
  void runOnOperation() override {
    SmallVector<OffsetSizeAndStrideOpInterface> slices;
    getOperation().walk([&](Operation *op) {
      if (isa<tensor::InsertSliceOp, tensor::ExtractSliceOp>(op) &&
          isStaticHostSlice(cast<OffsetSizeAndStrideOpInterface>(op)))
        slices.push_back(cast<OffsetSizeAndStrideOpInterface>(op));
    });
    for (OffsetSizeAndStrideOpInterface slice : slices) {
      OpBuilder b(slice);
      Value computed =
          isa<tensor::InsertSliceOp>(slice)
              ? buildInsertGeneric(b, cast<tensor::InsertSliceOp>(slice))
              : buildExtractGeneric(b, cast<tensor::ExtractSliceOp>(slice));
      slice->getResult(0).replaceAllUsesWith(computed);
      slice->erase();
    }
  }
};
} // namespace
