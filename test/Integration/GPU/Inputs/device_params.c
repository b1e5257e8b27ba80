/* A model compiled with gs-compile --emit=lib --name=tiny (for the CPU or a
 * GPU): parameters read and written between steps through the C API, which
 * for a model on a GPU moves them between the host and the device. The
 * output must not depend on where the model runs. */
#include "tiny.h"

#include <stdio.h>

static float x[32][8];
static int64_t labels[32];

static int step(const char *what) {
  float loss;
  if (tiny_train_step(&x[0][0], labels, &loss)) {
    printf("error: %s\n", gs_last_error());
    return 1;
  }
  printf("%s: loss %.9g\n", what, loss);
  return 0;
}

static int printBias(const char *what) {
  float bias[4];
  if (tiny_get_param("fc1_bias", bias, sizeof bias))
    return 1;
  printf("%s: fc1_bias %.9g %.9g %.9g %.9g\n", what, bias[0], bias[1],
         bias[2], bias[3]);
  return 0;
}

int main(void) {
  for (int i = 0; i < 32; ++i) {
    labels[i] = i % 3;
    for (int j = 0; j < 8; ++j)
      x[i][j] = (float)((i * 7 + j * 3) % 11) / 10.0f - 0.5f;
  }
  if (tiny_init() || step("step 1") || step("step 2") ||
      printBias("after 2 steps"))
    return 1;
  /* A write after a run: the next step must train from it. */
  float bias[4];
  if (tiny_get_param("fc1_bias", bias, sizeof bias))
    return 1;
  bias[1] = 0.5f;
  if (tiny_set_param("fc1_bias", bias, sizeof bias) ||
      step("step 3 from fc1_bias[1] = 0.5") || printBias("after step 3"))
    return 1;
  /* A reset after runs: the first step again. */
  if (tiny_init() || step("step 1 after tiny_init") ||
      printBias("after the reset and a step"))
    return 1;
  return 0;
}
