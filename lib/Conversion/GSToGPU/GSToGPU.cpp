//===- GSToGPU.cpp - FP16 GEMMs to fused Tensor Core kernels ----*- C++ -*-===//
//
// Each 2-D FP16 contraction becomes a call of the fused GEMM kernel of
// GemmKernel.h built for its shape, operand layouts and epilogue, through
// the kernel's tensor-level entry, so that the step stays on tensors and
// bufferization sees each call's reads and writes; kernels are shared by
// the contractions that need the same one.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/GSToGPU/GemmKernel.h"
#include "gs/Conversion/Passes.h"
#include "gs/Dialect/GS/IR/GSOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
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
/// The most thread blocks along a CUDA grid's y dimension.
constexpr int64_t kMaxGridY = 65535;

/// A contraction a kernel computes, and what of its epilogue it needs.
struct GemmSite {
  Operation *op;
  /// A and B: a convolution's weight and input.
  Value a, b;
  /// Null: 1.
  Value scale;
  /// Null: none.
  Value bias;
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

/// A convolution without groups of FP16 tensors as a kernel site (its
/// implicit GEMM), or nullopt.
template <typename ConvOpTy>
std::optional<GemmSite> matchConvolution(ConvOpTy op, bool transposed) {
  Value input = op.getInput(), weight = op.getWeight();
  auto inType = cast<RankedTensorType>(input.getType());
  auto wType = cast<RankedTensorType>(weight.getType());
  auto outType = cast<RankedTensorType>(op.getType());
  if (op.getGroup() != 1 || !inType.getElementType().isF16() ||
      !wType.getElementType().isF16())
    return std::nullopt;
  WindowGeometry g = op.getGeometry();
  ConvolutionGeometry conv;
  conv.transposed = transposed;
  conv.batch = inType.getDimSize(0);
  conv.inChannels = inType.getDimSize(1);
  conv.outChannels = outType.getDimSize(1);
  llvm::append_range(conv.inSpatial, inType.getShape().drop_front(2));
  llvm::append_range(conv.kernel, wType.getShape().drop_front(2));
  llvm::append_range(conv.outSpatial, outType.getShape().drop_front(2));
  llvm::append_range(conv.strides, g.strides);
  llvm::append_range(conv.dilations, g.dilations);
  llvm::append_range(conv.padsBegin, g.padsBegin);
  GemmSite site{op, weight, input, Value(), op.getBias(), {}};
  setConvolution(site.config, std::move(conv));
  site.config.statistics = false;
  return site;
}

/// The contraction `op` as a kernel site without statistics, its result
/// rounded to `resultType` (f16 or f32), or nullopt where the kernel does
/// not compute it.
std::optional<GemmSite> matchContraction(Operation *op, Type resultType) {
  GemmSite site{op, Value(), Value(), Value(), Value(), {}};
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
    if (!biasType || cast<RankedTensorType>(site.bias.getType()).getShape() !=
                         ArrayRef<int64_t>{config.conv ? config.m : config.n})
      return std::nullopt;
    config.bias = true;
    config.biasType = *biasType;
  }
  // Empty contractions stay; so do those whose rows would need more thread
  // blocks than a grid's y dimension holds.
  if (config.m <= 0 || config.n <= 0 || config.k <= 0)
    return std::nullopt;
  chooseTiles(config);
  if (config.gridM() > kMaxGridY)
    return std::nullopt;
  return site;
}

/// `op` (a contraction, or a gs.scaled_contraction with its scale,
/// rounding and statistics in the epilogue) as a kernel site, or nullopt.
std::optional<GemmSite> matchSite(Operation *op) {
  auto scaled = dyn_cast<ScaledContractionOp>(op);
  if (!scaled)
    return matchContraction(op, op->getResult(0).getType());
  std::optional<GemmSite> site =
      matchContraction(scaled.getContraction(), scaled.getResult().getType());
  if (!site)
    return std::nullopt;
  site->op = op;
  site->scale = scaled.getScale();
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
  if (!config.statistics)
    os << "_nostats";
  return name;
}

class GemmRewriter {
public:
  explicit GemmRewriter(ModuleOp module) : module(module), symbols(module) {}

  LogicalResult rewrite(GemmSite &site);

private:
  /// The tensor-level entry of the kernel for `config`, built on first use.
  FailureOr<func::FuncOp> entryFor(GemmKernelConfig &config, Location loc);

  ModuleOp module;
  SymbolTable symbols;
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
  for (func::FuncOp function : {*kernel, entry}) {
    function.setPrivate();
    symbols.insert(function);
  }
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
  SmallVector<Value> operands = {
      site.a, site.b,
      tensor::FromElementsOp::create(
          b, loc, RankedTensorType::get({1}, b.getF32Type()), scale)};
  if (site.bias)
    operands.push_back(site.bias);
  auto call = func::CallOp::create(b, loc, *entry, operands);
  op->getResult(0).replaceAllUsesWith(call.getResult(0));
  if (site.config.statistics) {
    // The lowered !gs.stats, seen as one until convert-gs-to-linalg.
    auto fused = cast<ScaledContractionOp>(op);
    Value stats = UnrealizedConversionCastOp::create(
                      b, loc, fused.getStats().getType(), call.getResult(1))
                      .getResult(0);
    fused.getStats().replaceAllUsesWith(stats);
    fused.getCastCounts().replaceAllUsesWith(call.getResult(2));
  }
  // Without statistics, nothing reads the other results.
  op->erase();
  return success();
}

struct ConvertGSToGPUPass
    : mlir::gs::impl::ConvertGSToGPUBase<ConvertGSToGPUPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> contractions;
    module.walk([&](Operation *op) {
      // A scaled contraction's own contraction goes with it.
      if (isa<ScaledContractionOp>(op) ||
          (isa<GemmOp, MatMulOp, ConvOp, ConvTransposeOp>(op) &&
           !isa<ScaledContractionOp>(op->getParentOp())))
        contractions.push_back(op);
    });
    GemmRewriter rewriter(module);
    // Matched one at a time: a rewrite replaces the operands of later ones.
    for (Operation *op : contractions)
      if (std::optional<GemmSite> site = matchSite(op))
        if (failed(rewriter.rewrite(*site)))
          return signalPassFailure();
  }
};
} // namespace
