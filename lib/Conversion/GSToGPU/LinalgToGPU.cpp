//===- LinalgToGPU.cpp - The rest of a step's linalg ops to kernels -*- C++
//-*-=//
//
// After convert-gs-to-gpu and convert-gs-to-linalg, what the GEMM and
// decision kernels do not compute is linalg on tensors: fused elementwise
// chains, broadcasts, casts, gathers, normalizations, losses, reductions
// (the eval step's FP32 contractions among them) and the optimizer's
// update. Each such op becomes a call of a kernel with one thread per point
// of its parallel loops, or a register block of points, which runs the
// op's reduction loops in their order: the CPU lowering's order, so a step
// on these kernels computes the CPU's values bit for bit.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/GSToGPU/KernelEntry.h"
#include "gs/Conversion/LinalgReductions.h"
#include "gs/Conversion/Passes.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir::gs {
#define GEN_PASS_DEF_CONVERTLINALGTOGPU
#include "gs/Conversion/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;
using namespace mlir::gs;

namespace {
/// Threads per block of the kernels; one thread per parallel point.
constexpr int64_t kThreadsPerBlock = 256;
/// The most blocks along a grid's x dimension.
constexpr int64_t kMaxGridX = (int64_t{1} << 31) - 1;
/// Reductions over at least this many points, whose every combination is
/// exact in any order, are split across a block's threads.
constexpr int64_t kSplitReductionPoints = 4096;
/// A reduction over at least this many points runs several parallel points
/// per thread where an input does not vary along one of the parallel
/// loops: the thread loads that input's element once for all of them.
constexpr int64_t kBlockedReductionPoints = 32;
/// Register blocks leave at least this many threads (about two blocks of
/// 256 per multiprocessor of an H100), and block at most two loops.
constexpr int64_t kMinBlockedThreads = 65536;
constexpr unsigned kMaxRegisterBlocks = 2;

MemRefType bufferTypeOf(Type tensor) {
  auto type = cast<RankedTensorType>(tensor);
  return MemRefType::get(type.getShape(), type.getElementType());
}

/// How a value the op's body uses from above reaches the kernel.
enum class CaptureKind {
  /// A constant: rebuilt in the kernel.
  Constant,
  /// A tensor the body reads elements of: a kernel argument.
  Tensor,
  /// An element of a tensor taken at constant indices: the tensor is a
  /// kernel argument and the element is read on the device.
  Element,
  /// Any other scalar: passed in a one-element tensor.
  Scalar,
};

/// A kernel for one linalg.generic on tensors and the operands of its call.
class GenericKernelBuilder {
public:
  /// With `registerBlocks`, a long reduction may compute several points
  /// per thread (planRegisterBlocks).
  GenericKernelBuilder(linalg::GenericOp op, bool registerBlocks)
      : op(op), mayBlock(registerBlocks) {}

  /// Plans the kernel's arguments; fails (the op stays on the host) for
  /// dynamic loop bounds, more points than a grid's 2^31 - 1 blocks hold,
  /// values from above that are neither tensors nor scalars, bodies that
  /// use a tensor from above other than through tensor.extract, and
  /// linalg.index in a nested region.
  LogicalResult plan();

  /// Builds `@name` on memrefs: the inputs, then one output per result.
  func::FuncOp build(OpBuilder &builder, StringRef name);

  /// The operands of the call of the kernel's entry, built before `op`.
  SmallVector<Value> callOperands(OpBuilder &b);

  unsigned numInputs() const { return inputs.size(); }
  /// The points of the parallel loops.
  int64_t numPoints() const {
    int64_t points = 1;
    for (unsigned dim : parallelDims)
      points *= sizes[dim];
    return points;
  }
  /// The kernel's threads (without a split reduction): a thread per point,
  /// or per register block of points.
  int64_t numThreads() const {
    int64_t threads = numPoints();
    for (const RegisterBlock &block : registerBlocks)
      threads /= block.factor;
    return threads;
  }
  bool hasReductions() const { return !reductionDims.empty(); }
  ArrayRef<int64_t> loopSizes() const { return sizes; }
  /// The points of the reduction loops.
  int64_t numReductionPoints() const {
    int64_t points = 1;
    for (unsigned dim : reductionDims)
      points *= sizes[dim];
    return points;
  }
  /// Whether the reduction is split across a block's threads: large, with
  /// every output combined exactly in any order (and, or, integer sums,
  /// max and min), so that the result is the sequential one bit for bit.
  bool splitsReduction() const { return !combiners.empty(); }
  /// Whether a thread, one per parallel point, stores output elements no
  /// other thread stores: each output indexed by every parallel loop.
  bool storesOwnPointOnly() {
    return llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
      AffineMap map = op.getMatchingIndexingMap(&init);
      return map.isProjectedPermutation() &&
             llvm::all_of(parallelDims, [&](unsigned dim) {
               return map.isFunctionOfDim(dim);
             });
    });
  }

private:
  /// A parallel loop along which each thread computes `factor` points,
  /// `size / factor` apart (a warp's threads stay on consecutive points, so
  /// each load is as coalesced as with a point per thread). The points'
  /// outputs are carried side by side through the reduction loops, each
  /// combined in its own order; the loads of the inputs the loop does not
  /// index are the same for all of them, and CSE keeps one.
  struct RegisterBlock {
    unsigned dim;
    int64_t factor;
  };

  /// The threads of one block that split a reduction at one parallel point:
  /// this thread's index and each output's partial values in workgroup
  /// memory.
  struct SplitReduction {
    Value thread;
    ValueRange partials;
  };

  /// Finds the exact combiner of every output and its identity (combiners
  /// stays empty if one has none).
  void planSplit();

  /// Chooses the register blocks of a long reduction that is not split:
  /// first the loop along which the most inputs are invariant, then the
  /// one along which the most of the others are, each by 4, 3 or 2 where
  /// that divides the loop and leaves enough threads.
  void planRegisterBlocks();

  /// The extent of a thread's index along `dim`: the loop's size, divided
  /// by the factor of a register block along it.
  int64_t threadExtent(unsigned dim) const;

  /// The ivs of the loops `dims` at the row-major linear index `linear`
  /// (the first dimension unbounded; each loop's extent a thread's),
  /// built at `b`'s insertion point.
  SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                                 ArrayRef<unsigned> dims) const;

  /// Emits the code of one thread at `b`'s insertion point, given the
  /// kernel's arguments and the thread's point of the parallel loops (the
  /// first of its register block); with `split`, the thread's share of the
  /// reduction at that point.
  void buildThread(OpBuilder &b, ValueRange arguments, ValueRange parallelIvs,
                   const SplitReduction *split = nullptr);

  linalg::GenericOp op;
  bool mayBlock;
  SmallVector<int64_t> sizes;
  SmallVector<unsigned> parallelDims, reductionDims;
  /// The values passed to the entry: tensors, or for a Scalar capture the
  /// scalar to wrap in one.
  SmallVector<Value> inputs;
  /// For each result: the index of its initial value among the inputs,
  /// where the body reads it and it is not a constant fill.
  SmallVector<std::optional<unsigned>> initInputs;
  /// For each result: the value its initial value is filled with, where
  /// the body reads it and it is a constant (the kernel uses the constant
  /// and the fill need not run).
  SmallVector<TypedAttr> initConstants;
  /// The inputs of the op's tensor operands and initial values.
  DenseMap<OpOperand *, unsigned> operandInputs;
  /// Values used from above (and scalar operands), how they reach the
  /// kernel, and the input they come in.
  llvm::SetVector<Value> captured;
  DenseMap<Value, CaptureKind> captureKinds;
  DenseMap<Value, unsigned> captureInputs;
  /// For a split reduction, each output's combining op in the body and
  /// the value it starts from.
  SmallVector<Operation *> combiners;
  SmallVector<TypedAttr> identities;
  SmallVector<RegisterBlock> registerBlocks;
};

/// Whether every use of `tensor` in `region` is a tensor.extract directly
/// in the region's block.
bool onlyExtractedIn(Value tensor, Region &region) {
  for (OpOperand &use : tensor.getUses()) {
    Operation *user = use.getOwner();
    if (!region.isAncestor(user->getParentRegion()))
      continue;
    if (!isa<tensor::ExtractOp>(user) || user->getParentRegion() != &region)
      return false;
  }
  return true;
}

LogicalResult GenericKernelBuilder::plan() {
  sizes = op.getStaticLoopRanges();
  if (llvm::any_of(sizes, ShapedType::isDynamic))
    return failure();
  for (auto [dim, type] : llvm::enumerate(op.getIteratorTypesArray()))
    (type == utils::IteratorType::parallel ? parallelDims : reductionDims)
        .push_back(dim);
  if (llvm::divideCeil(numPoints(), kThreadsPerBlock) > kMaxGridX)
    return failure();
  Block &body = op.getRegion().front();
  WalkResult nestedIndex = op.getRegion().walk([&](linalg::IndexOp index) {
    return index->getBlock() == &body ? WalkResult::advance()
                                      : WalkResult::interrupt();
  });
  if (nestedIndex.wasInterrupted())
    return failure();

  auto addInput = [&](Value value, OpOperand *operand) {
    inputs.push_back(value);
    if (operand)
      operandInputs[operand] = inputs.size() - 1;
    return inputs.size() - 1;
  };
  // How a scalar from above reaches the kernel; false for other types.
  auto captureScalar = [&](Value value) {
    if (captureKinds.count(value))
      return true;
    if (!value.getType().isIntOrIndexOrFloat())
      return false;
    captured.insert(value);
    if (matchPattern(value, m_Constant())) {
      captureKinds[value] = CaptureKind::Constant;
      return true;
    }
    auto extract = value.getDefiningOp<tensor::ExtractOp>();
    if (extract && llvm::all_of(extract.getIndices(), [](Value index) {
          return matchPattern(index, m_Constant());
        })) {
      captureKinds[value] = CaptureKind::Element;
      captureInputs[value] = addInput(extract.getTensor(), nullptr);
      return true;
    }
    captureKinds[value] = CaptureKind::Scalar;
    captureInputs[value] = addInput(value, nullptr);
    return true;
  };

  for (OpOperand *operand : op.getDpsInputOperands()) {
    if (isa<RankedTensorType>(operand->get().getType()))
      addInput(operand->get(), operand);
    else if (!captureScalar(operand->get()))
      return failure();
  }
  for (OpOperand &init : op.getDpsInitsMutable()) {
    TypedAttr filled;
    if (auto fill = init.get().getDefiningOp<linalg::FillOp>()) {
      Value value = fill.value();
      matchPattern(value, m_Constant(&filled));
    }
    bool read = !op.getMatchingBlockArgument(&init).use_empty();
    initConstants.push_back(read ? filled : TypedAttr());
    initInputs.push_back(read && !filled
                             ? std::optional(addInput(init.get(), &init))
                             : std::nullopt);
  }

  llvm::SetVector<Value> fromAbove;
  getUsedValuesDefinedAbove(op.getRegion(), fromAbove);
  for (Value value : fromAbove) {
    if (!isa<RankedTensorType>(value.getType())) {
      if (!captureScalar(value))
        return failure();
      continue;
    }
    if (!onlyExtractedIn(value, op.getRegion()))
      return failure();
    captured.insert(value);
    captureKinds[value] = CaptureKind::Tensor;
    captureInputs[value] = addInput(value, nullptr);
  }
  planSplit();
  planRegisterBlocks();
  return success();
}

void GenericKernelBuilder::planRegisterBlocks() {
  if (!mayBlock || reductionDims.empty() || splitsReduction() ||
      numReductionPoints() < kBlockedReductionPoints || !storesOwnPointOnly())
    return;
  // The maps of the inputs the body reads through one.
  SmallVector<AffineMap> inputMaps;
  for (OpOperand *operand : op.getDpsInputOperands())
    if (operandInputs.count(operand) &&
        !op.getMatchingBlockArgument(operand).use_empty())
      inputMaps.push_back(op.getMatchingIndexingMap(operand));
  llvm::SmallBitVector reused(inputMaps.size());
  int64_t threads = numPoints();
  while (registerBlocks.size() < kMaxRegisterBlocks) {
    std::optional<RegisterBlock> best;
    int bestInvariant = 0;
    for (unsigned dim : parallelDims) {
      if (llvm::any_of(registerBlocks, [&](const RegisterBlock &block) {
            return block.dim == dim;
          }))
        continue;
      int invariant = 0;
      for (auto [i, map] : llvm::enumerate(inputMaps))
        if (!reused[i] && !map.isFunctionOfDim(dim))
          ++invariant;
      if (invariant <= bestInvariant)
        continue;
      for (int64_t factor : {4, 3, 2}) {
        if (sizes[dim] % factor == 0 &&
            threads / factor >= kMinBlockedThreads) {
          best = RegisterBlock{dim, factor};
          bestInvariant = invariant;
          break;
        }
      }
    }
    if (!best)
      return;
    registerBlocks.push_back(*best);
    threads /= best->factor;
    for (auto [i, map] : llvm::enumerate(inputMaps))
      if (!map.isFunctionOfDim(best->dim))
        reused.set(i);
  }
}

int64_t GenericKernelBuilder::threadExtent(unsigned dim) const {
  for (const RegisterBlock &block : registerBlocks)
    if (block.dim == dim)
      return sizes[dim] / block.factor;
  return sizes[dim];
}

SmallVector<Value>
GenericKernelBuilder::delinearize(OpBuilder &b, Location loc, Value linear,
                                  ArrayRef<unsigned> dims) const {
  SmallVector<Value> ivs(dims.size());
  Value rest = linear;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    Value size = arith::ConstantIndexOp::create(b, loc, threadExtent(dims[i]));
    ivs[i] = i == 0 ? rest : arith::RemUIOp::create(b, loc, rest, size);
    if (i > 0)
      rest = arith::DivUIOp::create(b, loc, rest, size);
  }
  return ivs;
}

void GenericKernelBuilder::planSplit() {
  if (reductionDims.empty() || numReductionPoints() < kSplitReductionPoints)
    return;
  std::optional<SmallVector<OutputReduction>> reductions =
      getOutputReductions(op);
  if (!reductions || isOrderDependent(*reductions))
    return;
  for (const OutputReduction &reduction : *reductions) {
    combiners.push_back(reduction.combiner);
    identities.push_back(reduction.identity.value);
  }
}

SmallVector<Value> GenericKernelBuilder::callOperands(OpBuilder &b) {
  SmallVector<Value> operands;
  for (Value value : inputs) {
    if (!isa<RankedTensorType>(value.getType()))
      value = tensor::FromElementsOp::create(
          b, op.getLoc(), RankedTensorType::get({1}, value.getType()), value);
    operands.push_back(value);
  }
  return operands;
}

func::FuncOp GenericKernelBuilder::build(OpBuilder &builder, StringRef name) {
  Location loc = op.getLoc();
  SmallVector<Type> arguments;
  for (Value input : inputs) {
    Type type = input.getType();
    arguments.push_back(isa<RankedTensorType>(type)
                            ? bufferTypeOf(type)
                            : MemRefType::get({1}, type));
  }
  for (Type result : op.getResultTypes())
    arguments.push_back(bufferTypeOf(result));
  auto kernel = func::FuncOp::create(builder, loc, name,
                                     builder.getFunctionType(arguments, {}));
  Block *entry = kernel.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockBegin(entry);

  int64_t points = numPoints();
  if (splitsReduction() && points > 0) {
    // A block per parallel point, its threads sharing the reduction.
    auto constant = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(b, loc, value);
    };
    Value one = constant(1);
    auto space = gpu::AddressSpaceAttr::get(b.getContext(),
                                            gpu::AddressSpace::Workgroup);
    SmallVector<Type> partials;
    for (Type result : op.getResultTypes())
      partials.push_back(MemRefType::get({kThreadsPerBlock},
                                         getElementTypeOrSelf(result),
                                         MemRefLayoutAttrInterface(), space));
    Value gridSize = constant(points);
    Value blockSize = constant(kThreadsPerBlock);
    auto launch = gpu::LaunchOp::create(
        b, loc, gridSize, one, one, blockSize, one, one,
        /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
        /*asyncDependencies=*/{}, partials);
    OpBuilder t = OpBuilder::atBlockBegin(&launch.getBody().front());
    SmallVector<Value> ivs =
        delinearize(t, loc, launch.getBlockIds().x, parallelDims);
    SplitReduction split{launch.getThreadIds().x,
                         launch.getWorkgroupAttributions()};
    buildThread(t, entry->getArguments(), ivs, &split);
    gpu::TerminatorOp::create(t, loc);
    b.setInsertionPointToEnd(entry);
    func::ReturnOp::create(b, loc);
    return kernel;
  }
  // plan() keeps the grid within its limit; an empty op launches nothing.
  if (points > 0) {
    int64_t threadPoints = numThreads();
    int64_t threads = std::min(threadPoints, kThreadsPerBlock);
    int64_t blocks = llvm::divideCeil(threadPoints, threads);
    auto constant = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(b, loc, value);
    };
    Value one = constant(1);
    Value gridSize = constant(blocks);
    Value blockSize = constant(threads);
    auto launch =
        gpu::LaunchOp::create(b, loc, gridSize, one, one, blockSize, one, one);
    if (storesOwnPointOnly())
      launch->setAttr(kPerThreadOutputsAttrName, b.getUnitAttr());
    OpBuilder t = OpBuilder::atBlockBegin(&launch.getBody().front());
    // The thread's point: its index in the grid, row-major over the
    // parallel loops' thread extents.
    Value point = arith::AddIOp::create(
        t, loc,
        arith::MulIOp::create(t, loc, launch.getBlockIds().x,
                              arith::ConstantIndexOp::create(t, loc, threads)),
        launch.getThreadIds().x);
    auto emitThread = [&](OpBuilder &inner) {
      buildThread(inner, entry->getArguments(),
                  delinearize(inner, loc, point, parallelDims));
    };
    if (threadPoints % threads == 0) {
      emitThread(t);
    } else {
      Value inBounds = arith::CmpIOp::create(
          t, loc, arith::CmpIPredicate::ult, point,
          arith::ConstantIndexOp::create(t, loc, threadPoints));
      auto guard = scf::IfOp::create(t, loc, inBounds, /*withElse=*/false);
      OpBuilder inner = guard.getThenBodyBuilder();
      emitThread(inner);
    }
    gpu::TerminatorOp::create(t, loc);
  }
  b.setInsertionPointToEnd(entry);
  func::ReturnOp::create(b, loc);
  return kernel;
}

void GenericKernelBuilder::buildThread(OpBuilder &b, ValueRange arguments,
                                       ValueRange parallelIvs,
                                       const SplitReduction *split) {
  Location loc = op.getLoc();
  Block &body = op.getRegion().front();
  ValueRange outputs = arguments.drop_front(inputs.size());

  // The values the body uses from above, on the device.
  IRMapping mapping;
  for (Value value : captured) {
    switch (captureKinds[value]) {
    case CaptureKind::Constant:
      mapping.map(value, b.clone(*value.getDefiningOp())->getResult(0));
      break;
    case CaptureKind::Tensor:
      break;
    case CaptureKind::Element: {
      auto extract = value.getDefiningOp<tensor::ExtractOp>();
      SmallVector<Value> indices;
      for (Value index : extract.getIndices())
        indices.push_back(b.clone(*index.getDefiningOp())->getResult(0));
      mapping.map(value, memref::LoadOp::create(
                             b, loc, arguments[captureInputs[value]], indices));
      break;
    }
    case CaptureKind::Scalar: {
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      mapping.map(value, memref::LoadOp::create(
                             b, loc, arguments[captureInputs[value]], zero));
      break;
    }
    }
  }

  // The parallel points this thread computes: its own and, along each
  // register block's loop, those `extent` apart.
  SmallVector<SmallVector<Value>> points = {llvm::to_vector(parallelIvs)};
  for (const RegisterBlock &block : registerBlocks) {
    size_t position =
        llvm::find(parallelDims, block.dim) - parallelDims.begin();
    int64_t extent = threadExtent(block.dim);
    SmallVector<SmallVector<Value>> spread;
    for (const SmallVector<Value> &point : points) {
      for (int64_t r = 0; r < block.factor; ++r) {
        spread.push_back(point);
        if (r == 0)
          continue;
        Value offset = arith::ConstantIndexOp::create(b, loc, r * extent);
        spread.back()[position] =
            arith::AddIOp::create(b, loc, point[position], offset);
      }
    }
    points = std::move(spread);
  }

  // The full point of the loops: the parallel dimensions' ivs those of the
  // point being computed, the reduction dimensions' filled in inside the
  // reduction loops.
  SmallVector<Value> ivs(sizes.size());
  auto moveTo = [&](ArrayRef<Value> point) {
    for (auto [dim, iv] : llvm::zip_equal(parallelDims, point))
      ivs[dim] = iv;
  };
  moveTo(points.front());
  auto indicesOf = [&](OpBuilder &at, AffineMap map) {
    return *affine::expandAffineMap(at, loc, map, ivs);
  };
  auto readOperand = [&](OpBuilder &at, OpOperand *operand) -> Value {
    SmallVector<Value> indices =
        indicesOf(at, op.getMatchingIndexingMap(operand));
    return memref::LoadOp::create(
        at, loc, arguments[operandInputs.lookup(operand)], indices);
  };

  // The body at the current point, with the outputs' current values.
  auto emitBody = [&](OpBuilder &at, ValueRange current) {
    IRMapping point = mapping;
    for (OpOperand *operand : op.getDpsInputOperands())
      point.map(op.getMatchingBlockArgument(operand),
                operandInputs.count(operand) ? readOperand(at, operand)
                                             : mapping.lookup(operand->get()));
    for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable()))
      if (initInputs[i] || initConstants[i])
        point.map(op.getMatchingBlockArgument(&init), current[i]);
    for (Operation &inner : body.without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        point.map(index.getResult(), ivs[index.getDim()]);
        continue;
      }
      auto extract = dyn_cast<tensor::ExtractOp>(inner);
      if (extract && captured.contains(extract.getTensor())) {
        SmallVector<Value> indices;
        for (Value index : extract.getIndices())
          indices.push_back(point.lookupOrDefault(index));
        point.map(extract.getResult(),
                  memref::LoadOp::create(
                      at, loc, arguments[captureInputs[extract.getTensor()]],
                      indices));
        continue;
      }
      at.clone(inner, point);
    }
    SmallVector<Value> yielded;
    for (Value value : body.getTerminator()->getOperands())
      yielded.push_back(point.lookupOrDefault(value));
    return yielded;
  };

  // The outputs' values at each point before the reduction, point after
  // point: the initial values the body reads (zero for a result whose body
  // ignores its output: the body defines it at every point).
  unsigned numOutputs = op.getNumDpsInits();
  SmallVector<Value> initial;
  for (ArrayRef<Value> point : points) {
    moveTo(point);
    for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable())) {
      if (initInputs[i]) {
        initial.push_back(readOperand(b, &init));
        continue;
      }
      Type element = getElementTypeOrSelf(init.get().getType());
      TypedAttr value = initConstants[i]
                            ? initConstants[i]
                            : cast<TypedAttr>(b.getZeroAttr(element));
      initial.push_back(arith::ConstantOp::create(b, loc, value));
    }
  }
  // The body at every point, each with its outputs' current values.
  auto emitPoints = [&](OpBuilder &at, ValueRange current) {
    SmallVector<Value> next;
    for (auto [p, point] : llvm::enumerate(points)) {
      moveTo(point);
      llvm::append_range(
          next, emitBody(at, current.slice(p * numOutputs, numOutputs)));
    }
    return next;
  };

  SmallVector<Value> results;
  if (split) {
    assert(points.size() == 1 && "a split reduction has no register blocks");
    // This thread's points of the reduction, t, t + threads, ...; each
    // output combined from its identity.
    SmallVector<Value> starts;
    for (TypedAttr identity : identities)
      starts.push_back(arith::ConstantOp::create(b, loc, identity));
    Value end = arith::ConstantIndexOp::create(b, loc, numReductionPoints());
    Value stride = arith::ConstantIndexOp::create(b, loc, kThreadsPerBlock);
    auto share = scf::ForOp::create(
        b, loc, split->thread, end, stride, starts,
        [&](OpBuilder &inner, Location, Value k, ValueRange acc) {
          for (auto [dim, iv] : llvm::zip_equal(
                   reductionDims, delinearize(inner, loc, k, reductionDims)))
            ivs[dim] = iv;
          scf::YieldOp::create(inner, loc, emitBody(inner, acc));
        });
    for (auto [partial, shared] :
         llvm::zip_equal(share.getResults(), split->partials))
      memref::StoreOp::create(b, loc, partial, shared, split->thread);
    gpu::BarrierOp::create(b, loc);
    // Thread 0: the initial values combined with the partials in order.
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        split->thread, zero);
    auto last = scf::IfOp::create(b, loc, first, /*withElse=*/false);
    OpBuilder t = last.getThenBodyBuilder();
    Value one = arith::ConstantIndexOp::create(t, loc, 1);
    auto combine = scf::ForOp::create(
        t, loc, zero, stride, one, initial,
        [&](OpBuilder &inner, Location, Value from, ValueRange acc) {
          SmallVector<Value> next;
          for (auto [combiner, value, shared] :
               llvm::zip_equal(combiners, acc, split->partials)) {
            Value partial = memref::LoadOp::create(inner, loc, shared, from);
            OperationState state(loc, combiner->getName());
            state.addOperands({value, partial});
            state.addTypes(value.getType());
            state.addAttributes(combiner->getAttrs());
            next.push_back(inner.create(state)->getResult(0));
          }
          scf::YieldOp::create(inner, loc, next);
        });
    for (unsigned dim : reductionDims)
      ivs[dim] = zero;
    for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable()))
      memref::StoreOp::create(t, loc, combine.getResult(i), outputs[i],
                              indicesOf(t, op.getMatchingIndexingMap(&init)));
    return;
  }
  if (reductionDims.empty()) {
    results = emitPoints(b, initial);
  } else {
    // The reduction loops nested in their order, the outputs carried.
    std::function<SmallVector<Value>(OpBuilder &, unsigned, ValueRange)> nest =
        [&](OpBuilder &at, unsigned level,
            ValueRange carried) -> SmallVector<Value> {
      if (level == reductionDims.size())
        return emitPoints(at, carried);
      unsigned dim = reductionDims[level];
      Value lower = arith::ConstantIndexOp::create(at, loc, 0);
      Value upper = arith::ConstantIndexOp::create(at, loc, sizes[dim]);
      Value step = arith::ConstantIndexOp::create(at, loc, 1);
      auto loop = scf::ForOp::create(
          at, loc, lower, upper, step, carried,
          [&](OpBuilder &inner, Location, Value iv, ValueRange args) {
            ivs[dim] = iv;
            scf::YieldOp::create(inner, loc, nest(inner, level + 1, args));
          });
      return SmallVector<Value>(loop.getResults());
    };
    results = nest(b, 0, initial);
    // Output maps do not read the reduction dimensions.
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    for (unsigned dim : reductionDims)
      ivs[dim] = zero;
  }

  for (auto [p, point] : llvm::enumerate(points)) {
    moveTo(point);
    for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable()))
      memref::StoreOp::create(b, loc, results[p * numOutputs + i], outputs[i],
                              indicesOf(b, op.getMatchingIndexingMap(&init)));
  }
}

/// The linalg ops of the module's host code, each in a kernel of its own
/// shared by the ops that compute the same thing.
class LinalgRewriter {
public:
  LinalgRewriter(ModuleOp module, bool registerBlocks)
      : module(module), symbols(module), registerBlocks(registerBlocks) {}

  /// Rewrites `op` into a call of its kernel; false where it stays.
  bool rewrite(linalg::GenericOp op);

private:
  /// `gs_map_<sizes>` or `gs_reduce_<sizes>`, unique in the module.
  std::string nameFor(const GenericKernelBuilder &kernel);
  /// The entry of a kernel equivalent to `kernel`, if one was built.
  func::FuncOp findEquivalent(func::FuncOp kernel);

  ModuleOp module;
  SymbolTable symbols;
  bool registerBlocks;
  /// The kernels built so far and their entries.
  SmallVector<std::pair<func::FuncOp, func::FuncOp>> kernels;
};

std::string LinalgRewriter::nameFor(const GenericKernelBuilder &kernel) {
  std::string stem;
  llvm::raw_string_ostream os(stem);
  os << (kernel.hasReductions() ? "gs_reduce_" : "gs_map_");
  if (kernel.loopSizes().empty())
    os << "scalar";
  llvm::interleave(kernel.loopSizes(), os, "x");
  return uniqueKernelName(symbols, stem);
}

func::FuncOp LinalgRewriter::findEquivalent(func::FuncOp kernel) {
  for (auto [existing, entry] : kernels)
    if (existing.getFunctionType() == kernel.getFunctionType() &&
        OperationEquivalence::isRegionEquivalentTo(
            &existing.getBody(), &kernel.getBody(),
            OperationEquivalence::IgnoreLocations))
      return entry;
  return nullptr;
}

bool LinalgRewriter::rewrite(linalg::GenericOp op) {
  GenericKernelBuilder kernel(op, registerBlocks);
  if (failed(kernel.plan()))
    return false;
  Location loc = op.getLoc();
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  func::FuncOp function = kernel.build(builder, nameFor(kernel));
  func::FuncOp entry = findEquivalent(function);
  if (entry) {
    function.erase();
  } else {
    entry = buildKernelEntry(builder, loc, function, kernel.numInputs());
    addPrivate(symbols, {function, entry});
    kernels.emplace_back(function, entry);
  }
  OpBuilder b(op);
  auto call = func::CallOp::create(b, loc, entry, kernel.callOperands(b));
  op->replaceAllUsesWith(call.getResults());
  op->erase();
  return true;
}

/// `tensor.pad` of a static shape by a value from outside its region as a
/// generic that gathers each point from the source, or takes the value
/// outside it: a kernel like the others, where bufferization would fill
/// and copy on the host.
static void padAsGather(tensor::PadOp pad, RewriterBase &rewriter) {
  RankedTensorType type = pad.getResultType();
  Value padding = pad.getConstantPaddingValue();
  if (!type.hasStaticShape() || !padding ||
      !pad.getSourceType().hasStaticShape())
    return;
  SmallVector<int64_t> low = llvm::to_vector(pad.getStaticLow());
  if (llvm::any_of(low, ShapedType::isDynamic))
    return;
  Location loc = pad.getLoc();
  rewriter.setInsertionPoint(pad);
  Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                       type.getElementType());
  unsigned rank = type.getRank();
  SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  Value source = pad.getSource();
  ArrayRef<int64_t> sourceShape = pad.getSourceType().getShape();
  auto gather = linalg::GenericOp::create(
      rewriter, loc, TypeRange{type}, ValueRange(), ValueRange{init}, maps,
      iterators, [&](OpBuilder &b, Location loc, ValueRange) {
        Value inside = arith::ConstantIntOp::create(b, loc, 1, 1);
        Value zero = arith::ConstantIndexOp::create(b, loc, 0);
        SmallVector<Value> indices;
        for (unsigned d = 0; d < rank; ++d) {
          Value point = linalg::IndexOp::create(b, loc, d);
          Value index = arith::SubIOp::create(
              b, loc, point, arith::ConstantIndexOp::create(b, loc, low[d]));
          Value atLeastZero = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::sge, index, zero);
          Value belowSize = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::slt, index,
              arith::ConstantIndexOp::create(b, loc, sourceShape[d]));
          Value inRange = arith::AndIOp::create(b, loc, atLeastZero, belowSize);
          inside = arith::AndIOp::create(b, loc, inside, inRange);
          indices.push_back(
              arith::SelectOp::create(b, loc, inRange, index, zero));
        }
        Value value = tensor::ExtractOp::create(b, loc, source, indices);
        linalg::YieldOp::create(
            b, loc,
            arith::SelectOp::create(b, loc, inside, value, padding)
                .getResult());
      });
  rewriter.replaceOp(pad, gather.getResults());
}

struct ConvertLinalgToGPUPass
    : mlir::gs::impl::ConvertLinalgToGPUBase<ConvertLinalgToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    {
      IRRewriter rewriter(&getContext());
      SmallVector<tensor::PadOp> pads;
      module.walk([&](tensor::PadOp pad) { pads.push_back(pad); });
      for (tensor::PadOp pad : pads)
        padAsGather(pad, rewriter);
    }
    SmallVector<linalg::LinalgOp> ops;
    module.walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics())
        ops.push_back(op);
    });
    // Fills last: those only initializing reductions that read the value
    // as a constant are dead by then.
    std::stable_partition(ops.begin(), ops.end(), [](linalg::LinalgOp op) {
      return !isa<linalg::FillOp>(op);
    });
    IRRewriter rewriter(&getContext());
    LinalgRewriter kernels(module, registerBlocks);
    for (linalg::LinalgOp op : ops) {
      if (isa<linalg::FillOp>(op) && op->use_empty()) {
        rewriter.eraseOp(op);
        continue;
      }
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic) {
        rewriter.setInsertionPoint(op);
        FailureOr<linalg::GenericOp> generalized =
            linalg::generalizeNamedOp(rewriter, op);
        if (failed(generalized)) {
          ++numOnHost;
          continue;
        }
        generic = *generalized;
      }
      if (kernels.rewrite(generic))
        ++numOnDevice;
      else
        ++numOnHost;
    }
  }
};
} // namespace
