//===- Collectives.cpp - Calls of the runtime's collectives ----*- C++ -*-===//
//
// gs.all_reduce and gs.world_size become calls of the C functions of
// include/gs/Runtime/Collectives.h, which the training runtime carries
// over MPI or NCCL (or, with no communicator, computes for one rank):
//
//   int64_t gs_all_reduce_start_<sum|max|stats>_<f32|f64|i64>(
//       memref<?xT> input, memref<?xT> output)
//   gs_all_reduce_wait_<f32|f64|i64>(int64_t request, memref<?xT> input,
//                                    memref<?xT> output)
//   int64_t gs_world_size(void)
//
// An all_reduce starts where it stands, on its input flattened to one
// dimension and a fresh buffer for the result, and is waited for just
// before its result is first used; the result tensor is the buffer read
// after the wait.
//
// With device collectives (a step for the GPU, its buffers in device
// memory) the calls are gs_device_all_reduce_{start_<sum|max>,wait}_<T>,
// which a GPU transport queues on the GPU: the start after the work
// queued so far, the wait making the later work wait for it. Such
// transports reduce only with their built-in operations, so a statistics
// record is all-reduced twice, summed and maximized
// (gs_device_all_reduce_start_stats_<sum|max>_f64: the same reductions,
// counted as statistics), and each field taken from the right one. The
// world size arrives in a device buffer too
// (gs_device_world_size(memref<?xi64>)), so that the host never waits to
// read it.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "gs/Support/Telemetry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
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

/// The buffer of the one-dimensional tensor `flat`, as the runtime's
/// functions take it.
Value runtimeBuffer(OpBuilder &b, Location loc, Value flat) {
  auto type = cast<RankedTensorType>(flat.getType());
  auto buffer = MemRefType::get(type.getShape(), type.getElementType());
  Value source = bufferization::ToBufferOp::create(b, loc, buffer, flat,
                                                   /*read_only=*/true);
  return memref::CastOp::create(
      b, loc, MemRefType::get({ShapedType::kDynamic}, type.getElementType()),
      source);
}

/// An all-reduce the runtime has started: its request, input and output.
struct StartedAllReduce {
  Value request, input, output;
};

/// Starts the all-reduce of the one-dimensional `flat` with the runtime's
/// `<prefix>all_reduce_start_<reduction>_<T>`, from its buffer into a
/// fresh one.
StartedAllReduce startAllReduce(ConversionPatternRewriter &rewriter,
                                Operation *op, StringRef prefix,
                                StringRef reduction, Value flat) {
  Location loc = op->getLoc();
  auto flatTensor = cast<RankedTensorType>(flat.getType());
  Type element = flatTensor.getElementType();
  auto anyLength = MemRefType::get({ShapedType::kDynamic}, element);
  std::string name =
      (prefix + "all_reduce_start_" + reduction + "_" + elementName(element))
          .str();
  func::FuncOp callee =
      runtimeFunction(rewriter, op, name,
                      rewriter.getFunctionType({anyLength, anyLength},
                                               {rewriter.getI64Type()}));
  Value input = runtimeBuffer(rewriter, loc, flat);
  Value output = memref::AllocOp::create(
      rewriter, loc, MemRefType::get(flatTensor.getShape(), element));
  Value outputArgument =
      memref::CastOp::create(rewriter, loc, anyLength, output);
  Value request = func::CallOp::create(rewriter, loc, callee,
                                       ValueRange{input, outputArgument})
                      .getResult(0);
  return {request, flat, output};
}

/// Waits for `started` with the runtime's `<prefix>all_reduce_wait_<T>`,
/// which takes the buffers again: the input stays alive (and unchanged)
/// until then. Returns the result.
Value waitForAllReduce(ConversionPatternRewriter &rewriter, Operation *op,
                       StringRef prefix, const StartedAllReduce &started) {
  Location loc = op->getLoc();
  auto flatTensor = cast<RankedTensorType>(started.input.getType());
  Type element = flatTensor.getElementType();
  auto anyLength = MemRefType::get({ShapedType::kDynamic}, element);
  std::string name = (prefix + "all_reduce_wait_" + elementName(element)).str();
  func::FuncOp callee =
      runtimeFunction(rewriter, op, name,
                      rewriter.getFunctionType(
                          {rewriter.getI64Type(), anyLength, anyLength}, {}));
  Value input = runtimeBuffer(rewriter, loc, started.input);
  Value output =
      memref::CastOp::create(rewriter, loc, anyLength, started.output);
  func::CallOp::create(rewriter, loc, callee,
                       ValueRange{started.request, input, output});
  // The deallocation pipeline frees the buffer.
  return bufferization::ToTensorOp::create(rewriter, loc, flatTensor,
                                           started.output,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

/// The op of `op`'s block before which its results are first used; null
/// if none is.
Operation *firstUseInBlock(Operation *op) {
  Block *block = op->getBlock();
  Operation *first = nullptr;
  for (Operation *user : op->getUsers()) {
    Operation *ancestor = block->findAncestorOpInBlock(*user);
    if (ancestor && (!first || ancestor->isBeforeInBlock(first)))
      first = ancestor;
  }
  return first;
}

/// Statistics records from their sums and their maxima: the maximum
/// magnitude field from `maxima`, every other field from `sums`.
Value mergeStatsRecords(OpBuilder &b, Location loc, Value sums, Value maxima) {
  auto type = cast<RankedTensorType>(sums.getType());
  MLIRContext *context = b.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, context);
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  auto merge = linalg::GenericOp::create(
      b, loc, type, ValueRange{sums, maxima}, ValueRange{init},
      SmallVector<AffineMap>(3, identity), {utils::IteratorType::parallel},
      [&](OpBuilder &nested, Location loc, ValueRange arguments) {
        Value index = linalg::IndexOp::create(nested, loc, 0);
        Value fields = arith::ConstantIndexOp::create(
            nested, loc, telemetry::NumStatsFields);
        Value field = arith::RemUIOp::create(nested, loc, index, fields);
        Value maxAbs =
            arith::ConstantIndexOp::create(nested, loc, telemetry::MaxAbs);
        Value isMax = arith::CmpIOp::create(
            nested, loc, arith::CmpIPredicate::eq, field, maxAbs);
        Value picked = arith::SelectOp::create(nested, loc, isMax, arguments[1],
                                               arguments[0]);
        linalg::YieldOp::create(nested, loc, picked);
      });
  return merge.getResult(0);
}

/// Starts the all-reduce where the op stands and waits for it just before
/// the first use of its result (where gs-overlap-collectives left it, the
/// ops in between run while it is under way).
struct AllReduceLowering : OpConversionPattern<AllReduceOp> {
  AllReduceLowering(TypeConverter &converter, MLIRContext *context,
                    bool deviceBuffers)
      : OpConversionPattern(converter, context), deviceBuffers(deviceBuffers) {}

  LogicalResult
  matchAndRewrite(AllReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = tensorTypeOf(adaptor.getInput());
    auto flatTensor =
        RankedTensorType::get({type.getNumElements()}, type.getElementType());
    Value flat = reshapeTo(rewriter, loc, adaptor.getInput(), flatTensor);
    bool stats = isa<StatsType>(op.getInput().getType());
    StringRef reduction = stringifyCollectiveReduction(op.getReduction());
    StringRef prefix = deviceBuffers ? "gs_device_" : "gs_";
    // A device transport has no custom reduction: a statistics record is
    // summed and maximized, and merged.
    SmallVector<StartedAllReduce, 2> started;
    if (!stats) {
      started.push_back(startAllReduce(rewriter, op, prefix, reduction, flat));
    } else if (!deviceBuffers) {
      started.push_back(startAllReduce(rewriter, op, prefix, "stats", flat));
    } else {
      started.push_back(
          startAllReduce(rewriter, op, prefix, "stats_sum", flat));
      started.push_back(
          startAllReduce(rewriter, op, prefix, "stats_max", flat));
    }

    if (Operation *firstUse = firstUseInBlock(op))
      rewriter.setInsertionPoint(firstUse);
    SmallVector<Value, 2> reduced;
    for (const StartedAllReduce &one : started)
      reduced.push_back(waitForAllReduce(rewriter, op, prefix, one));
    Value result =
        reduced.size() == 1
            ? reduced.front()
            : mergeStatsRecords(rewriter, loc, reduced[0], reduced[1]);
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, result, type));
    return success();
  }

private:
  bool deviceBuffers;
};

struct WorldSizeLowering : OpConversionPattern<WorldSizeOp> {
  WorldSizeLowering(TypeConverter &converter, MLIRContext *context,
                    bool deviceBuffers)
      : OpConversionPattern(converter, context), deviceBuffers(deviceBuffers) {}

  LogicalResult
  matchAndRewrite(WorldSizeOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type i64 = rewriter.getI64Type();
    if (!deviceBuffers) {
      func::FuncOp callee = runtimeFunction(
          rewriter, op, "gs_world_size", rewriter.getFunctionType({}, {i64}));
      rewriter.replaceOpWithNewOp<func::CallOp>(op, callee, ValueRange{});
      return success();
    }
    // Into a device buffer, read where it is used (on the device: the
    // host never waits for it).
    Location loc = op.getLoc();
    auto one = MemRefType::get({1}, i64);
    auto anyLength = MemRefType::get({ShapedType::kDynamic}, i64);
    func::FuncOp callee =
        runtimeFunction(rewriter, op, "gs_device_world_size",
                        rewriter.getFunctionType({anyLength}, {}));
    Value buffer = memref::AllocOp::create(rewriter, loc, one);
    Value output = memref::CastOp::create(rewriter, loc, anyLength, buffer);
    func::CallOp::create(rewriter, loc, callee, ValueRange{output});
    Value tensor = bufferization::ToTensorOp::create(
        rewriter, loc, RankedTensorType::get({1}, i64), buffer,
        /*restrict=*/true, /*writable=*/true);
    Value scalar =
        reshapeTo(rewriter, loc, tensor, RankedTensorType::get({}, i64));
    rewriter.replaceOpWithNewOp<tensor::ExtractOp>(op, scalar, ValueRange{});
    return success();
  }

private:
  bool deviceBuffers;
};
} // namespace

void to_linalg::populateCollectivePatterns(TypeConverter &converter,
                                           RewritePatternSet &patterns,
                                           bool deviceCollectives) {
  patterns.add<AllReduceLowering, WorldSizeLowering>(
      converter, patterns.getContext(), deviceCollectives);
}
