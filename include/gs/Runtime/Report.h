//===- Report.h - What a training run reports -------------------*- C++ -*-===//
//
// The JSON report of a training executable (schema: docs/report.schema.json)
// and its curves as CSV: the loss, evaluations, the loss scale, and per
// FP32->FP16 rounding of a gradient its scale and underflow rates over time.
//
//===----------------------------------------------------------------------===//

#ifndef GS_RUNTIME_REPORT_H
#define GS_RUNTIME_REPORT_H

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace mlir::gs::runtime {

/// The schema identifier every report carries.
constexpr const char *kReportSchema = "gradscale.training-report/2";

/// One telemetry site's records over time (gs/Support/Telemetry.h layout:
/// scale, site scale, estimate, nonzero, flushed, subnormal, overflow).
struct SiteSeries {
  std::string name;
  std::string site;
  std::vector<int64_t> steps;
  std::vector<std::array<double, 7>> records;
};

/// One branch unification's records over time (telemetry::UnifyField
/// layout: the unified scale, then each part's scale and factor).
struct UnifySeries {
  std::string name;
  std::string site;
  int64_t parts = 0;
  std::vector<int64_t> steps;
  std::vector<std::vector<double>> records;
};

struct EvalPoint {
  int64_t step = 0;
  /// accuracy, mean_iou or rmse; empty for none.
  std::string metric;
  double value = 0;
  double loss = 0;
  int64_t examples = 0;
};

/// A scalar result of the train step besides the loss, at every step.
struct OutputSeries {
  std::string name;
  std::vector<double> values;
};

struct TrainingReport {
  // The model.
  std::string modelName;
  std::string scaling;
  /// The examples of one step: with several ranks, all of theirs.
  int64_t batchSize = 0;
  int64_t trainableElements = 0;
  // The data.
  std::string trainData;
  int64_t trainExamples = 0;
  std::string evalData;
  int64_t evalExamples = 0;
  std::string normalization;
  /// The evaluation metric; empty for none.
  std::string metric;
  // The run.
  uint64_t seed = 0;
  bool shuffle = true;
  int64_t startStep = 0;
  int64_t steps = 0;
  int64_t stepsPerEpoch = 0;
  /// The ranks of a data-parallel run (each a share of the batch).
  int64_t ranks = 1;
  double wallSeconds = 0;
  // Curves.
  std::vector<int64_t> lossSteps;
  std::vector<double> losses;
  /// At the steps of `lossSteps`.
  std::vector<OutputSeries> outputs;
  std::vector<EvalPoint> evaluations;
  int64_t skippedSteps = 0;
  std::vector<int64_t> lossScaleSteps;
  std::vector<double> lossScales;
  std::vector<SiteSeries> sites;
  std::vector<UnifySeries> unifications;
};

/// A record's measured underflow rate: flushed / nonzero, NaN when nothing
/// was nonzero.
double measuredUnderflow(const std::array<double, 7> &record);

/// Writes the report as JSON / its curves as CSV, through
/// writeFileAtomically. Returns an error message, empty on success.
std::string writeReportJson(const std::string &path,
                            const TrainingReport &report);
std::string writeReportCsv(const std::string &path,
                           const TrainingReport &report);

} // namespace mlir::gs::runtime

#endif // GS_RUNTIME_REPORT_H
