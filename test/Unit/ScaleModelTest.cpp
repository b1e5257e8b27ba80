//===- ScaleModelTest.cpp - The scaling model's math ------------*- C++ -*-===//
//
// erfinv against high-precision values; Theorems 1 and 2 (half-normal and
// log-normal underflow rates) against Monte-Carlo draws; the rounding, clamp
// and cap rules; the branch rule on hand-made cases.
//
//===----------------------------------------------------------------------===//

#include "gs/Support/ScaleModel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace mlir::gs::scaling;

namespace {
TEST(ScaleModel, ErfinvMatchesHighPrecisionValues) {
  // mpmath 1.2.1, mp.dps = 40.
  const struct {
    double y, x;
  } values[] = {
      {1e-6, 8.862269254529900273156185237203014311659e-7},
      {1e-3, 8.862271574665521045654350873641261898649e-4},
      {0.1, 0.08885599049425768701573725056779177757205},
      {0.5, 0.476936276204469873381418353643130559809},
      {-0.5, -0.476936276204469873381418353643130559809},
      {-0.998, -2.185124219133004265705959647509842301081},
      {0.9999, 2.751063905712060796145513168542678171102},
  };
  for (auto [y, x] : values) {
    // Near +-1 erfinv is ill-conditioned: a one-ulp change of y (its
    // decimal value is not a double) moves x by erfinv'(y) * ulp.
    double slope = std::sqrt(M_PI) / 2 * std::exp(x * x);
    double tolerance = 4e-15 * std::abs(x) + 2 * slope * 0x1p-52 * std::abs(y);
    EXPECT_NEAR(erfinv(y), x, tolerance) << "erfinv(" << y << ")";
  }
  EXPECT_EQ(erfinv(0.0), 0.0);
}

/// The binomial standard error of a rate p measured on n draws.
double standardError(double p, int n) { return std::sqrt(p * (1 - p) / n); }

TEST(ScaleModel, HalfNormalScaleMeetsThresholdOnSamples) {
  // Theorem 1: elements ~ N(0, sigma^2); the scale beta_uf makes exactly
  // `threshold` of them fall below 2^-24; rounded up, at most that.
  const double threshold = 1e-3;
  const int n = 2000000;
  std::mt19937_64 random(7);
  for (double sigma : {1e-10, 3e-8, 2e-6}) {
    std::normal_distribution<double> normal(0.0, sigma);
    std::vector<double> draws(n);
    for (double &d : draws)
      d = normal(random);
    double exact = halfNormalUnderflowScale(sigma, threshold);
    EXPECT_NEAR(halfNormalUnderflowRate(sigma, exact), threshold, 1e-12);
    double rounded = roundToPowerOfTwo(exact, Rounding::Up);
    auto measured = [&](double beta) {
      int below = 0;
      for (double d : draws)
        below += std::abs(beta * d) < kHalfMinSubnormal;
      return static_cast<double>(below) / n;
    };
    double se = standardError(threshold, n);
    EXPECT_NEAR(measured(exact), threshold, 4 * se) << "sigma " << sigma;
    EXPECT_LE(measured(rounded), threshold + 4 * se) << "sigma " << sigma;
  }
}

TEST(ScaleModel, LogNormalScaleMeetsThresholdOnSamples) {
  // Theorem 2: ln|x| ~ N(mu, s^2) over the nonzeros.
  const double threshold = 1e-3;
  const int n = 2000000;
  std::mt19937_64 random(11);
  for (auto [mu, s] : {std::pair{-22.0, 2.0}, std::pair{-12.0, 3.5}}) {
    std::normal_distribution<double> normal(mu, s);
    std::vector<double> draws(n);
    for (double &d : draws)
      d = std::exp(normal(random));
    double exact = logNormalUnderflowScale(mu, s, threshold);
    EXPECT_NEAR(logNormalUnderflowRate(mu, s, exact), threshold, 1e-12);
    auto measured = [&](double beta) {
      int below = 0;
      for (double d : draws)
        below += beta * d < kHalfMinSubnormal;
      return static_cast<double>(below) / n;
    };
    double se = standardError(threshold, n);
    EXPECT_NEAR(measured(exact), threshold, 4 * se) << "mu " << mu;
    EXPECT_LE(measured(roundToPowerOfTwo(exact, Rounding::Up)),
              threshold + 4 * se)
        << "mu " << mu;
  }
}

TEST(ScaleModel, HistogramScaleIsTheSmallestThatMeetsTheThreshold) {
  // A left tail heavier than log-normal (the softmax gradient of a
  // confident classifier): a mixture of two log-normals.
  std::mt19937_64 random(13);
  std::normal_distribution<double> body(-6.0, 1.0), tail(-30.0, 4.0);
  std::vector<float> magnitudes;
  for (int i = 0; i < 100000; ++i)
    magnitudes.push_back(
        static_cast<float>(std::exp(i % 20 ? body(random) : tail(random))));
  magnitudes.push_back(0.0f); // zeros do not count
  for (double threshold : {1e-3, 1e-2}) {
    double scale = histogramUnderflowScale(magnitudes, threshold);
    EXPECT_EQ(scale, roundToPowerOfTwo(scale, Rounding::Down));
    EXPECT_LE(histogramUnderflowRate(magnitudes, scale), threshold);
    EXPECT_GT(histogramUnderflowRate(magnitudes, scale / 2), threshold);
  }
  // The rate counts what an FP16 cast flushes: below 2^-25 after scaling.
  EXPECT_EQ(histogramUnderflowRate({0x1p-26f, 0x1p-20f}, 1.0), 0.5);
  EXPECT_EQ(histogramUnderflowRate({0x1p-26f, 0x1p-20f}, 4.0), 0.0);
  EXPECT_EQ(histogramUnderflowRate({0.0f}, 1.0), 0.0);
}

TEST(ScaleModel, RoundsToPowersOfTwo) {
  EXPECT_EQ(roundToPowerOfTwo(3.0, Rounding::Up), 4.0);
  EXPECT_EQ(roundToPowerOfTwo(3.0, Rounding::Down), 2.0);
  EXPECT_EQ(roundToPowerOfTwo(3.0, Rounding::None), 3.0);
  EXPECT_EQ(roundToPowerOfTwo(0x1p-30, Rounding::Up), 0x1p-30);
  EXPECT_EQ(roundToPowerOfTwo(0x1p-30, Rounding::Down), 0x1p-30);
  EXPECT_EQ(roundToPowerOfTwo(0.3, Rounding::Up), 0.5);
  EXPECT_EQ(roundToPowerOfTwo(0.3, Rounding::Down), 0.25);
  EXPECT_EQ(roundToPowerOfTwo(1e10, Rounding::Down), 0x1p33);
}

TEST(ScaleModel, ClampsAtOneUnlessTheOverflowCapDemandsLess) {
  ScaleRules rules;
  // A gradient well above the underflow range is not scaled down.
  EXPECT_EQ(chooseScale(0.01, 1e6, 1.0, rules), 1.0);
  // The underflow scale rounds up, the overflow cap down.
  EXPECT_EQ(chooseScale(1000.0, 1e6, 1.0, rules), 1024.0);
  EXPECT_EQ(chooseScale(1e7, 1e6, 1.0, rules), 524288.0);
  // Below 1 only for the cap.
  EXPECT_EQ(chooseScale(0.01, 0.3, 1.0, rules), 0.25);
  // Optional bounds: per tensor, and on the cumulative alpha * beta.
  rules.maxScale = 256.0;
  EXPECT_EQ(chooseScale(1000.0, 1e6, 1.0, rules), 256.0);
  rules.maxScale.reset();
  rules.maxAccumScale = 65504.0;
  EXPECT_EQ(chooseScale(1000.0, 1e6, 128.0, rules), 256.0);
  // An all-zero gradient: no bound either way.
  EXPECT_EQ(chooseScale(INFINITY, INFINITY, 1.0, ScaleRules()), 1.0);
  // Without rounding the values pass through.
  ScaleRules exact;
  exact.underflowRounding = exact.overflowRounding = Rounding::None;
  EXPECT_EQ(chooseScale(1000.0, 1e6, 1.0, exact), 1000.0);
}

TEST(ScaleModel, BranchRuleTakesTheLargestScaleThatFits) {
  // Both parts fit under 8: 8 wins.
  EXPECT_EQ(unifyScales({8.0, 2.0}, {100.0, 100.0}), 8.0);
  // 8 would take the second part to 8 * 50000 / 2 = 2e5: 2 wins.
  EXPECT_EQ(unifyScales({8.0, 2.0}, {100.0, 50000.0}), 2.0);
  // Order of the parts does not matter.
  EXPECT_EQ(unifyScales({2.0, 8.0}, {50000.0, 100.0}), 2.0);
  // None fits: the smallest is halved until both do (0.5 * 4e5 / 4 = 5e4).
  EXPECT_EQ(unifyScales({4.0, 2.0}, {4e5, 1e5}), 0.5);
  // One part: its own scale when it fits.
  EXPECT_EQ(unifyScales({16.0}, {1000.0}), 16.0);
}
} // namespace
