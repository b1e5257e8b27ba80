//===- ScaleModel.cpp - The gradient-scaling model, in C++ ------*- C++ -*-===//

#include "gs/Support/ScaleModel.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>

using namespace mlir::gs::scaling;

double mlir::gs::scaling::erfinv(double y) {
  assert(y > -1.0 && y < 1.0 && "erfinv is defined on (-1, 1)");
  if (y == 0.0)
    return 0.0;
  // Giles' single-precision approximation ("Approximating the erfinv
  // function", GPU Computing Gems, 2011) as the start...
  double w = -std::log((1.0 - y) * (1.0 + y)), x;
  if (w < 5.0) {
    w -= 2.5;
    double p = 2.81022636e-08;
    for (double c :
         {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
          -0.00125372503, -0.00417768164, 0.246640727, 1.50140941})
      p = c + p * w;
    x = p * y;
  } else {
    w = std::sqrt(w) - 3.0;
    double p = -0.000200214257;
    for (double c :
         {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
          -0.0076224613, 0.00943887047, 1.00167406, 2.83297682})
      p = c + p * w;
    x = p * y;
  }
  // ...then Halley's method on erf(x) - y, which triples the digits per step.
  const double twoOverSqrtPi = 2.0 / std::sqrt(M_PI);
  for (int i = 0; i < 3; ++i) {
    double error = std::erf(x) - y;
    double derivative = twoOverSqrtPi * std::exp(-x * x);
    x -= error / (derivative + x * error);
  }
  return x;
}

double mlir::gs::scaling::roundToPowerOfTwo(double x, Rounding rounding) {
  assert(x > 0.0 && "scales are positive");
  if (rounding == Rounding::None || std::isinf(x))
    return x;
  int exponent;
  double mantissa = std::frexp(x, &exponent); // x = mantissa * 2^exponent
  if (mantissa == 0.5)                        // already a power of two
    return x;
  return std::ldexp(1.0, rounding == Rounding::Up ? exponent : exponent - 1);
}

double mlir::gs::scaling::halfNormalSigma(double accumLength, double rmsGrad,
                                          double rmsWeight, bool reluMask) {
  double sigma = std::sqrt(accumLength) * rmsGrad * rmsWeight;
  return reluMask ? sigma * std::sqrt(0.5) : sigma;
}

double mlir::gs::scaling::halfNormalUnderflowRate(double sigma, double alpha) {
  return std::erf(kHalfMinSubnormal / (std::sqrt(2.0) * alpha * sigma));
}

double mlir::gs::scaling::halfNormalUnderflowScale(double sigma,
                                                   double threshold) {
  return kHalfMinSubnormal / (std::sqrt(2.0) * sigma * erfinv(threshold));
}

double mlir::gs::scaling::logNormalUnderflowRate(double mu, double s,
                                                 double alpha) {
  double z = (std::log(kHalfMinSubnormal) - mu - std::log(alpha)) / s;
  return 0.5 * std::erfc(-z / std::sqrt(2.0));
}

double mlir::gs::scaling::logNormalUnderflowScale(double mu, double s,
                                                  double threshold) {
  return std::exp(std::log(kHalfMinSubnormal) - mu -
                  s * std::sqrt(2.0) * erfinv(2.0 * threshold - 1.0));
}

double mlir::gs::scaling::chooseScale(double underflowScale, double overflowCap,
                                      double alpha, const ScaleRules &rules) {
  double beta =
      std::max(roundToPowerOfTwo(underflowScale, rules.underflowRounding),
               rules.minScale);
  beta = std::min(beta, roundToPowerOfTwo(overflowCap, rules.overflowRounding));
  if (rules.maxScale)
    beta = std::min(beta, *rules.maxScale);
  if (rules.maxAccumScale)
    beta = std::min(beta, roundToPowerOfTwo(*rules.maxAccumScale / alpha,
                                            rules.overflowRounding));
  // An all-zero gradient has neither an underflow nor an overflow bound.
  return std::isfinite(beta) ? beta : rules.minScale;
}

double mlir::gs::scaling::unifyScales(const std::vector<double> &alphas,
                                      const std::vector<double> &maxAbs) {
  assert(!alphas.empty() && alphas.size() == maxAbs.size());
  auto fits = [&](double beta) {
    for (size_t i = 0; i < alphas.size(); ++i)
      if (!(beta * maxAbs[i] / alphas[i] < kHalfMax))
        return false;
    return true;
  };
  std::vector<double> candidates(alphas);
  std::sort(candidates.rbegin(), candidates.rend());
  for (double beta : candidates)
    if (fits(beta))
      return beta;
  double beta = candidates.back();
  while (!fits(beta) && beta > 0x1p-126)
    beta *= 0.5;
  return beta;
}

double
mlir::gs::scaling::histogramUnderflowRate(const std::vector<float> &magnitudes,
                                          double scale) {
  int64_t nonzero = 0, flushed = 0;
  for (float m : magnitudes) {
    if (m == 0)
      continue;
    ++nonzero;
    if (std::abs(static_cast<double>(m)) * scale < 0x1p-25)
      ++flushed;
  }
  return nonzero ? static_cast<double>(flushed) / nonzero : 0.0;
}

double
mlir::gs::scaling::histogramUnderflowScale(const std::vector<float> &magnitudes,
                                           double threshold) {
  // FP32 magnitudes span 2^-149..2^128: 2^-25 / 2^-150 bounds the search.
  for (int k = -160; k < 130; ++k)
    if (histogramUnderflowRate(magnitudes, std::ldexp(1.0, k)) <= threshold)
      return std::ldexp(1.0, k);
  return std::ldexp(1.0, 130);
}
