/* Embeds a model compiled with gs-compile --emit=lib --name=tiny: trains it
 * through the generated header, reads and writes parameters, and resets it. */
#include "tiny.h"

#include <stdio.h>

int main(void) {
  float x[32][8], loss, scores[32][3], bias[4];
  int64_t targets[32];
  int64_t labels[32];
  for (int i = 0; i < 32; ++i) {
    labels[i] = i % 3;
    for (int j = 0; j < 8; ++j)
      x[i][j] = (float)((i * 7 + j * 3) % 11) / 10.0f - 0.5f;
  }
  if (tiny_init())
    return 1;
  for (int step = 1; step <= 3; ++step) {
    if (tiny_train_step(&x[0][0], labels, &loss))
      return 1;
    printf("step %d: loss %.4f\n", step, loss);
  }
  if (tiny_eval_step(&x[0][0], labels, &loss, &scores[0][0], targets))
    return 1;
  printf("eval loss %.4f\n", loss);
  if (tiny_get_param("fc1_bias", bias, sizeof bias))
    return 1;
  printf("trained fc1_bias[1] %.4f\n", bias[1]);
  if (tiny_get_param("fc1_bias", bias, 3) == 0)
    return 1;
  printf("error: %s\n", gs_last_error());
  bias[1] = 0.5f;
  if (tiny_set_param("fc1_bias", bias, sizeof bias) ||
      tiny_get_param("fc1_bias", bias, sizeof bias))
    return 1;
  printf("set fc1_bias[1] %.4f\n", bias[1]);
  if (tiny_init() || tiny_get_param("fc1_bias", bias, sizeof bias))
    return 1;
  printf("reset fc1_bias[1] %.4f\n", bias[1]);
  return 0;
}
