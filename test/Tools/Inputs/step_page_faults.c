/* Runs a model's train_step, compiled with gs-compile --emit=lib, through
 * the runtime's C API on zero inputs and prints the minor page faults of
 * its steady steps: the runtime keeps the buffers a step frees in the heap,
 * so that the next step reuses them instead of faulting fresh pages in.
 * Build with -DMODEL=<name>_model. */
#include "gs/Runtime/ModelABI.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

const gs_model_info *MODEL(void);

enum { kWarmSteps = 2, kSteadySteps = 10, kMaxTensors = 64 };

static void *zeros(const gs_tensor_info *tensor) {
  size_t elements = 1;
  for (int32_t i = 0; i < tensor->rank; ++i)
    elements *= (size_t)tensor->shape[i];
  return calloc(elements ? elements : 1, 8); /* 8 bytes: any dtype's width */
}

static long minor_faults(void) {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

int main(void) {
  const gs_model_info *model = MODEL();
  const gs_entry_info *step = NULL;
  for (int32_t i = 0; i < model->num_entries; ++i)
    if (!strcmp(model->entries[i].name, "train_step"))
      step = &model->entries[i];
  if (!step || step->num_inputs > kMaxTensors ||
      step->num_results > kMaxTensors)
    return 1;
  const void *inputs[kMaxTensors];
  void *results[kMaxTensors];
  for (int32_t i = 0; i < step->num_inputs; ++i)
    inputs[i] = zeros(&step->inputs[i]);
  for (int32_t i = 0; i < step->num_results; ++i)
    results[i] = zeros(&step->results[i]);
  if (gs_init(model))
    return 1;
  long before = 0;
  for (int s = 0; s < kWarmSteps + kSteadySteps; ++s) {
    if (s == kWarmSteps)
      before = minor_faults();
    if (gs_run(model, "train_step", inputs, results)) {
      printf("error: %s\n", gs_last_error());
      return 1;
    }
  }
  printf("steady steps fault in %ld pages each\n",
         (minor_faults() - before) / kSteadySteps);
  return 0;
}
