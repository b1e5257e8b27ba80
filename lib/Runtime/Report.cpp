//===- Report.cpp - What a training run reports -----------------*- C++ -*-===//

#include "gs/Runtime/Report.h"
#include "gs/Runtime/Tensor.h"
#include "gs/Support/Telemetry.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

using namespace mlir::gs::runtime;

namespace {
using namespace mlir::gs::telemetry;
constexpr size_t kNonzero = FirstCount + Nonzero,
                 kFlushed = FirstCount + Flushed,
                 kSubnormal = FirstCount + Subnormal,
                 kOverflow = FirstCount + Overflow;
static_assert(NumRecordFields == 7, "SiteSeries holds 7 fields");

/// A JSON number, or null for NaN and infinities (JSON has neither).
std::string number(double value) {
  if (!std::isfinite(value))
    return "null";
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", value);
  return text;
}

/// A CSV header cell: quoted (quotes doubled) where it holds a comma, a
/// quote or a line break.
std::string csvField(const std::string &text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos)
    return text;
  std::string cell = "\"";
  for (char c : text)
    cell += c == '"' ? std::string("\"\"") : std::string(1, c);
  return cell + "\"";
}

std::string quoted(const std::string &text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\')
      out += '\\', out += static_cast<char>(c);
    else if (c < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof(escape), "\\u%04x", c);
      out += escape;
    } else
      out += static_cast<char>(c);
  }
  return out + "\"";
}

template <typename T, typename F>
std::string array(const std::vector<T> &values, F format) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? ", " : "") + format(values[i]);
  return out + "]";
}

std::string integers(const std::vector<int64_t> &values) {
  return array(values, [](int64_t v) { return std::to_string(v); });
}

std::string numbers(const std::vector<double> &values) {
  return array(values, [](double v) { return number(v); });
}

std::vector<double> field(const SiteSeries &series, size_t index) {
  std::vector<double> values;
  for (const auto &record : series.records)
    values.push_back(record[index]);
  return values;
}
} // namespace

double
mlir::gs::runtime::measuredUnderflow(const std::array<double, 7> &record) {
  return record[kNonzero] > 0 ? record[kFlushed] / record[kNonzero] : NAN;
}

std::string mlir::gs::runtime::writeReportJson(const std::string &path,
                                               const TrainingReport &r) {
  std::ostringstream os;
  double totalOverflow = 0;
  os << "{\n  \"schema\": " << quoted(kReportSchema) << ",\n";
  os << "  \"model\": {\"name\": " << quoted(r.modelName)
     << ", \"scaling\": " << quoted(r.scaling)
     << ", \"batch_size\": " << r.batchSize
     << ", \"trainable_elements\": " << r.trainableElements << "},\n";
  os << "  \"data\": {\"train\": {\"path\": " << quoted(r.trainData)
     << ", \"examples\": " << r.trainExamples << "}, \"eval\": ";
  if (r.evalData.empty())
    os << "null";
  else
    os << "{\"path\": " << quoted(r.evalData)
       << ", \"examples\": " << r.evalExamples << "}";
  os << ", \"normalization\": " << quoted(r.normalization) << "},\n";
  int64_t ran = r.steps - r.startStep;
  os << "  \"run\": {\"seed\": " << r.seed
     << ", \"shuffle\": " << (r.shuffle ? "true" : "false")
     << ", \"start_step\": " << r.startStep << ", \"steps\": " << r.steps
     << ", \"steps_per_epoch\": " << r.stepsPerEpoch
     << ", \"ranks\": " << r.ranks << ", \"epochs\": "
     << number(r.stepsPerEpoch ? double(r.steps) / r.stepsPerEpoch : 0)
     << ", \"wall_time_s\": " << number(r.wallSeconds) << ", \"steps_per_s\": "
     << number(r.wallSeconds > 0 ? ran / r.wallSeconds : 0) << "},\n";
  os << "  \"loss\": {\"step\": " << integers(r.lossSteps)
     << ", \"value\": " << numbers(r.losses) << "},\n";
  os << "  \"outputs\": " << array(r.outputs, [](const OutputSeries &o) {
    return "{\"name\": " + quoted(o.name) +
           ", \"value\": " + numbers(o.values) + "}";
  }) << ",\n";
  os << "  \"eval\": " << array(r.evaluations, [](const EvalPoint &e) {
    std::string metric;
    if (!e.metric.empty())
      metric = ", " + quoted(e.metric) + ": " + number(e.value);
    return "{\"step\": " + std::to_string(e.step) + metric +
           ", \"loss\": " + number(e.loss) +
           ", \"examples\": " + std::to_string(e.examples) + "}";
  }) << ",\n";
  os << "  \"skipped_steps\": " << r.skippedSteps << ",\n";
  os << "  \"loss_scale\": ";
  if (r.lossScaleSteps.empty())
    os << "null";
  else
    os << "{\"step\": " << integers(r.lossScaleSteps)
       << ", \"value\": " << numbers(r.lossScales) << "}";
  os << ",\n  \"sites\": [";
  for (size_t s = 0; s < r.sites.size(); ++s) {
    const SiteSeries &series = r.sites[s];
    std::vector<double> measured;
    for (const auto &record : series.records)
      measured.push_back(measuredUnderflow(record));
    for (double overflow : field(series, kOverflow))
      totalOverflow += overflow;
    os << (s ? "," : "") << "\n    {\"name\": " << quoted(series.name)
       << ", \"site\": " << quoted(series.site)
       << ",\n     \"step\": " << integers(series.steps)
       << ",\n     \"scale\": " << numbers(field(series, Scale))
       << ",\n     \"site_scale\": " << numbers(field(series, SiteScale))
       << ",\n     \"estimated_underflow\": "
       << numbers(field(series, Estimate))
       << ",\n     \"measured_underflow\": " << numbers(measured)
       << ",\n     \"nonzero\": " << numbers(field(series, kNonzero))
       << ",\n     \"flushed\": " << numbers(field(series, kFlushed))
       << ",\n     \"subnormal\": " << numbers(field(series, kSubnormal))
       << ",\n     \"overflow\": " << numbers(field(series, kOverflow)) << "}";
  }
  os << (r.sites.empty() ? "" : "\n  ") << "],\n";
  os << "  \"unifications\": [";
  for (size_t u = 0; u < r.unifications.size(); ++u) {
    const UnifySeries &series = r.unifications[u];
    auto column = [&](int64_t index) {
      std::vector<double> values;
      for (const std::vector<double> &record : series.records)
        values.push_back(record[index]);
      return numbers(values);
    };
    os << (u ? "," : "") << "\n    {\"name\": " << quoted(series.name)
       << ", \"site\": " << quoted(series.site)
       << ",\n     \"step\": " << integers(series.steps)
       << ",\n     \"scale\": " << column(telemetry::UnifiedScale)
       << ",\n     \"parts\": [";
    for (int64_t p = 0; p < series.parts; ++p) {
      int64_t first = telemetry::FirstPart + p * telemetry::NumUnifyPartFields;
      os << (p ? "," : "") << "\n      {\"scale\": "
         << column(first + telemetry::PartScale)
         << ", \"factor\": " << column(first + telemetry::PartFactor) << "}";
    }
    os << "]}";
  }
  os << (r.unifications.empty() ? "" : "\n  ") << "],\n";
  os << "  \"overflow_total\": " << number(totalOverflow) << ",\n";
  const EvalPoint *last =
      r.evaluations.empty() ? nullptr : &r.evaluations.back();
  os << "  \"final\": {\"loss\": "
     << number(r.losses.empty() ? NAN : r.losses.back())
     << ", \"eval_loss\": " << number(last ? last->loss : NAN)
     << ", \"eval_metric\": " << (r.metric.empty() ? "null" : quoted(r.metric))
     << ", \"eval_value\": "
     << number(last && !last->metric.empty() ? last->value : NAN)
     << ", \"eval_accuracy\": "
     << number(last && last->metric == "accuracy" ? last->value : NAN)
     << "}\n}\n";
  return writeFileAtomically(path, os.str());
}

std::string mlir::gs::runtime::writeReportCsv(const std::string &path,
                                              const TrainingReport &r) {
  std::ostringstream os;
  os << "step,loss,loss_scale,eval_loss,eval_"
     << (r.metric.empty() ? "metric" : r.metric);
  for (const OutputSeries &output : r.outputs)
    os << "," << csvField(output.name);
  for (const SiteSeries &series : r.sites)
    os << "," << series.name << ".scale," << series.name
       << ".estimated_underflow," << series.name << ".measured_underflow,"
       << series.name << ".overflow";
  os << "\n";
  // Cells by step: a column is empty at steps it was not recorded at.
  std::map<int64_t, double> lossScale;
  std::map<int64_t, const EvalPoint *> evaluation;
  for (size_t i = 0; i < r.lossScaleSteps.size(); ++i)
    lossScale[r.lossScaleSteps[i]] = r.lossScales[i];
  for (const EvalPoint &e : r.evaluations)
    evaluation[e.step] = &e;
  std::vector<std::map<int64_t, const std::array<double, 7> *>> records(
      r.sites.size());
  for (size_t s = 0; s < r.sites.size(); ++s)
    for (size_t i = 0; i < r.sites[s].steps.size(); ++i)
      records[s][r.sites[s].steps[i]] = &r.sites[s].records[i];
  auto cell = [](double value) {
    return std::isfinite(value) ? number(value) : std::string();
  };
  for (size_t i = 0; i < r.lossSteps.size(); ++i) {
    int64_t step = r.lossSteps[i];
    os << step << "," << cell(r.losses[i]) << ",";
    if (auto it = lossScale.find(step); it != lossScale.end())
      os << cell(it->second);
    os << ",";
    if (auto it = evaluation.find(step); it != evaluation.end())
      os << cell(it->second->loss) << ","
         << (it->second->metric.empty() ? "" : cell(it->second->value));
    else
      os << ",";
    for (const OutputSeries &output : r.outputs)
      os << "," << (i < output.values.size() ? cell(output.values[i]) : "");
    for (size_t s = 0; s < r.sites.size(); ++s) {
      auto it = records[s].find(step);
      if (it == records[s].end()) {
        os << ",,,,";
        continue;
      }
      const std::array<double, 7> &record = *it->second;
      os << "," << cell(record[Scale]) << "," << cell(record[Estimate]) << ","
         << cell(measuredUnderflow(record)) << "," << cell(record[kOverflow]);
    }
    os << "\n";
  }
  return writeFileAtomically(path, os.str());
}
