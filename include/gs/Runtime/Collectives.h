//===- Collectives.h - Data-parallel replicas of a train step ---*- C++ -*-===//
//
// A train step compiled with gs-compile --distributed calls the C
// functions below (gs.all_reduce and gs.world_size lower to them): each
// writes to a rank's output buffer the reduction of every rank's input
// buffer (one dimension, as many elements). They run on the process's
// Communicator, which a transport (MPI: Distributed/) provides; with none
// installed the process is the only rank and they copy.
//
// A compiled buffer arrives as the expanded memref descriptor MLIR's
// lowering passes: allocated and aligned pointers, offset, size, stride;
// the input's, then the output's.
//
// A step compiled for a GPU calls the gs_device_* functions instead
// (DeviceCollectives.cpp): its buffers are device memory, which a GPU
// transport (NCCL) reduces on the step's stream; with no communicator they
// copy on the device.
//
//===----------------------------------------------------------------------===//

#ifndef GS_RUNTIME_COLLECTIVES_H
#define GS_RUNTIME_COLLECTIVES_H

#include "gs/Runtime/Tensor.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#define GS_COLLECTIVE_DECLARE(function, suffix, T)                             \
  void gs_##function##_##suffix(                                               \
      const T *inputAllocated, const T *input, int64_t inputOffset,            \
      int64_t inputSize, int64_t inputStride, T *outputAllocated, T *output,   \
      int64_t outputOffset, int64_t outputSize, int64_t outputStride);

extern "C" {
GS_COLLECTIVE_DECLARE(all_reduce_sum, f32, float)
GS_COLLECTIVE_DECLARE(all_reduce_sum, f64, double)
GS_COLLECTIVE_DECLARE(all_reduce_sum, i64, int64_t)
GS_COLLECTIVE_DECLARE(all_reduce_max, f32, float)
GS_COLLECTIVE_DECLARE(all_reduce_max, f64, double)
GS_COLLECTIVE_DECLARE(all_reduce_max, i64, int64_t)
/// !gs.stats records (telemetry::StatsField, 7 doubles each): every field
/// summed but the maximum magnitude, whose largest is taken.
GS_COLLECTIVE_DECLARE(all_reduce_stats, f64, double)
/// The number of ranks.
int64_t gs_world_size(void);

/// On device buffers, queued on the GPU's stream: sums and maxima; those
/// of statistics records, field by field (the compiler merges a record
/// from one of each); and the number of ranks, written to a one-element
/// device buffer.
GS_COLLECTIVE_DECLARE(device_all_reduce_sum, f32, float)
GS_COLLECTIVE_DECLARE(device_all_reduce_sum, f64, double)
GS_COLLECTIVE_DECLARE(device_all_reduce_sum, i64, int64_t)
GS_COLLECTIVE_DECLARE(device_all_reduce_max, f32, float)
GS_COLLECTIVE_DECLARE(device_all_reduce_max, f64, double)
GS_COLLECTIVE_DECLARE(device_all_reduce_max, i64, int64_t)
GS_COLLECTIVE_DECLARE(device_all_reduce_stats_sum, f64, double)
GS_COLLECTIVE_DECLARE(device_all_reduce_stats_max, f64, double)
void gs_device_world_size(int64_t *outputAllocated, int64_t *output,
                          int64_t outputOffset, int64_t outputSize,
                          int64_t outputStride);
}

#undef GS_COLLECTIVE_DECLARE

namespace mlir::gs::runtime {

/// How a collective combines the ranks' values.
enum class Reduction { Sum, Max, Stats };

/// The ranks of one job and the collectives among them. Collectives are
/// called by every rank in the same order; a failure aborts the job (the
/// transport's rule: no rank may go on alone).
class Communicator {
public:
  virtual ~Communicator();
  /// "mpi", "nccl".
  virtual const char *transport() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// The rank among this machine's ranks (which of its GPUs is this
  /// rank's).
  virtual int localRank() const { return rank(); }
  /// Writes to `output` the reduction over the ranks of their `count`
  /// elements of `type` at `input` (which may be `output`: in place).
  /// Stats takes F64 records of seven.
  virtual void allReduce(const void *input, void *output, int64_t count,
                         DType type, Reduction reduction) = 0;
  /// The same on device memory (a GPU transport), Sum and Max only, queued
  /// on `stream` (a CUstream) after the work queued there. False if this
  /// transport reduces host memory only.
  virtual bool allReduceOnDevice(const void *input, void *output, int64_t count,
                                 DType type, Reduction reduction, void *stream);
  /// Copies `bytes` at `data` of rank `root` to every rank's `data`.
  virtual void broadcast(void *data, int64_t bytes, int root) = 0;
  /// Returns once every rank has called it.
  virtual void barrier() = 0;
  /// Ends every rank's process with `status`: after an error on one rank.
  [[noreturn]] virtual void abort(int status) = 0;
};

/// The communicator the collectives run on (not owned); null for a
/// process alone.
Communicator *communicator();
void setCommunicator(Communicator *communicator);

/// Starts a transport's communicator for this process (MPI_Init and the
/// like), from the program's arguments; an error message on failure.
using TransportFactory = std::unique_ptr<Communicator> (*)(int &argc,
                                                           char **&argv,
                                                           std::string &error);

/// Registers a transport under `name` (a static object in its library).
struct TransportRegistration {
  TransportRegistration(const char *name, TransportFactory factory);
};

/// The factory registered as `name`; null if no library linked in has it.
TransportFactory findTransport(const std::string &name);

/// What the compiled collectives cost this rank, by what they reduced:
/// values (gradients, losses, buffers: floats) and scaling statistics
/// (moments, histograms, cast counts). Their time includes waiting for the
/// other ranks to arrive, unless `setCollectivesTimedApart(true)`: then
/// the ranks meet at a barrier before each collective (a cost of its own),
/// and `waitingSeconds` is the time spent there.
struct CollectiveTime {
  int64_t calls = 0;
  int64_t bytes = 0;
  double seconds = 0;
};
struct CollectiveTimes {
  CollectiveTime values, statistics;
  double waitingSeconds = 0;
  bool timedApart = false;
  /// Whether they reduced device memory: queued on the GPU's stream, their
  /// time is the host's, to queue them.
  bool onDevice = false;
};
const CollectiveTimes &collectiveTimes();
void setCollectivesTimedApart(bool apart);

/// The C functions above by name, for a JIT that links compiled steps
/// into this process.
struct CollectiveFunction {
  const char *name;
  void *address;
};
const std::vector<CollectiveFunction> &collectiveFunctions();

} // namespace mlir::gs::runtime

#endif // GS_RUNTIME_COLLECTIVES_H
