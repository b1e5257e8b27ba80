//===- CPUKernelSchedule.cpp - Register-blocked GEMMs on the CPU -*- C++ -*-=//
//
// Convolutions become im2col + GEMM; every GEMM-like linalg op is tiled
// into mr x nr x 1 register blocks and vectorized; the vector contractions
// then lower to broadcast-and-FMA outer products. The accumulator block is
// hoisted out of the reduction loop by loop-invariant-subset-hoisting,
// which the pipeline runs next. Transposes of the last two dimensions are
// tiled into square blocks transposed in registers.
//
//===----------------------------------------------------------------------===//

#include "gs/Pipelines/Passes.h"

#include "ConvolutionToGemm.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Interfaces/VectorInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/TargetParser/Host.h"

namespace mlir::gs {
#define GEN_PASS_DEF_CPUKERNELSCHEDULE
#include "gs/Pipelines/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;

namespace {
/// The outputs a register block computes: `mr` rows times `nr` columns.
struct RegisterBlock {
  int64_t mr, nr;
  /// f32 elements per SIMD register.
  int64_t lanes;
};

/// The widest SIMD registers of the host CPU, in bits.
unsigned hostVectorBits() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  if (features.lookup("avx512f"))
    return 512;
  if (features.lookup("avx") || features.lookup("avx2"))
    return 256;
  return 128;
}

/// A block whose accumulators (mr * nr / lanes registers), one row of B
/// (nr / lanes) and a broadcast of A fit the register file: 32 registers
/// with AVX-512, 16 otherwise.
RegisterBlock registerBlockFor(unsigned vectorBits) {
  int64_t lanes = std::max<int64_t>(vectorBits / 32, 4);
  if (vectorBits >= 512)
    return {8, 2 * lanes, lanes}; // 16 accumulators, 2 B vectors.
  return {4, 3 * lanes, lanes};   // 12 accumulators, 3 B vectors.
}

/// How a GEMM-like op is cut into register blocks, in two or three levels
/// of loops.
struct BlockPlan {
  /// For large GEMMs (empty otherwise), two levels above the panels:
  /// slabs of `kc` reduction steps (and `nc` columns, one batch index),
  /// whose rows of B are packed panel by panel, each panel contiguous, once
  /// per slab (packPanelsOfB); and chunks of a slab, `mc` rows of A, whose
  /// slice of A is packed into a buffer of its own that stays in the L2 cache
  /// while every panel reads it. Panels then cut a chunk along n only.
  SmallVector<int64_t> slabSizes, slabOrder, chunkSizes, chunkOrder;
  /// Panels: `nr` columns of the n dimension the output is contiguous
  /// along and `kc` steps of the reduction, so that a kc x nr panel of B
  /// stays in the L1 cache; 1 on batch dimensions. Loop order: batch, n, k
  /// (the order lists every dimension, untiled ones last).
  SmallVector<int64_t> panelSizes, panelOrder;
  /// Register blocks within a panel: `mr` rows of one m dimension, one
  /// reduction step at a time. Loop order: m, k.
  SmallVector<int64_t> blockSizes, blockOrder;
  /// The full block's iteration sizes, which vectorization gives it.
  SmallVector<int64_t> vectorSizes;
  /// The m and n loops the blocks are cut along, and the reduction.
  unsigned m, n, k;
  /// Whether B is large enough to pack: then slabs pack it (where there
  /// are slabs), or each panel copies its slice of B into a buffer of its
  /// own unless B's rows already spread over the cache (packPanels); and
  /// each chunk copies its slice of A (packSlice).
  bool packB = false, packPanels = false;
};

/// The reduction steps of a panel: 256 rows of B fill 24 KiB (nr = 24) or
/// 32 KiB (nr = 32) of the L1 cache.
constexpr int64_t kPanelDepth = 256;

/// The width of the panels of `columns` columns: the register block's
/// `nr`, or a narrower multiple of the SIMD width where `nr` would leave an
/// edge panel wider than a register but not a whole number of registers
/// (17 columns: a register and one element), whose rows LLVM then loads and
/// stores in pieces.
int64_t panelWidth(int64_t columns, RegisterBlock block) {
  for (int64_t width = block.nr; width > block.lanes; width -= block.lanes) {
    int64_t edge = columns % width;
    if (edge <= block.lanes || edge % block.lanes == 0)
      return width;
  }
  return block.lanes;
}

/// The register blocks, at least, that read each panel of B when it is
/// packed.
constexpr int64_t kPackedPanelReuse = 8;

/// The rows of A in a chunk: 64 rows of 256 reduction steps fill 64 KiB of
/// the L2 cache, beside a slab of packed B panels streaming through it.
/// Measured (bench/README.md): 64 rows beat 128 and 256 by a few percent at
/// 1024^3 and 2048^3 on an AVX-512 Xeon, and 256 steps beat 128 and 384.
constexpr int64_t kChunkRows = 64;

/// The packed B of a slab at most: 1 MiB (1024 columns of 256 steps), half
/// the L2 cache of an AVX-512 Xeon; wider B goes in slabs of as many
/// columns, so that the chunks' panels read it from L2.
constexpr int64_t kSlabBytes = 1 << 20;

/// The panels, at least, that read each chunk of A when it is packed.
constexpr int64_t kPackedChunkReuse = 4;

/// Whether `op` copies its one input into its one output with the last two
/// dimensions swapped: a linalg.transpose, or a generic doing so and
/// converting each element (the widening transpose of widenHalfInputs).
bool swapsLastTwoDimensions(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops())
    return false;
  if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation())) {
    Block &body = generic.getRegion().front();
    if (body.getOperations().size() != 2 ||
        !isa<arith::ExtFOp, arith::TruncFOp>(body.front()))
      return false;
  } else if (!isa<linalg::TransposeOp>(op.getOperation())) {
    return false;
  }
  unsigned rank = op.getNumLoops();
  if (rank < 2)
    return false;
  SmallVector<unsigned> swapped = llvm::to_vector(llvm::seq(0u, rank));
  std::swap(swapped[rank - 2], swapped[rank - 1]);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  return maps[1].isIdentity() &&
         maps[0] == AffineMap::getPermutationMap(swapped, op.getContext());
}

/// The layout that `value` will have once bufferized: that of the tensor
/// it views through slices and reshapes, where a new buffer (of the
/// identity layout) starts, or the operand an op's result is computed into.
MemRefType bufferLayoutOf(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  auto identity = MemRefType::get(type.getShape(), type.getElementType());
  if (auto extract = value.getDefiningOp<tensor::ExtractSliceOp>())
    return memref::SubViewOp::inferRankReducedResultType(
        type.getShape(), bufferLayoutOf(extract.getSource()),
        extract.getMixedOffsets(), extract.getMixedSizes(),
        extract.getMixedStrides());
  if (auto expand = value.getDefiningOp<tensor::ExpandShapeOp>()) {
    FailureOr<MemRefType> expanded = memref::ExpandShapeOp::computeExpandedType(
        bufferLayoutOf(expand.getSrc()), type.getShape(),
        expand.getReassociationIndices());
    return succeeded(expanded) ? *expanded : identity;
  }
  if (auto collapse = value.getDefiningOp<tensor::CollapseShapeOp>()) {
    MemRefType source = bufferLayoutOf(collapse.getSrc());
    // A view that cannot collapse is copied into a new buffer.
    if (!memref::CollapseShapeOp::isGuaranteedCollapsible(
            source, collapse.getReassociationIndices()))
      return identity;
    return memref::CollapseShapeOp::computeCollapsedType(
        source, collapse.getReassociationIndices());
  }
  if (auto result = dyn_cast<OpResult>(value))
    if (auto op = dyn_cast<DestinationStyleOpInterface>(result.getOwner()))
      return bufferLayoutOf(op.getTiedOpOperand(result)->get());
  return identity;
}

/// Whether the rows of matrix `b` (its last two dimensions), once
/// bufferized, lie an odd number of cache lines apart and within a page:
/// the rows of a panel then spread over every set of the L1 cache and a
/// few TLB entries, so that the register blocks read them in place as
/// well as from a packed copy. The columns of a convolution are padded so
/// (ConvolutionToGemm.cpp); ResNet-18's 56x56 and 28x28 3x3 layers ran
/// their train steps 4-6% faster without copying them again.
bool rowsSpreadOverCache(Value b) {
  MemRefType layout = bufferLayoutOf(b);
  SmallVector<int64_t> strides;
  int64_t offset;
  if (layout.getRank() < 2 ||
      failed(layout.getStridesAndOffset(strides, offset)) ||
      strides.back() != 1 || ShapedType::isDynamic(strides[strides.size() - 2]))
    return false;
  int64_t elementBytes = llvm::divideCeil(layout.getElementTypeBitWidth(), 8);
  int64_t rowBytes = strides[strides.size() - 2] * elementBytes;
  constexpr int64_t kLineBytes = 64, kPageBytes = 4096;
  return rowBytes % kLineBytes == 0 && (rowBytes / kLineBytes) % 2 == 1 &&
         rowBytes < kPageBytes;
}

/// The block plan of a GEMM-like op; fails for ops that are not GEMMs
/// (matrix-vector products, convolutions).
FailureOr<BlockPlan> planBlocks(linalg::LinalgOp op, RegisterBlock block) {
  if (!linalg::isaContractionOpInterface(op) || op.hasDynamicShape())
    return failure();
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.size() != 1)
    return failure();
  // The n dimension that the output's last index runs along, so that the
  // vectors are contiguous rows of the output and of B.
  AffineMap outputMap = op.getIndexingMapMatchingResult(op->getResult(0));
  auto last = dyn_cast<AffineDimExpr>(outputMap.getResults().back());
  if (!last || !llvm::is_contained(dims->n, last.getPosition()))
    return failure();
  unsigned n = last.getPosition(), m = dims->m.back(), k = dims->k.front();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  // An empty GEMM (a batch of 0) has nothing to block: its loops run zero
  // times as they are.
  if (llvm::is_contained(ranges, 0))
    return failure();
  unsigned numLoops = op.getNumLoops();
  BlockPlan plan;
  plan.m = m;
  plan.n = n;
  plan.k = k;
  // Packing pays where B is wider than a panel (its rows then lie apart)
  // and many register blocks read each panel.
  plan.packB =
      ranges[n] > block.nr && ranges[m] >= kPackedPanelReuse * block.mr;
  plan.packPanels = plan.packB;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    // A transposed B is packed all the same: its packs transpose it
    // (packTransposedSlice), where it would be transposed whole.
    auto transpose = input->get().getDefiningOp<linalg::LinalgOp>();
    if (!map.isFunctionOfDim(m) && map.isFunctionOfDim(n) &&
        isa<RankedTensorType>(input->get().getType()) &&
        rowsSpreadOverCache(input->get()) &&
        !(transpose && swapsLastTwoDimensions(transpose)))
      plan.packPanels = false;
  }
  plan.panelSizes.assign(numLoops, 0);
  plan.blockSizes.assign(numLoops, 0);
  plan.vectorSizes.assign(numLoops, 1);
  // Batch dimensions and the other m and n dimensions: one at a time.
  SmallVector<int64_t> others;
  for (unsigned d = 0; d < numLoops; ++d)
    if (d != m && d != n && d != k)
      others.push_back(d);
  for (int64_t d : others)
    plan.panelSizes[d] = 1;
  plan.panelOrder.assign(others);
  int64_t width = std::min(panelWidth(ranges[n], block), ranges[n]);
  plan.panelSizes[n] = width;
  plan.panelSizes[k] = std::min(kPanelDepth, ranges[k]);
  plan.panelOrder.append({n, k, m});
  // Slabs and chunks pay where A is large enough to leave the L1 cache
  // (its rows then lie apart, and the register blocks read them anew for
  // every panel) and many panels read each chunk: packing A once per chunk
  // and B once per slab, where the panels alone packed B once per chunk.
  if (plan.packB && ranges[m] > kChunkRows &&
      ranges[n] >= kPackedChunkReuse * width) {
    // The other dimensions move from the panels to the slabs.
    plan.slabSizes.assign(numLoops, 0);
    for (int64_t d : others) {
      plan.slabSizes[d] = 1;
      plan.panelSizes[d] = 0;
    }
    plan.slabOrder.assign(others);
    plan.slabSizes[k] = plan.panelSizes[k];
    int64_t slabColumns =
        std::max<int64_t>(kSlabBytes / (4 * plan.slabSizes[k]) / width, 1) *
        width;
    // Only in whole slabs: a partial one would leave every slab's columns
    // dynamic until peeling, and packPanelsOfB needs them static.
    if (slabColumns < ranges[n] && ranges[n] % slabColumns == 0)
      plan.slabSizes[n] = slabColumns;
    plan.slabOrder.append({n, k, m});
    plan.chunkSizes.assign(numLoops, 0);
    plan.chunkSizes[m] = kChunkRows;
    plan.chunkOrder.append({m, k, n});
    plan.chunkOrder.append(others);
    plan.panelSizes[k] = 0;
    plan.panelOrder.assign({n, k, m});
    plan.panelOrder.append(others);
  }
  plan.blockSizes[m] = std::min(block.mr, ranges[m]);
  plan.blockSizes[k] = 1;
  plan.blockOrder = {m, k};
  for (int64_t d : plan.panelOrder)
    if (d != m && d != k)
      plan.blockOrder.push_back(d);
  plan.vectorSizes[m] = plan.blockSizes[m];
  plan.vectorSizes[n] = plan.panelSizes[n];
  return plan;
}

/// Where `value` (FP16) is an elementwise rounding of f32 values to FP16,
/// seen through reshapes (FP16 activations cast from the f32 data): those
/// f32 values, reshaped alike, and the rounding op. Null otherwise.
std::pair<Value, arith::TruncFOp> roundedFromF32(RewriterBase &rewriter,
                                                 Value value) {
  SmallVector<Operation *> reshapes;
  while (isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
      value.getDefiningOp())) {
    reshapes.push_back(value.getDefiningOp());
    value = value.getDefiningOp()->getOperand(0);
  }
  auto rounding = value.getDefiningOp<linalg::GenericOp>();
  if (!rounding || rounding.getNumDpsInputs() != 1 ||
      rounding.getNumDpsInits() != 1 ||
      !llvm::all_of(rounding.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return {};
  Block &body = rounding.getRegion().front();
  auto truncate = dyn_cast<arith::TruncFOp>(body.front());
  if (body.getOperations().size() != 2 || !truncate ||
      truncate.getIn() != body.getArgument(0) ||
      !truncate.getIn().getType().isF32())
    return {};
  Value source = rounding.getDpsInputs().front();
  for (Operation *reshape : llvm::reverse(reshapes)) {
    rewriter.setInsertionPoint(reshape);
    auto type = cast<RankedTensorType>(reshape->getResult(0).getType())
                    .clone(rewriter.getF32Type());
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(reshape))
      source = tensor::CollapseShapeOp::create(
          rewriter, reshape->getLoc(), type, source,
          collapse.getReassociationIndices());
    else
      source = tensor::ExpandShapeOp::create(
          rewriter, reshape->getLoc(), type, source,
          cast<tensor::ExpandShapeOp>(reshape).getReassociationIndices(),
          cast<tensor::ExpandShapeOp>(reshape).getMixedOutputShape());
  }
  return {source, truncate};
}

/// Widens the FP16 inputs of a GEMM-like op to f32 up front, in one
/// elementwise pass each: CPUs without FP16 arithmetic otherwise convert an
/// element of A once per register block and of B once per row of blocks.
/// Exact, as the contraction extends its inputs to f32 before multiplying
/// anyway. An input that only a transpose made (a transposed FP16 weight)
/// is widened as it is transposed, in the same pass, reading the
/// transpose's input; one that a rounding of f32 values made (FP16
/// activations cast from f32 data) is rounded and widened in the same
/// pass, reading the f32 values (the rounding goes if nothing else reads
/// it). Returns the op computing the result (a generic when widened).
linalg::LinalgOp widenHalfInputs(RewriterBase &rewriter, linalg::LinalgOp op) {
  auto isHalf = [](Value v) {
    return getElementTypeOrSelf(v.getType()).isF16();
  };
  Type wide = getElementTypeOrSelf(op.getDpsInits().front().getType());
  if (!wide.isF32() || op.getNumDpsInits() != 1 ||
      llvm::none_of(op.getDpsInputs(), isHalf))
    return op;
  linalg::GenericOp generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic) {
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::GenericOp> generalized =
        linalg::generalizeNamedOp(rewriter, op);
    if (failed(generalized))
      return op;
    generic = *generalized;
  }
  Location loc = generic.getLoc();
  for (OpOperand *input : generic.getDpsInputOperands()) {
    BlockArgument arg = generic.getMatchingBlockArgument(input);
    if (!isHalf(input->get()) || !arg.getType().isF16() ||
        !llvm::all_of(arg.getUsers(), [&](Operation *user) {
          auto ext = dyn_cast<arith::ExtFOp>(user);
          return ext && ext.getType() == wide;
        }))
      continue;
    rewriter.setInsertionPoint(generic);
    auto type = cast<RankedTensorType>(input->get().getType());
    Value empty = tensor::EmptyOp::create(
        rewriter, loc, tensor::getMixedSizes(rewriter, loc, input->get()),
        wide);
    AffineMap identity = rewriter.getMultiDimIdentityMap(type.getRank());
    Value source = input->get();
    AffineMap read = identity;
    auto transpose = source.getDefiningOp<linalg::TransposeOp>();
    arith::TruncFOp rounding;
    if (transpose && transpose->hasOneUse()) {
      source = transpose.getInput();
      read = transpose.getIndexingMapsArray().front();
    } else if (auto [f32Values, truncate] = roundedFromF32(rewriter, source);
               f32Values) {
      source = f32Values;
      rounding = truncate;
    }
    rewriter.setInsertionPoint(generic);
    auto widen = linalg::GenericOp::create(
        rewriter, loc, empty.getType(), source, empty,
        ArrayRef<AffineMap>{read, identity},
        SmallVector<utils::IteratorType>(type.getRank(),
                                         utils::IteratorType::parallel),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          Value half = args[0];
          if (rounding) {
            IRMapping mapping;
            mapping.map(rounding.getIn(), args[0]);
            half = b.clone(*rounding, mapping)->getResult(0);
          }
          linalg::YieldOp::create(
              b, loc, arith::ExtFOp::create(b, loc, wide, half).getResult());
        });
    rewriter.modifyOpInPlace(generic, [&] {
      input->set(widen.getResult(0));
      arg.setType(wide);
    });
    for (Operation *ext : llvm::make_early_inc_range(arg.getUsers()))
      rewriter.replaceOp(ext, arg);
    if (transpose && transpose->use_empty())
      rewriter.eraseOp(transpose);
  }
  return generic;
}

/// The shape that vector ops of a block unroll to: one row of at most
/// `lanes` elements along the dimension the result is contiguous in (for a
/// contraction, the one its accumulator's last dimension runs along).
std::optional<SmallVector<int64_t>> registerShape(Operation *op,
                                                  int64_t lanes) {
  auto unrollable = dyn_cast<VectorUnrollOpInterface>(op);
  if (!unrollable)
    return std::nullopt;
  std::optional<SmallVector<int64_t>> shape = unrollable.getShapeForUnroll();
  if (!shape || shape->empty())
    return std::nullopt;
  int64_t inner = shape->size() - 1;
  if (auto contract = dyn_cast<vector::ContractionOp>(op)) {
    AffineMap accMap = contract.getIndexingMapsArray()[2];
    if (accMap.getNumResults() == 0)
      return std::nullopt;
    auto last = dyn_cast<AffineDimExpr>(accMap.getResults().back());
    if (!last)
      return std::nullopt;
    inner = last.getPosition();
  }
  SmallVector<int64_t> native(shape->size(), 1);
  int64_t size = (*shape)[inner];
  // A row that is not a multiple of the register stays whole (LLVM splits
  // it into registers and a remainder).
  native[inner] = size % lanes == 0 ? lanes : size;
  return native;
}

/// Marks the register blocks between tiling and vectorization with their
/// full (vector) sizes.
constexpr StringLiteral kBlockMarker = "gs.register_block";

/// Tiles `op` with `sizes` in loop order `order`, replacing it.
FailureOr<scf::SCFTilingResult> tile(RewriterBase &rewriter,
                                     linalg::LinalgOp op,
                                     ArrayRef<int64_t> sizes,
                                     ArrayRef<int64_t> order) {
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(op.getContext(), sizes));
  options.setInterchange(order);
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (succeeded(tiled))
    rewriter.replaceOp(op, tiled->replacements);
  return tiled;
}

/// Where `slice` is a slice of a transpose of the last two dimensions (a
/// weight that a GEMM reads transposed, widened or not): that transpose of
/// the matching slice of the transpose's input, into `buffer`, so that the
/// pack transposes as it copies and the whole transposed operand need not
/// be made (it goes once no other op reads it). Null otherwise.
Value packTransposedSlice(RewriterBase &rewriter, Value slice, Value buffer) {
  auto extract = slice.getDefiningOp<tensor::ExtractSliceOp>();
  auto transpose = extract
                       ? extract.getSource().getDefiningOp<linalg::LinalgOp>()
                       : linalg::LinalgOp();
  if (!transpose || !transpose.hasPureTensorSemantics() ||
      !swapsLastTwoDimensions(transpose) || !extract.hasUnitStride() ||
      extract.getSourceType().getRank() != extract.getType().getRank())
    return nullptr;
  Location loc = extract.getLoc();
  auto swapLastTwo = [](SmallVector<OpFoldResult> values) {
    std::swap(values[values.size() - 2], values[values.size() - 1]);
    return values;
  };
  SmallVector<OpFoldResult> offsets = swapLastTwo(extract.getMixedOffsets());
  SmallVector<OpFoldResult> sizes = swapLastTwo(extract.getMixedSizes());
  Value source = tensor::ExtractSliceOp::create(
      rewriter, loc, transpose.getDpsInputs().front(), offsets, sizes,
      extract.getMixedStrides());
  IRMapping mapping;
  mapping.map(transpose.getDpsInputs().front(), source);
  mapping.map(transpose.getDpsInits().front(), buffer);
  Operation *packed = rewriter.clone(*transpose, mapping);
  packed->getResult(0).setType(buffer.getType());
  return packed->getResult(0);
}

/// Copies the slices of A (`m` set: the inputs indexed by m and not n) or
/// of B (the inputs indexed by n and not m) that `tile` reads into tensors
/// of their own, which bufferize to contiguous buffers. In A and B a
/// slice's rows lie a row of the operand apart: for a wide operand (a
/// power-of-two multiple of 4 KiB apart, say) they fall into a few sets of
/// the L1 cache and evict each other, and pages apart they each need a TLB
/// entry, while the register blocks read the whole slice again and again.
void packSlice(RewriterBase &rewriter, linalg::LinalgOp tile,
               const BlockPlan &plan, bool ofA) {
  unsigned along = ofA ? plan.m : plan.n, across = ofA ? plan.n : plan.m;
  for (OpOperand *input : tile.getDpsInputOperands()) {
    AffineMap map = tile.getMatchingIndexingMap(input);
    auto type = dyn_cast<RankedTensorType>(input->get().getType());
    if (!type || map.isFunctionOfDim(across) || !map.isFunctionOfDim(along))
      continue;
    Location loc = tile.getLoc();
    rewriter.setInsertionPoint(tile);
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, input->get());
    Value buffer =
        tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
    Value packed;
    if (!ofA)
      packed = packTransposedSlice(rewriter, input->get(), buffer);
    if (!packed)
      packed = linalg::CopyOp::create(rewriter, loc, input->get(), buffer)
                   .getResult(0);
    rewriter.modifyOpInPlace(tile, [&] { input->set(packed); });
  }
}

/// Packs the rows of B that `slab` reads, panel by panel: a tensor of
/// ceil(columns / width) x kc x width, each panel's rows one after another
/// (an edge panel's at the start of its own), so that a panel reads one
/// contiguous buffer and the slab packs B once for all its chunks. Only
/// for a B indexed by (k, n) or (batch, k, n), of static columns; returns
/// null otherwise.
Value packPanelsOfB(RewriterBase &rewriter, linalg::LinalgOp slab,
                    const BlockPlan &plan, int64_t width) {
  for (OpOperand *input : slab.getDpsInputOperands()) {
    AffineMap map = slab.getMatchingIndexingMap(input);
    auto type = dyn_cast<RankedTensorType>(input->get().getType());
    unsigned rank = map.getNumResults();
    if (!type || map.isFunctionOfDim(plan.m) || rank < 2 || rank > 3 ||
        map.getResult(rank - 1) != rewriter.getAffineDimExpr(plan.n) ||
        map.getResult(rank - 2) != rewriter.getAffineDimExpr(plan.k))
      continue;
    // The depth is dynamic in the last slab until peeling.
    int64_t columns = type.getDimSize(rank - 1);
    if (ShapedType::isDynamic(columns) ||
        llvm::any_of(type.getShape().drop_back(2),
                     [](int64_t size) { return size != 1; }))
      return nullptr;
    MLIRContext *context = rewriter.getContext();
    Location loc = slab.getLoc();
    rewriter.setInsertionPoint(slab);
    int64_t full = columns / width, edge = columns % width;
    OpFoldResult depth =
        tensor::getMixedSize(rewriter, loc, input->get(), rank - 2);
    OpFoldResult zero = rewriter.getIndexAttr(0),
                 one = rewriter.getIndexAttr(1);
    Value packed =
        tensor::EmptyOp::create(rewriter, loc,
                                {rewriter.getIndexAttr(full + (edge ? 1 : 0)),
                                 depth, rewriter.getIndexAttr(width)},
                                type.getElementType());
    SmallVector<OpFoldResult> units(3, one);
    if (full) {
      // packed[p, kk, j] = B[0..., kk, p * width + j] for the whole panels.
      SmallVector<OpFoldResult> offsets(3, zero);
      SmallVector<OpFoldResult> sizes = {rewriter.getIndexAttr(full), depth,
                                         rewriter.getIndexAttr(width)};
      Value whole = tensor::ExtractSliceOp::create(rewriter, loc, packed,
                                                   offsets, sizes, units);
      AffineExpr p = getAffineDimExpr(0, context),
                 kk = getAffineDimExpr(1, context),
                 j = getAffineDimExpr(2, context);
      SmallVector<AffineExpr> read(rank - 2, getAffineConstantExpr(0, context));
      read.append({kk, p * width + j});
      auto pack = linalg::GenericOp::create(
          rewriter, loc, whole.getType(), input->get(), whole,
          ArrayRef<AffineMap>{AffineMap::get(3, 0, read, context),
                              AffineMap::getMultiDimIdentityMap(3, context)},
          SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel),
          [](OpBuilder &b, Location loc, ValueRange args) {
            linalg::YieldOp::create(b, loc, args[0]);
          });
      packed = tensor::InsertSliceOp::create(rewriter, loc, pack.getResult(0),
                                             packed, offsets, sizes, units);
    }
    if (edge) {
      // The edge panel's columns at the start of a panel of its own; the
      // rest of that panel is never read.
      SmallVector<OpFoldResult> offsets(rank, zero), sizes(rank, one),
          strides(rank, one);
      offsets[rank - 1] = rewriter.getIndexAttr(full * width);
      sizes[rank - 2] = depth;
      sizes[rank - 1] = rewriter.getIndexAttr(edge);
      auto edgeType = RankedTensorType::get({type.getDimSize(rank - 2), edge},
                                            type.getElementType());
      Value columnsLeft = tensor::ExtractSliceOp::create(
          rewriter, loc, edgeType, input->get(), offsets, sizes, strides);
      packed = tensor::InsertSliceOp::create(
          rewriter, loc, columnsLeft, packed,
          {rewriter.getIndexAttr(full), zero, zero},
          {one, depth, rewriter.getIndexAttr(edge)}, units);
    }
    return packed;
  }
  return nullptr;
}

/// Makes `panel`, the panel of columns [`column`, `column` + width) of a
/// slab whose B `packPanelsOfB` packed into `packed`, read its rows there.
void readPackedPanel(RewriterBase &rewriter, linalg::LinalgOp panel,
                     const BlockPlan &plan, Value packed, Value column) {
  int64_t width = cast<RankedTensorType>(packed.getType()).getDimSize(2);
  for (OpOperand *input : panel.getDpsInputOperands()) {
    AffineMap map = panel.getMatchingIndexingMap(input);
    auto type = dyn_cast<RankedTensorType>(input->get().getType());
    if (!type || map.isFunctionOfDim(plan.m) || !map.isFunctionOfDim(plan.n))
      continue;
    Location loc = panel.getLoc();
    rewriter.setInsertionPoint(panel);
    Value index = affine::makeComposedAffineApply(
                      rewriter, loc,
                      rewriter.getAffineDimExpr(0).floorDiv(width), {column})
                      .getResult();
    SmallVector<OpFoldResult> offsets = {index, rewriter.getIndexAttr(0),
                                         rewriter.getIndexAttr(0)};
    // The panel's rows and columns, as its slice of B has them.
    SmallVector<OpFoldResult> panelSizes =
        tensor::getMixedSizes(rewriter, loc, input->get());
    SmallVector<OpFoldResult> sizes = {rewriter.getIndexAttr(1),
                                       panelSizes[type.getRank() - 2],
                                       panelSizes[type.getRank() - 1]};
    SmallVector<OpFoldResult> strides(3, rewriter.getIndexAttr(1));
    // A 3-D B's panel (a batch of one) is the packed panel as it is; a
    // 2-D B's, the panel without that unit dimension.
    Value rows = tensor::ExtractSliceOp::create(rewriter, loc, type, packed,
                                                offsets, sizes, strides);
    rewriter.modifyOpInPlace(panel, [&] { input->set(rows); });
  }
}

/// Where `fill` starts the output of a GEMM whose blocks' steps (the
/// innermost of `blocks`' loops) span its whole reduction, fills each
/// register block's slice of the output just before its steps, and starts
/// `outermost` (the first loop around the GEMM) from the fill's destination
/// instead: the output is then not filled and read back in passes of its
/// own, only a block at a time in the L1 cache. Changes nothing and
/// returns false where a block's slice is not known before its steps.
bool fillEachBlock(RewriterBase &rewriter, scf::SCFTilingResult &blocks,
                   linalg::FillOp fill, scf::ForOp outermost) {
  if (blocks.loops.size() != 2 || outermost.getInitArgs().size() != 1 ||
      outermost.getInitArgs()[0] != fill.getResult(0))
    return false;
  auto steps = cast<scf::ForOp>(blocks.loops.back().getOperation());
  auto block = cast<linalg::LinalgOp>(blocks.tiledOps.back());
  auto slice = block.getDpsInits()[0].getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice || steps.getNumRegionIterArgs() != 1 ||
      slice.getSource() != steps.getRegionIterArgs()[0] ||
      llvm::any_of(slice->getOperands().drop_front(), [&](Value index) {
        return !steps.isDefinedOutsideOfLoop(index);
      }))
    return false;
  Location loc = block.getLoc();
  rewriter.setInsertionPoint(steps);
  Value output = steps.getInitArgs()[0];
  Value part = tensor::ExtractSliceOp::create(
      rewriter, loc, slice.getType(), output, slice.getMixedOffsets(),
      slice.getMixedSizes(), slice.getMixedStrides());
  Value filled = linalg::FillOp::create(rewriter, loc, fill.getInputs(), part)
                     .getResult(0);
  Value started = tensor::InsertSliceOp::create(
      rewriter, loc, filled, output, slice.getMixedOffsets(),
      slice.getMixedSizes(), slice.getMixedStrides());
  rewriter.modifyOpInPlace(steps,
                           [&] { steps.getInitArgsMutable()[0].set(started); });
  rewriter.modifyOpInPlace(outermost, [&] {
    outermost.getInitArgsMutable()[0].set(fill.getOutputs().front());
  });
  return true;
}

/// The fill that starts `op`'s output: its init, or a fill of the reshape
/// of its destination where the init is a reshaped fill (a convolution's
/// output seen as a matrix), made `op`'s init.
linalg::FillOp reshapedFill(RewriterBase &rewriter, linalg::LinalgOp op) {
  OpOperand &init = *op.getDpsInitOperand(0);
  Operation *reshape = init.get().getDefiningOp();
  if (!isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(reshape))
    return init.get().getDefiningOp<linalg::FillOp>();
  auto fill = reshape->getOperand(0).getDefiningOp<linalg::FillOp>();
  if (!fill)
    return nullptr;
  rewriter.setInsertionPoint(op);
  IRMapping mapping;
  mapping.map(reshape->getOperand(0), fill.getOutputs().front());
  Value destination = rewriter.clone(*reshape, mapping)->getResult(0);
  auto reshaped = linalg::FillOp::create(rewriter, fill.getLoc(),
                                         fill.getInputs(), destination);
  rewriter.modifyOpInPlace(op, [&] { init.set(reshaped.getResult(0)); });
  return reshaped;
}

/// Tiles `op` into panels and register blocks and peels the loops, so that
/// all blocks but those at the edges have static shapes.
LogicalResult tileIntoBlocks(RewriterBase &rewriter, linalg::LinalgOp op,
                             const BlockPlan &plan) {
  SmallVector<LoopLikeOpInterface> loops;
  Value packedB;
  linalg::FillOp fill = reshapedFill(rewriter, op);
  int64_t reductionSteps = op.getStaticLoopRanges()[plan.k];
  if (!plan.slabSizes.empty()) {
    FailureOr<scf::SCFTilingResult> slabs =
        tile(rewriter, op, plan.slabSizes, plan.slabOrder);
    if (failed(slabs))
      return failure();
    op = cast<linalg::LinalgOp>(slabs->tiledOps.back());
    llvm::append_range(loops, slabs->loops);
    packedB = packPanelsOfB(rewriter, op, plan, plan.panelSizes[plan.n]);
    FailureOr<scf::SCFTilingResult> chunks =
        tile(rewriter, op, plan.chunkSizes, plan.chunkOrder);
    if (failed(chunks))
      return failure();
    op = cast<linalg::LinalgOp>(chunks->tiledOps.back());
    packSlice(rewriter, op, plan, /*ofA=*/true);
    llvm::append_range(loops, chunks->loops);
  }
  FailureOr<scf::SCFTilingResult> panels =
      tile(rewriter, op, plan.panelSizes, plan.panelOrder);
  if (failed(panels))
    return failure();
  auto panel = cast<linalg::LinalgOp>(panels->tiledOps.back());
  if (packedB)
    readPackedPanel(rewriter, panel, plan, packedB,
                    cast<scf::ForOp>(panels->loops.front().getOperation())
                        .getInductionVar());
  else if (plan.packPanels)
    packSlice(rewriter, panel, plan, /*ofA=*/false);
  FailureOr<scf::SCFTilingResult> blocks =
      tile(rewriter, panel, plan.blockSizes, plan.blockOrder);
  if (failed(blocks))
    return failure();
  blocks->tiledOps.back()->setAttr(
      kBlockMarker, rewriter.getDenseI64ArrayAttr(plan.vectorSizes));
  // Inner loops first: peeling an outer loop clones what it contains.
  llvm::append_range(loops, panels->loops);
  llvm::append_range(loops, blocks->loops);
  if (fill && reductionSteps <= kPanelDepth)
    (void)fillEachBlock(rewriter, *blocks, fill,
                        cast<scf::ForOp>(loops.front().getOperation()));
  for (LoopLikeOpInterface loop : llvm::reverse(loops)) {
    scf::ForOp partial;
    (void)scf::peelForLoopAndSimplifyBounds(
        rewriter, cast<scf::ForOp>(loop.getOperation()), partial);
  }
  return success();
}

/// Drops the unit parallel dimensions of a static register block (the
/// batch and extra n dimensions tiled by 1), leaving a 2-D matmul with its
/// one-step reduction. Returns the block to vectorize.
linalg::LinalgOp dropUnitParallelDims(RewriterBase &rewriter,
                                      linalg::LinalgOp block) {
  if (block.hasDynamicShape())
    return block;
  rewriter.setInsertionPoint(block);
  auto generic = dyn_cast<linalg::GenericOp>(block.getOperation());
  if (!generic) {
    FailureOr<linalg::GenericOp> generalized =
        linalg::generalizeNamedOp(rewriter, block);
    if (failed(generalized))
      return block;
    generic = *generalized;
  }
  linalg::ControlDropUnitDims control;
  // Rank-reducing slices (not reshapes), which fold into the block's slices
  // and so keep the accumulator hoistable out of the reduction loop.
  control.rankReductionStrategy =
      linalg::ControlDropUnitDims::RankReductionStrategy::ExtractInsertSlice;
  control.controlFn = [](Operation *op) {
    SmallVector<unsigned> parallel;
    for (auto [d, type] :
         llvm::enumerate(cast<linalg::GenericOp>(op).getIteratorTypesArray()))
      if (type == utils::IteratorType::parallel)
        parallel.push_back(d);
    return parallel;
  };
  FailureOr<linalg::DropUnitDimsResult> dropped =
      linalg::dropUnitDims(rewriter, generic, control);
  if (succeeded(dropped)) {
    rewriter.replaceOp(generic, dropped->replacements);
    generic = cast<linalg::GenericOp>(dropped->resultOp.getOperation());
  }
  // A plain matmul vectorizes straight into vector.contract.
  rewriter.setInsertionPoint(generic);
  FailureOr<linalg::LinalgOp> named =
      linalg::specializeGenericOp(rewriter, generic);
  return succeeded(named) ? *named : generic;
}

/// Vectorizes a register block: full blocks directly, partial ones (at the
/// edges, with dynamic sizes) with masks of the full block's size.
LogicalResult vectorizeBlock(RewriterBase &rewriter, linalg::LinalgOp block,
                             ArrayRef<int64_t> sizes) {
  block = dropUnitParallelDims(rewriter, block);
  rewriter.setInsertionPoint(block);
  FailureOr<linalg::VectorizationResult> vectorized = linalg::vectorize(
      rewriter, block, block.hasDynamicShape() ? sizes : ArrayRef<int64_t>(),
      /*inputScalableVecDims=*/{}, /*vectorizeNDExtract=*/false,
      /*flatten1DDepthwiseConv=*/false,
      /*assumeDynamicDimsMatchVecSizes=*/false,
      /*createNamedContraction=*/true);
  if (failed(vectorized))
    return failure();
  rewriter.replaceOp(block, vectorized->replacements);
  return success();
}

/// Marks the blocks of tiled transposes between tiling and vectorization.
constexpr StringLiteral kTransposeBlockMarker = "gs.transpose_block";

/// Tiles a transpose that swaps its last two dimensions (the one a GEMM's
/// transposed operand needs; swapsLastTwoDimensions) into `lanes` x
/// `lanes` blocks, the others one at a time, and peels the block loops so
/// that every block, the edge ones too, has a static shape, marked for
/// vectorization: a block is then row loads, register shuffles and row
/// stores, where plain loops read a column element by element. Transposes
/// of dynamic shape or narrower than a block are left as loops.
LogicalResult tileTransposeIntoBlocks(RewriterBase &rewriter,
                                      linalg::LinalgOp transpose,
                                      int64_t lanes) {
  int64_t rank = transpose.getNumLoops();
  auto type = cast<ShapedType>(transpose.getDpsInits().front().getType());
  if (!type.hasStaticShape() || type.getDimSize(rank - 1) < lanes ||
      type.getDimSize(rank - 2) < lanes)
    return success();
  SmallVector<int64_t> sizes(rank, 1), order;
  sizes[rank - 2] = sizes[rank - 1] = lanes;
  for (int64_t d = 0; d < rank; ++d)
    order.push_back(d);
  FailureOr<scf::SCFTilingResult> tiled =
      tile(rewriter, transpose, sizes, order);
  if (failed(tiled))
    return failure();
  tiled->tiledOps.back()->setAttr(kTransposeBlockMarker,
                                  rewriter.getUnitAttr());
  for (LoopLikeOpInterface loop : llvm::reverse(tiled->loops)) {
    scf::ForOp partial;
    (void)scf::peelForLoopAndSimplifyBounds(
        rewriter, cast<scf::ForOp>(loop.getOperation()), partial);
  }
  return success();
}

/// Moves the output positions (oh, ow) of a grouped convolution's generic,
/// loops (n, g, f, oh, ow, c, kh, kw), inside its reductions: each step of
/// (c, kh, kw) is then a row of outputs updated along a row of the input,
/// which LLVM vectorizes, where each output summed its 9 or 49 terms alone
/// in a scalar chain. Every output adds its terms in the same order. Only
/// for windows moving by 1 along the rows: at stride 2 the rows are read
/// at a stride, which ran slower than the chains. MobileNetV2's depthwise
/// layers (batch 8, train step): 3x3 on 56x56 44 -> 25 ms, 3x3/2 20 ->
/// 15.6 ms (its weight and input gradients), 3x3 on 7x7 6.0 -> 2.0 ms.
void depthwiseOutputsInnermost(RewriterBase &rewriter, linalg::GenericOp conv) {
  rewriter.setInsertionPoint(conv);
  (void)linalg::interchangeGenericOp(rewriter, conv, {0, 1, 2, 5, 6, 7, 3, 4});
}

/// Applies the patterns that `populate` adds to `root` until a fixpoint,
/// or fails, saying so, where they rewrite without end (two undoing each
/// other) or `step` otherwise does not converge.
LogicalResult applyPatterns(Operation *root, StringRef step,
                            function_ref<void(RewritePatternSet &)> populate) {
  RewritePatternSet patterns(root->getContext());
  populate(patterns);
  // 32 rewrites an op: 16 times what ResNet-18's train step needs (2), so
  // that only a loop, not a large module, runs out of them.
  int64_t ops = 0;
  root->walk([&](Operation *) { ++ops; });
  GreedyRewriteConfig config;
  config.setMaxNumRewrites(std::max<int64_t>(int64_t(1) << 16, 32 * ops));
  if (succeeded(applyPatternsGreedily(root, std::move(patterns), config)))
    return success();
  // At the module's location: the module itself, grown, is no help.
  return emitError(root->getLoc())
         << "gs-cpu-kernel-schedule: " << step << " did not converge";
}

struct CPUKernelSchedulePass
    : gs::impl::CPUKernelScheduleBase<CPUKernelSchedulePass> {
  using CPUKernelScheduleBase::CPUKernelScheduleBase;

  void runOnOperation() override {
    if (!scheduleFile.empty())
      return applyScheduleFile();
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    IRRewriter rewriter(context);
    unsigned bits = vectorBits ? vectorBits : hostVectorBits();
    RegisterBlock block = registerBlockFor(bits);

    // Grouped convolutions as loops of ungrouped ones, a group at a time,
    // where a group fills a GEMM's register blocks; the others (depthwise
    // ones) as loops (a generic), those of windows moving by 1 along the
    // rows with the output positions innermost (depthwiseOutputsInnermost).
    SmallVector<linalg::Conv2DNgchwGfchwOp> groupedConvs;
    module.walk(
        [&](linalg::Conv2DNgchwGfchwOp conv) { groupedConvs.push_back(conv); });
    for (linalg::Conv2DNgchwGfchwOp conv : groupedConvs) {
      if (succeeded(gs::splitGroupedConvolution(rewriter, conv)))
        continue;
      bool unitRowStride = conv.getStrides().getValues<int64_t>()[1] == 1;
      rewriter.setInsertionPoint(conv);
      FailureOr<linalg::GenericOp> generic =
          linalg::generalizeNamedOp(rewriter, conv);
      if (failed(generic)) {
        conv->emitOpError("could not be generalized");
        return signalPassFailure();
      }
      if (unitRowStride)
        depthwiseOutputsInnermost(rewriter, *generic);
    }

    // Convolutions as GEMMs over an im2col copy of the input. Those it
    // does not take (empty ones) stay loops, which run zero times.
    SmallVector<linalg::Conv2DNchwFchwOp> convs;
    module.walk([&](linalg::Conv2DNchwFchwOp conv) { convs.push_back(conv); });
    for (linalg::Conv2DNchwFchwOp conv : convs)
      (void)gs::rewriteConvolutionAsGemm(rewriter, conv);

    SmallVector<linalg::LinalgOp, 8> candidates;
    module.walk([&](linalg::LinalgOp op) {
      if (succeeded(planBlocks(op, block)))
        candidates.push_back(op);
    });
    SmallVector<std::pair<linalg::LinalgOp, BlockPlan>, 8> gemms;
    for (linalg::LinalgOp op : candidates) {
      linalg::LinalgOp gemm = widenHalfInputs(rewriter, op);
      if (FailureOr<BlockPlan> plan = planBlocks(gemm, block); succeeded(plan))
        gemms.emplace_back(gemm, std::move(*plan));
    }
    for (auto &[op, plan] : gemms)
      if (failed(tileIntoBlocks(rewriter, op, plan))) {
        op->emitOpError("could not be tiled into register blocks");
        return signalPassFailure();
      }
    int64_t lanes = std::max<unsigned>(bits / 32, 4);
    // Static shapes: fold the constant sizes that peeling left in the full
    // blocks, and the single-iteration loops of the edge blocks, into the
    // slices' and the blocks' types (once more after the transposes are
    // tiled: the packs that transpose need them static to be tiled).
    auto foldStaticShapes = [&] {
      return applyPatterns(
          module, "folding static shapes", [&](RewritePatternSet &patterns) {
            tensor::ExtractSliceOp::getCanonicalizationPatterns(patterns,
                                                                context);
            tensor::InsertSliceOp::getCanonicalizationPatterns(patterns,
                                                               context);
            tensor::CastOp::getCanonicalizationPatterns(patterns, context);
            affine::AffineMinOp::getCanonicalizationPatterns(patterns, context);
            affine::AffineApplyOp::getCanonicalizationPatterns(patterns,
                                                               context);
            scf::ForOp::getCanonicalizationPatterns(patterns, context);
            context->getLoadedDialect<linalg::LinalgDialect>()
                ->getCanonicalizationPatterns(patterns);
            context->getLoadedDialect<tensor::TensorDialect>()
                ->getCanonicalizationPatterns(patterns);
          });
    };
    if (failed(foldStaticShapes()))
      return signalPassFailure();
    SmallVector<linalg::LinalgOp> transposes;
    module.walk([&](linalg::LinalgOp op) {
      if (swapsLastTwoDimensions(op))
        transposes.push_back(op);
    });
    for (linalg::LinalgOp op : transposes)
      if (failed(tileTransposeIntoBlocks(rewriter, op, lanes))) {
        op->emitOpError("could not be tiled into blocks");
        return signalPassFailure();
      }

    if (failed(foldStaticShapes()))
      return signalPassFailure();

    SmallVector<linalg::LinalgOp> blocks;
    module.walk([&](linalg::LinalgOp op) {
      if (op->hasAttr(kBlockMarker))
        blocks.push_back(op);
    });
    for (linalg::LinalgOp op : blocks) {
      SmallVector<int64_t> sizes(
          op->getAttrOfType<DenseI64ArrayAttr>(kBlockMarker).asArrayRef());
      op->removeAttr(kBlockMarker);
      if (failed(vectorizeBlock(rewriter, op, sizes))) {
        op->emitOpError("could not be vectorized");
        return signalPassFailure();
      }
    }

    // Vectorized generics multiply broadcast operands and reduce: fold
    // that back into vector.contract, as named ops vectorize.
    if (failed(applyPatterns(
            module, "folding reductions into contractions",
            [](RewritePatternSet &patterns) {
              vector::populateVectorReductionToContractPatterns(patterns);
            })))
      return signalPassFailure();

    // One SIMD register per vector: unroll the blocks' contractions and
    // transfers into rows of `lanes` elements, so that each accumulator
    // row is a separate value that hoisting can keep in a register.
    auto unrolling =
        vector::UnrollVectorOptions()
            .setFilterConstraint([](Operation *op) {
              return success(isa<vector::ContractionOp, vector::TransferReadOp,
                                 vector::TransferWriteOp>(op));
            })
            .setNativeShapeFn(
                [lanes](Operation *op) { return registerShape(op, lanes); });
    if (failed(applyPatterns(module, "unrolling into registers",
                             [&](RewritePatternSet &patterns) {
                               vector::populateVectorUnrollPatterns(patterns,
                                                                    unrolling);
                             })))
      return signalPassFailure();

    // Rows as 1-D vectors: drop the unit dimensions the unrolling left.
    if (failed(applyPatterns(
            module, "dropping unit dimensions",
            [](RewritePatternSet &patterns) {
              vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
              vector::populateVectorTransferPermutationMapLoweringPatterns(
                  patterns);
            })))
      return signalPassFailure();

    // Contractions of a broadcast A element and a B row into FMAs.
    if (failed(applyPatterns(
            module, "lowering contractions to FMAs",
            [](RewritePatternSet &patterns) {
              vector::populateVectorContractLoweringPatterns(
                  patterns, vector::VectorContractLowering::OuterProduct);
              vector::populateVectorOuterProductLoweringPatterns(patterns);
              vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
              vector::populateVectorTransferPermutationMapLoweringPatterns(
                  patterns);
              vector::populateVectorShapeCastLoweringPatterns(patterns);
            })))
      return signalPassFailure();
    // Apart from the leading unit dimensions' removal, which turns a
    // broadcast's lowering (an insert into a vector of one row) back into
    // the broadcast.
    if (failed(applyPatterns(
            module, "lowering broadcasts", [](RewritePatternSet &patterns) {
              vector::populateVectorBroadcastLoweringPatterns(patterns);
              vector::populateVectorShapeCastLoweringPatterns(patterns);
            })))
      return signalPassFailure();

    // Transpose blocks, after the unrolling (which would cut their
    // transposed reads into columns): a read of the block's rows, a
    // transpose in registers as one shuffle, a write of its rows.
    SmallVector<linalg::LinalgOp> transposeBlocks;
    module.walk([&](linalg::LinalgOp op) {
      if (op->hasAttr(kTransposeBlockMarker))
        transposeBlocks.push_back(op);
    });
    for (linalg::LinalgOp op : transposeBlocks) {
      op->removeAttr(kTransposeBlockMarker);
      if (op.hasDynamicShape())
        continue;
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::VectorizationResult> vectorized =
          linalg::vectorize(rewriter, op);
      if (failed(vectorized)) {
        op->emitOpError("could not be vectorized");
        return signalPassFailure();
      }
      rewriter.replaceOp(op, vectorized->replacements);
    }
    if (failed(applyPatterns(
            module, "lowering transposes", [](RewritePatternSet &patterns) {
              vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
              vector::populateVectorTransferPermutationMapLoweringPatterns(
                  patterns);
              vector::populateVectorTransposeLoweringPatterns(
                  patterns, vector::VectorTransposeLowering::Shuffle1D);
              vector::populateVectorShapeCastLoweringPatterns(patterns);
            })))
      return signalPassFailure();
  }

  /// Applies @__transform_main of `scheduleFile` to the module.
  void applyScheduleFile() {
    OwningOpRef<ModuleOp> library;
    if (failed(transform::detail::parseTransformModuleFromFile(
            &getContext(), scheduleFile, library)))
      return signalPassFailure();
    auto entry = library->lookupSymbol<transform::NamedSequenceOp>(
        transform::TransformDialect::kTransformEntryPointSymbolName);
    if (!entry) {
      getOperation().emitError()
          << "schedule file '" << scheduleFile
          << "' has no transform.named_sequence @__transform_main";
      return signalPassFailure();
    }
    if (failed(transform::applyTransformNamedSequence(
            getOperation(), entry, *library,
            transform::TransformOptions().enableExpensiveChecks(false))))
      signalPassFailure();
  }
};
} // namespace
