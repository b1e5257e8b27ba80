//===- ScalingLoweringTest.cpp - Compiled scale choices ---------*- C++ -*-===//
//
// gs.grad_stats, gs.compute_scale and gs.unify_scales JIT-compiled through
// the CPU pipeline choose exactly the scales that the C++ model of
// gs/Support/ScaleModel.h chooses from the same tensors: across the
// underflow-limited, clamped and overflow-capped regimes, both models.
//
//===----------------------------------------------------------------------===//

#include "gs/InitAll.h"
#include "gs/Runner/JitRunner.h"
#include "gs/Support/ScaleModel.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

using namespace mlir;
using namespace mlir::gs::scaling;
using mlir::gs::runtime::DType;
using mlir::gs::runtime::Tensor;

namespace {
class ScalingLowering : public ::testing::Test {
protected:
  ScalingLowering() {
    DialectRegistry registry;
    gs::registerAllDialects(registry);
    context.appendDialectRegistry(registry);
  }

  std::unique_ptr<gs::JitFunction> compile(const std::string &source) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, &context);
    if (!module)
      return nullptr;
    std::string error;
    auto function =
        gs::JitFunction::compile(*module, "f", gs::CPUPipelineOptions(), error);
    EXPECT_TRUE(function) << error;
    return function;
  }

  /// Runs `function` on `inputs`; its first output is a scalar f32.
  float run(gs::JitFunction &function, const std::vector<Tensor> &inputs) {
    return runAll(function, inputs).first;
  }

  /// The scalar f32 first output and the scalar f64 second output (the
  /// estimated underflow rate of gs.compute_scale) of `function`.
  std::pair<float, double> runAll(gs::JitFunction &function,
                                  const std::vector<Tensor> &inputs) {
    std::vector<const Tensor *> pointers;
    for (const Tensor &t : inputs)
      pointers.push_back(&t);
    std::vector<Tensor> outputs;
    EXPECT_EQ(function.run(pointers, outputs), "");
    if (outputs.empty())
      return {NAN, NAN};
    return {outputs[0].as<float>()[0],
            outputs.size() > 1 ? outputs[1].as<double>()[0] : NAN};
  }

  MLIRContext context;
};

Tensor normalTensor(std::vector<int64_t> shape, double sigma,
                    std::mt19937_64 &random) {
  Tensor t(DType::F32, std::move(shape));
  std::normal_distribution<double> normal(0.0, sigma);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.as<float>()[i] = static_cast<float>(normal(random));
  return t;
}

struct Moments {
  double rms = 0, maxAbs = 0, logMean = 0, logDeviation = 0;
};

Moments momentsOf(const Tensor &t) {
  Moments m;
  double squares = 0, logs = 0, squaredLogs = 0;
  int64_t nonzero = 0;
  for (int64_t i = 0; i < t.numElements(); ++i) {
    double x = t.as<float>()[i];
    squares += x * x;
    m.maxAbs = std::max(m.maxAbs, std::abs(x));
    if (x != 0) {
      double l = std::log(std::abs(x));
      logs += l;
      squaredLogs += l * l;
      ++nonzero;
    }
  }
  m.rms = std::sqrt(squares / t.numElements());
  m.logMean = logs / nonzero;
  m.logDeviation =
      std::sqrt(std::max(0.0, squaredLogs / nonzero - m.logMean * m.logMean));
  return m;
}

TEST_F(ScalingLowering, HalfNormalMatchesTheModel) {
  auto function = compile(R"mlir(
    func.func @f(%dy: tensor<64x32xf32>, %w: tensor<32x16xf32>) -> (tensor<f32>, tensor<f64>) {
      %sdy = gs.grad_stats %dy : tensor<64x32xf32>
      %sw = gs.grad_stats %w : tensor<32x16xf32>
      %beta, %rate = gs.compute_scale %sdy, %sw {model = #gs.scale_model<half_normal>, accum_length = 32 : i64, relu_mask}
      %t = tensor.from_elements %beta : tensor<f32>
      %r = tensor.from_elements %rate : tensor<f64>
      return %t, %r : tensor<f32>, tensor<f64>
    })mlir");
  ASSERT_TRUE(function);
  std::mt19937_64 random(3);
  // Underflow-limited (tiny gradients), clamped at 1, overflow-capped.
  for (double sigma : {1e-9, 1e-5, 1.0, 300.0}) {
    std::vector<Tensor> inputs;
    inputs.push_back(normalTensor({64, 32}, sigma, random));
    inputs.push_back(normalTensor({32, 16}, 0.5, random));
    Moments dy = momentsOf(inputs[0]), w = momentsOf(inputs[1]);
    double s = halfNormalSigma(32, dy.rms, w.rms, /*reluMask=*/true);
    double expected =
        chooseScale(halfNormalUnderflowScale(s, 1e-3),
                    kHalfMax / (32 * dy.maxAbs * w.maxAbs), 1.0, ScaleRules());
    auto [scale, rate] = runAll(*function, inputs);
    EXPECT_EQ(scale, static_cast<float>(expected))
        << "gradient sigma " << sigma;
    // The estimate is Theorem 1 at the chosen scale.
    EXPECT_NEAR(rate, halfNormalUnderflowRate(s, scale),
                1e-9 + 1e-9 * halfNormalUnderflowRate(s, scale))
        << "gradient sigma " << sigma;
  }
}

/// @f(%dy) -> (scale, rate): the log-normal model's scale decision for a
/// gradient of `shape` ("32x10"), threshold 1e-4.
std::string logNormalScaleFunction(const std::string &shape) {
  std::string type = "tensor<" + shape + "xf32>";
  return "func.func @f(%dy: " + type +
         ") -> (tensor<f32>, tensor<f64>) {\n"
         "  %s = gs.grad_stats %dy : " +
         type +
         "\n"
         "  %beta, %rate = gs.compute_scale %s {model = "
         "#gs.scale_model<log_normal>, threshold = 1.0e-4 : f64}\n"
         "  %t = tensor.from_elements %beta : tensor<f32>\n"
         "  %r = tensor.from_elements %rate : tensor<f64>\n"
         "  return %t, %r : tensor<f32>, tensor<f64>\n"
         "}\n";
}

/// Checks the scale and rate `function` (logNormalScaleFunction) gives for
/// `inputs[0]` against the C++ model on its libm moments: the scale
/// exactly, the rate (Theorem 2 at the chosen scale) to relative accuracy
/// even where it is tiny (erfc, not 1 - erf).
void expectLogNormalModel(std::pair<float, double> decision, const Tensor &dy,
                          const std::string &what) {
  auto [scale, rate] = decision;
  Moments m = momentsOf(dy);
  double expected =
      chooseScale(logNormalUnderflowScale(m.logMean, m.logDeviation, 1e-4),
                  kHalfMax / m.maxAbs, 1.0, ScaleRules());
  EXPECT_EQ(scale, static_cast<float>(expected)) << what;
  double model = logNormalUnderflowRate(m.logMean, m.logDeviation, scale);
  EXPECT_NEAR(rate, model, 1e-9 * model + 1e-300) << what;
}

TEST_F(ScalingLowering, LogNormalMatchesTheModel) {
  auto function = compile(logNormalScaleFunction("32x10"));
  ASSERT_TRUE(function);
  std::mt19937_64 random(5);
  for (double sigma : {1e-8, 1e-3, 3e4}) {
    std::vector<Tensor> inputs;
    inputs.push_back(normalTensor({32, 10}, sigma, random));
    inputs[0].as<float>()[7] = 0.0f; // zeros do not count
    expectLogNormalModel(runAll(*function, inputs), inputs[0],
                         llvm::formatv("gradient sigma {0}", sigma).str());
  }
}

TEST_F(ScalingLowering, LogMomentsHoldAcrossTheFloatRange) {
  // ln|x| is computed inline (from the exponent and mantissa bits), not by
  // libm: over magnitudes from FP32's subnormals to its largest values,
  // and enough elements that the sums run in vector lanes, the estimate
  // still follows Theorem 2 on libm's moments to 1e-9.
  auto function = compile(logNormalScaleFunction("64x64"));
  ASSERT_TRUE(function);
  std::mt19937_64 random(11);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  for (auto [low, high] :
       {std::pair{-149, 127}, std::pair{-30, -20}, std::pair{-1, 1}}) {
    std::uniform_int_distribution<int> exponent(low, high);
    std::vector<Tensor> inputs;
    Tensor &dy = inputs.emplace_back(DType::F32, std::vector<int64_t>{64, 64});
    for (int64_t i = 0; i < dy.numElements(); ++i) {
      double magnitude = std::ldexp(mantissa(random), exponent(random));
      dy.as<float>()[i] = static_cast<float>(i % 2 ? magnitude : -magnitude);
    }
    dy.as<float>()[5] = 0.0f;
    expectLogNormalModel(
        runAll(*function, inputs), dy,
        llvm::formatv("exponents {0} to {1}", low, high).str());
  }
}

TEST_F(ScalingLowering, PowerOfTwoRoundingIsExactNextToAPowerOfTwo) {
  // An overflow cap one f64 ulp below 2^11 rounds down to 2^10 and one
  // just above 2^-3 up to 2^-2, as the C++ model's frexp does; log2
  // rounds both to the power of two itself.
  auto function = compile(R"mlir(
    func.func @f(%dy: tensor<4xf64>) -> (tensor<f32>, tensor<f64>) {
      %s = gs.grad_stats %dy : tensor<4xf64>
      %down, %r1 = gs.compute_scale %s {model = #gs.scale_model<log_normal>}
      %up, %r2 = gs.compute_scale %s {model = #gs.scale_model<log_normal>, overflow_rounding = #gs.rounding<up>, min_scale = 1.0e-3 : f64}
      %t = tensor.from_elements %down : tensor<f32>
      %uu = arith.extf %up : f32 to f64
      %v = tensor.from_elements %uu : tensor<f64>
      return %t, %v : tensor<f32>, tensor<f64>
    })mlir");
  ASSERT_TRUE(function);
  // max|x| = 65504 / nextafter(2^11, 0): the cap 65504 / max|x| lands one
  // ulp below 2^11. The tiny values make the underflow scale huge, so the
  // cap decides.
  auto inputs = [](double maxAbs) {
    std::vector<Tensor> inputs;
    Tensor &t = inputs.emplace_back(DType::F64, std::vector<int64_t>{4});
    t.as<double>()[0] = maxAbs;
    for (int i = 1; i < 4; ++i)
      t.as<double>()[i] = 1e-12;
    return inputs;
  };
  double maxAbs = kHalfMax / std::nextafter(2048.0, 0.0);
  ASSERT_LT(kHalfMax / maxAbs, 2048.0);
  auto [down, up] = runAll(*function, inputs(maxAbs));
  EXPECT_EQ(down, 1024.0f);
  EXPECT_EQ(down, static_cast<float>(roundToPowerOfTwo(kHalfMax / maxAbs,
                                                       Rounding::Down)));
  // Rounded up, the cap stays 2^11 (one ulp below it).
  EXPECT_EQ(up, 2048.0);
  // A cap one ulp above 2^-3 rounds up to 2^-2.
  double bigMax = kHalfMax / std::nextafter(0.125, 1.0);
  ASSERT_GT(kHalfMax / bigMax, 0.125);
  double upAbove = runAll(*function, inputs(bigMax)).second;
  EXPECT_EQ(upAbove, 0.25);
  EXPECT_EQ(upAbove, roundToPowerOfTwo(kHalfMax / bigMax, Rounding::Up));
}

TEST_F(ScalingLowering, ExponentHistogramMatchesTheModel) {
  auto function = compile(R"mlir(
    func.func @f(%dy: tensor<32x10xf32>) -> (tensor<f32>, tensor<f64>) {
      %s = gs.grad_stats %dy : tensor<32x10xf32>
      %h = gs.exponent_histogram %dy : tensor<32x10xf32>
      %beta, %rate = gs.compute_scale %s histogram(%h) {model = #gs.scale_model<exponent_histogram>, threshold = 1.0e-2 : f64}
      %t = tensor.from_elements %beta : tensor<f32>
      %r = tensor.from_elements %rate : tensor<f64>
      return %t, %r : tensor<f32>, tensor<f64>
    })mlir");
  ASSERT_TRUE(function);
  std::mt19937_64 random(9);
  // Magnitudes spread over many binades (ln|x| ~ N(mu, 4^2)), with zeros:
  // underflow-limited, clamped at 1, overflow-capped.
  for (double mu : {-24.0, -12.0, 8.0}) {
    std::vector<Tensor> inputs;
    Tensor &t = inputs.emplace_back(DType::F32, std::vector<int64_t>{32, 10});
    std::normal_distribution<double> normal(mu, 4.0);
    std::vector<float> magnitudes;
    double maxAbs = 0;
    for (int64_t i = 0; i < t.numElements(); ++i) {
      float x =
          i % 17 == 0 ? 0.0f : static_cast<float>(std::exp(normal(random)));
      t.as<float>()[i] = i % 2 ? -x : x;
      magnitudes.push_back(x);
      maxAbs = std::max(maxAbs, static_cast<double>(x));
    }
    double expected = chooseScale(histogramUnderflowScale(magnitudes, 1e-2),
                                  kHalfMax / maxAbs, 1.0, ScaleRules());
    auto [scale, rate] = runAll(*function, inputs);
    EXPECT_EQ(scale, static_cast<float>(expected)) << "mu " << mu;
    // The estimate is the exact fraction flushed at that scale.
    EXPECT_NEAR(rate, histogramUnderflowRate(magnitudes, scale), 1e-12)
        << "mu " << mu;
  }
}

TEST_F(ScalingLowering, AllZeroGradientKeepsTheMinimumScale) {
  auto function = compile(R"mlir(
    func.func @f(%dy: tensor<8xf32>) -> (tensor<f32>, tensor<f64>) {
      %s = gs.grad_stats %dy : tensor<8xf32>
      %beta, %rate = gs.compute_scale %s {model = #gs.scale_model<log_normal>}
      %t = tensor.from_elements %beta : tensor<f32>
      %r = tensor.from_elements %rate : tensor<f64>
      return %t, %r : tensor<f32>, tensor<f64>
    })mlir");
  ASSERT_TRUE(function);
  std::vector<Tensor> inputs;
  Tensor &zeros = inputs.emplace_back(DType::F32, std::vector<int64_t>{8});
  std::fill_n(zeros.as<float>(), 8, 0.0f);
  auto [scale, rate] = runAll(*function, inputs);
  EXPECT_EQ(scale, 1.0f);
  EXPECT_EQ(rate, 0.0); // no nonzeros, nothing to underflow
}

TEST_F(ScalingLowering, UnifyScalesMatchesTheBranchRule) {
  auto function = compile(R"mlir(
    func.func @f(%a1: tensor<f32>, %a2: tensor<f32>, %x1: tensor<4xf32>, %x2: tensor<4xf32>) -> tensor<f32> {
      %alpha1 = tensor.extract %a1[] : tensor<f32>
      %alpha2 = tensor.extract %a2[] : tensor<f32>
      %s1 = gs.grad_stats %x1 : tensor<4xf32>
      %s2 = gs.grad_stats %x2 : tensor<4xf32>
      %beta = gs.unify_scales %alpha1, %alpha2 stats %s1, %s2
      %t = tensor.from_elements %beta : tensor<f32>
      return %t : tensor<f32>
    })mlir");
  ASSERT_TRUE(function);
  auto scalar = [](float v) {
    Tensor t(DType::F32, {});
    t.as<float>()[0] = v;
    return t;
  };
  auto vector = [](float largest) {
    Tensor t(DType::F32, {4});
    float values[] = {0.5f, -largest, 2.0f, 0.0f};
    std::copy(values, values + 4, t.as<float>());
    return t;
  };
  const struct {
    float alpha1, alpha2, max1, max2;
  } cases[] = {{8, 2, 100, 100},
               {8, 2, 100, 50000},
               {2, 8, 50000, 100},
               {4, 2, 4e5f, 1e5f},
               {1024, 1, 60000, 3}};
  for (auto c : cases) {
    std::vector<Tensor> inputs;
    inputs.push_back(scalar(c.alpha1));
    inputs.push_back(scalar(c.alpha2));
    inputs.push_back(vector(c.max1));
    inputs.push_back(vector(c.max2));
    double expected = unifyScales({c.alpha1, c.alpha2}, {c.max1, c.max2});
    EXPECT_EQ(run(*function, inputs), static_cast<float>(expected))
        << "alphas " << c.alpha1 << ", " << c.alpha2;
  }
}
} // namespace
