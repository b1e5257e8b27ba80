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
#include "gs/Runtime/Collectives.h"
#include "gs/Runtime/DataFiles.h"
#include "gs/Runtime/Dataset.h"
#include "gs/Runtime/DeviceModel.h"
#include "gs/Runtime/Model.h"
#include "gs/Runtime/ModelABI.h"
#include "gs/Runtime/OnnxExport.h"
#include "gs/Runtime/Report.h"
#include "gs/Runtime/RunQueue.h"
#include "gs/Support/Telemetry.h"

#include <algorithm>
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

/// How many steps the host queues on a GPU before it waits for the oldest:
/// it fills the next batches while the device runs the steps before.
constexpr int kStepsAhead = 3;

/// The ranks of a data-parallel run (Collectives.h); null for a process
/// alone.
Communicator *replicas = nullptr;

/// This process's rank, 0 when alone: rank 0 writes every output.
int rankIndex() { return replicas ? replicas->rank() : 0; }
int rankCount() { return replicas ? replicas->size() : 1; }
bool leads() { return rankIndex() == 0; }

[[noreturn]] void die(const std::string &message) {
  if (rankCount() > 1) {
    // The other ranks would wait for this one's collectives: end them all.
    std::fprintf(stderr, "%s: rank %d: error: %s\n", program, rankIndex(),
                 message.c_str());
    std::fflush(stderr);
    replicas->abort(1);
  }
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
    R"(usage: %s --data NAME=FILE ... [options]
       %s --train-data=FILE --train-labels=FILE [options]

Trains the model compiled into this program (%s, scaling %s) on %s.

Data (.npy, .npz with :ARRAY to pick a member, or IDX files, gzip or not),
one example per row along the first axis, batched together:
  --data NAME=FILE        the train step's input NAME (one flag per input)
  --eval-input NAME=FILE  the eval step's input NAME (one per input), held
                          out for the metric
  --train-data=FILE       a classifier's inputs (the first train step input)
  --train-labels=FILE     and their integer labels (the second)
  --eval-data=FILE        held-out inputs and labels for a classifier
  --eval-labels=FILE
  --normalize=MODE        the first input (the data), when float: auto
                          (default: unit for 8-bit data, else none), none,
                          unit (x/255), standard ((x-mean)/std of its
                          training data); the others are read as they are
  --mean=M --std=S        standard: these instead
  --max-tensor-bytes=N    the largest array a data file may hold (default
                          2 GiB); checked before anything is allocated
Training:
  --steps=N               train until step N (counting resumed steps)
  --epochs=E              train until E epochs (default 1 when no --steps)
  --seed=S                shuffling seed (default 0)
  --no-shuffle            examples in file order
  --eval-every=N          evaluate every N steps (default: each epoch end)
  --metric=M[:OUT:TARGET] what evaluation reports besides the loss: accuracy
                          or miou (mean IoU of per-pixel classes) of the
                          class scores, rmse, or none. Default: accuracy
                          when the loss is a cross-entropy or NLL, else
                          none. OUT names an eval step result, TARGET an
                          eval step input or result (rmse needs both;
                          accuracy and miou default to the loss's scores
                          and labels)
Output (of rank 0 in a data-parallel run, launched with mpirun):
  --report=FILE.json      the training report (docs/report.schema.json);
                          with {rank} in FILE, every rank writes its own
  --csv=FILE.csv          its curves, one row per step (also {rank})
  --telemetry-every=N     record scaling telemetry every N steps (default 1)
  --checkpoint=FILE.npz   save weights, optimizer and scale state here
  --checkpoint-every=N    also every N steps (default: at the end only)
  --resume=FILE.npz       continue from a checkpoint, bit-exactly
  --export-onnx=FILE      the ONNX model with the trained weights
  --progress=WHEN         auto (on a terminal), always, never
  --time-collectives      data-parallel: the ranks meet before each
                          collective, so that the summary times the
                          collectives apart from waiting for ranks
  --info                  print the model's entries and parameters, exit
  --help                  this text
)";

using NamedFiles = std::vector<std::pair<std::string, std::string>>;

struct Flags {
  std::string trainData, trainLabels, evalData, evalLabels;
  /// --data and --eval-input: input name, file.
  NamedFiles data, evalInputs;
  std::string metric;
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
  bool timeCollectives = false;
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
    auto named = [&](NamedFiles &files) {
      std::string text = take();
      size_t eq = text.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
        die("--" + name + ": expected NAME=FILE, got '" + text + "'");
      std::string input = text.substr(0, eq);
      for (const auto &[given, file] : files)
        if (given == input)
          die("--" + name + ": input '" + input + "' is given twice");
      files.emplace_back(input, text.substr(eq + 1));
    };
    if (name == "help") {
      std::printf(kUsage, program, program, model.name, model.scaling,
                  runsOnDevice(model)
                      ? "an NVIDIA GPU (GPU 0, or the one GS_CUDA_DEVICE "
                        "names; each step one CUDA graph launch unless "
                        "GS_CUDA_GRAPHS=0)"
                      : "the CPU");
      std::exit(0);
    } else if (name == "info") {
      flags.info = true;
    } else if (name == "time-collectives") {
      flags.timeCollectives = true;
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
    } else if (name == "data") {
      named(flags.data);
    } else if (name == "eval-input") {
      named(flags.evalInputs);
    } else if (name == "metric") {
      flags.metric = take();
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
  bool classifierFiles = !flags.trainData.empty() || !flags.trainLabels.empty();
  if (classifierFiles && !flags.data.empty())
    die("--data and --train-data/--train-labels exclude each other");
  if (!flags.data.empty() &&
      (!flags.evalData.empty() || !flags.evalLabels.empty()))
    die("with --data, give the held-out inputs with --eval-input");
  if (!flags.evalInputs.empty() && classifierFiles)
    die("with --train-data, give the held-out data with --eval-data and "
        "--eval-labels");
  if (flags.data.empty() &&
      (flags.trainData.empty() || flags.trainLabels.empty()))
    die("give the training data: --data NAME=FILE for each input of the "
        "train step, or --train-data and --train-labels (see --help)");
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

/// What evaluation reports besides the loss.
struct Metric {
  enum Kind { None, Accuracy, MeanIoU, RMSE } kind = None;
  /// The eval step result it reads, and the eval input (or result) it
  /// compares it with.
  int32_t output = -1;
  int32_t targetInput = -1, targetResult = -1;
  const char *name() const {
    return kind == Accuracy  ? "accuracy"
           : kind == MeanIoU ? "mean_iou"
           : kind == RMSE    ? "rmse"
                             : "none";
  }
};

/// The train and eval entries, with the loss's position among their
/// results.
struct Entries {
  const gs_model_info *model = nullptr;
  const gs_entry_info *train = nullptr;
  const gs_entry_info *eval = nullptr;
  int32_t trainLoss = -1, evalLoss = -1;
  int64_t batch = 0;
  Metric metric;
};

int32_t inputIndex(const gs_entry_info &entry, const std::string &name) {
  for (int32_t i = 0; i < entry.num_inputs; ++i)
    if (name == entry.inputs[i].name)
      return i;
  return -1;
}

/// The last result named `name`: the eval step appends its class scores
/// and labels after the forward outputs, which may hold those names too.
int32_t resultIndex(const gs_entry_info &entry, const std::string &name) {
  for (int32_t i = entry.num_results - 1; i >= 0; --i)
    if (name == entry.results[i].name)
      return i;
  return -1;
}

/// "float32[32x1]": an entry tensor's type without its name.
std::string typeText(const gs_tensor_info &info) {
  DType type = DType::F32;
  toDType(info.dtype, type);
  return describeTensor(type, shapeOf(info));
}

std::string inputNames(const gs_entry_info &entry) {
  std::string names;
  for (int32_t i = 0; i < entry.num_inputs; ++i)
    names += (i ? ", " : "") + std::string(entry.inputs[i].name);
  return names;
}

/// Resolves --metric against the eval step.
Metric findMetric(const std::string &spec, const gs_entry_info *eval) {
  Metric metric;
  std::string kind = spec.substr(0, spec.find(':'));
  std::string output, target;
  if (size_t colon = spec.find(':'); colon != std::string::npos) {
    std::string rest = spec.substr(colon + 1);
    size_t second = rest.find(':');
    if (second == std::string::npos || second == 0 || second + 1 == rest.size())
      die("--metric: expected KIND or KIND:OUTPUT:TARGET, got '" + spec + "'");
    output = rest.substr(0, second), target = rest.substr(second + 1);
  }
  bool hasScores = eval && resultIndex(*eval, "scores") >= 0 &&
                   resultIndex(*eval, "targets") >= 0;
  if (kind.empty())
    kind = hasScores ? "accuracy" : "none";
  if (kind == "none") {
    if (!output.empty())
      die("--metric=none takes no output and target");
    return metric;
  }
  if (kind == "accuracy")
    metric.kind = Metric::Accuracy;
  else if (kind == "miou")
    metric.kind = Metric::MeanIoU;
  else if (kind == "rmse")
    metric.kind = Metric::RMSE;
  else
    die("--metric: expected accuracy, miou, rmse or none, got '" + kind + "'");
  if (!eval || eval->num_inputs == 0 || eval->inputs[0].rank == 0)
    die("--metric: the model has no eval_step on batched inputs");
  if (output.empty()) {
    if (metric.kind == Metric::RMSE)
      die("--metric=rmse needs the output and the target it compares: "
          "--metric=rmse:OUTPUT:TARGET");
    if (!hasScores)
      die("--metric=" + kind +
          " needs class scores: the model's loss is no cross-entropy or "
          "NLL, so name them: --metric=" +
          kind + ":OUTPUT:TARGET");
    output = "scores", target = "targets";
  }
  metric.output = resultIndex(*eval, output);
  if (metric.output < 0)
    die("--metric: the eval step has no result '" + output + "'");
  metric.targetInput = inputIndex(*eval, target);
  if (metric.targetInput < 0)
    metric.targetResult = resultIndex(*eval, target);
  if (metric.targetInput < 0 && metric.targetResult < 0)
    die("--metric: the eval step has no input or result '" + target +
        "' (inputs: " + inputNames(*eval) + ")");
  const gs_tensor_info &out = eval->results[metric.output];
  const gs_tensor_info &tgt = metric.targetInput >= 0
                                  ? eval->inputs[metric.targetInput]
                                  : eval->results[metric.targetResult];
  std::vector<int64_t> outShape = shapeOf(out), targetShape = shapeOf(tgt);
  int64_t batch = eval->inputs[0].shape[0];
  if (out.dtype != GS_DTYPE_F32 || outShape.empty() || outShape[0] != batch ||
      targetShape.empty() || targetShape[0] != batch)
    die("--metric: '" + output + "' is " + typeText(out) + " and '" + target +
        "' " + typeText(tgt) +
        "; the metric compares float32 values per "
        "example, " +
        std::to_string(batch) + " of them along the first axis");
  if (metric.kind == Metric::RMSE) {
    if (targetShape != outShape || tgt.dtype != GS_DTYPE_F32)
      die("--metric=rmse: the target '" + target + "' is " + typeText(tgt) +
          ", but the output '" + output + "' is " + typeText(out));
    return metric;
  }
  // Class scores [N, C, d...] against labels [N, d...].
  std::vector<int64_t> expected = outShape;
  if (expected.size() >= 2)
    expected.erase(expected.begin() + 1);
  if (outShape.size() < 2 || targetShape != expected ||
      (tgt.dtype != GS_DTYPE_I64 && tgt.dtype != GS_DTYPE_I32))
    die("--metric=" + kind + ": the scores '" + output + "' are " +
        typeText(out) + " and the labels '" + target + "' " + typeText(tgt) +
        "; expected scores [N, C, ...] and integer labels [N, ...]");
  return metric;
}

Entries findEntries(const gs_model_info &model, const std::string &metric) {
  Entries entries;
  entries.model = &model;
  entries.train = findEntry(model, "train_step");
  entries.eval = findEntry(model, "eval_step");
  if (!entries.train)
    die("the model has no train_step");
  const gs_entry_info &train = *entries.train;
  entries.trainLoss = train.loss_result;
  if (entries.trainLoss < 0 ||
      train.results[entries.trainLoss].dtype != GS_DTYPE_F32)
    die("the model's train_step returns no float32 loss");
  if (train.num_inputs == 0 || train.inputs[0].rank == 0 ||
      train.inputs[0].shape[0] <= 0)
    die("the train step takes no batched inputs");
  entries.batch = train.inputs[0].shape[0];
  for (int32_t i = 0; i < train.num_inputs; ++i)
    if (train.inputs[i].rank == 0 || train.inputs[i].shape[0] != entries.batch)
      die("the train step's inputs are not batched alike along their first "
          "axis: '" +
          std::string(train.inputs[i].name) + "' is " +
          describe(train.inputs[i]) + ", '" + train.inputs[0].name + "' " +
          describe(train.inputs[0]));
  if (entries.eval) {
    const gs_entry_info &eval = *entries.eval;
    bool sameInputs = eval.num_inputs == train.num_inputs;
    for (int32_t i = 0; sameInputs && i < eval.num_inputs; ++i)
      sameInputs = eval.inputs[i].dtype == train.inputs[i].dtype &&
                   shapeOf(eval.inputs[i]) == shapeOf(train.inputs[i]);
    if (!sameInputs || eval.loss_result < 0)
      die("eval_step does not take train_step's inputs and return its loss");
    entries.evalLoss = eval.loss_result;
  }
  entries.metric = findMetric(metric, entries.eval);
  return entries;
}

/// Rows of every input of an entry, one per example.
struct Dataset {
  std::vector<Tensor> columns;
  /// The files they came from, for messages and the report.
  std::vector<std::string> files;
  int64_t count = 0;
};

/// Gathers one batch of an entry's inputs, the rows of `order` from
/// `first` on, from a data set.
void fillBatch(const Dataset &dataset, const std::vector<int64_t> &order,
               int64_t first, std::vector<Tensor> &inputs) {
  for (size_t i = 0; i < inputs.size(); ++i)
    gatherRows(dataset.columns[i], order, first, inputs[i]);
}

/// The telemetry parameters of the model, and the loss scale, which the
/// trainer reads after every step: from a RunQueue run's `params` (their
/// values after that step), which hold them in the order of `watched`.
struct Telemetry {
  using Values = std::vector<Tensor>;

  explicit Telemetry(const gs_model_info &model) {
    std::string prefix = telemetry::kSitePrefix;
    for (int32_t i = 0; i < model.num_params; ++i) {
      const gs_param_info &p = model.params[i];
      std::string name = p.tensor.name;
      if (p.tensor.dtype != GS_DTYPE_F64)
        continue;
      int64_t elements = elementCount(p.tensor);
      if (name.rfind(prefix, 0) == 0 && elements == telemetry::NumRecordFields)
        sites.push_back(&p);
      if (name.rfind(telemetry::kUnifyPrefix, 0) == 0 &&
          elements > telemetry::FirstPart &&
          (elements - telemetry::FirstPart) % telemetry::NumUnifyPartFields ==
              0)
        unifications.push_back(&p);
    }
    skipped = findParam(model, telemetry::kSkippedSteps);
    lossScale = findParam(model, telemetry::kLossScale);
    watched = sites;
    watched.insert(watched.end(), unifications.begin(), unifications.end());
    for (const gs_param_info *p : {skipped, lossScale})
      if (p)
        watched.push_back(p);
  }
  /// The watched parameters' current values.
  Values current() const {
    Values values;
    for (const gs_param_info *p : watched)
      values.push_back(readParam(*p));
    return values;
  }
  std::array<double, 7> record(const Values &values, size_t site) const {
    std::array<double, 7> record;
    std::memcpy(record.data(), values[site].data(), sizeof(record));
    return record;
  }
  std::vector<double> unifyRecord(const Values &values, size_t index) const {
    const Tensor &value = values[sites.size() + index];
    const auto *data = value.as<double>();
    return std::vector<double>(data, data + value.numElements());
  }
  static int64_t unifyParts(const gs_param_info &p) {
    return (elementCount(p.tensor) - telemetry::FirstPart) /
           telemetry::NumUnifyPartFields;
  }
  int64_t skippedSteps(const Values &values) const {
    return skipped ? *values[sites.size() + unifications.size()].as<int64_t>()
                   : 0;
  }
  double currentLossScale(const Values &values) const {
    if (!lossScale)
      return NAN;
    const Tensor &value = values.back();
    return value.type() == DType::F64 ? *value.as<double>()
                                      : *value.as<float>();
  }
  std::vector<const gs_param_info *> sites;
  /// The branch unifications' records (gs.scaling.unify<i>).
  std::vector<const gs_param_info *> unifications;
  const gs_param_info *skipped = nullptr;
  const gs_param_info *lossScale = nullptr;
  /// The sites, the unifications, then the skipped steps and the loss
  /// scale where the model has them.
  std::vector<const gs_param_info *> watched;
};

//===----------------------------------------------------------------------===//
// Evaluation
//===----------------------------------------------------------------------===//

/// Accumulates the metric over evaluation batches.
struct MetricSum {
  explicit MetricSum(const Metric &metric) : metric(metric) {}

  /// Adds the first `valid` examples of a batch.
  void add(const Tensor &output, const Tensor &target, int64_t valid) {
    const float *out = output.as<float>();
    if (metric.kind == Metric::RMSE) {
      int64_t perExample = output.numElements() / output.shape()[0];
      const float *tgt = target.as<float>();
      for (int64_t i = 0, n = valid * perExample; i < n; ++i)
        squares += (double(out[i]) - tgt[i]) * (double(out[i]) - tgt[i]);
      elements += valid * perExample;
      return;
    }
    // Scores [N, C, P...] against labels [N, P...].
    int64_t classes = output.shape()[1];
    int64_t positions = output.numElements() / (output.shape()[0] * classes);
    if (intersections.empty())
      intersections.assign(classes, 0), predicted.assign(classes, 0),
          labelled.assign(classes, 0);
    for (int64_t b = 0; b < valid; ++b)
      for (int64_t p = 0; p < positions; ++p) {
        int64_t at = b * positions + p;
        int64_t label = target.type() == DType::I64 ? target.as<int64_t>()[at]
                                                    : target.as<int32_t>()[at];
        // Labels outside the classes (an ignore_index) are not scored.
        if (label < 0 || label >= classes)
          continue;
        const float *scores = out + b * classes * positions + p;
        int64_t best = 0;
        for (int64_t c = 1; c < classes; ++c)
          if (scores[c * positions] > scores[best * positions])
            best = c;
        ++elements;
        correct += best == label;
        ++predicted[best], ++labelled[label];
        intersections[label] += best == label;
      }
  }

  double value() const {
    if (elements == 0)
      return NAN;
    if (metric.kind == Metric::RMSE)
      return std::sqrt(squares / elements);
    if (metric.kind == Metric::Accuracy)
      return double(correct) / elements;
    double sum = 0;
    int64_t present = 0;
    for (size_t c = 0; c < intersections.size(); ++c) {
      int64_t unite = predicted[c] + labelled[c] - intersections[c];
      if (unite == 0)
        continue;
      sum += double(intersections[c]) / unite;
      ++present;
    }
    return present ? sum / present : NAN;
  }

  const Metric &metric;
  double squares = 0;
  int64_t elements = 0, correct = 0;
  std::vector<int64_t> intersections, predicted, labelled;
};

/// Runs the eval step over `dataset` in order, through `batches` (a
/// RunQueue of the eval step): the mean loss (each batch's loss weighted
/// by its examples; the last batch is padded by repeating the first
/// example, which the metric leaves out) and the metric.
EvalPoint evaluate(const Entries &entries, const Dataset &dataset,
                   RunQueue &batches, int64_t step) {
  std::vector<int64_t> order = epochOrder(dataset.count, 0, 0, false);
  double lossSum = 0;
  const Metric &metric = entries.metric;
  MetricSum sum(metric);
  // A batch's tag is its first example.
  auto add = [&](const RunQueue::Run &batch) {
    int64_t valid = std::min(entries.batch, dataset.count - batch.tag);
    lossSum += *batch.results[entries.evalLoss].as<float>() * valid;
    if (metric.kind != Metric::None)
      sum.add(batch.results[metric.output],
              metric.targetInput >= 0 ? batch.inputs[metric.targetInput]
                                      : batch.results[metric.targetResult],
              valid);
  };
  for (int64_t first = 0; first < dataset.count; first += entries.batch) {
    RunQueue::Run *batch = nullptr;
    check(batches.next(add, batch));
    fillBatch(dataset, order, first, batch->inputs);
    check(batches.submit(first));
    check(batches.readDone(/*all=*/false, add));
  }
  check(batches.readDone(/*all=*/true, add));
  return {step, metric.kind == Metric::None ? "" : metric.name(), sum.value(),
          lossSum / dataset.count, dataset.count};
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

/// The files of a data set, comma-separated.
std::string joined(const std::vector<std::string> &files) {
  std::string text;
  for (const std::string &file : files)
    text += (text.empty() ? "" : ",") + file;
  return text;
}

std::string fileName(const std::string &spec) {
  return spec.substr(spec.find_last_of('/') + 1);
}

//===----------------------------------------------------------------------===//
// The run's parts
//===----------------------------------------------------------------------===//

/// --info: the model's entries, their inputs and results, and its
/// parameters.
void printModelInfo(const gs_model_info &model) {
  std::printf("model %s, scaling %s%s%s\n", model.name, model.scaling,
              model.distributed ? ", data-parallel over " : "",
              model.distributed ? model.distributed : "");
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
                : model.params[i].kind == GS_PARAM_COPY    ? " copy"
                                                           : " state");
}

/// A report path: every rank's when it holds {rank} (that replaced by the
/// rank), else rank 0's; empty for a rank that writes none.
std::string reportPathOfRank(const std::string &path) {
  size_t at = path.find("{rank}");
  if (at == std::string::npos)
    return leads() ? path : std::string();
  return path.substr(0, at) + std::to_string(rankIndex()) + path.substr(at + 6);
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

/// The files of each input of `entry`, from --data/--eval-input or the
/// classifier pair.
NamedFiles filesFor(const gs_entry_info &entry, const NamedFiles &named,
                    const std::string &inputs, const std::string &labels,
                    const char *flag) {
  NamedFiles files;
  if (named.empty()) {
    if (inputs.empty())
      return files;
    if (entry.num_inputs != 2)
      die(std::string("--train-data and --train-labels feed a classifier's "
                      "two inputs, but the train step takes ") +
          std::to_string(entry.num_inputs) + " (" + inputNames(entry) +
          "): give each with --data NAME=FILE");
    return {{entry.inputs[0].name, inputs}, {entry.inputs[1].name, labels}};
  }
  for (const auto &[name, file] : named)
    if (inputIndex(entry, name) < 0)
      die(std::string("--") + flag + ": the model has no input '" + name +
          "' (its inputs: " + inputNames(entry) + ")");
  for (int32_t i = 0; i < entry.num_inputs; ++i) {
    auto it = std::find_if(named.begin(), named.end(), [&](const auto &n) {
      return n.first == entry.inputs[i].name;
    });
    if (it == named.end())
      die(std::string("--") + flag + ": no data for the input '" +
          entry.inputs[i].name + "' (" + typeText(entry.inputs[i]) +
          "); give each of " + inputNames(entry));
    files.push_back(*it);
  }
  return files;
}

/// Reads one data set: an array per input, converted and normalized.
Dataset loadDataset(const gs_entry_info &entry, const NamedFiles &files,
                    const std::string &normalize, Normalization &normalization,
                    bool firstSet) {
  Dataset dataset;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string &file = files[i].second;
    const gs_tensor_info &info = entry.inputs[i];
    Tensor array;
    check(readArray(file, array));
    DType type = DType::F32;
    toDType(info.dtype, type);
    // --normalize is for the data, the first input; the others (labels,
    // targets) are read as they are.
    bool floating = (type == DType::F32 || type == DType::F64) && i == 0;
    Normalization own;
    if (floating && !firstSet) {
      // Held-out data as the training data.
      own = normalization;
    } else if (floating) {
      parseNormalization(normalize, array.type(), own);
      if (own.kind == Normalization::Standard) {
        // Given, or the training data's statistics.
        if (normalization.kind == Normalization::Standard)
          own.mean = normalization.mean, own.std = normalization.std;
        else
          meanAndStd(array, own.mean, own.std);
      }
      normalization = own;
    }
    std::vector<int64_t> exampleShape = shapeOf(info);
    exampleShape.erase(exampleShape.begin());
    Tensor rows;
    check(makeColumn(array, file, type, exampleShape, own, rows));
    int64_t count = rows.shape()[0];
    if (!dataset.columns.empty() && count != dataset.count)
      die("'" + file + "' holds " + std::to_string(count) + " examples, but '" +
          dataset.files[0] + "' holds " + std::to_string(dataset.count));
    dataset.count = count;
    dataset.columns.push_back(std::move(rows));
    dataset.files.push_back(file);
  }
  return dataset;
}

/// The classifier pair's labels (input 1) must name classes of the model:
/// the scores of its eval step have them along axis 1.
void checkLabels(const Entries &entries, const Dataset &data) {
  int32_t scores = entries.eval ? resultIndex(*entries.eval, "scores") : -1;
  if (scores < 0 || data.columns.size() != 2 ||
      entries.eval->results[scores].rank < 2)
    return;
  int64_t classes = entries.eval->results[scores].shape[1];
  const Tensor &labels = data.columns[1];
  int64_t perExample = labels.numElements() / data.count;
  for (int64_t i = 0, n = labels.numElements(); i < n; ++i) {
    int64_t label = labels.type() == DType::I64 ? labels.as<int64_t>()[i]
                                                : labels.as<int32_t>()[i];
    if (label < 0 || label >= classes)
      die("'" + data.files[1] + "': label " + std::to_string(label) +
          " of example " + std::to_string(i / perExample) +
          " is out of range: the model has " + std::to_string(classes) +
          " classes (0 to " + std::to_string(classes - 1) + ")");
  }
}

/// Reads the training data (and the held-out data), normalized as
/// --normalize says.
Data loadData(const Flags &flags, const Entries &entries) {
  Data data;
  if (flags.mean || flags.std) {
    data.normalization.kind = Normalization::Standard;
    data.normalization.mean = flags.mean.value_or(0);
    data.normalization.std = flags.std.value_or(1);
  }
  NamedFiles train = filesFor(*entries.train, flags.data, flags.trainData,
                              flags.trainLabels, "data");
  data.train = loadDataset(*entries.train, train, flags.normalize,
                           data.normalization, /*firstSet=*/true);
  NamedFiles held =
      filesFor(entries.eval ? *entries.eval : *entries.train, flags.evalInputs,
               flags.evalData, flags.evalLabels, "eval-input");
  if (!held.empty())
    data.held = loadDataset(*entries.eval, held, flags.normalize,
                            data.normalization, /*firstSet=*/false);
  if (flags.data.empty()) {
    checkLabels(entries, data.train);
    if (!held.empty())
      checkLabels(entries, data.held);
  }
  return data;
}

/// Counts scale events (a site's scale or the loss scale changed between
/// steps) and records the telemetry of the steps the report keeps.
struct ScaleEvents {
  ScaleEvents(const Telemetry &scaling, const Telemetry::Values &before)
      : scaling(scaling), lastScales(scaling.sites.size(), NAN),
        lastLossScale(scaling.currentLossScale(before)) {}

  /// `values` after `step`; `recorded`: the report keeps this step's
  /// records.
  void observe(int64_t step, bool recorded, const Telemetry::Values &values,
               TrainingReport &report) {
    for (size_t s = 0; s < scaling.sites.size(); ++s) {
      std::array<double, 7> record = scaling.record(values, s);
      double scale = record[telemetry::Scale];
      if (!std::isnan(lastScales[s]) && scale != lastScales[s])
        ++count;
      lastScales[s] = scale;
      if (recorded) {
        report.sites[s].steps.push_back(step);
        report.sites[s].records.push_back(record);
      }
    }
    if (recorded) {
      for (size_t u = 0; u < scaling.unifications.size(); ++u) {
        report.unifications[u].steps.push_back(step);
        report.unifications[u].records.push_back(
            scaling.unifyRecord(values, u));
      }
    }
    double lossScale = scaling.currentLossScale(values);
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

/// Dies unless every rank holds rank 0's parameters (weights, optimizer,
/// scaling state and telemetry), bit for bit, after `step`: the replicas of
/// a data-parallel run must not drift apart.
void checkReplicasAgree(const gs_model_info &model, int64_t step) {
  if (rankCount() == 1)
    return;
  uint64_t digest = 0xcbf29ce484222325ull; // FNV-1a
  for (int32_t i = 0; i < model.num_params; ++i) {
    Tensor value = readParam(model.params[i]);
    const auto *bytes = reinterpret_cast<const unsigned char *>(value.data());
    for (size_t b = 0; b < value.byteSize(); ++b)
      digest = (digest ^ bytes[b]) * 0x100000001b3ull;
  }
  uint64_t leader = digest;
  replicas->broadcast(&leader, sizeof(leader), 0);
  int64_t differing = leader != digest;
  replicas->allReduce(&differing, &differing, 1, DType::I64, Reduction::Sum);
  if (differing && leads())
    die(std::to_string(differing) + " of " + std::to_string(rankCount()) +
        " ranks hold other parameters than rank 0 after step " +
        std::to_string(step) + ": the replicas diverged");
  if (differing) {
    // Rank 0 prints the message and ends the job; the others wait for it.
    replicas->broadcast(&leader, sizeof(leader), 0);
    replicas->abort(1);
  }
}

/// --export-onnx: the embedded ONNX model with the trained weights as its
/// initializers.
void exportTrainedOnnx(const gs_model_info &model, const std::string &path) {
  std::vector<std::pair<std::string, Tensor>> weights;
  size_t trained = 0;
  for (int32_t i = 0; i < model.num_params; ++i) {
    if (model.params[i].kind != GS_PARAM_TRAINABLE &&
        model.params[i].kind != GS_PARAM_BUFFER)
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
  for (const OutputSeries &output : report.outputs)
    if (!output.values.empty())
      std::printf("final %s %.6f\n", output.name.c_str(), output.values.back());
  if (!report.evaluations.empty()) {
    const EvalPoint &last = report.evaluations.back();
    if (!last.metric.empty())
      std::printf("eval %s %.4f on %lld examples, eval loss %.6f\n",
                  last.metric.c_str(), last.value,
                  static_cast<long long>(heldCount), last.loss);
    else
      std::printf("eval loss %.6f on %lld examples\n", last.loss,
                  static_cast<long long>(heldCount));
  }
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

/// A data-parallel run's collectives per step on rank 0: their calls,
/// bytes and time, against the step's.
void printCollectives(const TrainingReport &report, int64_t ran) {
  const CollectiveTimes &times = collectiveTimes();
  double step = report.wallSeconds / ran;
  auto line = [&](const char *what, const CollectiveTime &time) {
    double seconds = time.seconds / ran;
    std::printf("  %-22s %5.1f calls %10.0f bytes %9.3f ms (%.1f%% of the "
                "step)",
                what, static_cast<double>(time.calls) / ran,
                static_cast<double>(time.bytes) / ran, seconds * 1e3,
                step > 0 ? 100 * seconds / step : 0.0);
    // From each start to the end of its wait, the step computing the rest.
    if (!times.onDevice)
      std::printf(", %.3f ms in flight", time.inFlightSeconds / ran * 1e3);
    std::printf("\n");
  };
  if (times.onDevice)
    std::printf("all-reduces per step on rank 0 of %d (%s), queued on the "
                "GPU (the host's time to queue them):\n",
                rankCount(), replicas->transport());
  else if (times.timedApart)
    std::printf("all-reduces per step on rank 0 of %d (%s), after a barrier "
                "(%.3f ms per step waiting there):\n",
                rankCount(), replicas->transport(),
                times.waitingSeconds / ran * 1e3);
  else
    std::printf("all-reduces per step on rank 0 of %d (%s), the time in "
                "their calls, waiting included:\n",
                rankCount(), replicas->transport());
  line("gradients and results", times.values);
  line("scaling statistics", times.statistics);
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
  std::unique_ptr<Communicator> communicator;
  if (model.distributed) {
    TransportFactory start = findTransport(model.distributed);
    if (!start)
      die(std::string("the model was compiled for the '") + model.distributed +
          "' transport, which this program lacks");
    std::string error;
    communicator = start(argc, argv, error);
    if (!communicator)
      die(std::string(model.distributed) + ": " + error);
    replicas = communicator.get();
    setCommunicator(replicas);
  }
  Flags flags = parseFlags(argc, argv, model);
  if (flags.info) {
    if (leads())
      printModelInfo(model);
    return 0;
  }
  setCollectivesTimedApart(flags.timeCollectives);
  // Rank 0 writes the outputs; the others only reports asked of each.
  flags.report = reportPathOfRank(flags.report);
  flags.csv = reportPathOfRank(flags.csv);
  if (!leads()) {
    flags.checkpoint.clear();
    flags.exportOnnx.clear();
  }
  Entries entries = findEntries(model, flags.metric);
  // A model for a GPU fails here, before any data is read, where there is
  // none.
  std::string gpu;
  if (runsOnDevice(model))
    check(openDevice(gpu));
  if ((!flags.evalData.empty() || !flags.evalInputs.empty()) && !entries.eval)
    die("--eval-data, --eval-input: the model has no eval_step");
  checkOutputsWritable(flags);
  Data loaded = loadData(flags, entries);
  Dataset &train = loaded.train, &held = loaded.held;
  const Normalization &normalization = loaded.normalization;
  // Each step takes the next global batch of the epoch's order; rank r
  // trains on its r-th slice of it.
  int64_t globalBatch = entries.batch * rankCount();
  int64_t stepsPerEpoch = train.count / globalBatch;
  if (stepsPerEpoch == 0)
    die("'" + train.files[0] + "' has " + std::to_string(train.count) +
        " examples, fewer than one batch of " + std::to_string(globalBatch) +
        (rankCount() > 1 ? " (" + std::to_string(rankCount()) + " ranks of " +
                               std::to_string(entries.batch) + ")"
                         : ""));

  // Where the run starts and ends.
  DataIdentity data;
  data.seed = flags.seed.value_or(0);
  data.shuffle = flags.shuffle;
  data.examples = train.count;
  data.batch = entries.batch;
  data.ranks = rankCount();
  data.normalization = normalization;
  int64_t start = 0;
  TrainingReport report;
  if (!flags.resume.empty()) {
    std::vector<std::string> warnings;
    check(loadCheckpoint(flags.resume, model, data, flags.seed.has_value(),
                         report.losses, start, warnings));
    for (const std::string &warning : warnings)
      if (leads())
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
  report.batchSize = globalBatch;
  report.ranks = rankCount();
  for (int32_t i = 0; i < model.num_params; ++i)
    if (model.params[i].kind == GS_PARAM_TRAINABLE)
      report.trainableElements += elementCount(model.params[i].tensor);
  report.trainData = joined(train.files);
  report.trainExamples = train.count;
  report.evalData = joined(held.files);
  report.evalExamples = held.count;
  report.metric =
      entries.metric.kind == Metric::None ? "" : entries.metric.name();
  // The train step's other scalar results (the parts of a summed loss).
  std::vector<int32_t> scalarOutputs;
  for (int32_t i = 0; i < entries.train->num_results; ++i) {
    const gs_tensor_info &result = entries.train->results[i];
    if (i != entries.trainLoss && result.rank == 0 &&
        result.dtype == GS_DTYPE_F32) {
      scalarOutputs.push_back(i);
      report.outputs.push_back({result.name, {}});
      // Steps before a resume have no record.
      report.outputs.back().values.assign(start, NAN);
    }
  }
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
  for (const gs_param_info *unify : scaling.unifications)
    report.unifications.push_back({unify->tensor.name,
                                   unify->site ? unify->site : "",
                                   Telemetry::unifyParts(*unify),
                                   {},
                                   {}});

  bool progressOn =
      leads() && (flags.progress == "always" ||
                  (flags.progress == "auto" && ::isatty(STDERR_FILENO)));
  Progress progress(progressOn);
  std::string placement;
  if (rankCount() > 1)
    placement += ", " + std::to_string(rankCount()) + " ranks of " +
                 std::to_string(entries.batch) + " over " +
                 replicas->transport();
  if (!gpu.empty())
    placement += (rankCount() > 1 ? " on GPUs like " : ", on ") + gpu;
  if (leads())
    std::fprintf(
        stderr,
        "%s: training %s (scaling %s, batch %lld%s) on %lld "
        "examples from %s, steps %lld to %lld (%lld per epoch)\n",
        fileName(program).c_str(), model.name, model.scaling,
        static_cast<long long>(globalBatch), placement.c_str(),
        static_cast<long long>(train.count), fileName(train.files[0]).c_str(),
        static_cast<long long>(start + 1), static_cast<long long>(total),
        static_cast<long long>(stepsPerEpoch));

  // On a GPU the host queues up to kStepsAhead steps (and evaluation
  // batches) before it waits for the oldest, and reads each step's loss
  // and telemetry from its run.
  std::unique_ptr<RunQueue> steps, evalBatches;
  check(RunQueue::create(model, *entries.train, scaling.watched, kStepsAhead,
                         steps));
  if (entries.eval && held.count && leads())
    check(RunQueue::create(model, *entries.eval, {}, kStepsAhead, evalBatches));
  std::vector<int64_t> order;
  int64_t orderEpoch = -1;
  ScaleEvents events(scaling, scaling.current());
  auto began = std::chrono::steady_clock::now();
  auto elapsed = [&]() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         began)
        .count();
  };
  auto evaluateNow = [&](int64_t step) {
    // The replicas hold the same weights: rank 0 evaluates.
    if (!leads())
      return;
    EvalPoint point = evaluate(entries, held, *evalBatches, step);
    report.evaluations.push_back(point);
    progress.clear();
    std::fprintf(stderr, "step %lld: ", static_cast<long long>(step));
    if (!point.metric.empty())
      std::fprintf(stderr, "eval %s %.4f, ", point.metric.c_str(), point.value);
    std::fprintf(stderr, "eval loss %.4f\n", point.loss);
  };

  // Records a step the device is done with: its loss, outputs, telemetry.
  auto recordStep = [&](const RunQueue::Run &run) {
    int64_t step = run.tag;
    double loss = *run.results[entries.trainLoss].as<float>();
    report.lossSteps.push_back(step);
    report.losses.push_back(loss);
    for (size_t o = 0; o < scalarOutputs.size(); ++o)
      report.outputs[o].values.push_back(
          *run.results[scalarOutputs[o]].as<float>());
    events.observe(step, step % flags.telemetryEvery == 0 || step == total,
                   run.params, report);
    progress.update(step, total, loss, (step - start) / elapsed(), events.count,
                    scaling.skippedSteps(run.params), step == total);
  };

  // The GPU's driver calls after the first step (which loads modules and
  // fills the allocator's cache) and after the last (before the replicas'
  // final check reads every parameter back).
  DeviceCalls afterFirstStep, afterLastStep;
  for (int64_t step = start + 1; step <= total; ++step) {
    int64_t epoch = (step - 1) / stepsPerEpoch;
    if (epoch != orderEpoch) {
      order = epochOrder(train.count, seed, epoch, shuffle);
      orderEpoch = epoch;
    }
    // Waits for the oldest step where the device is kStepsAhead behind.
    RunQueue::Run *run = nullptr;
    check(steps->next(recordStep, run));
    fillBatch(train, order,
              ((step - 1) % stepsPerEpoch) * globalBatch +
                  rankIndex() * entries.batch,
              run->inputs);
    check(steps->submit(step));
    if (step == start + 1)
      afterFirstStep = deviceCalls();
    check(steps->readDone(/*all=*/false, recordStep));

    // Evaluations and checkpoints read the parameters after this step.
    bool epochEnd = step % stepsPerEpoch == 0;
    bool evaluateHere =
        entries.eval && held.count &&
        (flags.evalEvery ? step % *flags.evalEvery == 0 : epochEnd);
    bool checkpointHere = flags.checkpointEvery &&
                          step % *flags.checkpointEvery == 0 && step != total;
    if (evaluateHere || checkpointHere || step == total)
      check(steps->readDone(/*all=*/true, recordStep));
    if (evaluateHere)
      evaluateNow(step);
    if (checkpointHere) {
      checkReplicasAgree(model, step);
      if (!flags.checkpoint.empty())
        check(
            saveCheckpoint(flags.checkpoint, model, step, data, report.losses));
    }
  }
  afterLastStep = deviceCalls();
  checkReplicasAgree(model, total);
  report.wallSeconds = elapsed();
  report.steps = total;
  report.skippedSteps = scaling.skippedSteps(scaling.current());
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
  if (!leads())
    return 0;
  printSummary(model, report, total - start, held.count, events.count);
  if (rankCount() > 1 && total > start)
    printCollectives(report, total - start);
  if (runsOnDevice(model) && total - start > 1) {
    const DeviceCalls &end = afterLastStep;
    double steps = static_cast<double>(total - start - 1);
    std::printf(
        "GPU calls per step after the first: %.1f kernel launches, %.1f "
        "CUDA graph launches (%.1f kernels), %.1f copies, %.1f host "
        "synchronizations\n",
        (end.launches - afterFirstStep.launches) / steps,
        (end.graphLaunches - afterFirstStep.graphLaunches) / steps,
        (end.graphKernels - afterFirstStep.graphKernels) / steps,
        (end.copies - afterFirstStep.copies) / steps,
        (end.hostSynchronizations - afterFirstStep.hostSynchronizations) /
            steps);
  }
  return 0;
}
