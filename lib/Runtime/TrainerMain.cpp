//===- TrainerMain.cpp - The main of training executables -------*- C++ -*-===//
//
// `gs-compile model.onnx -o train_model` links this with the compiled
// model: it reads the data, trains for N steps or epochs in the model's
// precision mode, evaluates accuracy, checkpoints and resumes bit-exactly,
// writes the JSON report (and CSV) and exports the trained weights into
// the ONNX model. docs/Runtime.md documents the flags and the report.
//
//===----------------------------------------------------------------------===//

#include "gs/Runtime/Checkpoint.h"
#include "gs/Runtime/DataFiles.h"
#include "gs/Runtime/Dataset.h"
#include "gs/Runtime/Model.h"
#include "gs/Runtime/ModelABI.h"
#include "gs/Runtime/OnnxExport.h"
#include "gs/Runtime/Report.h"
#include "gs/Support/Telemetry.h"

#include <array>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>
#include <optional>

#include <unistd.h>

using namespace mlir::gs::runtime;
namespace telemetry = mlir::gs::telemetry;

/// The compiled model's table, from the object gs-compile links in.
extern "C" const gs_model_info *gs_program_model(void);

namespace {
const char *program = "train";

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "%s: error: %s\n", program, message.c_str());
  std::exit(1);
}

void check(const std::string &error) {
  if (!error.empty())
    die(error);
}

//===----------------------------------------------------------------------===//
// Flags
//===----------------------------------------------------------------------===//

const char *kUsage =
    R"(usage: %s --train-data=FILE --train-labels=FILE [options]

Trains the model compiled into this program (%s, scaling %s) on the CPU.

Data (.npy, .npz with :ARRAY to pick a member, or IDX files, gzip or not):
  --train-data=FILE       training inputs, one example per row
  --train-labels=FILE     their integer class labels
  --eval-data=FILE        held-out inputs for accuracy
  --eval-labels=FILE      their labels
  --normalize=MODE        auto (default: unit for 8-bit data, else none),
                          none, unit (x/255), standard ((x-mean)/std)
  --mean=M --std=S        standard: these instead of the training set's
  --max-tensor-bytes=N    the largest array a data file may hold (default
                          2 GiB); checked before anything is allocated
Training:
  --steps=N               train until step N (counting resumed steps)
  --epochs=E              train until E epochs (default 1 when no --steps)
  --seed=S                shuffling seed (default 0)
  --no-shuffle            examples in file order
  --eval-every=N          evaluate every N steps (default: each epoch end)
Output:
  --report=FILE.json      the training report (docs/report.schema.json)
  --csv=FILE.csv          its curves, one row per step
  --telemetry-every=N     record scaling telemetry every N steps (default 1)
  --checkpoint=FILE.npz   save weights, optimizer and scale state here
  --checkpoint-every=N    also every N steps (default: at the end only)
  --resume=FILE.npz       continue from a checkpoint, bit-exactly
  --export-onnx=FILE      the ONNX model with the trained weights
  --progress=WHEN         auto (on a terminal), always, never
  --info                  print the model's entries and parameters, exit
  --help                  this text
)";

struct Flags {
  std::string trainData, trainLabels, evalData, evalLabels;
  std::string normalize = "auto";
  std::optional<double> mean, std;
  std::optional<int64_t> steps, evalEvery, checkpointEvery;
  std::optional<double> epochs;
  std::optional<uint64_t> seed;
  bool shuffle = true;
  std::string report, csv, checkpoint, resume, exportOnnx;
  int64_t telemetryEvery = 1;
  std::string progress = "auto";
  bool info = false;
};

int64_t positiveInteger(const std::string &flag, const std::string &value) {
  char *end = nullptr;
  errno = 0;
  long long n = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end || errno || n <= 0)
    die("--" + flag + ": expected a positive integer, got '" + value + "'");
  return n;
}

double realNumber(const std::string &flag, const std::string &value) {
  char *end = nullptr;
  double x = std::strtod(value.c_str(), &end);
  if (value.empty() || *end || !std::isfinite(x))
    die("--" + flag + ": expected a number, got '" + value + "'");
  return x;
}

Flags parseFlags(int argc, char **argv, const gs_model_info &model) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0)
      die("unexpected argument '" + arg + "' (see --help)");
    std::string name = arg.substr(2), value;
    bool hasValue = false;
    if (size_t eq = name.find('='); eq != std::string::npos)
      value = name.substr(eq + 1), name.resize(eq), hasValue = true;
    auto take = [&]() -> std::string {
      if (hasValue)
        return value;
      if (i + 1 >= argc)
        die("--" + name + " needs a value");
      return argv[++i];
    };
    if (name == "help") {
      std::printf(kUsage, program, model.name, model.scaling);
      std::exit(0);
    } else if (name == "info") {
      flags.info = true;
    } else if (name == "no-shuffle") {
      flags.shuffle = false;
    } else if (name == "train-data") {
      flags.trainData = take();
    } else if (name == "train-labels") {
      flags.trainLabels = take();
    } else if (name == "eval-data") {
      flags.evalData = take();
    } else if (name == "eval-labels") {
      flags.evalLabels = take();
    } else if (name == "normalize") {
      flags.normalize = take();
      if (flags.normalize != "auto" && flags.normalize != "none" &&
          flags.normalize != "unit" && flags.normalize != "standard")
        die("--normalize: expected auto, none, unit or standard, got '" +
            flags.normalize + "'");
    } else if (name == "mean") {
      flags.mean = realNumber(name, take());
    } else if (name == "std") {
      flags.std = realNumber(name, take());
      if (*flags.std <= 0)
        die("--std: expected a positive number");
    } else if (name == "max-tensor-bytes") {
      setTensorByteLimit(positiveInteger(name, take()));
    } else if (name == "steps") {
      flags.steps = positiveInteger(name, take());
    } else if (name == "epochs") {
      flags.epochs = realNumber(name, take());
      if (*flags.epochs <= 0)
        die("--epochs: expected a positive number");
    } else if (name == "seed") {
      std::string text = take();
      char *end = nullptr;
      errno = 0;
      unsigned long long seed = std::strtoull(text.c_str(), &end, 10);
      if (text.empty() || *end || errno || text[0] == '-')
        die("--seed: expected a non-negative integer, got '" + text + "'");
      flags.seed = seed;
    } else if (name == "eval-every") {
      flags.evalEvery = positiveInteger(name, take());
    } else if (name == "report") {
      flags.report = take();
    } else if (name == "csv") {
      flags.csv = take();
    } else if (name == "telemetry-every") {
      flags.telemetryEvery = positiveInteger(name, take());
    } else if (name == "checkpoint") {
      flags.checkpoint = take();
    } else if (name == "checkpoint-every") {
      flags.checkpointEvery = positiveInteger(name, take());
    } else if (name == "resume") {
      flags.resume = take();
    } else if (name == "export-onnx") {
      flags.exportOnnx = take();
    } else if (name == "progress") {
      flags.progress = take();
      if (flags.progress != "auto" && flags.progress != "always" &&
          flags.progress != "never")
        die("--progress: expected auto, always or never, got '" +
            flags.progress + "'");
    } else {
      die("unknown flag '--" + name + "' (see --help)");
    }
  }
  if (flags.info)
    return flags;
  if (flags.trainData.empty() || flags.trainLabels.empty())
    die("--train-data and --train-labels are required (see --help)");
  if (flags.evalData.empty() != flags.evalLabels.empty())
    die("--eval-data and --eval-labels go together");
  if (flags.steps && flags.epochs)
    die("--steps and --epochs exclude each other");
  if ((flags.mean || flags.std) && flags.normalize != "standard")
    die("--mean and --std apply to --normalize=standard");
  if (flags.checkpointEvery && flags.checkpoint.empty())
    die("--checkpoint-every needs --checkpoint");
  if (!flags.exportOnnx.empty() && !model.onnx)
    die("--export-onnx: this model was compiled from MLIR, not ONNX");
  return flags;
}

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

/// The train and eval entries of a classifier: (data, labels) in, the
/// loss (and for eval the batch x classes scores) out.
struct Entries {
  const gs_entry_info *train = nullptr;
  const gs_entry_info *eval = nullptr;
  int64_t batch = 0;
  int64_t sampleSize = 0;
  int64_t classes = 0;
};

Entries findEntries(const gs_model_info &model) {
  Entries entries;
  entries.train = findEntry(model, "train_step");
  entries.eval = findEntry(model, "eval_step");
  if (!entries.train)
    die("the model has no train_step");
  const gs_entry_info &train = *entries.train;
  auto isData = [](const gs_tensor_info &t) {
    return t.rank >= 1 && (t.dtype == GS_DTYPE_F32);
  };
  auto isLabels = [](const gs_tensor_info &t) {
    return t.rank == 1 && (t.dtype == GS_DTYPE_I64 || t.dtype == GS_DTYPE_I32);
  };
  if (train.num_inputs != 2 || !isData(train.inputs[0]) ||
      !isLabels(train.inputs[1]) || train.inputs[0].shape[0] <= 0 ||
      train.inputs[0].shape[0] != train.inputs[1].shape[0] ||
      train.num_results < 1 || train.results[0].rank != 0 ||
      train.results[0].dtype != GS_DTYPE_F32)
    die("this trainer takes classifiers whose train_step maps (float32 "
        "inputs, integer labels) of one batch size to a float32 loss; "
        "train_step takes " +
        std::to_string(train.num_inputs) + " inputs" +
        (train.num_inputs ? " (" + describe(train.inputs[0]) + ", ...)" : ""));
  entries.batch = train.inputs[0].shape[0];
  std::vector<int64_t> inputShape = shapeOf(train.inputs[0]);
  entries.sampleSize = std::accumulate(inputShape.begin() + 1, inputShape.end(),
                                       int64_t(1), std::multiplies<int64_t>());
  if (entries.eval) {
    const gs_entry_info &eval = *entries.eval;
    auto sameAsTrain = [&](int32_t i) {
      return eval.inputs[i].dtype == train.inputs[i].dtype &&
             shapeOf(eval.inputs[i]) == shapeOf(train.inputs[i]);
    };
    if (eval.num_inputs != 2 || !sameAsTrain(0) || !sameAsTrain(1) ||
        eval.num_results != 2 || eval.results[0].rank != 0 ||
        eval.results[0].dtype != GS_DTYPE_F32 || eval.results[1].rank != 2 ||
        eval.results[1].dtype != GS_DTYPE_F32 ||
        eval.results[1].shape[0] != entries.batch ||
        eval.results[1].shape[1] <= 0)
      die("eval_step does not take train_step's inputs and return (loss, "
          "batch x classes scores)");
    entries.classes = eval.results[1].shape[1];
  }
  return entries;
}

/// A zeroed tensor for `info`, or a clean exit when it cannot be had.
Tensor allocateFor(const gs_tensor_info &info) {
  DType type = DType::F32;
  toDType(info.dtype, type);
  Tensor tensor;
  if (std::string error = Tensor::allocate(type, shapeOf(info), tensor);
      !error.empty())
    die(std::string(info.name) + ": " + error);
  return tensor;
}

/// A batch's input buffers in the entry's types.
struct Batch {
  explicit Batch(const gs_entry_info &entry)
      : data(allocateFor(entry.inputs[0])),
        labels(allocateFor(entry.inputs[1])), wideLabels(labels.numElements()) {
  }
  void fill(const Dataset &dataset, const std::vector<int64_t> &order,
            int64_t first) {
    gatherBatch(dataset, order, first, labels.numElements(), data.as<float>(),
                wideLabels.data());
    for (size_t i = 0; i < wideLabels.size(); ++i) {
      if (labels.type() == DType::I64)
        labels.as<int64_t>()[i] = wideLabels[i];
      else
        labels.as<int32_t>()[i] = static_cast<int32_t>(wideLabels[i]);
    }
  }
  Tensor data, labels;
  std::vector<int64_t> wideLabels;
};

/// The telemetry parameters of the model, and the loss scale.
struct Telemetry {
  explicit Telemetry(const gs_model_info &model) {
    std::string prefix = telemetry::kSitePrefix;
    for (int32_t i = 0; i < model.num_params; ++i) {
      const gs_param_info &p = model.params[i];
      std::string name = p.tensor.name;
      if (name.rfind(prefix, 0) == 0 && p.tensor.dtype == GS_DTYPE_F64 &&
          tensorFor(p.tensor).numElements() == telemetry::NumRecordFields)
        sites.push_back(&p);
    }
    skipped = findParam(model, telemetry::kSkippedSteps);
    lossScale = findParam(model, telemetry::kLossScale);
  }
  std::array<double, 7> record(size_t site) const {
    std::array<double, 7> values;
    std::memcpy(values.data(), sites[site]->data, sizeof(values));
    return values;
  }
  int64_t skippedSteps() const {
    return skipped ? *static_cast<const int64_t *>(skipped->data) : 0;
  }
  double currentLossScale() const {
    if (!lossScale)
      return NAN;
    return lossScale->tensor.dtype == GS_DTYPE_F64
               ? *static_cast<const double *>(lossScale->data)
               : *static_cast<const float *>(lossScale->data);
  }
  std::vector<const gs_param_info *> sites;
  const gs_param_info *skipped = nullptr;
  const gs_param_info *lossScale = nullptr;
};

//===----------------------------------------------------------------------===//
// Evaluation
//===----------------------------------------------------------------------===//

EvalPoint evaluate(const Entries &entries, const Dataset &dataset,
                   int64_t step) {
  Batch batch(*entries.eval);
  std::vector<int64_t> order = epochOrder(dataset.count, 0, 0, false);
  std::vector<Tensor> results;
  int64_t correct = 0;
  double lossSum = 0;
  for (int64_t first = 0; first < dataset.count; first += entries.batch) {
    batch.fill(dataset, order, first);
    check(run(*entries.eval, {&batch.data, &batch.labels}, results));
    const float *scores = results[1].as<float>();
    int64_t valid = std::min(entries.batch, dataset.count - first);
    for (int64_t b = 0; b < valid; ++b) {
      const float *row = scores + b * entries.classes;
      int64_t best = 0;
      double top = row[0];
      for (int64_t c = 1; c < entries.classes; ++c)
        if (row[c] > row[best])
          best = c;
      for (int64_t c = 0; c < entries.classes; ++c)
        top = std::max<double>(top, row[c]);
      // Cross-entropy from logits or log-probabilities alike.
      double sum = 0;
      for (int64_t c = 0; c < entries.classes; ++c)
        sum += std::exp(row[c] - top);
      int64_t label = batch.wideLabels[b];
      lossSum += top + std::log(sum) - row[label];
      correct += best == label;
    }
  }
  return {step, double(correct) / dataset.count, lossSum / dataset.count,
          dataset.count};
}

//===----------------------------------------------------------------------===//
// Progress
//===----------------------------------------------------------------------===//

class Progress {
public:
  explicit Progress(bool enabled) : enabled(enabled) {}
  void update(int64_t step, int64_t total, double loss, double stepsPerSecond,
              int64_t scaleEvents, int64_t skipped, bool force) {
    if (!enabled)
      return;
    auto now = std::chrono::steady_clock::now();
    if (!force && now - last < std::chrono::milliseconds(100))
      return;
    last = now;
    std::fprintf(stderr,
                 "\rstep %lld/%lld  loss %.4f  %.1f steps/s  scale events "
                 "%lld  skipped %lld   ",
                 static_cast<long long>(step), static_cast<long long>(total),
                 loss, stepsPerSecond, static_cast<long long>(scaleEvents),
                 static_cast<long long>(skipped));
    std::fflush(stderr);
    shown = true;
  }
  /// Ends the progress line before other output.
  void clear() {
    if (shown)
      std::fprintf(stderr, "\n");
    shown = false;
  }

private:
  bool enabled;
  bool shown = false;
  std::chrono::steady_clock::time_point last;
};

std::string fileName(const std::string &spec) {
  return spec.substr(spec.find_last_of('/') + 1);
}

//===----------------------------------------------------------------------===//
// The run's parts
//===----------------------------------------------------------------------===//

/// --info: the model's entries, their inputs and results, and its
/// parameters.
void printModelInfo(const gs_model_info &model) {
  std::printf("model %s, scaling %s\n", model.name, model.scaling);
  for (int32_t e = 0; e < model.num_entries; ++e) {
    const gs_entry_info &entry = model.entries[e];
    std::printf("entry %s\n", entry.name);
    for (int32_t i = 0; i < entry.num_inputs; ++i)
      std::printf("  input  %s\n", describe(entry.inputs[i]).c_str());
    for (int32_t i = 0; i < entry.num_results; ++i)
      std::printf("  result %s\n", describe(entry.results[i]).c_str());
  }
  for (int32_t i = 0; i < model.num_params; ++i)
    std::printf("param %s%s\n", describe(model.params[i].tensor).c_str(),
                model.params[i].kind == GS_PARAM_TRAINABLE ? " trainable"
                : model.params[i].kind == GS_PARAM_BUFFER  ? " buffer"
                                                           : " state");
}

/// Dies before training when an output file cannot be written.
void checkOutputsWritable(const Flags &flags) {
  for (auto [flag, path] :
       {std::pair<const char *, std::string>{"report", flags.report},
        {"csv", flags.csv},
        {"checkpoint", flags.checkpoint},
        {"export-onnx", flags.exportOnnx}})
    if (!path.empty())
      if (std::string error = checkWritable(path); !error.empty())
        die("--" + std::string(flag) + ": " + error);
}

/// The training and held-out examples, normalized alike.
struct Data {
  Dataset train, held;
  Normalization normalization;
};

/// Reads --train-data/--train-labels (and --eval-data/--eval-labels) and
/// normalizes them as --normalize says, the statistics from the training
/// examples unless --mean/--std give them.
Data loadData(const Flags &flags, const Entries &entries) {
  Data data;
  Tensor trainInputs, trainLabels;
  check(readArray(flags.trainData, trainInputs));
  check(readArray(flags.trainLabels, trainLabels));
  Normalization &normalization = data.normalization;
  parseNormalization(flags.normalize, trainInputs.type(), normalization);
  if (normalization.kind == Normalization::Standard) {
    meanAndStd(trainInputs, normalization.mean, normalization.std);
    normalization.mean = flags.mean.value_or(normalization.mean);
    normalization.std = flags.std.value_or(normalization.std);
  }
  check(makeDataset(trainInputs, flags.trainData, trainLabels,
                    flags.trainLabels, entries.sampleSize, entries.classes,
                    normalization, data.train));
  // The raw arrays are not kept.
  trainInputs = Tensor(), trainLabels = Tensor();
  if (!flags.evalData.empty()) {
    Tensor evalInputs, evalLabels;
    check(readArray(flags.evalData, evalInputs));
    check(readArray(flags.evalLabels, evalLabels));
    check(makeDataset(evalInputs, flags.evalData, evalLabels, flags.evalLabels,
                      entries.sampleSize, entries.classes, normalization,
                      data.held));
  }
  return data;
}

/// Counts scale events (a site's scale or the loss scale changed between
/// steps) and records the telemetry of the steps the report keeps.
struct ScaleEvents {
  explicit ScaleEvents(const Telemetry &scaling)
      : scaling(scaling), lastScales(scaling.sites.size(), NAN),
        lastLossScale(scaling.currentLossScale()) {}

  /// After `step`; `recorded`: the report keeps this step's records.
  void observe(int64_t step, bool recorded, TrainingReport &report) {
    for (size_t s = 0; s < scaling.sites.size(); ++s) {
      std::array<double, 7> record = scaling.record(s);
      double scale = record[telemetry::Scale];
      if (!std::isnan(lastScales[s]) && scale != lastScales[s])
        ++count;
      lastScales[s] = scale;
      if (recorded) {
        report.sites[s].steps.push_back(step);
        report.sites[s].records.push_back(record);
      }
    }
    double lossScale = scaling.currentLossScale();
    if (std::isnan(lossScale))
      return;
    if (lossScale != lastLossScale)
      ++count;
    lastLossScale = lossScale;
    if (recorded) {
      report.lossScaleSteps.push_back(step);
      report.lossScales.push_back(lossScale);
    }
  }

  const Telemetry &scaling;
  std::vector<double> lastScales;
  double lastLossScale;
  int64_t count = 0;
};

/// --export-onnx: the embedded ONNX model with the trained weights as its
/// initializers.
void exportTrainedOnnx(const gs_model_info &model, const std::string &path) {
  std::vector<std::pair<std::string, Tensor>> weights;
  size_t trained = 0;
  for (int32_t i = 0; i < model.num_params; ++i) {
    if (model.params[i].kind == GS_PARAM_STATE)
      continue;
    ++trained;
    if (model.params[i].onnx_name)
      weights.emplace_back(model.params[i].onnx_name,
                           readParam(model.params[i]));
  }
  std::string exported;
  size_t replaced = 0;
  check(replaceInitializers(
      std::string_view(reinterpret_cast<const char *>(model.onnx),
                       static_cast<size_t>(model.onnx_size)),
      weights, exported, replaced));
  if (replaced != trained)
    die("--export-onnx: only " + std::to_string(replaced) + " of the " +
        std::to_string(trained) +
        " trained weights are initializers of the embedded ONNX model");
  check(writeFileAtomically(path, exported));
  std::fprintf(stderr, "exported %zu trained weights into %s\n", replaced,
               path.c_str());
}

/// The run's summary on stdout: steps and speed, the final loss and
/// accuracy, skips and scale events, and each scaling site's last record.
void printSummary(const gs_model_info &model, const TrainingReport &report,
                  int64_t ran, int64_t heldCount, int64_t scaleEvents) {
  std::printf("trained %s with scaling %s: %lld steps in %.2f s (%.1f "
              "steps/s)\n",
              model.name, model.scaling, static_cast<long long>(ran),
              report.wallSeconds,
              report.wallSeconds > 0 ? ran / report.wallSeconds : 0.0);
  if (!report.losses.empty())
    std::printf("final loss %.6f\n", report.losses.back());
  if (!report.evaluations.empty())
    std::printf("eval accuracy %.4f on %lld examples\n",
                report.evaluations.back().accuracy,
                static_cast<long long>(heldCount));
  std::printf("skipped steps %lld, scale events %lld\n",
              static_cast<long long>(report.skippedSteps),
              static_cast<long long>(scaleEvents));
  for (size_t s = 0; s < report.sites.size(); ++s) {
    const SiteSeries &series = report.sites[s];
    if (series.records.empty())
      continue;
    const std::array<double, 7> &r = series.records.back();
    double measured = measuredUnderflow(r);
    std::printf("  %-18s scale 2^%-4g underflow measured %-10.3g estimated "
                "%-10.3g %s\n",
                series.name.c_str(), std::log2(r[telemetry::Scale]),
                std::isnan(measured) ? 0.0 : measured, r[telemetry::Estimate],
                series.site.c_str());
  }
}
} // namespace

//===----------------------------------------------------------------------===//
// main
//===----------------------------------------------------------------------===//

int main(int argc, char **argv) {
  program = argv[0];
  // A write past RLIMIT_FSIZE is an error (EFBIG) to report, not a signal
  // that kills the process.
  std::signal(SIGXFSZ, SIG_IGN);
  keepFreedBuffersInHeap();
  const gs_model_info &model = *gs_program_model();
  check(validate(model));
  Flags flags = parseFlags(argc, argv, model);
  if (flags.info) {
    printModelInfo(model);
    return 0;
  }
  Entries entries = findEntries(model);
  if (!flags.evalData.empty() && !entries.eval)
    die("--eval-data: the model has no eval_step (its loss is not a "
        "softmax cross-entropy or negative log-likelihood)");
  checkOutputsWritable(flags);
  Data loaded = loadData(flags, entries);
  Dataset &train = loaded.train, &held = loaded.held;
  const Normalization &normalization = loaded.normalization;
  int64_t stepsPerEpoch = train.count / entries.batch;
  if (stepsPerEpoch == 0)
    die("'" + flags.trainData + "' has " + std::to_string(train.count) +
        " examples, fewer than one batch of " + std::to_string(entries.batch));

  // Where the run starts and ends.
  DataIdentity data;
  data.seed = flags.seed.value_or(0);
  data.shuffle = flags.shuffle;
  data.examples = train.count;
  data.batch = entries.batch;
  data.normalization = normalization;
  int64_t start = 0;
  TrainingReport report;
  if (!flags.resume.empty()) {
    std::vector<std::string> warnings;
    check(loadCheckpoint(flags.resume, model, data, flags.seed.has_value(),
                         report.losses, start, warnings));
    for (const std::string &warning : warnings)
      std::fprintf(stderr, "%s: warning: %s\n", program, warning.c_str());
    for (int64_t s = 1; s <= start; ++s)
      report.lossSteps.push_back(s);
  }
  uint64_t seed = data.seed;
  bool shuffle = data.shuffle;
  double epochs = flags.epochs.value_or(1.0);
  if (!flags.steps && epochs * stepsPerEpoch > 1e15)
    die("--epochs: " + std::to_string(epochs) + " epochs is too many steps");
  int64_t total = flags.steps.value_or(
      static_cast<int64_t>(std::llround(epochs * stepsPerEpoch)));
  if (total < start)
    die("--resume: the checkpoint is at step " + std::to_string(start) +
        ", past the last step " + std::to_string(total));

  report.modelName = model.name;
  report.scaling = model.scaling;
  report.batchSize = entries.batch;
  for (int32_t i = 0; i < model.num_params; ++i)
    if (model.params[i].kind == GS_PARAM_TRAINABLE)
      report.trainableElements +=
          tensorFor(model.params[i].tensor).numElements();
  report.trainData = flags.trainData;
  report.trainExamples = train.count;
  report.evalData = flags.evalData;
  report.evalExamples = held.count;
  report.normalization = normalization.kind == Normalization::Unit ? "unit"
                         : normalization.kind == Normalization::Standard
                             ? "standard"
                             : "none";
  report.seed = seed;
  report.shuffle = shuffle;
  report.startStep = start;
  report.stepsPerEpoch = stepsPerEpoch;
  Telemetry scaling(model);
  for (const gs_param_info *site : scaling.sites)
    report.sites.push_back(
        {site->tensor.name, site->site ? site->site : "", {}, {}});

  bool progressOn = flags.progress == "always" ||
                    (flags.progress == "auto" && ::isatty(STDERR_FILENO));
  Progress progress(progressOn);
  std::fprintf(stderr,
               "%s: training %s (scaling %s, batch %lld) on %lld examples "
               "from %s, steps %lld to %lld (%lld per epoch)\n",
               fileName(program).c_str(), model.name, model.scaling,
               static_cast<long long>(entries.batch),
               static_cast<long long>(train.count),
               fileName(flags.trainData).c_str(),
               static_cast<long long>(start + 1), static_cast<long long>(total),
               static_cast<long long>(stepsPerEpoch));

  Batch batch(*entries.train);
  std::vector<int64_t> order;
  int64_t orderEpoch = -1;
  ScaleEvents events(scaling);
  std::vector<Tensor> results;
  auto began = std::chrono::steady_clock::now();
  auto elapsed = [&]() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         began)
        .count();
  };
  auto evaluateNow = [&](int64_t step) {
    EvalPoint point = evaluate(entries, held, step);
    report.evaluations.push_back(point);
    progress.clear();
    std::fprintf(stderr, "step %lld: eval accuracy %.4f, eval loss %.4f\n",
                 static_cast<long long>(step), point.accuracy, point.loss);
  };

  for (int64_t step = start + 1; step <= total; ++step) {
    int64_t epoch = (step - 1) / stepsPerEpoch;
    if (epoch != orderEpoch) {
      order = epochOrder(train.count, seed, epoch, shuffle);
      orderEpoch = epoch;
    }
    batch.fill(train, order, ((step - 1) % stepsPerEpoch) * entries.batch);
    check(run(*entries.train, {&batch.data, &batch.labels}, results));
    double loss = *results[0].as<float>();
    report.lossSteps.push_back(step);
    report.losses.push_back(loss);

    events.observe(step, step % flags.telemetryEvery == 0 || step == total,
                   report);
    double seconds = elapsed();
    progress.update(step, total, loss, (step - start) / seconds, events.count,
                    scaling.skippedSteps(), step == total);

    bool epochEnd = step % stepsPerEpoch == 0;
    if (entries.eval && held.count &&
        (flags.evalEvery ? step % *flags.evalEvery == 0 : epochEnd))
      evaluateNow(step);
    if (!flags.checkpoint.empty() && flags.checkpointEvery &&
        step % *flags.checkpointEvery == 0 && step != total)
      check(saveCheckpoint(flags.checkpoint, model, step, data, report.losses));
  }
  report.wallSeconds = elapsed();
  report.steps = total;
  report.skippedSteps = scaling.skippedSteps();
  progress.clear();
  if (entries.eval && held.count &&
      (report.evaluations.empty() || report.evaluations.back().step != total))
    evaluateNow(total);

  if (!flags.checkpoint.empty())
    check(saveCheckpoint(flags.checkpoint, model, total, data, report.losses));
  if (!flags.report.empty())
    check(writeReportJson(flags.report, report));
  if (!flags.csv.empty())
    check(writeReportCsv(flags.csv, report));
  if (!flags.exportOnnx.empty())
    exportTrainedOnnx(model, flags.exportOnnx);
  printSummary(model, report, total - start, held.count, events.count);
  return 0;
}
