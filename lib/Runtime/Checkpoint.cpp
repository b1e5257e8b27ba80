//===- Checkpoint.cpp - Training checkpoints --------------------*- C++ -*-===//

#include "gs/Runtime/Checkpoint.h"

#include "gs/Runtime/DataFiles.h"
#include "gs/Runtime/Model.h"
#include "gs/Support/Telemetry.h"

#include <cmath>
#include <cstring>
#include <map>
#include <optional>

using namespace mlir::gs::runtime;
namespace telemetry = mlir::gs::telemetry;

// The trainer's state, beside the model's parameters.
static constexpr const char *kCheckpointStep = "gs.trainer.step";
static constexpr const char *kCheckpointSeed = "gs.trainer.seed";
static constexpr const char *kCheckpointShuffle = "gs.trainer.shuffle";
static constexpr const char *kCheckpointLoss = "gs.trainer.loss";
static constexpr const char *kCheckpointExamples = "gs.trainer.examples";
static constexpr const char *kCheckpointNormalization =
    "gs.trainer.normalization";
static constexpr const char *kCheckpointBatch = "gs.trainer.batch";
static constexpr const char *kCheckpointRanks = "gs.trainer.ranks";
static constexpr const char *kCheckpointScaling = "gs.trainer.scaling";
static constexpr const char *kCheckpointPrefix = "gs.trainer.";

static Tensor scalarI64(int64_t value) {
  Tensor t(DType::I64, {});
  *t.as<int64_t>() = value;
  return t;
}

std::string mlir::gs::runtime::saveCheckpoint(
    const std::string &path, const gs_model_info &model, int64_t step,
    const DataIdentity &data, const std::vector<double> &losses) {
  std::vector<std::pair<std::string, Tensor>> trainer;
  trainer.emplace_back(kCheckpointStep, scalarI64(step));
  trainer.emplace_back(kCheckpointSeed,
                       scalarI64(static_cast<int64_t>(data.seed)));
  trainer.emplace_back(kCheckpointShuffle, scalarI64(data.shuffle));
  trainer.emplace_back(kCheckpointExamples, scalarI64(data.examples));
  trainer.emplace_back(kCheckpointBatch, scalarI64(data.batch));
  trainer.emplace_back(kCheckpointRanks, scalarI64(data.ranks));
  std::string scaling = model.scaling;
  Tensor scalingName(DType::U8, {static_cast<int64_t>(scaling.size())});
  std::memcpy(scalingName.data(), scaling.data(), scaling.size());
  trainer.emplace_back(kCheckpointScaling, std::move(scalingName));
  Tensor normalization(DType::F64, {3});
  normalization.as<double>()[0] = data.normalization.kind;
  normalization.as<double>()[1] = data.normalization.mean;
  normalization.as<double>()[2] = data.normalization.std;
  trainer.emplace_back(kCheckpointNormalization, std::move(normalization));
  Tensor lossHistory(DType::F64, {static_cast<int64_t>(losses.size())});
  std::memcpy(lossHistory.data(), losses.data(), lossHistory.byteSize());
  trainer.emplace_back(kCheckpointLoss, std::move(lossHistory));

  std::vector<Tensor> params;
  params.reserve(model.num_params);
  std::vector<std::pair<std::string, const Tensor *>> arrays;
  for (int32_t i = 0; i < model.num_params; ++i) {
    if (model.params[i].kind == GS_PARAM_COPY)
      continue; // derived from its weight on loading
    params.push_back(readParam(model.params[i]));
    arrays.emplace_back(model.params[i].tensor.name, &params.back());
  }
  for (const auto &[name, value] : trainer)
    arrays.emplace_back(name, &value);
  return writeNpz(path, arrays);
}

std::string mlir::gs::runtime::loadCheckpoint(
    const std::string &path, const gs_model_info &model, DataIdentity &data,
    bool seedGiven, std::vector<double> &losses, int64_t &step,
    std::vector<std::string> &warnings, bool checkData) {
  std::vector<std::pair<std::string, Tensor>> arrays;
  if (std::string error = readNpz(path, arrays); !error.empty())
    return error;
  std::map<std::string, const Tensor *> byName;
  for (auto &[name, tensor] : arrays)
    byName[name] = &tensor;
  auto array = [&](const char *name, DType type,
                   int64_t elements) -> const Tensor * {
    auto it = byName.find(name);
    if (it == byName.end() || it->second->type() != type ||
        it->second->numElements() != elements)
      return nullptr;
    return it->second;
  };
  auto missing = [&](const char *name) {
    return "'" + path + "' is not a checkpoint of this trainer (no " + name +
           ")";
  };
  auto scalar = [&](const char *name) {
    return *array(name, DType::I64, 1)->as<int64_t>();
  };
  if (!array(kCheckpointStep, DType::I64, 1))
    return missing(kCheckpointStep);
  step = scalar(kCheckpointStep);
  auto history = byName.find(kCheckpointLoss);
  if (step < 0 || history == byName.end() ||
      history->second->type() != DType::F64 ||
      history->second->numElements() != step)
    return "'" + path + "' is corrupt: its step " + std::to_string(step) +
           " does not match its loss history";
  // The rest of the trainer's arrays, all present before any is used.
  for (const char *name : {kCheckpointSeed, kCheckpointShuffle,
                           kCheckpointExamples, kCheckpointBatch})
    if (!array(name, DType::I64, 1))
      return missing(name);
  if (!array(kCheckpointNormalization, DType::F64, 3))
    return missing(kCheckpointNormalization);
  // The data order and inputs must be the checkpointed run's.
  DataIdentity saved;
  saved.seed = static_cast<uint64_t>(scalar(kCheckpointSeed));
  saved.shuffle = scalar(kCheckpointShuffle) != 0;
  saved.examples = scalar(kCheckpointExamples);
  const double *normalization =
      array(kCheckpointNormalization, DType::F64, 3)->as<double>();
  auto same = [](const Normalization &a, const double *b) {
    return a.kind == b[0] && a.mean == b[1] && a.std == b[2];
  };
  if (!checkData) {
    saved.batch = scalar(kCheckpointBatch);
    saved.normalization.kind =
        static_cast<Normalization::Kind>(static_cast<int>(normalization[0]));
    saved.normalization.mean = normalization[1];
    saved.normalization.std = normalization[2];
    data = saved;
  }
  // A checkpoint whose batches its caller fed (the Python package) records
  // no data order: the resumed run continues in its own.
  bool orderKnown = saved.examples != kUnknownDataOrder;
  if (!seedGiven && orderKnown)
    data.seed = saved.seed;
  if (orderKnown && (saved.seed != data.seed || saved.shuffle != data.shuffle))
    return "--resume: '" + path +
           "' was trained with --seed=" + std::to_string(saved.seed) +
           (saved.shuffle ? "" : " --no-shuffle") +
           "; resume with the same data order";
  if (orderKnown && (saved.examples != data.examples ||
                     !same(data.normalization, normalization)))
    return "--resume: '" + path + "' was trained on " +
           std::to_string(saved.examples) +
           " examples with another normalization or data set; resume on the "
           "same training data and --normalize";
  if (int64_t batch = scalar(kCheckpointBatch); batch != data.batch)
    return "--resume: '" + path + "' was trained with batches of " +
           std::to_string(batch) + ", this model takes " +
           std::to_string(data.batch);
  // Checkpoints from before data-parallel runs have no rank count: 1.
  const Tensor *ranksArray = array(kCheckpointRanks, DType::I64, 1);
  int64_t savedRanks = ranksArray ? *ranksArray->as<int64_t>() : 1;
  if (savedRanks < 1)
    return "'" + path + "' is corrupt: " + std::to_string(savedRanks) +
           " ranks";
  std::string otherRanks;
  if (!checkData)
    data.ranks = savedRanks;
  else if (savedRanks != data.ranks)
    otherRanks =
        ("'" + path + "' was trained on " + std::to_string(savedRanks) +
         " ranks (global batches of " +
         std::to_string(savedRanks * data.batch) + "), this run has " +
         std::to_string(data.ranks) + ": its steps take global batches of " +
         std::to_string(data.ranks * data.batch) +
         ", and the data order goes on from the epoch position of the step");
  auto scalingName = byName.find(kCheckpointScaling);
  if (scalingName == byName.end() || scalingName->second->type() != DType::U8 ||
      scalingName->second->shape().size() != 1)
    return missing(kCheckpointScaling);
  std::string savedScaling(scalingName->second->data(),
                           scalingName->second->numElements());
  if (savedScaling != model.scaling)
    return "--resume: '" + path +
           "' was trained with --scaling=" + savedScaling +
           ", this model with " + model.scaling;
  // Every array is the model's or the trainer's.
  for (const auto &[name, tensor] : arrays)
    if (name.rfind(kCheckpointPrefix, 0) != 0 && !findParam(model, name))
      return "'" + path + "' holds '" + name +
             "', which this model does not have: it is a checkpoint of another "
             "model";
  // Check every parameter before changing any.
  bool guarded = findParam(model, telemetry::kSkippedSteps) != nullptr;
  warnings.clear();
  if (!otherRanks.empty())
    warnings.push_back(otherRanks);
  int nonFinite = 0;
  std::string firstNonFinite;
  for (int32_t i = 0; i < model.num_params; ++i) {
    const gs_param_info &param = model.params[i];
    if (param.kind == GS_PARAM_COPY)
      continue;
    auto it = byName.find(param.tensor.name);
    if (it == byName.end())
      return "'" + path + "' has no parameter '" + param.tensor.name +
             "': it is a checkpoint of another model";
    DType type = DType::F32;
    toDType(param.tensor.dtype, type);
    std::vector<int64_t> shape = shapeOf(param.tensor);
    if (it->second->type() != type || it->second->shape() != shape)
      return "'" + path + "': parameter '" + param.tensor.name + "' is " +
             it->second->describe() + ", the model's is " +
             describeTensor(type, shape);
    // Weights and optimizer state are finite where the model skips steps
    // with non-finite gradients: no step of it writes one. Without that
    // guard a diverged run may have written them, and buffers (batch-norm
    // running statistics, written by the forward pass) may hold what an
    // overflowing forward pass left: a warning.
    std::string name = param.tensor.name;
    const Tensor &value = *it->second;
    if (name.rfind(telemetry::kSitePrefix, 0) == 0 ||
        name.rfind(telemetry::kUnifyPrefix, 0) == 0 ||
        (value.type() != DType::F32 && value.type() != DType::F16 &&
         value.type() != DType::F64))
      continue;
    for (int64_t e = 0; e < value.numElements(); ++e) {
      if (std::isfinite(elementAt(value, e)))
        continue;
      std::string problem = "parameter '" + name +
                            "' holds a non-finite value at element " +
                            std::to_string(e);
      if (guarded && param.kind != GS_PARAM_BUFFER)
        return "'" + path + "' is corrupt: " + problem;
      if (nonFinite++ == 0)
        firstNonFinite = problem;
      break;
    }
  }
  if (nonFinite)
    warnings.push_back("'" + path + "': " + std::to_string(nonFinite) +
                       " parameters hold non-finite values (the first: " +
                       firstNonFinite + "); the run it continues had diverged");
  // The step counters agree with the trainer's: the optimizer counts the
  // steps it took, the scaling passes those they skipped.
  auto counter = [&](const char *name) -> std::optional<int64_t> {
    auto it = byName.find(name);
    if (it == byName.end() || it->second->type() != DType::I64 ||
        it->second->numElements() != 1)
      return std::nullopt;
    return *it->second->as<int64_t>();
  };
  std::optional<int64_t> taken = counter("gs.step"),
                         skipped = counter(telemetry::kSkippedSteps);
  if ((skipped && (*skipped < 0 || *skipped > step)) ||
      (taken && (*taken < 0 || *taken + skipped.value_or(0) != step)))
    return "'" + path + "' is corrupt: trainer step " + std::to_string(step) +
           ", optimizer steps " + (taken ? std::to_string(*taken) : "-") +
           ", skipped steps " + (skipped ? std::to_string(*skipped) : "-") +
           " do not add up";
  for (int32_t i = 0; i < model.num_params; ++i)
    if (model.params[i].kind != GS_PARAM_COPY)
      if (std::string error = writeParam(model, model.params[i],
                                         *byName[model.params[i].tensor.name]);
          !error.empty())
        return error;
  losses.assign(history->second->as<double>(),
                history->second->as<double>() + step);
  return {};
}
