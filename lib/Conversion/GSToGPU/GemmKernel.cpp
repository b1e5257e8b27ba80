//===- GemmKernel.cpp - Fused FP16 Tensor Core GEMM kernels -----*- C++ -*-===//
//
// One thread block computes a blockM x blockN tile of C with warpsM x warpsN
// warps, each a (blockM / warpsM) x (blockN / warpsN) tile of m16n8
// accumulators. A pipeline of `stages` blockK tiles of A and B in padded
// shared memory (16-byte cp.async where the rows are 16-byte aligned,
// guarded element copies otherwise) keeps stages - 1 copies in flight while
// the warps load fragments with ldmatrix and issue mma.sync. The tiles keep
// their operand's stored orientation; a transposed operand is turned into
// its fragment by ldmatrix (.trans for A, plain for B). The epilogue
// works on the accumulator registers, at the coordinates the fragment layout
// gives, and reduces its statistics through warp shuffles and shared memory
// to one partial per block; the kernel's last block to finish (LastBlock.h)
// sums the partials in a fixed order (deterministic), or, for a large GEMM
// (finishesInLastBlock), a second launch of one warp does.
//
// The wgmma variant (sm_90a) gives each warpgroup 64 rows of the block's
// tile: its k tiles lie in shared memory in the PTX ISA's canonical
// swizzled layouts, which wgmma.mma_async reads through matrix descriptors
// (no ldmatrix), and the accumulators are its m64nNk16 fragments, whose
// n8 blocks hold what mma.sync's would: the epilogue is the same.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/GSToGPU/GemmKernel.h"
#include "gs/Conversion/GSToGPU/FragmentLayout.h"
#include "gs/Conversion/GSToGPU/KernelEntry.h"
#include "gs/Conversion/GSToGPU/LastBlock.h"
#include "gs/Dialect/GS/IR/ShapeUtils.h"
#include "gs/Support/Telemetry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::tensorcore;

namespace {
constexpr int64_t kChunk = 8;     // f16 elements per 16-byte copy
constexpr int64_t kSmemPad = 8;   // f16 elements of padding per smem row
/// The shared memory a thread block may use on sm_90 (static and
/// dynamic, the latter asked for with cuFuncSetAttribute).
constexpr int64_t kMaxSharedBytesSm90 = 227 * 1024;
/// The alignment of a wgmma operand tile, which its 128-byte swizzle
/// pattern repeats on (the descriptors' base offset is then 0).
constexpr int64_t kSwizzleAtomBytes = 1024;

/// A wgmma operand's k tile in shared memory, in one of the PTX ISA's
/// canonical layouts ("Shared Memory Matrix Layout"), swizzled: K-major (k
/// contiguous; A stored m x k, B stored n x k) in rows of 2 * kExtent bytes,
/// eight rows an atom; or MN-major (m or n contiguous) in rows of
/// `swizzleBytes` of m or n, eight k rows an atom, the atoms down k first.
/// Its byte offsets are relative to a 1024-byte aligned start, and the
/// swizzle XORs bits 4.. of an offset with bits 7..: the 16-byte chunks of
/// row r of an atom are permuted by r.
struct WgmmaTile {
  bool kMajor;
  int64_t mnExtent, kExtent;
  int64_t swizzleBytes;
  /// The descriptor's leading and stride dimension byte offsets.
  int64_t leadingBytes, strideBytes;

  int64_t bytes() const { return 2 * mnExtent * kExtent; }
  /// The descriptor's swizzle mode: 1, 2, 3 for 128, 64, 32 bytes.
  int64_t swizzleMode() const {
    return swizzleBytes == 128 ? 1 : swizzleBytes == 64 ? 2 : 3;
  }
};

/// The tile of an operand with `mnPerInstruction` rows or columns per
/// wgmma (64 for A, the block's n for B).
WgmmaTile wgmmaTile(bool kMajor, int64_t mnExtent, int64_t kExtent,
                    int64_t mnPerInstruction) {
  if (kMajor) {
    int64_t rowBytes = 2 * kExtent;
    // The leading byte offset is unused (the ISA: "assumed 1").
    return {true, mnExtent, kExtent, rowBytes, 16, 8 * rowBytes};
  }
  int64_t rowBytes = mnPerInstruction % 64 == 0   ? 128
                     : mnPerInstruction % 32 == 0 ? 64
                                                  : 32;
  int64_t atomBytes = 8 * rowBytes;
  return {false,    mnExtent, kExtent, rowBytes, kExtent / 8 * atomBytes,
          atomBytes};
}

int64_t alignTo(int64_t x, int64_t alignment) {
  return (x + alignment - 1) / alignment * alignment;
}

class GemmKernelBuilder {
public:
  GemmKernelBuilder(OpBuilder &b, Location loc, const GemmKernelConfig &config)
      : b(b), loc(loc), cfg(config), f16(b.getF16Type()), f32(b.getF32Type()) {
  }

  func::FuncOp build();

private:
  struct Arguments {
    Value a, bMatrix, scale, bias, mask, c, partials, gradStats, castStats;
    /// A forward convolution's weight as the M x K matrix A, or where it
    /// lies channels first, as C x M x K (kernel offsets flattened): A's
    /// element (m, c * K + offset) at (c, m, offset).
    Value weightMatrix;
    /// The ticket counter of a kernel whose last block sums the partials.
    memref::GlobalOp ticket;
  };
  /// Where an element of a GEMM operand lives: the memref indices (valid,
  /// clamped, where it lies outside) and whether it lies inside.
  struct Access {
    Value inside;
    SmallVector<Value> indices;
  };
  struct Shared {
    Value a, b, reduction;
    /// The last block's: the lanes' sums of the partials, and the flag
    /// that tells a block it is the last.
    Value finalSums, lastFlag;
    /// wgmma: the byte offset in `a` (both operands' tiles) of its first
    /// 1024-byte boundary, where the tiles start, and that boundary's
    /// shared-memory address.
    Value alignedStart, alignedAddress;
  };

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  /// The integer `v` of x's type (index, or i32 in narrowed index math).
  Value constantLike(Value x, int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(x.getType(), v));
  }
  Value f32Constant(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, int64_t y) {
    Value factor = constantLike(x, y);
    return arith::MulIOp::create(b, loc, x, factor);
  }
  Value div(Value x, int64_t y) {
    Value divisor = constantLike(x, y);
    return arith::DivUIOp::create(b, loc, x, divisor);
  }
  Value rem(Value x, int64_t y) {
    Value divisor = constantLike(x, y);
    return arith::RemUIOp::create(b, loc, x, divisor);
  }
  Value below(Value x, int64_t bound) {
    Value limit = constantLike(x, bound);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, limit);
  }
  Value clampBelow(Value x, int64_t bound) {
    Value limit = constantLike(x, bound);
    return arith::MinUIOp::create(b, loc, x, limit);
  }
  Value castTo(Type type, Value x) {
    return arith::IndexCastUIOp::create(b, loc, type, x);
  }
  Value both(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  /// row < rows and col < cols.
  Value inBounds(Value row, int64_t rows, Value col, int64_t cols) {
    Value rowInside = below(row, rows);
    Value colInside = below(col, cols);
    return both(rowInside, colInside);
  }
  Value compare(arith::CmpFPredicate predicate, Value x, double y) {
    Value constant =
        arith::ConstantOp::create(b, loc, b.getFloatAttr(x.getType(), y));
    return arith::CmpFOp::create(b, loc, predicate, x, constant);
  }
  Value select(Value condition, Value x, Value y) {
    return arith::SelectOp::create(b, loc, condition, x, y);
  }
  /// How two partial statistics of `field` combine: max |x| by maximum,
  /// the others by sum.
  Value combineStat(OpBuilder &builder, Location at, int64_t field, Value x,
                    Value y) {
    if (field == PartialMaxAbs)
      return arith::MaximumFOp::create(builder, at, x, y);
    return arith::AddFOp::create(builder, at, x, y);
  }
  Type typeOf(ElementType element) {
    return element == ElementType::F16 ? f16 : f32;
  }

  /// wgmma's m64nNk16 f32 accumulator fragment: blockN / 2 registers.
  Type wgmmaAccumulatorType() {
    return LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(cfg.blockN / 2, f32));
  }

  MemRefType sharedType(ArrayRef<int64_t> shape, Type element) {
    auto space = gpu::AddressSpaceAttr::get(b.getContext(),
                                            gpu::AddressSpace::Workgroup);
    return MemRefType::get(shape, element, MemRefLayoutAttrInterface(), space);
  }
  /// The lanes' f64 sums of the statistics' partials (kFinalSumsBytes).
  MemRefType finalSumsType() {
    return sharedType({kLanesPerWarp, NumPartialStats}, b.getF64Type());
  }

  void buildMainKernel(Arguments args);
  /// Points a grouped convolution's weight matrix, input, bias, mask and
  /// output at the channels of the thread block's group (its z index).
  void selectGroup(Arguments &args);
  /// Whether every coordinate a convolution's gathers compute (row and
  /// column of the GEMM, tensor indices, input positions before the
  /// padding test) fits in 31 bits.
  bool narrowGatherMath() const;
  /// `flat` as coordinates of a row-major array of `sizes`.
  SmallVector<Value> unflatten(Value flat, ArrayRef<int64_t> sizes);
  /// The elements of a convolution's implicit GEMM: B (k x n) from the
  /// input, A (m x k) from a transposed convolution's weight, C (m x n) in
  /// the output.
  Access convInput(Value row, Value col);
  Access transposedWeight(Value row, Value col);
  Access convOutput(Value row, Value col);
  /// Where (tileRow, tileCol) of a tile being copied lies in shared
  /// memory: the indices of its element.
  using SharedIndices =
      function_ref<SmallVector<Value>(Value tileRow, Value tileCol)>;
  /// Copies a tileRows x tileCols tile at (rowBase, colBase) of an operand
  /// read through `access`, element by element.
  void buildGatherCopy(Value shared, Value tid, Value rowBase, Value colBase,
                       int64_t tileRows, int64_t tileCols, Value source,
                       function_ref<Access(Value row, Value col)> access,
                       SharedIndices sharedAt);
  /// The indices in `source` of a rows x cols matrix's element (row, col):
  /// (row, col) of a matrix, or (col / K, row, col % K) of a weight that
  /// lies channels first as C x M x K.
  using SourceIndices = function_ref<SmallVector<Value>(Value row, Value col)>;
  void buildTileCopy(Value source, Value shared, Value tid, Value rowBase,
                     Value colBase, int64_t tileRows, int64_t tileCols,
                     int64_t rows, int64_t cols, SharedIndices sharedAt,
                     SmallVectorImpl<Value> &tokens,
                     SourceIndices sourceAt = nullptr);
  /// The copies of one k tile of A and B into `slot`; their cp.async group,
  /// or null if all copies are synchronous.
  Value buildStageCopy(const Arguments &args, const Shared &smem, Value slot,
                       Value k0, Value tid, Value rowBase, Value colBase);
  /// One ldmatrix.x4 from `tile`'s `slot`, each lane at (row, col) +
  /// `address`.
  Value loadFragments(Value tile, Value slot, const LaneAddress &address,
                      Value row, Value col, bool transpose, Value lane);
  SmallVector<Value> buildMainLoopStep(const Shared &smem, Value slot,
                                       ValueRange accumulators, Value warpRow,
                                       Value warpCol, Value lane);
  /// wgmma: the byte offset in shared memory of `tile`'s (mn, k), from
  /// the start of the operand tile, swizzled.
  Value swizzledOffset(const WgmmaTile &tile, Value mn, Value k);
  /// wgmma: the byte offset of operand A's (or B's) tile in `slot` from the
  /// aligned start of the operands' buffer.
  Value wgmmaTileStart(Value slot, bool operandA);
  /// wgmma: the element of the operands' buffer where (tileRow, tileCol)
  /// of operand A's (or B's) stored tile in `slot` lies.
  SmallVector<Value> wgmmaSharedIndices(const Shared &smem, bool operandA,
                                        Value slot, Value tileRow,
                                        Value tileCol);
  /// wgmma: the matrix descriptor of the m64nNk16 (or k16 x N) part of an
  /// operand's tile in `slot` at (mn0, k0).
  Value wgmmaDescriptor(const Shared &smem, bool operandA, Value slot,
                        Value mn0, int64_t k0);
  /// wgmma: the mma of one k tile in `slot` by this thread's warpgroup.
  Value buildWgmmaStep(const Shared &smem, Value slot, Value accumulator,
                       Value warpgroup);
  /// What every element of the epilogue uses: the scale and constants.
  struct EpilogueInputs {
    Value scale, zero, one, halfZero;
  };
  EpilogueInputs buildEpilogueInputs(const Arguments &args);
  /// The epilogue of one accumulator element, C[row][col] = the value
  /// `accumulator` reads from its register, and its terms of the
  /// statistics.
  void buildEpilogueElement(const Arguments &args, const EpilogueInputs &in,
                            function_ref<Value()> accumulator, Value row,
                            Value col, SmallVectorImpl<Value> &stats);
  SmallVector<Value> buildEpilogue(const Arguments &args,
                                   ValueRange accumulators, Value rowBase,
                                   Value colBase, Value warpRow, Value warpCol,
                                   Value lane);
  SmallVector<Value> buildWgmmaEpilogue(const Arguments &args,
                                        Value accumulator, Value rowBase,
                                        Value colBase, Value warpgroup,
                                        Value tid);
  void buildBlockReduction(const Arguments &args, const Shared &smem,
                           ArrayRef<Value> stats, Value tid, Value warp,
                           Value lane);
  void buildFinalReduction(const Arguments &args);
  /// The sums of the partials into gradStats and castStats: lane l (thread
  /// l of a warp, or of the first warp of a larger block) the blocks l,
  /// l + 32, ... into `sums`, then thread 0 the lanes' sums, a barrier
  /// between.
  void buildFinalSums(const Arguments &args, Value thread, Value sums,
                      bool inLargerBlock);

  OpBuilder &b;
  Location loc;
  const GemmKernelConfig &cfg;
  Type f16, f32;
};

int64_t warpTileM(const GemmKernelConfig &cfg) { return cfg.blockM / cfg.warpsM; }
int64_t warpTileN(const GemmKernelConfig &cfg) { return cfg.blockN / cfg.warpsN; }

bool usesWgmma(const GemmKernelConfig &cfg) {
  return cfg.instruction == MmaInstruction::Wgmma;
}
/// wgmma's tiles of A (64 rows per warpgroup) and B (all blockN columns).
WgmmaTile wgmmaTileA(const GemmKernelConfig &cfg) {
  return wgmmaTile(!cfg.transA, cfg.blockM, cfg.blockK, 64);
}
WgmmaTile wgmmaTileB(const GemmKernelConfig &cfg) {
  return wgmmaTile(cfg.transB, cfg.blockN, cfg.blockK, cfg.blockN);
}
/// wgmma: the bytes of one pipeline slot (A's tile, then B's, each aligned
/// to the swizzle atom), and of the buffer holding them all with the room
/// to align its start.
int64_t wgmmaSlotBytes(const GemmKernelConfig &cfg) {
  return alignTo(wgmmaTileA(cfg).bytes(), kSwizzleAtomBytes) +
         alignTo(wgmmaTileB(cfg).bytes(), kSwizzleAtomBytes);
}
int64_t wgmmaBufferBytes(const GemmKernelConfig &cfg) {
  return cfg.stages * wgmmaSlotBytes(cfg) + kSwizzleAtomBytes;
}
int64_t reductionBytes(const GemmKernelConfig &cfg) {
  return cfg.statistics ? 4 * cfg.warpsM * cfg.warpsN * NumPartialStats : 0;
}
/// wgmma: whether the operands' buffer goes to dynamic shared memory,
/// where static shared memory (48 KiB) cannot hold it with the rest.
bool usesDynamicSharedMemory(const GemmKernelConfig &cfg) {
  return usesWgmma(cfg) &&
         wgmmaBufferBytes(cfg) + reductionBytes(cfg) > kMaxStaticSharedBytes;
}
/// The lanes' f64 sums of the partials' statistics in shared memory.
constexpr int64_t kFinalSumsBytes = 8 * kLanesPerWarp * NumPartialStats;
/// The most blocks of a GEMM whose last block sums its statistics: on an
/// A100 (108 multiprocessors) at most three per multiprocessor, which the
/// kernels' registers (<= 168 for 128 threads) and shared memory allow, so
/// all run at once and the registers the sums add cost no speed.
constexpr int64_t kMaxLastBlockGrid = 256;

/// The shapes of one pipeline slot of A and of B in shared memory, rows
/// padded: each operand's tile in its stored orientation.
std::pair<int64_t, int64_t> sharedTileA(const GemmKernelConfig &cfg) {
  if (cfg.transA)
    return {cfg.blockK, cfg.blockM + kSmemPad};
  return {cfg.blockM, cfg.blockK + kSmemPad};
}
std::pair<int64_t, int64_t> sharedTileB(const GemmKernelConfig &cfg) {
  if (cfg.transB)
    return {cfg.blockN, cfg.blockK + kSmemPad};
  return {cfg.blockK, cfg.blockN + kSmemPad};
}

/// The bytes of shared memory the operands' tiles take.
int64_t operandBytes(const GemmKernelConfig &cfg) {
  if (usesWgmma(cfg))
    return wgmmaBufferBytes(cfg);
  auto [aRows, aCols] = sharedTileA(cfg);
  auto [bRows, bCols] = sharedTileB(cfg);
  return 2 * cfg.stages * (aRows * aCols + bRows * bCols);
}

/// Whether the kernel's last block sums the statistics' partials, which
/// saves a launch where a launch counts: it has them, in static shared
/// memory with room for the lanes' sums beside, in a grid of at most
/// kMaxLastBlockGrid blocks whose tiles ask for one block per
/// multiprocessor (not the large GEMMs', which ptxas holds to 128
/// registers: the sums, which take up to 110, would spill there).
bool finishesInLastBlock(const GemmKernelConfig &cfg) {
  return cfg.statistics && !usesDynamicSharedMemory(cfg) &&
         cfg.minBlocksPerSM == 1 && cfg.numBlocks() <= kMaxLastBlockGrid &&
         operandBytes(cfg) + reductionBytes(cfg) + kFinalSumsBytes +
                 kLastBlockFlagBytes <=
             kMaxStaticSharedBytes;
}
} // namespace

func::FuncOp GemmKernelBuilder::build() {
  SmallVector<int64_t> aShape, bShape, cShape;
  if (const std::optional<ConvolutionGeometry> &conv = cfg.conv) {
    aShape = conv->transposed
                 ? SmallVector<int64_t>{conv->inChannels,
                                        conv->outChannels / conv->groups}
             : conv->groupsSplitWeight
                 ? SmallVector<int64_t>{conv->outChannels / conv->groups,
                                        conv->inChannels}
                 : SmallVector<int64_t>{conv->outChannels,
                                        conv->inChannels / conv->groups};
    if (conv->weightChannelsFirst)
      std::swap(aShape[0], aShape[1]);
    llvm::append_range(aShape, conv->kernel);
    bShape = conv->inputGroupsInImages
                 ? SmallVector<int64_t>{conv->inChannels / conv->groups,
                                        conv->groups * conv->batch}
             : conv->inputChannelsFirst
                 ? SmallVector<int64_t>{conv->inChannels, conv->batch}
                 : SmallVector<int64_t>{conv->batch, conv->inChannels};
    llvm::append_range(bShape, conv->inSpatial);
    cShape = {conv->batch, conv->outChannels};
    llvm::append_range(cShape, conv->outSpatial);
  } else {
    aShape = cfg.transA ? SmallVector<int64_t>{cfg.k, cfg.m}
                        : SmallVector<int64_t>{cfg.m, cfg.k};
    bShape = cfg.transB ? SmallVector<int64_t>{cfg.n, cfg.k}
                        : SmallVector<int64_t>{cfg.k, cfg.n};
    cShape = {cfg.m, cfg.n};
  }
  // The bias holds one value per column, or per output channel (row).
  int64_t biasSize = cfg.conv ? cfg.conv->outChannels : cfg.n;
  SmallVector<Type> inputs = {MemRefType::get(aShape, f16),
                              MemRefType::get(bShape, f16),
                              MemRefType::get({1}, f32)};
  if (cfg.bias)
    inputs.push_back(MemRefType::get({biasSize}, typeOf(cfg.biasType)));
  if (cfg.reluMask)
    inputs.push_back(MemRefType::get(cShape, f16));
  inputs.push_back(MemRefType::get(cShape, typeOf(cfg.output)));
  if (cfg.statistics) {
    inputs.push_back(MemRefType::get({cfg.numBlocks(), NumPartialStats}, f32));
    inputs.push_back(
        MemRefType::get({telemetry::NumStatsFields}, b.getF64Type()));
    inputs.push_back(
        MemRefType::get({telemetry::NumCastCounts}, b.getI64Type()));
  }
  Arguments args;
  if (finishesInLastBlock(cfg)) {
    Operation *parent = b.getInsertionBlock()->getParentOp();
    if (parent->hasTrait<OpTrait::SymbolTable>()) {
      SymbolTable symbols(parent);
      args.ticket = createTicketCounter(loc, cfg.name + "_ticket", symbols,
                                        b.getInsertionPoint());
    }
  }
  auto function = func::FuncOp::create(b, loc, cfg.name,
                                       b.getFunctionType(inputs, {}));
  Block *entry = function.addEntryBlock();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entry);

  auto next = entry->args_begin();
  args.a = *next++;
  args.bMatrix = *next++;
  args.scale = *next++;
  if (cfg.bias)
    args.bias = *next++;
  if (cfg.reluMask)
    args.mask = *next++;
  args.c = *next++;
  if (cfg.statistics) {
    args.partials = *next++;
    args.gradStats = *next++;
    args.castStats = *next++;
  }

  buildMainKernel(args);
  if (cfg.statistics && !args.ticket)
    buildFinalReduction(args);
  func::ReturnOp::create(b, loc);
  return function;
}

void GemmKernelBuilder::buildMainKernel(Arguments args) {
  Value gridN = index(cfg.gridN());
  Value gridM = index(cfg.gridM());
  Value one = index(1);
  Value threads = index(cfg.numThreads());
  int64_t numWarps = cfg.warpsM * cfg.warpsN;
  auto [aRows, aCols] = sharedTileA(cfg);
  auto [bRows, bCols] = sharedTileB(cfg);
  SmallVector<Type> workgroup;
  // wgmma: both operands' tiles in one buffer, aligned at run time. Where
  // static shared memory cannot hold it, it and the statistics' buffer are
  // all dynamic shared memory: with no static variable beside it, nothing
  // can lie where the run-time alignment moves the tiles.
  bool dynamicBuffers = usesDynamicSharedMemory(cfg);
  Value dynamicBytes;
  if (dynamicBuffers) {
    dynamicBytes = arith::ConstantIntOp::create(
        b, loc, b.getI32Type(), wgmmaBufferBytes(cfg) + reductionBytes(cfg));
  } else if (usesWgmma(cfg)) {
    workgroup.push_back(sharedType({wgmmaBufferBytes(cfg) / 2}, f16));
  } else {
    workgroup.push_back(sharedType({cfg.stages, aRows, aCols}, f16));
    workgroup.push_back(sharedType({cfg.stages, bRows, bCols}, f16));
  }
  if (cfg.statistics && !dynamicBuffers)
    workgroup.push_back(sharedType({numWarps, NumPartialStats}, f32));
  if (args.ticket) {
    workgroup.push_back(finalSumsType());
    workgroup.push_back(getLastBlockFlagType(b.getContext()));
  }
  Value groups = index(cfg.numGroups());
  auto launch = gpu::LaunchOp::create(b, loc, gridN, gridM, groups, threads,
                                      one, one, dynamicBytes,
                                      /*asyncTokenType=*/nullptr,
                                      /*asyncDependencies=*/{}, workgroup);
  if (cfg.minBlocksPerSM > 1)
    launch->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                    b.getI32IntegerAttr(cfg.minBlocksPerSM));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  ArrayRef<BlockArgument> attributions = launch.getWorkgroupAttributions();
  Shared smem;
  if (usesWgmma(cfg)) {
    if (dynamicBuffers) {
      auto space = gpu::AddressSpaceAttr::get(b.getContext(),
                                              gpu::AddressSpace::Workgroup);
      Value bytes = gpu::DynamicSharedMemoryOp::create(
          b, loc,
          MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                          MemRefLayoutAttrInterface(), space));
      Value operandsAt = index(0);
      smem.a = memref::ViewOp::create(
          b, loc, sharedType({wgmmaBufferBytes(cfg) / 2}, f16), bytes,
          operandsAt, ValueRange{});
      if (cfg.statistics) {
        Value reductionAt = index(wgmmaBufferBytes(cfg));
        smem.reduction = memref::ViewOp::create(
            b, loc, sharedType({numWarps, NumPartialStats}, f32), bytes,
            reductionAt, ValueRange{});
      }
    } else {
      smem.a = attributions[0];
    }
    // The distance from the buffer's shared-memory address to the next
    // 1024-byte boundary.
    Value address =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smem.a);
    Value past = rem(address, kSwizzleAtomBytes);
    Value distance =
        arith::SubIOp::create(b, loc, index(kSwizzleAtomBytes), past);
    smem.alignedStart = rem(distance, kSwizzleAtomBytes);
    smem.alignedAddress = add(address, smem.alignedStart);
  } else {
    smem.a = attributions[0];
    smem.b = attributions[1];
  }
  if (args.ticket) {
    smem.lastFlag = attributions.back();
    smem.finalSums = attributions.drop_back().back();
    attributions = attributions.drop_back(2);
  }
  if (cfg.statistics && !dynamicBuffers)
    smem.reduction = attributions.back();

  if (cfg.conv && !cfg.conv->transposed) {
    // M x C x K... is the row-major M x K matrix A (inside the launch, so
    // that the kernel takes the weight as it is); C x M x K... is C x M x
    // K, its kernel offsets flattened.
    int64_t rank = 2 + cfg.conv->kernel.size();
    SmallVector<ReassociationIndices> groups = {{0}, {}};
    if (cfg.conv->weightChannelsFirst)
      groups = {{0}, {1}, {}};
    for (int64_t d = groups.size() - 1; d < rank; ++d)
      groups.back().push_back(d);
    args.weightMatrix =
        memref::CollapseShapeOp::create(b, loc, args.a, groups);
  }
  if (cfg.numGroups() > 1)
    selectGroup(args);
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value blockCol = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value blockRow = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  Value warp = div(tid, kLanesPerWarp);
  Value lane = rem(tid, kLanesPerWarp);
  Value warpRow = div(warp, cfg.warpsN);
  Value warpCol = rem(warp, cfg.warpsN);
  Value rowBase = mul(blockRow, cfg.blockM);
  Value colBase = mul(blockCol, cfg.blockN);

  // The accumulators live in registers across the K loop: m16n8 tiles, or
  // one wgmma fragment.
  SmallVector<Value> init;
  Value warpgroup;
  if (usesWgmma(cfg)) {
    warpgroup = div(tid, kThreadsPerWarpgroup);
    init.push_back(LLVM::ZeroOp::create(b, loc, wgmmaAccumulatorType()));
  } else {
    int64_t tilesM = warpTileM(cfg) / 16, tilesN = warpTileN(cfg) / 8;
    auto accType = VectorType::get({2, 2}, f32);
    Value zero = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(accType, b.getF32FloatAttr(0.0f)));
    init.assign(tilesM * tilesN, zero);
  }
  // The pipeline: `ahead` tiles in flight ahead of the one computed,
  // stages - 1, or stages - 2 where a tile's wgmmas run on into the next
  // iteration. Iteration t waits for tile t, computes it from slot t %
  // stages, and starts the copy of tile t + ahead into the slot tile t - 1
  // (t - 2) used: past the barrier, every warp is done with it. Tiles past
  // k are zero-filled copies, so the loop has no branch.
  int64_t inFlight = usesWgmma(cfg) ? cfg.wgmmaGroupsInFlight : 0;
  int64_t ahead = cfg.stages - 1 - inFlight;
  int64_t kTiles = (cfg.k + cfg.blockK - 1) / cfg.blockK;
  Value pending;
  for (int64_t s = 0; s < ahead; ++s) {
    Value slot = index(s);
    Value k0 = index(s * cfg.blockK);
    if (Value group = buildStageCopy(args, smem, slot, k0, tid, rowBase,
                                     colBase))
      pending = group;
  }
  Value lower = index(0);
  Value upper = index(kTiles);
  Value step = index(1);
  auto loop = scf::ForOp::create(
      b, loc, lower, upper, step, init,
      [&](OpBuilder &nested, Location, Value tile, ValueRange accumulators) {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToEnd(nested.getInsertionBlock());
        // The wait counts groups; its token operand only orders it after
        // the prologue's copies.
        if (pending)
          nvgpu::DeviceAsyncWaitOp::create(b, loc, pending,
                                           b.getI32IntegerAttr(ahead - 1));
        // wgmma reads shared memory through the async proxy: the tile's
        // writes (cp.async, stores) must be fenced into it before the
        // barrier that hands them over.
        if (usesWgmma(cfg))
          NVVM::FenceProxyOp::create(
              b, loc,
              NVVM::ProxyKindAttr::get(b.getContext(),
                                       NVVM::ProxyKind::async_shared),
              NVVM::SharedSpaceAttr::get(b.getContext(),
                                         NVVM::SharedSpace::shared_cta));
        gpu::BarrierOp::create(b, loc);
        Value slot = rem(tile, cfg.stages);
        // The copies of tile t + ahead, into the slot it cycles to.
        auto copyAhead = [&] {
          Value aheadTile = add(tile, index(ahead));
          Value nextSlot = rem(aheadTile, cfg.stages);
          Value nextK0 = mul(aheadTile, cfg.blockK);
          buildStageCopy(args, smem, nextSlot, nextK0, tid, rowBase, colBase);
        };
        if (usesWgmma(cfg)) {
          // The next copies are issued while the wgmmas run; each
          // warpgroup waits for its own (or for the tile before's) before
          // the next barrier, past which the slot they read may be
          // refilled.
          Value updated =
              buildWgmmaStep(smem, slot, accumulators.front(), warpgroup);
          copyAhead();
          NVVM::WgmmaWaitGroupSyncOp::create(b, loc,
                                             b.getI64IntegerAttr(inFlight));
          scf::YieldOp::create(b, loc, updated);
          return;
        }
        SmallVector<Value> updated = buildMainLoopStep(
            smem, slot, accumulators, warpRow, warpCol, lane);
        copyAhead();
        scf::YieldOp::create(b, loc, updated);
      });
  // No copy may land after the block's shared memory is gone, and the
  // accumulators are the epilogue's only once their wgmmas are done.
  if (pending)
    nvgpu::DeviceAsyncWaitOp::create(b, loc, pending, b.getI32IntegerAttr(0));
  if (inFlight > 0)
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, b.getI64IntegerAttr(0));

  SmallVector<Value> stats =
      usesWgmma(cfg) ? buildWgmmaEpilogue(args, loop.getResult(0), rowBase,
                                          colBase, warpgroup, tid)
                     : buildEpilogue(args, loop.getResults(), rowBase, colBase,
                                     warpRow, warpCol, lane);
  if (cfg.statistics)
    buildBlockReduction(args, smem, stats, tid, warp, lane);
  if (args.ticket) {
    OpBuilder::InsertionGuard guard(b);
    buildLastBlockIf(b, loc, tid, cfg.numBlocks(), args.ticket, smem.lastFlag);
    buildFinalSums(args, tid, smem.finalSums,
                   /*inLargerBlock=*/cfg.numThreads() > kLanesPerWarp);
  }
  gpu::TerminatorOp::create(b, loc);
}

void GemmKernelBuilder::selectGroup(Arguments &args) {
  const ConvolutionGeometry &conv = *cfg.conv;
  Value group = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
  // The channels [group, group + 1) * size of dimension `dim` of `value`.
  auto channels = [&](Value value, int64_t dim, int64_t size) -> Value {
    auto type = cast<MemRefType>(value.getType());
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes, strides(type.getRank(), b.getIndexAttr(1));
    for (int64_t extent : type.getShape())
      sizes.push_back(b.getIndexAttr(extent));
    offsets[dim] = mul(group, size);
    sizes[dim] = b.getIndexAttr(size);
    return memref::SubViewOp::create(b, loc, value, offsets, sizes, strides);
  };
  int64_t groupIn = conv.inChannels / conv.groups;
  // A forward weight's rows are output channels, a transposed one's input
  // channels; a split weight's columns are the groups' input channels.
  if (conv.transposed)
    args.a = channels(args.a, 0, groupIn);
  else if (conv.groupsSplitWeight && conv.weightChannelsFirst)
    args.weightMatrix = channels(args.weightMatrix, 0, groupIn);
  else if (conv.groupsSplitWeight)
    args.weightMatrix = channels(args.weightMatrix, 1, cfg.k);
  else
    args.weightMatrix =
        channels(args.weightMatrix, conv.weightChannelsFirst ? 1 : 0, cfg.m);
  // An input whose groups lie in its images gives each group all its
  // channels (the first dimension) and the group's images.
  args.bMatrix =
      conv.inputGroupsInImages
          ? channels(args.bMatrix, 1, conv.batch)
          : channels(args.bMatrix, conv.inputChannelsFirst ? 0 : 1, groupIn);
  args.c = channels(args.c, 1, cfg.m);
  if (args.bias)
    args.bias = channels(args.bias, 0, cfg.m);
  if (args.mask)
    args.mask = channels(args.mask, 1, cfg.m);
}

/// Copies a tileRows x tileCols tile at (rowBase, colBase) of the rows x cols
/// `source` into `shared`, zero-filling what lies outside `source`. Each
/// thread copies whole 8-element chunks, which stay 16 contiguous bytes in
/// shared memory.
void GemmKernelBuilder::buildTileCopy(Value source, Value shared, Value tid,
                                      Value rowBase, Value colBase,
                                      int64_t tileRows, int64_t tileCols,
                                      int64_t rows, int64_t cols,
                                      SharedIndices sharedAt,
                                      SmallVectorImpl<Value> &tokens,
                                      SourceIndices sourceAt) {
  int64_t chunksPerRow = tileCols / kChunk;
  int64_t chunksPerThread = tileRows * chunksPerRow / cfg.numThreads();
  auto at = [&](Value row, Value col) -> SmallVector<Value> {
    if (sourceAt)
      return sourceAt(row, col);
    return {row, col};
  };
  // A chunk must also lie within one contiguous run of the source's last
  // dimension.
  int64_t run = cast<MemRefType>(source.getType()).getShape().back();
  bool aligned = cols % kChunk == 0 && run % kChunk == 0;
  for (int64_t i = 0; i < chunksPerThread; ++i) {
    Value offset = index(i * cfg.numThreads());
    Value chunk = add(tid, offset);
    Value tileRow = div(chunk, chunksPerRow);
    Value tileCol = mul(rem(chunk, chunksPerRow), kChunk);
    Value row = add(rowBase, tileRow);
    Value col = add(colBase, tileCol);
    Value rowInside = below(row, rows);
    if (aligned) {
      // A chunk lies wholly inside or outside the row; outside, cp.async
      // reads nothing (source size 0) from a clamped, valid address.
      Value inside = both(rowInside, below(col, cols));
      Value full = index(kChunk);
      Value none = index(0);
      Value sourceElements = select(inside, full, none);
      Value clampedRow = clampBelow(row, rows - 1);
      Value clampedCol = clampBelow(col, cols - kChunk);
      SmallVector<Value> sharedIndices = sharedAt(tileRow, tileCol);
      SmallVector<Value> sourceIndices = at(clampedRow, clampedCol);
      auto copy = nvgpu::DeviceAsyncCopyOp::create(
          b, loc, shared, sharedIndices, source, sourceIndices,
          b.getIndexAttr(kChunk), sourceElements, b.getUnitAttr());
      tokens.push_back(copy.getAsyncToken());
      continue;
    }
    Value clampedRow = clampBelow(row, rows - 1);
    Value zero = arith::ConstantOp::create(b, loc, b.getF16FloatAttr(0.0f));
    for (int64_t e = 0; e < kChunk; ++e) {
      Value elementOffset = index(e);
      Value elementCol = add(col, elementOffset);
      Value inside = both(rowInside, below(elementCol, cols));
      Value clampedCol = clampBelow(elementCol, cols - 1);
      Value value =
          memref::LoadOp::create(b, loc, source, at(clampedRow, clampedCol));
      Value kept = select(inside, value, zero);
      Value sharedCol = add(tileCol, elementOffset);
      memref::StoreOp::create(b, loc, kept, shared,
                              sharedAt(tileRow, sharedCol));
    }
  }
}

void GemmKernelBuilder::buildGatherCopy(
    Value shared, Value tid, Value rowBase, Value colBase, int64_t tileRows,
    int64_t tileCols, Value source,
    function_ref<Access(Value row, Value col)> access, SharedIndices sharedAt) {
  int64_t elementsPerThread = tileRows * tileCols / cfg.numThreads();
  Value zero = arith::ConstantOp::create(b, loc, b.getF16FloatAttr(0.0f));
  // The coordinates in 32 bits where every one fits: 64-bit division by
  // constants costs several times the registers and instructions.
  bool narrow = narrowGatherMath();
  Type i32 = b.getI32Type();
  int64_t threads = cfg.numThreads();
  for (int64_t i = 0; i < elementsPerThread; ++i) {
    // Consecutive threads take consecutive columns: neighbouring output
    // positions, mostly neighbouring addresses. Where the threads span
    // whole rows (or a row whole numbers of times), a thread keeps its
    // column (or its row) in every copy, so that the coordinates computed
    // from it are computed once.
    Value tileRow, tileCol;
    if (threads % tileCols == 0) {
      Value firstRow = div(tid, tileCols);
      Value rowOffset = index(i * threads / tileCols);
      tileRow = add(firstRow, rowOffset);
      tileCol = rem(tid, tileCols);
    } else if (tileCols % threads == 0) {
      tileRow = index(i * threads / tileCols);
      tileCol = add(tid, index(i * threads % tileCols));
    } else {
      Value element = add(tid, index(i * threads));
      tileRow = div(element, tileCols);
      tileCol = rem(element, tileCols);
    }
    Value row = add(rowBase, tileRow);
    Value col = add(colBase, tileCol);
    if (narrow) {
      row = castTo(i32, row);
      col = castTo(i32, col);
    }
    Access where = access(row, col);
    if (narrow)
      for (Value &at : where.indices)
        at = castTo(b.getIndexType(), at);
    Value value = memref::LoadOp::create(b, loc, source, where.indices);
    Value kept = select(where.inside, value, zero);
    memref::StoreOp::create(b, loc, kept, shared, sharedAt(tileRow, tileCol));
  }
}

bool GemmKernelBuilder::narrowGatherMath() const {
  const ConvolutionGeometry &conv = *cfg.conv;
  // Rows and columns reach a tile past m, n and k; input positions reach
  // out * stride + kernel * dilation + pad.
  int64_t largest = std::max({cfg.m, cfg.n, cfg.k}) +
                    std::max({cfg.blockM, cfg.blockN, cfg.blockK});
  for (size_t d = 0; d < conv.kernel.size(); ++d)
    largest = std::max(largest, conv.outSpatial[d] * conv.strides[d] +
                                    conv.kernel[d] * conv.dilations[d] +
                                    conv.padsBegin[d] + conv.inSpatial[d]);
  return largest < (int64_t{1} << 31);
}

SmallVector<Value> GemmKernelBuilder::unflatten(Value flat,
                                                ArrayRef<int64_t> sizes) {
  SmallVector<Value> coordinates(sizes.size());
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    coordinates[d] = d == 0 ? flat : rem(flat, sizes[d]);
    if (d > 0)
      flat = div(flat, sizes[d]);
  }
  return coordinates;
}

GemmKernelBuilder::Access GemmKernelBuilder::convInput(Value row, Value col) {
  const ConvolutionGeometry &conv = *cfg.conv;
  int64_t rank = conv.kernel.size();
  // row = (input channel, kernel offsets), col = (image, output position).
  // Clamped first, so that the coordinates of an element past k or n stay
  // in range.
  Value inside = inBounds(row, cfg.k, col, cfg.n);
  Value kIndex = clampBelow(row, cfg.k - 1);
  Value nIndex = clampBelow(col, cfg.n - 1);
  SmallVector<Value> k = unflatten(kIndex, conv.kSizes());
  SmallVector<Value> n = unflatten(nIndex, conv.nSizes());
  Value zero = constantLike(row, 0);
  Access access{inside, {n[0], k[0]}};
  if (conv.inputChannelsFirst)
    std::swap(access.indices[0], access.indices[1]);
  for (int64_t d = 0; d < rank; ++d) {
    Value offset = k[1 + d], position = n[1 + d];
    Value at;
    if (!conv.transposed) {
      // Input position o * stride + offset * dilation - pad.
      Value strided = mul(position, conv.strides[d]);
      Value dilated = mul(offset, conv.dilations[d]);
      Value reach = add(strided, dilated);
      Value low = constantLike(row, conv.padsBegin[d]);
      Value notBefore = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::uge, reach, low);
      Value notAfter = below(reach, conv.padsBegin[d] + conv.inSpatial[d]);
      Value valid = both(notBefore, notAfter);
      access.inside = both(access.inside, valid);
      Value shifted = arith::SubIOp::create(b, loc, reach, low);
      at = select(valid, shifted, zero);
    } else {
      // The kernel runs backwards (offset K-1-k); input position
      // (o + pad - offset * dilation) / stride where that divides.
      Value flipped = arith::SubIOp::create(
          b, loc, constantLike(row, conv.kernel[d] - 1), offset);
      Value reach = add(position, constantLike(row, conv.padsBegin[d]));
      Value back = mul(flipped, conv.dilations[d]);
      Value notBefore = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::uge, reach, back);
      Value shifted = arith::SubIOp::create(
          b, loc, select(notBefore, reach, back), back);
      Value onStride = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::eq, rem(shifted, conv.strides[d]),
          zero);
      Value source = div(shifted, conv.strides[d]);
      Value notAfter = below(source, conv.inSpatial[d]);
      Value valid = both(both(notBefore, onStride), notAfter);
      access.inside = both(access.inside, valid);
      at = select(valid, source, zero);
    }
    access.indices.push_back(at);
  }
  return access;
}

GemmKernelBuilder::Access GemmKernelBuilder::transposedWeight(Value row,
                                                              Value col) {
  const ConvolutionGeometry &conv = *cfg.conv;
  // row = output channel, col = (input channel, flipped kernel offsets).
  Value inside = inBounds(row, cfg.m, col, cfg.k);
  Value kIndex = clampBelow(col, cfg.k - 1);
  SmallVector<Value> k = unflatten(kIndex, conv.kSizes());
  Access access{inside, {k[0], clampBelow(row, cfg.m - 1)}};
  for (int64_t d = 0; d < static_cast<int64_t>(conv.kernel.size()); ++d)
    access.indices.push_back(arith::SubIOp::create(
        b, loc, constantLike(row, conv.kernel[d] - 1), k[1 + d]));
  return access;
}

GemmKernelBuilder::Access GemmKernelBuilder::convOutput(Value row, Value col) {
  const ConvolutionGeometry &conv = *cfg.conv;
  Value inside = inBounds(row, cfg.m, col, cfg.n);
  Value nIndex = clampBelow(col, cfg.n - 1);
  SmallVector<Value> n = unflatten(nIndex, conv.nSizes());
  Access access{inside, {n[0], clampBelow(row, cfg.m - 1)}};
  access.indices.append(n.begin() + 1, n.end());
  return access;
}

Value GemmKernelBuilder::buildStageCopy(const Arguments &args,
                                        const Shared &smem, Value slot,
                                        Value k0, Value tid, Value rowBase,
                                        Value colBase) {
  SmallVector<Value> tokens;
  // Each tile in its operand's stored orientation: padded rows, or (wgmma)
  // the operand's canonical layout, both operands in one buffer.
  Value sharedA = smem.a, sharedB = usesWgmma(cfg) ? smem.a : smem.b;
  auto sharedIndices = [&](bool operandA) {
    return [&, operandA](Value tileRow, Value tileCol) -> SmallVector<Value> {
      if (usesWgmma(cfg))
        return wgmmaSharedIndices(smem, operandA, slot, tileRow, tileCol);
      return {slot, tileRow, tileCol};
    };
  };
  auto sharedAtA = sharedIndices(/*operandA=*/true);
  auto sharedAtB = sharedIndices(/*operandA=*/false);
  if (cfg.conv) {
    // A convolution's weight, as a matrix or gathered; its input gathered.
    if (cfg.conv->transposed)
      buildGatherCopy(
          sharedA, tid, rowBase, k0, cfg.blockM, cfg.blockK, args.a,
          [&](Value row, Value col) { return transposedWeight(row, col); },
          sharedAtA);
    else {
      // Element (m, c * K + offset) of a channels-first C x M x K weight.
      int64_t offsets = numElements(cfg.conv->kernel);
      auto channelsFirst = [&](Value row, Value col) -> SmallVector<Value> {
        return {div(col, offsets), row, rem(col, offsets)};
      };
      buildTileCopy(args.weightMatrix, sharedA, tid, rowBase, k0, cfg.blockM,
                    cfg.blockK, cfg.m, cfg.k, sharedAtA, tokens,
                    cfg.conv->weightChannelsFirst ? SourceIndices(channelsFirst)
                                                  : SourceIndices());
    }
    buildGatherCopy(
        sharedB, tid, k0, colBase, cfg.blockK, cfg.blockN, args.bMatrix,
        [&](Value row, Value col) { return convInput(row, col); }, sharedAtB);
  } else {
    auto copy = [&](Value source, Value shared, bool transposed, Value row,
                    Value col, int64_t tileRows, int64_t tileCols, int64_t rows,
                    int64_t cols, SharedIndices sharedAt) {
      if (transposed) {
        std::swap(row, col);
        std::swap(tileRows, tileCols);
        std::swap(rows, cols);
      }
      buildTileCopy(source, shared, tid, row, col, tileRows, tileCols, rows,
                    cols, sharedAt, tokens);
    };
    copy(args.a, sharedA, cfg.transA, rowBase, k0, cfg.blockM, cfg.blockK,
         cfg.m, cfg.k, sharedAtA);
    copy(args.bMatrix, sharedB, cfg.transB, k0, colBase, cfg.blockK, cfg.blockN,
         cfg.k, cfg.n, sharedAtB);
  }
  if (tokens.empty())
    return nullptr;
  return nvgpu::DeviceAsyncCreateGroupOp::create(
      b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
}

Value GemmKernelBuilder::swizzledOffset(const WgmmaTile &tile, Value mn,
                                        Value k) {
  Value offset;
  if (tile.kMajor) {
    // Row mn % 8 of atom mn / 8, k contiguous.
    Value row = mul(rem(mn, 8), tile.swizzleBytes);
    Value atom = mul(div(mn, 8), tile.strideBytes);
    Value rowStart = add(row, atom);
    Value column = mul(k, 2);
    offset = add(rowStart, column);
  } else {
    // Column mn % (row elements) of the mn / (row elements)-th atom column,
    // row k % 8 of the k / 8-th atom down it.
    int64_t rowElements = tile.swizzleBytes / 2;
    Value column = mul(rem(mn, rowElements), 2);
    Value atomColumn = mul(div(mn, rowElements), tile.leadingBytes);
    Value row = mul(rem(k, 8), tile.swizzleBytes);
    Value atomRow = mul(div(k, 8), tile.strideBytes);
    Value columnStart = add(column, atomColumn);
    Value rowStart = add(row, atomRow);
    offset = add(columnStart, rowStart);
  }
  // Chunk bits 4.. XOR row bits 7.. (as many as the row has chunks).
  Value row = arith::ShRUIOp::create(b, loc, offset, constantLike(offset, 7));
  Value rowBits = arith::AndIOp::create(
      b, loc, row, constantLike(offset, tile.swizzleBytes / 16 - 1));
  Value chunkMask =
      arith::ShLIOp::create(b, loc, rowBits, constantLike(offset, 4));
  return arith::XOrIOp::create(b, loc, offset, chunkMask);
}

Value GemmKernelBuilder::wgmmaTileStart(Value slot, bool operandA) {
  // A's tile, then B's, each aligned to the swizzle atom.
  int64_t operandOffset =
      operandA ? 0 : alignTo(wgmmaTileA(cfg).bytes(), kSwizzleAtomBytes);
  Value slotStart = mul(slot, wgmmaSlotBytes(cfg));
  return add(slotStart, index(operandOffset));
}

SmallVector<Value> GemmKernelBuilder::wgmmaSharedIndices(const Shared &smem,
                                                         bool operandA,
                                                         Value slot,
                                                         Value tileRow,
                                                         Value tileCol) {
  WgmmaTile tile = operandA ? wgmmaTileA(cfg) : wgmmaTileB(cfg);
  // A K-major operand is stored mn x k (k contiguous), an MN-major one
  // k x mn.
  Value mn = tile.kMajor ? tileRow : tileCol;
  Value k = tile.kMajor ? tileCol : tileRow;
  Value tileStart = wgmmaTileStart(slot, operandA);
  Value alignedTileStart = add(smem.alignedStart, tileStart);
  Value bytes = add(alignedTileStart, swizzledOffset(tile, mn, k));
  return {div(bytes, 2)};
}

Value GemmKernelBuilder::wgmmaDescriptor(const Shared &smem, bool operandA,
                                         Value slot, Value mn0, int64_t k0) {
  WgmmaTile tile = operandA ? wgmmaTileA(cfg) : wgmmaTileB(cfg);
  // The unswizzled offset of (mn0, k0), which starts a row of an atom (mn0
  // a multiple of the atoms' mn extent): the hardware swizzles the
  // addresses it forms from it.
  Value start;
  if (tile.kMajor) {
    Value atom = mul(div(mn0, 8), tile.strideBytes);
    start = add(atom, index(2 * k0));
  } else {
    Value atomColumn = mul(div(mn0, tile.swizzleBytes / 2), tile.leadingBytes);
    start = add(atomColumn, index(k0 / 8 * tile.strideBytes));
  }
  Value tileStart = wgmmaTileStart(slot, operandA);
  Value address = add(smem.alignedAddress, add(tileStart, start));
  // Bits 0-13: the address's bits 4-17; 16-29 and 32-45: the leading and
  // stride byte offsets / 16; 62-63: the swizzle mode.
  Type i64 = b.getI64Type();
  Value wide = arith::IndexCastUIOp::create(b, loc, i64, address);
  Value window = arith::AndIOp::create(
      b, loc, wide, arith::ConstantIntOp::create(b, loc, i64, 0x3FFFF));
  Value encoded = arith::ShRUIOp::create(
      b, loc, window, arith::ConstantIntOp::create(b, loc, i64, 4));
  uint64_t fields = (static_cast<uint64_t>(tile.leadingBytes >> 4) << 16) |
                    (static_cast<uint64_t>(tile.strideBytes >> 4) << 32) |
                    (static_cast<uint64_t>(tile.swizzleMode()) << 62);
  Value constant =
      arith::ConstantIntOp::create(b, loc, i64, static_cast<int64_t>(fields));
  return arith::OrIOp::create(b, loc, encoded, constant);
}

Value GemmKernelBuilder::buildWgmmaStep(const Shared &smem, Value slot,
                                        Value accumulator, Value warpgroup) {
  // The accumulator registers were last written by wgmma or set to zero:
  // fence them, issue the k16 steps, commit them as one group.
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  Value mn0 = mul(warpgroup, 64);
  Value zeroIndex = index(0);
  auto shape = NVVM::MMAShapeAttr::get(b.getContext(), 64, cfg.blockN, 16);
  // row: A K-major, B N-major; col: A M-major, B K-major.
  auto layoutA = cfg.transA ? NVVM::MMALayout::col : NVVM::MMALayout::row;
  auto layoutB = cfg.transB ? NVVM::MMALayout::col : NVVM::MMALayout::row;
  for (int64_t kk = 0; kk < cfg.blockK; kk += 16) {
    Value descriptorA = wgmmaDescriptor(smem, /*operandA=*/true, slot, mn0, kk);
    Value descriptorB =
        wgmmaDescriptor(smem, /*operandA=*/false, slot, zeroIndex, kk);
    accumulator = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, wgmmaAccumulatorType(), accumulator, descriptorA, descriptorB,
        shape, NVVM::WGMMATypes::f16, NVVM::WGMMATypes::f16,
        NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, layoutA, layoutB,
        /*satfinite=*/nullptr);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  return accumulator;
}

Value GemmKernelBuilder::loadFragments(Value tile, Value slot,
                                       const LaneAddress &address, Value row,
                                       Value col, bool transpose, Value lane) {
  Value laneRow = add(row, address.row.build(b, loc, lane, 0, 0));
  Value laneCol = add(col, address.col.build(b, loc, lane, 0, 0));
  return nvgpu::LdMatrixOp::create(b, loc, VectorType::get({4, 2}, f16), tile,
                                   ValueRange{slot, laneRow, laneCol},
                                   transpose, /*numTiles=*/4);
}

SmallVector<Value>
GemmKernelBuilder::buildMainLoopStep(const Shared &smem, Value slot,
                                     ValueRange accumulators, Value warpRow,
                                     Value warpCol, Value lane) {
  int64_t tilesM = warpTileM(cfg) / 16, tilesN = warpTileN(cfg) / 8;
  Value warpRowBase = mul(warpRow, warpTileM(cfg));
  Value warpColBase = mul(warpCol, warpTileN(cfg));
  auto bType = VectorType::get({2, 2}, f16);
  Value bZero = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(bType, b.getF16FloatAttr(0.0f)));
  SmallVector<Value> updated(accumulators.begin(), accumulators.end());
  for (int64_t kk = 0; kk < cfg.blockK; kk += 16) {
    Value kOffset = index(kk);
    SmallVector<Value> aFragments, bFragments;
    // A stored M x K loads as is, stored K x M transposed (.trans).
    for (int64_t mi = 0; mi < tilesM; ++mi) {
      Value tileRow = add(warpRowBase, index(mi * 16));
      aFragments.push_back(
          cfg.transA
              ? loadFragments(smem.a, slot,
                              ldmatrixAddressOfTransposedOperandA(), kOffset,
                              tileRow, /*transpose=*/true, lane)
              : loadFragments(smem.a, slot, ldmatrixAddressOfOperandA(),
                              tileRow, kOffset, /*transpose=*/false, lane));
    }
    // B stored K x N loads transposed (.trans), stored N x K as is.
    for (int64_t np = 0; np < tilesN; np += 2) {
      Value tileCol = add(warpColBase, index(np * 8));
      Value pair =
          cfg.transB
              ? loadFragments(smem.b, slot,
                              ldmatrixAddressOfTransposedOperandBPair(),
                              tileCol, kOffset, /*transpose=*/false, lane)
              : loadFragments(smem.b, slot, ldmatrixAddressOfOperandBPair(),
                              kOffset, tileCol, /*transpose=*/true, lane);
      // Registers 0, 1 are the first n8 tile's fragment, 2, 3 the second's
      // (row by row: the NVVM lowering takes 2-D vectors as arrays of rows).
      for (int64_t half = 0; half < 2; ++half) {
        Value fragment = bZero;
        for (int64_t r = 0; r < 2; ++r) {
          Value row = vector::ExtractOp::create(b, loc, pair,
                                                ArrayRef<int64_t>{2 * half + r});
          fragment = vector::InsertOp::create(b, loc, row, fragment,
                                              ArrayRef<int64_t>{r});
        }
        bFragments.push_back(fragment);
      }
    }
    for (int64_t mi = 0; mi < tilesM; ++mi)
      for (int64_t ni = 0; ni < tilesN; ++ni) {
        Value &acc = updated[mi * tilesN + ni];
        acc = nvgpu::MmaSyncOp::create(b, loc, aFragments[mi], bFragments[ni],
                                       acc, ArrayRef<int64_t>{16, 8, 16});
      }
  }
  return updated;
}

GemmKernelBuilder::EpilogueInputs
GemmKernelBuilder::buildEpilogueInputs(const Arguments &args) {
  EpilogueInputs in;
  in.scale = memref::LoadOp::create(b, loc, args.scale, ValueRange{index(0)});
  in.zero = f32Constant(0.0);
  in.one = f32Constant(1.0);
  in.halfZero = arith::ConstantOp::create(b, loc, b.getF16FloatAttr(0.0f));
  return in;
}

void GemmKernelBuilder::buildEpilogueElement(const Arguments &args,
                                             const EpilogueInputs &in,
                                             function_ref<Value()> accumulator,
                                             Value row, Value col,
                                             SmallVectorImpl<Value> &stats) {
  Value zero = in.zero, oneCount = in.one, halfZero = in.halfZero;
  Value clampedRow = clampBelow(row, cfg.m - 1);
  Value clampedCol = clampBelow(col, cfg.n - 1);
  // Where the element goes: C[row][col], or the convolution's output.
  Access target = cfg.conv
                      ? convOutput(row, col)
                      : Access{inBounds(row, cfg.m, col, cfg.n), {row, col}};
  Value inside = target.inside;
  Value value = arith::MulFOp::create(b, loc, accumulator(), in.scale);
  if (cfg.bias) {
    Value bias = memref::LoadOp::create(
        b, loc, args.bias, ValueRange{cfg.conv ? clampedRow : clampedCol});
    if (cfg.biasType == ElementType::F16)
      bias = arith::ExtFOp::create(b, loc, f32, bias);
    value = arith::AddFOp::create(b, loc, value, bias);
  }
  bool halfOutput = cfg.output == ElementType::F16;
  Value half = arith::TruncFOp::create(b, loc, f16, value);
  Value stored = halfOutput ? half : value;
  if (cfg.reluMask) {
    // C only: the statistics are of the values before the mask.
    SmallVector<Value> maskIndices = {clampedRow, clampedCol};
    if (cfg.conv)
      maskIndices = target.indices;
    Value forward = memref::LoadOp::create(b, loc, args.mask, maskIndices);
    Value active = compare(arith::CmpFPredicate::OGT, forward, 0.0);
    stored = select(active, stored, halfOutput ? halfZero : zero);
  }
  auto store = scf::IfOp::create(b, loc, inside, /*withElse=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(store.thenBlock());
    memref::StoreOp::create(b, loc, stored, args.c, target.indices);
  }
  if (!cfg.statistics)
    return;

  // gs.grad_stats of C as stored, gs.cast_stats of the f32 value's
  // rounding; the elements outside C add nothing.
  Value storedWide =
      halfOutput ? arith::ExtFOp::create(b, loc, f32, half).getResult() : value;
  Value x = select(inside, storedWide, zero);
  Value magnitude = math::AbsFOp::create(b, loc, x);
  Value nonzero = compare(arith::CmpFPredicate::OGT, magnitude, 0.0);
  Value logArgument = select(nonzero, magnitude, oneCount);
  // ln|x| only feeds the scale's statistical model. On wgmma, whose main
  // loop issues the fewest instructions, the epilogue takes the approximate
  // log (lg2.approx times ln 2: 2^-21.4 absolute on [0.5, 2], 3 ulp
  // elsewhere) instead of libdevice's range reduction and polynomial; on
  // mma.sync it would make ptxas spill for sm_80.
  auto logFlags =
      usesWgmma(cfg) ? arith::FastMathFlags::afn : arith::FastMathFlags::none;
  Value log = math::LogOp::create(b, loc, logArgument, logFlags);
  auto count = [&](Value predicate) {
    return select(predicate, oneCount, zero);
  };
  Value halfMagnitude =
      math::AbsFOp::create(b, loc, select(inside, half, halfZero));
  Value rounded = select(inside, value, zero);
  Value castNonzero = compare(arith::CmpFPredicate::UNE, rounded, 0.0);
  Value flushed =
      both(castNonzero, compare(arith::CmpFPredicate::OEQ, halfMagnitude, 0.0));
  Value positive = compare(arith::CmpFPredicate::OGT, halfMagnitude, 0.0);
  Value belowNormal =
      compare(arith::CmpFPredicate::OLT, halfMagnitude, 0x1p-14);
  Value subnormal = both(positive, belowNormal);
  Value overflow = compare(arith::CmpFPredicate::OEQ, halfMagnitude, INFINITY);
  Value square = arith::MulFOp::create(b, loc, x, x);
  Value logSquare = arith::MulFOp::create(b, loc, log, log);
  Value contributions[NumPartialStats] = {x,
                                          square,
                                          magnitude,
                                          count(nonzero),
                                          log,
                                          logSquare,
                                          count(castNonzero),
                                          count(flushed),
                                          count(subnormal),
                                          count(overflow)};
  for (int64_t f = 0; f < NumPartialStats; ++f)
    stats[f] = combineStat(b, loc, f, stats[f], contributions[f]);
}

SmallVector<Value>
GemmKernelBuilder::buildEpilogue(const Arguments &args, ValueRange accumulators,
                                 Value rowBase, Value colBase, Value warpRow,
                                 Value warpCol, Value lane) {
  const FragmentLayout &layout = mmaM16N8K16Accumulator();
  int64_t tilesN = warpTileN(cfg) / 8;
  EpilogueInputs in = buildEpilogueInputs(args);
  SmallVector<Value> stats(NumPartialStats, in.zero);
  Value warpRowBase = add(rowBase, mul(warpRow, warpTileM(cfg)));
  Value warpColBase = add(colBase, mul(warpCol, warpTileN(cfg)));
  for (auto [tile, acc] : llvm::enumerate(accumulators)) {
    int64_t mi = tile / tilesN, ni = tile % tilesN;
    Value tileRow = add(warpRowBase, index(mi * 16));
    Value tileCol = add(warpColBase, index(ni * 8));
    for (int64_t reg = 0; reg < layout.numRegisters; ++reg)
      for (int64_t e = 0; e < layout.elementsPerRegister; ++e) {
        Value row = add(tileRow, layout.row.build(b, loc, lane, reg, e));
        Value col = add(tileCol, layout.col.build(b, loc, lane, reg, e));
        buildEpilogueElement(
            args, in,
            [&] {
              return vector::ExtractOp::create(b, loc, acc,
                                               ArrayRef<int64_t>{reg, e});
            },
            row, col, stats);
      }
  }
  return stats;
}

SmallVector<Value>
GemmKernelBuilder::buildWgmmaEpilogue(const Arguments &args, Value accumulator,
                                      Value rowBase, Value colBase,
                                      Value warpgroup, Value tid) {
  FragmentLayout layout = wgmmaM64NK16Accumulator(cfg.blockN);
  EpilogueInputs in = buildEpilogueInputs(args);
  SmallVector<Value> stats(NumPartialStats, in.zero);
  Value warpgroupRowBase = add(rowBase, mul(warpgroup, 64));
  Value lane = rem(tid, kThreadsPerWarpgroup);
  for (int64_t reg = 0; reg < layout.numRegisters; ++reg) {
    Value row = add(warpgroupRowBase, layout.row.build(b, loc, lane, reg, 0));
    Value col = add(colBase, layout.col.build(b, loc, lane, reg, 0));
    buildEpilogueElement(
        args, in,
        [&] {
          return LLVM::ExtractValueOp::create(b, loc, accumulator,
                                              ArrayRef<int64_t>{reg});
        },
        row, col, stats);
  }
  return stats;
}

/// Lanes -> warp (xor shuffles) -> shared memory -> one partial per block,
/// in a fixed order.
void GemmKernelBuilder::buildBlockReduction(const Arguments &args,
                                            const Shared &smem,
                                            ArrayRef<Value> stats, Value tid,
                                            Value warp, Value lane) {
  SmallVector<Value> reduced(stats.begin(), stats.end());
  for (int64_t f = 0; f < NumPartialStats; ++f)
    for (int32_t offset = kLanesPerWarp / 2; offset > 0; offset /= 2) {
      auto shuffle = gpu::ShuffleOp::create(b, loc, reduced[f], offset,
                                            kLanesPerWarp, gpu::ShuffleMode::XOR);
      reduced[f] = combineStat(b, loc, f, reduced[f],
                               shuffle.getShuffleResult());
    }
  Value firstLane = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          lane, index(0));
  auto perWarp = scf::IfOp::create(b, loc, firstLane, /*withElse=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(perWarp.thenBlock());
    for (int64_t f = 0; f < NumPartialStats; ++f)
      memref::StoreOp::create(b, loc, reduced[f], smem.reduction,
                              ValueRange{warp, index(f)});
  }
  gpu::BarrierOp::create(b, loc);

  Value firstThread = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            tid, index(0));
  auto perBlock = scf::IfOp::create(b, loc, firstThread, /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(perBlock.thenBlock());
  Value blockCol = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value blockRow = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  if (cfg.numGroups() > 1) {
    Value group = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
    blockRow = add(mul(group, cfg.gridM()), blockRow);
  }
  Value block = add(mul(blockRow, cfg.gridN()), blockCol);
  int64_t numWarps = cfg.warpsM * cfg.warpsN;
  for (int64_t f = 0; f < NumPartialStats; ++f) {
    Value field = index(f);
    Value total = memref::LoadOp::create(b, loc, smem.reduction,
                                         ValueRange{index(0), field});
    for (int64_t w = 1; w < numWarps; ++w) {
      Value partial = memref::LoadOp::create(b, loc, smem.reduction,
                                             ValueRange{index(w), field});
      total = combineStat(b, loc, f, total, partial);
    }
    memref::StoreOp::create(b, loc, total, args.partials,
                            ValueRange{block, field});
  }
}

/// One warp sums the partials in f64: lane l the blocks l, l + 32, ... in
/// order, then lane 0 the lanes' sums in lane order (a fixed order, so the
/// result is deterministic), into the layouts of !gs.stats (count, sum, sum
/// of squares, max |x|, nonzeros, sum and sum of squares of ln|x|) and
/// gs.cast_stats (nonzeros, flushed, subnormal, overflow).
void GemmKernelBuilder::buildFinalReduction(const Arguments &args) {
  Value single = index(1);
  Value lanes = index(kLanesPerWarp);
  auto launch = gpu::LaunchOp::create(
      b, loc, single, single, single, lanes, single, single,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, TypeRange{finalSumsType()});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value sums = launch.getWorkgroupAttributions()[0];
  Value lane = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  buildFinalSums(args, lane, sums, /*inLargerBlock=*/false);
  gpu::TerminatorOp::create(b, loc);
}

void GemmKernelBuilder::buildFinalSums(const Arguments &args, Value thread,
                                       Value sums, bool inLargerBlock) {
  OpBuilder::InsertionGuard guard(b);
  Type f64 = b.getF64Type();
  // Inside the launch, so that the outlined kernel takes no index argument.
  Value zero = arith::ConstantOp::create(b, loc, b.getF64FloatAttr(0.0));
  SmallVector<Value> init(NumPartialStats, zero);
  Value stride = index(kLanesPerWarp);
  // In a larger block: its first warp's lanes.
  std::optional<OpBuilder::InsertionGuard> inFirstWarp;
  if (inLargerBlock) {
    Value isLane = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         thread, stride);
    auto firstWarp = scf::IfOp::create(b, loc, isLane, /*withElse=*/false);
    inFirstWarp.emplace(b);
    b.setInsertionPoint(firstWarp.thenBlock()->getTerminator());
  }
  Value lane = thread;
  auto perLane = scf::ForOp::create(
      b, loc, lane, index(cfg.numBlocks()), stride, init,
      [&](OpBuilder &nested, Location l, Value block, ValueRange acc) {
        SmallVector<Value> next;
        for (int64_t f = 0; f < NumPartialStats; ++f) {
          Value field = arith::ConstantIndexOp::create(nested, l, f);
          Value partial = memref::LoadOp::create(nested, l, args.partials,
                                                 ValueRange{block, field});
          Value wide = arith::ExtFOp::create(nested, l, f64, partial);
          next.push_back(combineStat(nested, l, f, acc[f], wide));
        }
        scf::YieldOp::create(nested, l, next);
      });
  for (int64_t f = 0; f < NumPartialStats; ++f)
    memref::StoreOp::create(b, loc, perLane.getResult(f), sums,
                            ValueRange{lane, index(f)});
  inFirstWarp.reset();
  gpu::BarrierOp::create(b, loc);
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                      index(0));
  auto lastStep = scf::IfOp::create(b, loc, first, /*withElse=*/false);
  b.setInsertionPointToStart(lastStep.thenBlock());
  Value firstLane = index(0);
  Value step = index(1);
  auto overLanes = scf::ForOp::create(
      b, loc, firstLane, stride, step, init,
      [&](OpBuilder &nested, Location l, Value from, ValueRange acc) {
        SmallVector<Value> next;
        for (int64_t f = 0; f < NumPartialStats; ++f) {
          Value field = arith::ConstantIndexOp::create(nested, l, f);
          Value sum = memref::LoadOp::create(nested, l, sums,
                                             ValueRange{from, field});
          next.push_back(combineStat(nested, l, f, acc[f], sum));
        }
        scf::YieldOp::create(nested, l, next);
      });
  SmallVector<Value> totals(overLanes.getResults());
  Value count = arith::ConstantOp::create(
      b, loc, b.getF64FloatAttr(static_cast<double>(cfg.m * cfg.n)));
  Value gradFields[telemetry::NumStatsFields];
  gradFields[telemetry::Count] = count;
  gradFields[telemetry::Sum] = totals[PartialSum];
  gradFields[telemetry::SumOfSquares] = totals[PartialSumOfSquares];
  gradFields[telemetry::MaxAbs] = totals[PartialMaxAbs];
  gradFields[telemetry::NonzeroCount] = totals[PartialNonzero];
  gradFields[telemetry::SumOfLogs] = totals[PartialSumOfLogs];
  gradFields[telemetry::SumOfSquaredLogs] = totals[PartialSumOfSquaredLogs];
  for (int64_t f = 0; f < telemetry::NumStatsFields; ++f)
    memref::StoreOp::create(b, loc, gradFields[f], args.gradStats,
                            ValueRange{index(f)});
  PartialStat castFields[telemetry::NumCastCounts];
  castFields[telemetry::Nonzero] = PartialCastNonzero;
  castFields[telemetry::Flushed] = PartialFlushed;
  castFields[telemetry::Subnormal] = PartialSubnormal;
  castFields[telemetry::Overflow] = PartialOverflow;
  for (int64_t f = 0; f < telemetry::NumCastCounts; ++f) {
    Value asInteger = arith::FPToSIOp::create(b, loc, b.getI64Type(),
                                              totals[castFields[f]]);
    memref::StoreOp::create(b, loc, asInteger, args.castStats,
                            ValueRange{index(f)});
  }
}

SmallVector<int64_t> ConvolutionGeometry::kSizes() const {
  SmallVector<int64_t> sizes = {inChannels / groups};
  llvm::append_range(sizes, kernel);
  return sizes;
}

SmallVector<int64_t> ConvolutionGeometry::nSizes() const {
  SmallVector<int64_t> sizes = {batch};
  llvm::append_range(sizes, outSpatial);
  return sizes;
}

void mlir::gs::tensorcore::setConvolution(GemmKernelConfig &config,
                                          ConvolutionGeometry conv) {
  config.m = conv.outChannels / conv.groups;
  config.n = numElements(conv.nSizes());
  config.k = numElements(conv.kSizes());
  config.transA = config.transB = false;
  config.conv = std::move(conv);
}

llvm::cl::ValuesClass mlir::gs::tensorcore::elementTypeValues() {
  return llvm::cl::values(clEnumValN(ElementType::F16, "f16", "FP16"),
                          clEnumValN(ElementType::F32, "f32", "FP32"));
}

void mlir::gs::tensorcore::chooseTiles(GemmKernelConfig &config) {
  bool large = config.m >= 1024 && config.n >= 1024;
  auto pick = [](int64_t &field, int64_t value) {
    if (field == 0)
      field = value;
  };
  if (config.instruction == MmaInstruction::Wgmma) {
    // Two warpgroups of m64n128k16, or one of m64n64k16 (n32 where n is
    // at most 32); k tiles of 32 in 64-byte K-major rows. Two stages of
    // 128 x 128 x 32 (32 KiB) fit the static shared memory, three of the
    // 64 x 64 ones (24 KiB); a wgmma group in flight needs three.
    pick(config.blockM, large ? 128 : 64);
    pick(config.blockN, large ? 128 : config.n <= 32 ? 32 : 64);
    pick(config.warpsM, config.blockM / 16);
    pick(config.warpsN, 1);
    pick(config.stages, large && config.wgmmaGroupsInFlight == 0 ? 2 : 3);
    // Two 128 x 128 blocks per multiprocessor: ptxas then keeps the kernel
    // with statistics to 128 registers (147 left alone), spilling 8 bytes;
    // not where the tiles are gathered or copied element by element (a
    // convolution, rows not of whole 16-byte chunks), which need more.
    int64_t storedColsA = config.transA ? config.m : config.k;
    int64_t storedColsB = config.transB ? config.k : config.n;
    bool chunkedCopies =
        !config.conv && storedColsA % kChunk == 0 && storedColsB % kChunk == 0;
    pick(config.minBlocksPerSM, large && chunkedCopies ? 2 : 1);
  } else if (large) {
    // 64 x 32 warp tiles: 32 mma.sync per k16 step per warp, and two
    // stages fit the 48 KiB of static shared memory.
    pick(config.blockM, 128);
    pick(config.blockN, 128);
    pick(config.warpsM, 2);
    pick(config.warpsN, 4);
    pick(config.stages, 2);
    // Two blocks per multiprocessor (128 registers a thread, where ptxas
    // may spill a few bytes): one block's loads overlap the other's
    // mma.sync, which one block of 146-184 registers cannot do.
    pick(config.minBlocksPerSM,
         config.numThreads() == 256 && !config.conv ? 2 : 1);
  } else {
    // Small matrices: fewer, narrower blocks waste less on ragged edges.
    pick(config.blockM, config.m <= 32 ? 32 : 64);
    pick(config.blockN, config.n <= 32 ? 32 : 64);
    pick(config.warpsM, config.blockM / 32);
    pick(config.warpsN, config.blockN / 32);
    pick(config.stages, 3);
    pick(config.minBlocksPerSM, 1);
  }
  pick(config.blockK, 32);
}

FailureOr<func::FuncOp>
mlir::gs::tensorcore::buildGemmKernel(OpBuilder &builder, Location loc,
                                      const GemmKernelConfig &config) {
  auto fail = [&](const Twine &message) {
    emitError(loc) << "gemm kernel '" << config.name << "': " << message;
    return failure();
  };
  if (config.m <= 0 || config.n <= 0 || config.k <= 0)
    return fail("m, n and k must be positive");
  if (const std::optional<ConvolutionGeometry> &conv = config.conv) {
    size_t rank = conv->kernel.size();
    if (rank < 1 || rank > 3 || conv->inSpatial.size() != rank ||
        conv->outSpatial.size() != rank || conv->strides.size() != rank ||
        conv->dilations.size() != rank || conv->padsBegin.size() != rank)
      return fail("a convolution needs 1 to 3 spatial dimensions, each with "
                  "its sizes, stride, dilation and padding");
    if (conv->groups < 1 || conv->inChannels % conv->groups != 0 ||
        conv->outChannels % conv->groups != 0)
      return fail("the groups must divide the input and output channels");
    if (conv->inputGroupsInImages &&
        (!conv->inputChannelsFirst || conv->transposed))
      return fail("an input whose groups lie in its images is a forward "
                  "convolution's, read channels first");
    if ((conv->groupsSplitWeight || conv->weightChannelsFirst) &&
        conv->transposed)
      return fail("a transposed convolution's weight is gathered as it lies: "
                  "its groups cannot split it, nor is it read channels "
                  "first");
    if (config.transA || config.transB ||
        config.m != conv->outChannels / conv->groups ||
        config.n != numElements(conv->nSizes()) ||
        config.k != numElements(conv->kSizes()))
      return fail("a convolution's GEMM is the one setConvolution makes");
    if (llvm::any_of(conv->strides, [](int64_t s) { return s < 1; }) ||
        llvm::any_of(conv->dilations, [](int64_t d) { return d < 1; }) ||
        llvm::any_of(conv->padsBegin, [](int64_t p) { return p < 0; }))
      return fail("strides and dilations must be positive, pads not "
                  "negative");
  }
  if (config.instruction == MmaInstruction::Wgmma) {
    if (config.blockM % 64 != 0 || config.warpsM != config.blockM / 16 ||
        config.warpsN != 1)
      return fail("wgmma needs blocks of whole warpgroups along m: block-m a "
                  "multiple of 64, warps-m = block-m / 16, warps-n = 1");
    if (config.blockN % 16 != 0 || config.blockN > 256)
      return fail("wgmma needs block-n a multiple of 16, at most 256");
    if (config.blockK != 16 && config.blockK != 32 && config.blockK != 64)
      return fail("wgmma's K-major tiles need block-k 16, 32 or 64 (rows of "
                  "32, 64 or 128 bytes)");
    if (config.wgmmaGroupsInFlight < 0 || config.wgmmaGroupsInFlight > 1)
      return fail("wgmma-in-flight must be 0 or 1");
    if (config.wgmmaGroupsInFlight == 1 && config.stages < 3)
      return fail("a wgmma group in flight needs at least 3 stages (the "
                  "slot it reads, the one computed, one filling)");
  } else if (config.wgmmaGroupsInFlight != 0) {
    return fail("wgmma-in-flight needs wgmma");
  }
  if (config.warpsM <= 0 || config.warpsN <= 0 ||
      config.blockM % (16 * config.warpsM) != 0 ||
      config.blockN % (16 * config.warpsN) != 0 || config.blockK % 16 != 0)
    return fail("the block tile must be a multiple of 16 x 16 per warp and of "
                "16 in k");
  if (config.stages < 2)
    return fail("the pipeline needs at least 2 stages");
  if (config.minBlocksPerSM < 1)
    return fail("min-blocks-per-sm must be at least 1");
  int64_t sharedBytes = operandBytes(config) + reductionBytes(config);
  if (config.instruction == MmaInstruction::Wgmma) {
    if (sharedBytes > kMaxSharedBytesSm90)
      return fail("the tiles need " + Twine(sharedBytes) +
                  " bytes of shared memory, over the " +
                  Twine(kMaxSharedBytesSm90) + " a block may have on sm_90");
  } else if (sharedBytes > kMaxStaticSharedBytes)
    return fail("the tiles need " + Twine(sharedBytes) +
                " bytes of shared memory, over the " +
                Twine(kMaxStaticSharedBytes) + " of a static allocation");
  int64_t threads = config.numThreads();
  if ((config.blockM * config.blockK / kChunk) % threads != 0 ||
      (config.blockK * config.blockN / kChunk) % threads != 0)
    return fail("the tiles must split into 8-element chunks evenly over the " +
                Twine(threads) + " threads");
  return GemmKernelBuilder(builder, loc, config).build();
}

func::FuncOp mlir::gs::tensorcore::buildGemmKernelEntry(
    OpBuilder &b, Location loc, const GemmKernelConfig &config,
    func::FuncOp kernel) {
  unsigned numInputs = 3 + config.bias + config.reluMask;
  // The partials (the output after C) are scratch.
  SmallVector<unsigned> scratch;
  if (config.statistics)
    scratch.push_back(1);
  return buildKernelEntry(b, loc, kernel, numInputs, scratch);
}
