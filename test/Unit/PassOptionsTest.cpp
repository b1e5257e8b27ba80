//===- PassOptionsTest.cpp - Scaling options set from C++ -------*- C++ -*-===//
//
// The scaling passes' choice options are enums that their textual form
// checks when it is parsed; set from C++, through the options structs,
// what the parser would refuse is still an error with a diagnostic.
//
//===----------------------------------------------------------------------===//

#include "gs/Dialect/GS/Transforms/Passes.h"
#include "gs/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {
constexpr const char *kTrainGraph = R"mlir(
gs.param trainable @w = dense<0.5> : tensor<3x4xf32>
func.func @forward(%x: tensor<2x4xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w = gs.param.read @w : tensor<3x4xf32>
  %y = gs.gemm %x, %w {transB} : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l, %lp = gs.softmax_cross_entropy %y, %t <{reduction = #gs.reduction<mean>}> : tensor<2x3xf32>, tensor<2xi64>
  return %l : tensor<f32>
}
gs.training @forward {learning_rate = 0.1 : f32, optimizer = #gs.sgd<>}
)mlir";

/// Runs gs-train-step, gs-mixed-precision, gs-autodiff,
/// gs-widen-weight-gradients and gs-gradient-scaling with
/// `options` on the train graph; returns the diagnostics, empty on success.
std::string runGradientScaling(const gs::GradientScalingOptions &options) {
  DialectRegistry registry;
  gs::registerAllDialects(registry);
  MLIRContext context(registry);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(kTrainGraph, &context);
  EXPECT_TRUE(module);
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    diagnostics += diagnostic.str() + "\n";
    return success();
  });
  PassManager pm(&context);
  pm.addPass(gs::createTrainStep());
  pm.addPass(gs::createMixedPrecision());
  pm.addPass(gs::createAutodiff());
  pm.addPass(gs::createWidenWeightGradients());
  pm.addPass(gs::createGradientScaling(options));
  bool ok = succeeded(pm.run(*module));
  EXPECT_EQ(ok, diagnostics.empty()) << diagnostics;
  return diagnostics;
}

TEST(PassOptions, DefaultGradientScalingOptionsRun) {
  EXPECT_EQ(runGradientScaling(gs::GradientScalingOptions()), "");
}

TEST(PassOptions, HalfNormalCastModelIsAnError) {
  gs::GradientScalingOptions options;
  options.castModel = gs::ScaleModel::half_normal;
  EXPECT_EQ(runGradientScaling(options),
            "gs-gradient-scaling: cast-model must be log_normal or "
            "exponent_histogram, got half_normal\n");
}

TEST(PassOptions, EveryChoiceHasItsNameInTheParser) {
  // The textual pipeline round-trips each enum value by its name.
  DialectRegistry registry;
  gs::registerAllDialects(registry);
  MLIRContext context(registry);
  gs::registerGSTransformsPasses();
  for (const char *text :
       {"gs-gradient-scaling{underflow-rounding=none overflow-rounding=up "
        "gemm-model=exponent_histogram cast-model=exponent_histogram "
        "relu-mask=always}",
        "gs-loss-scaling{mode=fixed}"}) {
    PassManager pm(&context);
    ASSERT_TRUE(succeeded(
        parsePassPipeline(std::string("builtin.module(") + text + ")", pm)))
        << text;
    std::string printed;
    llvm::raw_string_ostream os(printed);
    pm.printAsTextualPipeline(os);
    for (llvm::StringRef choice :
         {"underflow-rounding=none", "overflow-rounding=up",
          "gemm-model=exponent_histogram", "relu-mask=always", "mode=fixed"})
      if (llvm::StringRef(text).contains(choice)) {
        EXPECT_TRUE(llvm::StringRef(printed).contains(choice))
            << printed << " lacks " << choice.str();
      }
  }
}
} // namespace
