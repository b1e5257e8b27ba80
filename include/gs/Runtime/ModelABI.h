/*===- ModelABI.h - Compiled models and the runtime's C API -----*- C -*-===*\
|*                                                                          *|
|* gs-compile describes what it compiles in one table, a gs_model_info that *|
|* the object's `<name>_model()` returns: the entry points (train_step,     *|
|* eval_step) with their inputs and results, and the parameters (weights,   *|
|* optimizer and scaling state) with their storage. The runtime library     *|
|* (libGSRuntime) runs entries and reads and writes parameters through it.  *|
|* Plain C: library-mode headers include it.                                *|
|*                                                                          *|
\*===----------------------------------------------------------------------===*/

#ifndef GS_RUNTIME_MODELABI_H
#define GS_RUNTIME_MODELABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when the layout of the structs below changes. */
#define GS_MODEL_ABI_VERSION 5

/* Element types. */
enum gs_dtype {
  GS_DTYPE_F16 = 1,
  GS_DTYPE_F32 = 2,
  GS_DTYPE_F64 = 3,
  GS_DTYPE_I8 = 4,
  GS_DTYPE_I32 = 5,
  GS_DTYPE_I64 = 6,
  GS_DTYPE_BOOL = 7,
  GS_DTYPE_I16 = 8,
  GS_DTYPE_U8 = 9,
  GS_DTYPE_U16 = 10,
  GS_DTYPE_U32 = 11,
  GS_DTYPE_U64 = 12
};

/* Where a model's entries run. */
enum gs_device {
  GS_DEVICE_CPU = 0,
  GS_DEVICE_CUDA = 1 /* an NVIDIA GPU, through GSCudaRuntime */
};

/* What a parameter holds. */
enum gs_param_kind {
  GS_PARAM_TRAINABLE = 0, /* a weight the optimizer updates */
  GS_PARAM_BUFFER = 1,    /* model state not trained (batch-norm statistics) */
  GS_PARAM_STATE = 2,     /* optimizer, step and scaling state */
  GS_PARAM_COPY = 3       /* a trainable weight rounded to FP16, which the
                             step reads and writes with it and the runtime
                             derives after the host writes the weight: read
                             only, neither checkpointed nor exported */
};

/* A dense, row-major tensor's name, element type and shape. */
typedef struct gs_tensor_info {
  const char *name;
  int32_t dtype; /* enum gs_dtype */
  int32_t rank;
  const int64_t *shape;
} gs_tensor_info;

typedef struct gs_param_info {
  gs_tensor_info tensor;
  int32_t kind; /* enum gs_param_kind */
  /* The parameter's storage in the compiled code. For a model on a GPU,
   * the host copy of a value the runtime keeps on the device: read and
   * write it through the runtime (gs_get_param, gs_set_param). */
  void *data;
  /* For gradient-scaling telemetry, the rounding it records; else NULL. */
  const char *site;
  /* The ONNX initializer it came from (the name, unless the importer had to
   * rename the parameter); NULL for state the compiler added. */
  const char *onnx_name;
  /* GS_PARAM_COPY: the index of the weight it copies (else unused). */
  int32_t copy_of;
} gs_param_info;

/* `function` is the entry's packed C interface, `void f(void **args)`:
 * args holds one pointer to a memref descriptor per input, then one per
 * result, which it writes; for a model on a GPU, first one per parameter,
 * in the table's order, and every buffer is device memory. */
typedef struct gs_entry_info {
  const char *name;
  void *function;
  int32_t num_inputs;
  int32_t num_results;
  const gs_tensor_info *inputs;
  const gs_tensor_info *results;
  int32_t loss_result; /* the result that is the loss (a float scalar), or
                          -1 for an entry without one */
} gs_entry_info;

typedef struct gs_model_info {
  int32_t abi_version; /* GS_MODEL_ABI_VERSION */
  int32_t num_params;
  int32_t num_entries;
  const char *name;    /* the ONNX graph's name */
  const char *scaling; /* gs, fixed=S, dynamic, none or fp32 */
  const gs_param_info *params;
  const gs_entry_info *entries;
  /* The ONNX model compiled (binary protobuf), for exporting trained
   * weights into it; NULL when compiled from MLIR. */
  const uint8_t *onnx;
  int64_t onnx_size;
  int32_t device; /* enum gs_device */
  /* The transport of a train step compiled as a data-parallel replica
   * (gs-compile --distributed: "mpi", "nccl"), which its collectives run on
   * (Collectives.h); NULL for a step that runs alone. */
  const char *distributed;
} gs_model_info;

/* The runtime's C API. Functions return 0 on success and -1 on an error
 * that gs_last_error() then describes; they are not thread-safe. */

/* The message of the last failed call on this thread. */
const char *gs_last_error(void);

/* Sets every parameter to its initial value. The first call records the
 * initial values: call it before changing any parameter. */
int gs_init(const gs_model_info *model);

/* Runs the entry `name` on `inputs` (one dense buffer per input, in the
 * entry's order and layout) and writes its results to `results`. */
int gs_run(const gs_model_info *model, const char *name,
           const void *const *inputs, void *const *results);

/* Copies a parameter out of or into the model; `bytes` must be its size. */
int gs_get_param(const gs_model_info *model, const char *name, void *data,
                 size_t bytes);
int gs_set_param(const gs_model_info *model, const char *name, const void *data,
                 size_t bytes);

/* Data-parallel replicas: a model compiled with --distributed runs as one
 * rank until the program joins its job. gs_distributed_start starts the
 * transport `transport` ("mpi", "nccl": libGSRuntimeMPI.a, with
 * libGSRuntimeNCCL.a for nccl, linked whole) from the program's arguments
 * (MPI_Init's, which may change them); the collectives of every model then
 * run over it. gs_distributed_stop leaves the job (MPI_Finalize), after
 * which the process is one rank again; MPI allows one job per process. */
int gs_distributed_start(const char *transport, int *argc, char ***argv);
int gs_distributed_stop(void);
/* This process's rank and the job's number of ranks (0 and 1 alone). */
int gs_distributed_rank(void);
int gs_distributed_size(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GS_RUNTIME_MODELABI_H */
