//===- FuzzCheckpoint.cpp - libFuzzer target: checkpoints ----------*- C++
//-*-===//
//
// Resumes a small model (a weight, its momentum, the step counters, a
// telemetry record) from the input as a checkpoint: loading must succeed
// with sound values or fail with a message and leave every parameter as it
// was.
//
//===----------------------------------------------------------------------===//

#include "FuzzFile.h"

#include "gs/Runtime/Checkpoint.h"
#include "gs/Runtime/ModelABI.h"
#include "gs/Runtime/Tensor.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace mlir::gs::runtime;

namespace {
// The model: w (f32 4x3), its FP16 copy w.fp16, w.velocity (f32 4x3),
// gs.step and gs.skipped_steps (i64 scalars), gs.scaling.cast0 (f64 record
// of 7).
int64_t matrixShape[] = {4, 3};
int64_t recordShape[] = {7};
float weight[12], velocity[12];
uint16_t weightCopy[12];
int64_t step, skipped;
double record[7];
gs_param_info params[] = {
    {{"w", GS_DTYPE_F32, 2, matrixShape}, GS_PARAM_TRAINABLE, weight},
    {{"w.fp16", GS_DTYPE_F16, 2, matrixShape},
     GS_PARAM_COPY,
     weightCopy,
     nullptr,
     nullptr,
     /*copy_of=*/0},
    {{"w.velocity", GS_DTYPE_F32, 2, matrixShape}, GS_PARAM_STATE, velocity},
    {{"gs.step", GS_DTYPE_I64, 0, nullptr}, GS_PARAM_STATE, &step},
    {{"gs.skipped_steps", GS_DTYPE_I64, 0, nullptr}, GS_PARAM_STATE, &skipped},
    {{"gs.scaling.cast0", GS_DTYPE_F64, 1, recordShape},
     GS_PARAM_STATE,
     record},
};
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  setTensorByteLimit(uint64_t(64) << 20);
  gs_model_info model{};
  model.abi_version = GS_MODEL_ABI_VERSION;
  model.name = "fuzz";
  model.scaling = "gs";
  model.num_params = sizeof(params) / sizeof(params[0]);
  model.params = params;
  std::memset(weight, 0, sizeof(weight));
  std::memset(weightCopy, 0, sizeof(weightCopy));
  step = skipped = 0;
  FuzzFile file(data, size);
  DataIdentity identity;
  identity.examples = 64;
  identity.batch = 16;
  std::vector<double> losses;
  int64_t resumed = 0;
  std::vector<std::string> warnings;
  if (!loadCheckpoint(file.path(), model, identity, /*seedGiven=*/false, losses,
                      resumed, warnings)
           .empty()) {
    for (float w : weight)
      if (w != 0)
        std::abort(); // a failed load changed a parameter
    for (uint16_t h : weightCopy)
      if (h != 0)
        std::abort(); // a failed load changed a copy
    return 0;
  }
  for (float w : weight)
    if (!std::isfinite(w))
      std::abort(); // a loaded weight is not finite
  for (int e = 0; e < 12; ++e)
    if (weightCopy[e] != floatToHalf(weight[e]))
      std::abort(); // the weight's FP16 copy was not derived again
  if (step < 0 || skipped < 0 || step + skipped != resumed ||
      losses.size() != static_cast<size_t>(resumed))
    std::abort(); // inconsistent counters were accepted
  return 0;
}
