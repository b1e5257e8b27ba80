/* A data-parallel library (gs-compile --emit=lib --distributed=mpi
 * --name=tiny) in a C program of its own: every rank trains on its own
 * examples. Joined in one job (gs_distributed_start), the ranks take the
 * mean loss and the summed gradients, so they print the same losses and
 * weights; alone (GS_TEST_ALONE=1) each trains on its own. Writes the
 * losses and a bias, in hexadecimal floats, to PREFIX.RANK. */
#include "tiny.h"

#include <stdio.h>
#include <stdlib.h>

static float x[32][8];
static int64_t labels[32];

static int fail(const char *what) {
  fprintf(stderr, "error: %s: %s\n", what, gs_last_error());
  return 1;
}

int main(int argc, char **argv) {
  const char *transport = getenv("GS_TEST_TRANSPORT");
  int alone = getenv("GS_TEST_ALONE") != NULL;
  if (!alone &&
      gs_distributed_start(transport ? transport : "mpi", &argc, &argv))
    return fail("joining the job");
  if (argc != 2) {
    fprintf(stderr, "usage: %s PREFIX\n", argv[0]);
    return 2;
  }
  const char *launcherRank = getenv("OMPI_COMM_WORLD_RANK");
  int rank =
      alone ? (launcherRank ? atoi(launcherRank) : 0) : gs_distributed_rank();
  printf("rank %d of %d\n", rank, gs_distributed_size());
  for (int i = 0; i < 32; ++i) {
    labels[i] = (i + rank) % 3;
    for (int j = 0; j < 8; ++j)
      x[i][j] = (float)((i * 7 + j * 3 + rank * 5) % 11) / 10.0f - 0.5f;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s.%d", argv[1], rank);
  FILE *out = fopen(path, "w");
  if (!out || tiny_init())
    return fail("starting");
  for (int step = 1; step <= 3; ++step) {
    float loss;
    if (tiny_train_step(&x[0][0], labels, &loss))
      return fail("training");
    fprintf(out, "step %d: loss %a\n", step, loss);
  }
  float bias[4];
  if (tiny_get_param("fc1_bias", bias, sizeof bias))
    return fail("reading fc1_bias");
  fprintf(out, "fc1_bias %a %a %a %a\n", bias[0], bias[1], bias[2], bias[3]);
  fclose(out);
  if (!alone && gs_distributed_stop())
    return fail("leaving the job");
  return 0;
}
