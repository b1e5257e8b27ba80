//===- GSToGPU.cpp - FP16 GEMMs and scale decisions to kernels --*- C++ -*-===//
//
// Each FP16 contraction becomes a call of the fused GEMM kernel of
// GemmKernel.h built for its shape, operand layouts and epilogue, and each
// scale decision a call of a one-thread kernel of ScaleKernel.h, through the
// kernels' tensor-level entries, so that the step stays on tensors and
// bufferization sees each call's reads and writes; kernels are shared by
// the sites that need the same one.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/GSToGPU/GemmKernel.h"
#include "gs/Conversion/GSToGPU/KernelEntry.h"
#include "gs/Conversion/GSToGPU/ScaleKernel.h"
#include "gs/Conversion/Passes.h"
#include "gs/Dialect/GS/IR/GSOps.h"
#include "gs/Support/Telemetry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::gs {
#define GEN_PASS_DEF_CONVERTGSTOGPU
#include "gs/Conversion/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::tensorcore;

namespace {
/// The most thread blocks along a CUDA grid's y and z dimensions.
constexpr int64_t kMaxGridY = 65535, kMaxGridZ = 65535;
/// The fewest output channels a group of a grouped convolution the Tensor
/// Core kernel computes.
constexpr int64_t kMinGroupOutChannels = 8;

/// A contraction a kernel computes, and what of its epilogue it needs.
struct GemmSite {
  Operation *op;
  /// A and B: a convolution's weight and input.
  Value a, b;
  /// Null: 1.
  Value scale;
  /// Null: none.
  Value bias;
  /// The ReLU mask (f16, C's shape); null: none.
  Value mask;
  GemmKernelConfig config;
};

/// The kernel's element type of an f16 or f32 tensor type.
std::optional<ElementType> elementTypeOf(Type type) {
  Type element = cast<RankedTensorType>(type).getElementType();
  if (element.isF16())
    return ElementType::F16;
  if (element.isF32())
    return ElementType::F32;
  return std::nullopt;
}

bool isF16Matrix(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  return type.getRank() == 2 && type.getElementType().isF16();
}

/// Whether `permutation` swaps the first two dimensions and keeps the rest
/// in place ([1, 0, 2, ...]).
bool swapsFirstTwo(ArrayRef<int64_t> permutation) {
  if (permutation.size() < 2 || permutation[0] != 1 || permutation[1] != 0)
    return false;
  for (auto [i, p] : llvm::enumerate(permutation.drop_front(2)))
    if (p != static_cast<int64_t>(i) + 2)
      return false;
  return true;
}

/// A tensor the autodiff regroups: reshaped (split), transposed, reshaped
/// back to its rank.
struct Regrouping {
  Value source;
  /// The shape of the split, and the transpose's permutation of it.
  ArrayRef<int64_t> splitShape, permutation;
};

/// `value` as a regrouping of a tensor of its rank, or nullopt.
std::optional<Regrouping> matchRegrouping(Value value) {
  auto merged = value.getDefiningOp<ReshapeOp>();
  auto moved =
      merged ? merged.getInput().getDefiningOp<TransposeOp>() : TransposeOp();
  auto split =
      moved ? moved.getInput().getDefiningOp<ReshapeOp>() : ReshapeOp();
  if (!split)
    return std::nullopt;
  Value source = split.getInput();
  if (cast<RankedTensorType>(source.getType()).getRank() !=
      cast<RankedTensorType>(value.getType()).getRank())
    return std::nullopt;
  return Regrouping{source, cast<RankedTensorType>(split.getType()).getShape(),
                    moved.getPermutation()};
}

/// The weight M x C x K... that `weight`, the (G*M) x C/G x K... filters of
/// a convolution of `groups` groups, rearranges so that every group has
/// the same M filters, each group its own input channels of them (reshaped
/// to M x G x C/G x K..., the groups moved first, reshaped back: the
/// autodiff's weight gradient split over its images); null otherwise. The
/// kernel reads it as it is.
Value splitWeightSource(Value weight, int64_t groups) {
  std::optional<Regrouping> regrouping = matchRegrouping(weight);
  if (!regrouping)
    return {};
  Value source = regrouping->source;
  auto sourceType = cast<RankedTensorType>(source.getType());
  auto weightType = cast<RankedTensorType>(weight.getType());
  if (sourceType.getDimSize(0) * groups != weightType.getDimSize(0))
    return {};
  ArrayRef<int64_t> kernel = weightType.getShape().drop_front(2);
  int64_t filters = sourceType.getDimSize(0);
  int64_t groupChannels = weightType.getDimSize(1);
  SmallVector<int64_t> splitShape = {filters, groups, groupChannels};
  llvm::append_range(splitShape, kernel);
  if (sourceType.getShape().drop_front(2) != kernel ||
      sourceType.getDimSize(1) != groups * groupChannels ||
      regrouping->splitShape != ArrayRef<int64_t>(splitShape) ||
      !swapsFirstTwo(regrouping->permutation))
    return {};
  return source;
}

/// The tensor that `operand` transposes with [1, 0, 2, ...] (its first two
/// dimensions swapped); null otherwise. The autodiff's weight-gradient
/// correlation takes the forward input (N x C x D...) so as its images and
/// the output gradient (N x Cout x O...) so as its filters; the kernel
/// reads both as they lie.
Value channelsFirstSource(Value operand) {
  auto transpose = operand.getDefiningOp<TransposeOp>();
  if (!transpose || !swapsFirstTwo(transpose.getPermutation()))
    return {};
  return transpose.getInput();
}

/// The forward input N x C x D... of a grouped convolution of `groups`
/// groups that `operand`, the images C/G x (G*N) x D... of its weight
/// gradient's correlation, rearranges (reshaped to N x G x C/G x D...,
/// transposed with [2, 1, 0, ...], reshaped back: the autodiff's weight
/// gradient of a grouped convolution); null otherwise. The kernel reads it
/// as it lies.
Value groupedChannelsFirstSource(Value operand, int64_t groups) {
  std::optional<Regrouping> regrouping = matchRegrouping(operand);
  if (!regrouping)
    return {};
  Value source = regrouping->source;
  auto sourceType = cast<RankedTensorType>(source.getType());
  auto imagesType = cast<RankedTensorType>(operand.getType());
  int64_t rank = imagesType.getRank();
  if (rank < 3)
    return {};
  ArrayRef<int64_t> spatial = imagesType.getShape().drop_front(2);
  int64_t images = sourceType.getDimSize(0);
  int64_t groupChannels = imagesType.getDimSize(0);
  SmallVector<int64_t> splitShape = {images, groups, groupChannels};
  llvm::append_range(splitShape, spatial);
  SmallVector<int64_t> permutation = {2, 1, 0};
  for (int64_t i = 3; i <= rank; ++i)
    permutation.push_back(i);
  if (sourceType.getShape().drop_front(2) != spatial ||
      sourceType.getDimSize(1) != groups * groupChannels ||
      imagesType.getDimSize(1) != groups * images ||
      regrouping->splitShape != ArrayRef<int64_t>(splitShape) ||
      regrouping->permutation != ArrayRef<int64_t>(permutation))
    return {};
  return source;
}

/// A convolution of FP16 tensors as a kernel site (its implicit GEMM, one
/// per group), or nullopt. A grouped one needs at least
/// kMinGroupOutChannels output channels a group: narrower groups
/// (depthwise convolutions) stay elementwise kernels, where an output's few
/// products cost less than a 32-row tile of mostly zeros.
template <typename ConvOpTy>
std::optional<GemmSite> matchConvolution(ConvOpTy op, bool transposed) {
  Value input = op.getInput(), weight = op.getWeight();
  auto inType = cast<RankedTensorType>(input.getType());
  auto wType = cast<RankedTensorType>(weight.getType());
  auto outType = cast<RankedTensorType>(op.getType());
  int64_t groups = op.getGroup();
  int64_t outChannels = outType.getDimSize(1);
  if (!inType.getElementType().isF16() || !wType.getElementType().isF16())
    return std::nullopt;
  if (groups != 1 &&
      (groups > kMaxGridZ || outChannels / groups < kMinGroupOutChannels))
    return std::nullopt;
  WindowGeometry g = op.getGeometry();
  ConvolutionGeometry conv;
  conv.transposed = transposed;
  conv.batch = inType.getDimSize(0);
  conv.inChannels = inType.getDimSize(1);
  conv.outChannels = outChannels;
  conv.groups = groups;
  llvm::append_range(conv.inSpatial, inType.getShape().drop_front(2));
  llvm::append_range(conv.kernel, wType.getShape().drop_front(2));
  llvm::append_range(conv.outSpatial, outType.getShape().drop_front(2));
  llvm::append_range(conv.strides, g.strides);
  llvm::append_range(conv.dilations, g.dilations);
  llvm::append_range(conv.padsBegin, g.padsBegin);
  if (groups != 1 && !transposed) {
    if (Value source = splitWeightSource(weight, groups)) {
      weight = source;
      conv.groupsSplitWeight = true;
    }
  }
  if (Value source = channelsFirstSource(input)) {
    input = source;
    conv.inputChannelsFirst = true;
  } else if (groups != 1 && !transposed) {
    if (Value source = groupedChannelsFirstSource(input, groups)) {
      input = source;
      conv.inputChannelsFirst = conv.inputGroupsInImages = true;
    }
  }
  if (!transposed) {
    if (Value source = channelsFirstSource(weight)) {
      weight = source;
      conv.weightChannelsFirst = true;
    }
  }
  GemmSite site{op, weight, input, Value(), op.getBias(), Value(), {}};
  setConvolution(site.config, std::move(conv));
  site.config.statistics = false;
  return site;
}

/// The contraction `op` as a kernel site without statistics, its result
/// rounded to `resultType` (f16 or f32), or nullopt where the kernel does
/// not compute it. With `wgmma`, its kernel runs on wgmma where m >= 64.
std::optional<GemmSite> matchContraction(Operation *op, Type resultType,
                                         bool wgmma) {
  GemmSite site{op, Value(), Value(), Value(), Value(), Value(), {}};
  GemmKernelConfig &config = site.config;
  config.statistics = false;
  if (auto gemm = dyn_cast<GemmOp>(op)) {
    if (!gemm.getAlpha().isExactlyValue(1.0) ||
        !gemm.getBeta().isExactlyValue(1.0))
      return std::nullopt;
    site.a = gemm.getA();
    site.b = gemm.getB();
    site.bias = gemm.getC();
    config.transA = gemm.getTransA();
    config.transB = gemm.getTransB();
  } else if (auto matmul = dyn_cast<MatMulOp>(op)) {
    site.a = matmul.getLhs();
    site.b = matmul.getRhs();
  } else if (auto conv = dyn_cast<ConvOp>(op)) {
    std::optional<GemmSite> convSite = matchConvolution(conv, false);
    if (!convSite)
      return std::nullopt;
    site = *convSite;
  } else if (auto conv = dyn_cast<ConvTransposeOp>(op)) {
    std::optional<GemmSite> convSite = matchConvolution(conv, true);
    if (!convSite)
      return std::nullopt;
    site = *convSite;
  } else {
    return std::nullopt;
  }
  if (!config.conv) {
    if (!isF16Matrix(site.a) || !isF16Matrix(site.b))
      return std::nullopt;
    ArrayRef<int64_t> a = cast<RankedTensorType>(site.a.getType()).getShape();
    ArrayRef<int64_t> b = cast<RankedTensorType>(site.b.getType()).getShape();
    config.m = config.transA ? a[1] : a[0];
    config.k = config.transA ? a[0] : a[1];
    config.n = config.transB ? b[0] : b[1];
  }
  std::optional<ElementType> output = elementTypeOf(resultType);
  if (!output)
    return std::nullopt;
  config.output = *output;
  if (site.bias) {
    // One value per column; a convolution's per output channel.
    std::optional<ElementType> biasType = elementTypeOf(site.bias.getType());
    int64_t biasSize = config.conv ? config.conv->outChannels : config.n;
    if (!biasType || cast<RankedTensorType>(site.bias.getType()).getShape() !=
                         ArrayRef<int64_t>{biasSize})
      return std::nullopt;
    config.bias = true;
    config.biasType = *biasType;
  }
  // Empty contractions stay; so do those whose rows would need more thread
  // blocks than a grid's y dimension holds.
  if (config.m <= 0 || config.n <= 0 || config.k <= 0)
    return std::nullopt;
  // wgmma computes 64 rows a warpgroup: fewer are left to mma.sync's
  // 16-row tiles.
  if (wgmma && config.m >= 64)
    config.instruction = MmaInstruction::Wgmma;
  chooseTiles(config);
  if (config.gridM() > kMaxGridY)
    return std::nullopt;
  return site;
}

/// `op` (a contraction, or a gs.scaled_contraction with its scale,
/// rounding and statistics in the epilogue) as a kernel site, or nullopt.
std::optional<GemmSite> matchSite(Operation *op, bool wgmma) {
  auto scaled = dyn_cast<ScaledContractionOp>(op);
  if (!scaled)
    return matchContraction(op, op->getResult(0).getType(), wgmma);
  std::optional<GemmSite> site = matchContraction(
      scaled.getContraction(), scaled.getResult().getType(), wgmma);
  if (!site)
    return std::nullopt;
  site->op = op;
  site->scale = scaled.getScale();
  if (Value mask = scaled.getReluMask()) {
    // The kernel reads an f16 mask.
    if (!cast<RankedTensorType>(mask.getType()).getElementType().isF16())
      return std::nullopt;
    site->mask = mask;
    site->config.reluMask = true;
  }
  site->config.statistics =
      !scaled.getStats().use_empty() || !scaled.getCastCounts().use_empty();
  return site;
}

/// The kernel's name: its shape, layouts and epilogue.
std::string kernelName(const GemmKernelConfig &config) {
  std::string name;
  llvm::raw_string_ostream os(name);
  auto typeName = [](ElementType type) {
    return type == ElementType::F16 ? "f16" : "f32";
  };
  auto sizes = [&](StringRef prefix, ArrayRef<int64_t> values) {
    os << "_" << prefix;
    llvm::interleave(values, os, "x");
  };
  if (const std::optional<ConvolutionGeometry> &conv = config.conv) {
    // gs_conv[t]_<N>x<C>x<D...>_k<M>x<K...>_s.._d.._p.._<out>
    os << (conv->transposed ? "gs_convt_" : "gs_conv_") << conv->batch << "x"
       << conv->inChannels;
    for (int64_t size : conv->inSpatial)
      os << "x" << size;
    os << "_k" << conv->outChannels;
    for (int64_t size : conv->kernel)
      os << "x" << size;
    sizes("o", conv->outSpatial);
    sizes("s", conv->strides);
    sizes("d", conv->dilations);
    sizes("p", conv->padsBegin);
    if (conv->groups != 1)
      os << "_g" << conv->groups << (conv->groupsSplitWeight ? "_split" : "");
    if (conv->inputChannelsFirst)
      os << (conv->inputGroupsInImages ? "_gcfirst" : "_cfirst");
    if (conv->weightChannelsFirst)
      os << "_wcfirst";
  } else {
    os << "gs_gemm_" << config.m << "x" << config.n << "x" << config.k;
  }
  if (config.transA)
    os << "_ta";
  if (config.transB)
    os << "_tb";
  if (config.bias)
    os << "_bias_" << typeName(config.biasType);
  os << "_" << typeName(config.output);
  if (config.reluMask)
    os << "_relu";
  if (!config.statistics)
    os << "_nostats";
  if (config.instruction == MmaInstruction::Wgmma)
    os << "_wgmma";
  return name;
}

/// A scalar as the one-element tensor a kernel entry takes: the one it was
/// taken from (a scale a decision kernel wrote), or a new one.
Value asBuffer(OpBuilder &b, Location loc, Value scalar) {
  auto type = RankedTensorType::get({1}, scalar.getType());
  if (auto extract = scalar.getDefiningOp<tensor::ExtractOp>())
    if (extract.getTensor().getType() == type)
      return extract.getTensor();
  return tensor::FromElementsOp::create(b, loc, type, scalar);
}

class GemmRewriter {
public:
  explicit GemmRewriter(ModuleOp module) : module(module), symbols(module) {}

  LogicalResult rewrite(GemmSite &site);
  /// Erases the statistics casts no host code read (the decision kernels
  /// take the tensors they cast).
  void eraseDeadCasts();

private:
  /// The tensor-level entry of the kernel for `config`, built on first use.
  FailureOr<func::FuncOp> entryFor(GemmKernelConfig &config, Location loc);

  ModuleOp module;
  SymbolTable symbols;
  /// The casts of the kernels' statistics to !gs.stats.
  SmallVector<Operation *> statsCasts;
};

FailureOr<func::FuncOp> GemmRewriter::entryFor(GemmKernelConfig &config,
                                               Location loc) {
  config.name = kernelName(config);
  if (auto existing = symbols.lookup<func::FuncOp>(config.name + "_entry"))
    return existing;
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  FailureOr<func::FuncOp> kernel = buildGemmKernel(builder, loc, config);
  if (failed(kernel))
    return failure();
  func::FuncOp entry = buildGemmKernelEntry(builder, loc, config, *kernel);
  addPrivate(symbols, {*kernel, entry});
  return entry;
}

LogicalResult GemmRewriter::rewrite(GemmSite &site) {
  Operation *op = site.op;
  Location loc = op->getLoc();
  FailureOr<func::FuncOp> entry = entryFor(site.config, loc);
  if (failed(entry))
    return failure();
  // A call on tensors: bufferization sees what the kernel reads and writes
  // through the entry's signature.
  OpBuilder b(op);
  Value scale = site.scale;
  if (!scale)
    scale = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0));
  SmallVector<Value> operands = {site.a, site.b, asBuffer(b, loc, scale)};
  if (site.bias)
    operands.push_back(site.bias);
  if (site.mask)
    operands.push_back(site.mask);
  auto call = func::CallOp::create(b, loc, *entry, operands);
  op->getResult(0).replaceAllUsesWith(call.getResult(0));
  if (site.config.statistics) {
    // The lowered !gs.stats, seen as one until convert-gs-to-linalg.
    auto fused = cast<ScaledContractionOp>(op);
    auto stats = UnrealizedConversionCastOp::create(
        b, loc, fused.getStats().getType(), call.getResult(1));
    statsCasts.push_back(stats);
    fused.getStats().replaceAllUsesWith(stats.getResult(0));
    fused.getCastCounts().replaceAllUsesWith(call.getResult(2));
  }
  // Without statistics, nothing reads the other results.
  op->erase();
  return success();
}

/// gs.compute_scale and gs.unify_scales into calls of one-thread kernels,
/// one per distinct decision.
class ScaleRewriter {
public:
  explicit ScaleRewriter(ModuleOp module) : module(module), symbols(module) {}

  void rewrite(ComputeScaleOp op);
  void rewrite(UnifyScalesOp op);
  /// Erases the scalars taken out of the decisions' tensors that only GEMM
  /// kernels (which take the tensors) read, with their indices.
  void eraseDeadScalars();

private:
  /// The scalar of a one-element tensor a decision kernel returned.
  Value scalarOf(OpBuilder &b, Location loc, Value buffer);

  /// The lowered !gs.stats of `stats`: the tensor a kernel's statistics
  /// came back in, or one cast, right after `stats` is defined, that
  /// convert-gs-to-linalg resolves.
  Value loweredStats(Value stats);

  ModuleOp module;
  SymbolTable symbols;
  /// Entries by the attributes (model, threshold, bounds, roundings, which
  /// operands) of the decisions they compute; unify_scales' by part count.
  DenseMap<DictionaryAttr, func::FuncOp> computeEntries;
  DenseMap<unsigned, func::FuncOp> unifyEntries;
  DenseMap<Value, Value> loweredCasts;
  SmallVector<Operation *> scalars;
};

Value ScaleRewriter::scalarOf(OpBuilder &b, Location loc, Value buffer) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  auto scalar = tensor::ExtractOp::create(b, loc, buffer, zero);
  scalars.push_back(scalar);
  return scalar;
}

void ScaleRewriter::eraseDeadScalars() {
  for (Operation *scalar : scalars) {
    if (!scalar->use_empty())
      continue;
    Operation *index = scalar->getOperand(1).getDefiningOp();
    scalar->erase();
    index->erase();
  }
}

Value ScaleRewriter::loweredStats(Value stats) {
  auto lowered = RankedTensorType::get({telemetry::NumStatsFields},
                                       Float64Type::get(stats.getContext()));
  if (auto cast = stats.getDefiningOp<UnrealizedConversionCastOp>())
    if (cast.getInputs().size() == 1 &&
        cast.getInputs()[0].getType() == lowered)
      return cast.getInputs()[0];
  Value &cast = loweredCasts[stats];
  if (!cast) {
    OpBuilder b(stats.getContext());
    b.setInsertionPointAfterValue(stats);
    cast = UnrealizedConversionCastOp::create(b, stats.getLoc(), lowered, stats)
               .getResult(0);
  }
  return cast;
}

void ScaleRewriter::rewrite(ComputeScaleOp op) {
  Location loc = op.getLoc();
  func::FuncOp &entry = computeEntries[op->getAttrDictionary()];
  if (!entry) {
    // gs_scale_<model>[_k<accum_length>][_relu][_accum]
    std::string stem;
    llvm::raw_string_ostream os(stem);
    os << "gs_scale_" << stringifyEnum(op.getModel());
    if (std::optional<uint64_t> length = op.getAccumLength())
      os << "_k" << *length;
    if (op.getReluMask())
      os << "_relu";
    if (op.getMaxAccumScale())
      os << "_accum";
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    func::FuncOp kernel = buildComputeScaleKernel(
        builder, loc, op, uniqueKernelName(symbols, stem));
    entry =
        buildKernelEntry(builder, loc, kernel, kernel.getNumArguments() - 2);
    addPrivate(symbols, {kernel, entry});
  }
  OpBuilder b(op);
  SmallVector<Value> operands = {loweredStats(op.getGradStats())};
  if (Value weight = op.getWeightStats())
    operands.push_back(loweredStats(weight));
  if (Value histogram = op.getHistogram())
    operands.push_back(histogram);
  if (Value alpha = op.getAlpha())
    operands.push_back(asBuffer(b, loc, alpha));
  auto call = func::CallOp::create(b, loc, entry, operands);
  op.getScale().replaceAllUsesWith(scalarOf(b, loc, call.getResult(0)));
  if (!op.getUnderflowEstimate().use_empty())
    op.getUnderflowEstimate().replaceAllUsesWith(
        scalarOf(b, loc, call.getResult(1)));
  op.erase();
}

void ScaleRewriter::rewrite(UnifyScalesOp op) {
  Location loc = op.getLoc();
  unsigned numParts = op.getAlphas().size();
  func::FuncOp &entry = unifyEntries[numParts];
  if (!entry) {
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    func::FuncOp kernel = buildUnifyScalesKernel(
        builder, loc, numParts,
        uniqueKernelName(symbols,
                         ("gs_unify_scales_" + Twine(numParts)).str()));
    entry = buildKernelEntry(builder, loc, kernel, 2 * numParts);
    addPrivate(symbols, {kernel, entry});
  }
  OpBuilder b(op);
  SmallVector<Value> operands;
  for (Value alpha : op.getAlphas())
    operands.push_back(asBuffer(b, loc, alpha));
  for (Value stats : op.getStats())
    operands.push_back(loweredStats(stats));
  auto call = func::CallOp::create(b, loc, entry, operands);
  op.getScale().replaceAllUsesWith(scalarOf(b, loc, call.getResult(0)));
  op.erase();
}

void GemmRewriter::eraseDeadCasts() {
  for (Operation *cast : statsCasts)
    if (cast->use_empty())
      cast->erase();
}

struct ConvertGSToGPUPass
    : mlir::gs::impl::ConvertGSToGPUBase<ConvertGSToGPUPass> {
  using ConvertGSToGPUBase::ConvertGSToGPUBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // In program order, a definition before its uses: a decision reads the
    // statistics of kernels already called (tensors), a GEMM kernel the
    // scale of a decision already made (the tensor its kernel wrote).
    SmallVector<Operation *> sites;
    module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      // A scaled contraction's own contraction goes with it.
      if (isa<ScaledContractionOp, ComputeScaleOp, UnifyScalesOp>(op) ||
          (isa<GemmOp, MatMulOp, ConvOp, ConvTransposeOp>(op) &&
           !isa<ScaledContractionOp>(op->getParentOp())))
        sites.push_back(op);
    });
    GemmRewriter gemms(module);
    ScaleRewriter scales(module);
    // One at a time: a rewrite replaces the operands of later ones.
    for (Operation *op : sites) {
      if (auto compute = dyn_cast<ComputeScaleOp>(op))
        scales.rewrite(compute);
      else if (auto unify = dyn_cast<UnifyScalesOp>(op))
        scales.rewrite(unify);
      else if (std::optional<GemmSite> site = matchSite(op, wgmma))
        if (failed(gemms.rewrite(*site)))
          return signalPassFailure();
    }
    gemms.eraseDeadCasts();
    scales.eraseDeadScalars();
  }
};
} // namespace
