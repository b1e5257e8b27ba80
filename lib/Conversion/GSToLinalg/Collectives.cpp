//===- Collectives.cpp - Calls of the runtime's collectives ----*- C++ -*-===//
//
// gs.all_reduce and gs.world_size become calls of the C functions of
// include/gs/Runtime/Collectives.h, which the training runtime carries
// over MPI or NCCL (or, with no communicator, computes for one rank):
//
//   gs_all_reduce_<sum|max|stats>_<f32|f64|i64>(memref<?xT> input,
//                                               memref<?xT> output)
//   int64_t gs_world_size(void)
//
// An all_reduce passes its input flattened to one dimension and a fresh
// buffer for the result, which becomes the result tensor.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::to_linalg;

namespace {
/// The private declaration of the runtime function `name` in the module of
/// `op`, added on first use.
func::FuncOp runtimeFunction(OpBuilder &b, Operation *op, StringRef name,
                             FunctionType type) {
  auto module = op->getParentOfType<ModuleOp>();
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto function = func::FuncOp::create(b, op->getLoc(), name, type);
  function.setPrivate();
  return function;
}

/// "f32", "f64" or "i64".
std::string elementName(Type type) {
  std::string name;
  llvm::raw_string_ostream os(name);
  os << type;
  return name;
}

struct AllReduceLowering : OpConversionPattern<AllReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AllReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = tensorTypeOf(adaptor.getInput());
    Type element = type.getElementType();
    StringRef reduction = isa<StatsType>(op.getInput().getType())
                              ? "stats"
                              : stringifyCollectiveReduction(op.getReduction());
    std::string name =
        ("gs_all_reduce_" + reduction + "_" + elementName(element)).str();
    auto flatTensor = RankedTensorType::get({type.getNumElements()}, element);
    auto flatBuffer = MemRefType::get({type.getNumElements()}, element);
    auto anyLength = MemRefType::get({ShapedType::kDynamic}, element);
    func::FuncOp callee =
        runtimeFunction(rewriter, op, name,
                        rewriter.getFunctionType({anyLength, anyLength}, {}));

    Value flat = reshapeTo(rewriter, loc, adaptor.getInput(), flatTensor);
    Value source = bufferization::ToBufferOp::create(rewriter, loc, flatBuffer,
                                                     flat, /*read_only=*/true);
    Value buffer = memref::AllocOp::create(rewriter, loc, flatBuffer);
    Value input = memref::CastOp::create(rewriter, loc, anyLength, source);
    Value output = memref::CastOp::create(rewriter, loc, anyLength, buffer);
    func::CallOp::create(rewriter, loc, callee, ValueRange{input, output});
    // The deallocation pipeline frees the buffer.
    Value reduced = bufferization::ToTensorOp::create(rewriter, loc, flatTensor,
                                                      buffer, /*restrict=*/true,
                                                      /*writable=*/true);
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, reduced, type));
    return success();
  }
};

struct WorldSizeLowering : OpConversionPattern<WorldSizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(WorldSizeOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    func::FuncOp callee =
        runtimeFunction(rewriter, op, "gs_world_size",
                        rewriter.getFunctionType({}, {rewriter.getI64Type()}));
    rewriter.replaceOpWithNewOp<func::CallOp>(op, callee, ValueRange{});
    return success();
  }
};
} // namespace

void to_linalg::populateCollectivePatterns(TypeConverter &converter,
                                           RewritePatternSet &patterns) {
  patterns.add<AllReduceLowering, WorldSizeLowering>(converter,
                                                     patterns.getContext());
}
