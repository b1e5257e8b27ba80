//===- ScaleModel.h - The gradient-scaling model, in C++ --------*- C++ -*-===//
//
// The statistics of docs/GradientScaling.md (the paper's Theorems 1 and 2 and
// the rules around them) as plain functions: the compiler evaluates the
// threshold-dependent constants with them, the runtime reports the model's
// estimated underflow rates with them, and the tests check the generated
// code against them. No MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef GS_SUPPORT_SCALEMODEL_H
#define GS_SUPPORT_SCALEMODEL_H

#include <optional>
#include <vector>

namespace mlir::gs::scaling {

/// The smallest positive FP16 value (subnormal) and the largest finite one.
constexpr double kHalfMinSubnormal = 0x1p-24;
constexpr double kHalfMax = 65504.0;

/// The inverse error function on (-1, 1), to double precision.
double erfinv(double y);

/// How a scale is rounded to a power of two.
enum class Rounding { Up, Down, None };

/// `x` (> 0) rounded to a power of two; itself with Rounding::None.
double roundToPowerOfTwo(double x, Rounding rounding);

/// Theorem 1 (case fG): the standard deviation of a GEMM's data gradient
/// from the RMS of its incoming gradient and weight, N the accumulation
/// length, halved in variance where a ReLU mask sits between.
double halfNormalSigma(double accumLength, double rmsGrad, double rmsWeight,
                       bool reluMask);

/// P(|alpha x| < 2^-24) for x ~ N(0, sigma^2).
double halfNormalUnderflowRate(double sigma, double alpha);

/// The smallest scale whose modelled underflow rate is `threshold`.
double halfNormalUnderflowScale(double sigma, double threshold);

/// Theorem 2 (case fT): P(|alpha x| < 2^-24) for ln|x| ~ N(mu, s^2).
double logNormalUnderflowRate(double mu, double s, double alpha);

/// The smallest scale whose modelled underflow rate is `threshold`.
double logNormalUnderflowScale(double mu, double s, double threshold);

/// The exponent-histogram model (not the paper's; no distribution
/// assumed), over the FP32 magnitudes of a gradient: the fraction of the
/// nonzeros that `scale` puts below 2^-25, where an FP16 cast flushes them
/// to 0 (exact ties at 2^-25 not counted) ...
double histogramUnderflowRate(const std::vector<float> &magnitudes,
                              double scale);

/// ... and the smallest power of two at which that fraction is at most
/// `threshold`.
double histogramUnderflowScale(const std::vector<float> &magnitudes,
                               double threshold);

/// Bins of gs.exponent_histogram: FP32's biased exponents.
constexpr int kExponentBins = 256;

/// How a scale is chosen from the underflow scale and the overflow cap.
struct ScaleRules {
  double minScale = 1.0;
  std::optional<double> maxScale;
  /// Bound on alpha * beta (the cumulative scale), with the incoming alpha.
  std::optional<double> maxAccumScale;
  Rounding underflowRounding = Rounding::Up;
  Rounding overflowRounding = Rounding::Down;
};

/// beta = min(max(round(underflowScale), minScale), round(overflowCap)),
/// then capped by maxScale and maxAccumScale / alpha: below minScale only
/// where the overflow cap demands it; minScale when nothing bounds it (an
/// all-zero gradient).
double chooseScale(double underflowScale, double overflowCap, double alpha,
                   const ScaleRules &rules);

/// The branch rule: the common scale for gradients arriving with scales
/// `alphas` whose largest magnitudes are `maxAbs` (as scaled): the first
/// alpha in descending order with beta * maxAbs_i / alpha_i < 65504 for
/// every i; if none fits, the smallest halved until one does.
double unifyScales(const std::vector<double> &alphas,
                   const std::vector<double> &maxAbs);

} // namespace mlir::gs::scaling

#endif // GS_SUPPORT_SCALEMODEL_H
