//===- ScaleKernel.cpp - The scale decisions as device kernels --*- C++ -*-===//
//
// A scale decision is a few dozen scalar f64 operations (a 256-bin scan for
// the histogram model): one thread does it, in one block, between the
// kernel that gathered its statistics and the one that applies the scale.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/GSToGPU/ScaleKernel.h"

#include "gs/Conversion/ScaleDecision.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::gs;

namespace {
MemRefType statsBufferType(OpBuilder &b) {
  return MemRefType::get({telemetry::NumStatsFields}, b.getF64Type());
}

MemRefType scalarBufferType(Type element) {
  return MemRefType::get({1}, element);
}

/// A function `name` of `arguments` whose body is one gpu.launch of one
/// thread; `body` builds the launch's code (the terminator is added).
func::FuncOp
buildSingleThreadKernel(OpBuilder &builder, Location loc, StringRef name,
                        TypeRange arguments,
                        function_ref<void(OpBuilder &, ValueRange)> body) {
  auto kernel = func::FuncOp::create(builder, loc, name,
                                     builder.getFunctionType(arguments, {}));
  Block *entry = kernel.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockBegin(entry);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto launch = gpu::LaunchOp::create(b, loc, one, one, one, one, one, one);
  b.setInsertionPointToStart(&launch.getBody().front());
  body(b, entry->getArguments());
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToEnd(entry);
  func::ReturnOp::create(b, loc);
  return kernel;
}

Value loadScalar(OpBuilder &b, Location loc, Value buffer) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  return memref::LoadOp::create(b, loc, buffer, ValueRange{zero});
}

void storeScalar(OpBuilder &b, Location loc, Value value, Value buffer) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  memref::StoreOp::create(b, loc, value, buffer, ValueRange{zero});
}
} // namespace

func::FuncOp mlir::gs::buildComputeScaleKernel(OpBuilder &builder, Location loc,
                                               ComputeScaleOp op,
                                               StringRef name) {
  SmallVector<Type> arguments = {statsBufferType(builder)};
  if (op.getWeightStats())
    arguments.push_back(statsBufferType(builder));
  if (Value histogram = op.getHistogram()) {
    auto type = cast<RankedTensorType>(histogram.getType());
    arguments.push_back(
        MemRefType::get(type.getShape(), type.getElementType()));
  }
  if (op.getAlpha())
    arguments.push_back(scalarBufferType(builder.getF32Type()));
  arguments.push_back(scalarBufferType(builder.getF32Type()));
  arguments.push_back(scalarBufferType(builder.getF64Type()));
  return buildSingleThreadKernel(
      builder, loc, name, arguments, [&](OpBuilder &b, ValueRange buffers) {
        ScaleDecisionInputs inputs;
        unsigned next = 0;
        inputs.gradStats = loweredStatsFields(buffers[next++]);
        if (op.getWeightStats())
          inputs.weightStats = loweredStatsFields(buffers[next++]);
        if (op.getHistogram())
          inputs.histogram = histogramBins(buffers[next++]);
        if (op.getAlpha())
          inputs.alpha = loadScalar(b, loc, buffers[next++]);
        ScaleDecision decision = buildComputeScale(b, loc, op, inputs);
        storeScalar(b, loc, decision.scale, buffers[next]);
        storeScalar(b, loc, decision.underflowEstimate, buffers[next + 1]);
      });
}

func::FuncOp mlir::gs::buildUnifyScalesKernel(OpBuilder &builder, Location loc,
                                              unsigned numParts,
                                              StringRef name) {
  SmallVector<Type> arguments(numParts, scalarBufferType(builder.getF32Type()));
  arguments.append(numParts, statsBufferType(builder));
  arguments.push_back(scalarBufferType(builder.getF32Type()));
  return buildSingleThreadKernel(
      builder, loc, name, arguments, [&](OpBuilder &b, ValueRange buffers) {
        SmallVector<Value> alphas;
        SmallVector<StatsFieldReader> stats;
        for (unsigned i = 0; i < numParts; ++i) {
          alphas.push_back(loadScalar(b, loc, buffers[i]));
          stats.push_back(loweredStatsFields(buffers[numParts + i]));
        }
        Value scale = buildUnifyScales(b, loc, alphas, stats);
        storeScalar(b, loc, scale, buffers.back());
      });
}
