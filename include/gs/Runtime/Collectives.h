//===- Collectives.h - Data-parallel replicas of a train step ---*- C++ -*-===//
//
// A train step compiled with gs-compile --distributed calls the C
// functions below (gs.all_reduce and gs.world_size lower to them): each
// writes to a rank's output buffer the reduction of every rank's input
// buffer (one dimension, as many elements). They run on the process's
// Communicator, which a transport (MPI: Distributed/) provides; with none
// installed the process is the only rank and they copy.
//
// Each all-reduce is started, then waited for: the compiled step goes on
// in between (its input unchanged, its output not read) while the
// transport reduces. A compiled buffer arrives as the expanded memref
// descriptor MLIR's lowering passes: allocated and aligned pointers,
// offset, size, stride; the input's, then the output's.
//
// A step compiled for a GPU calls the gs_device_* functions instead: its
// buffers are device memory, which a GPU transport (NCCL) reduces on the
// GPU, after the work queued so far and before the work queued after the
// wait; with no communicator they copy on the device.
//
//===----------------------------------------------------------------------===//

#ifndef GS_RUNTIME_COLLECTIVES_H
#define GS_RUNTIME_COLLECTIVES_H

#include "gs/Runtime/RuntimeFunction.h"
#include "gs/Runtime/Tensor.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#define GS_BUFFER_PARAMETERS(T)                                                \
  const T *inputAllocated, const T *input, int64_t inputOffset,                \
      int64_t inputSize, int64_t inputStride, T *outputAllocated, T *output,   \
      int64_t outputOffset, int64_t outputSize, int64_t outputStride
#define GS_COLLECTIVE_DECLARE(prefix, reduction, T, suffix)                    \
  int64_t gs_##prefix##all_reduce_start_##reduction##_##suffix(                \
      GS_BUFFER_PARAMETERS(T));
#define GS_WAIT_DECLARE(prefix, T, suffix)                                     \
  void gs_##prefix##all_reduce_wait_##suffix(int64_t request,                  \
                                             GS_BUFFER_PARAMETERS(T));

extern "C" {
/// Start an all-reduce; its request.
GS_COLLECTIVE_DECLARE(, sum, float, f32)
GS_COLLECTIVE_DECLARE(, sum, double, f64)
GS_COLLECTIVE_DECLARE(, sum, int64_t, i64)
GS_COLLECTIVE_DECLARE(, max, float, f32)
GS_COLLECTIVE_DECLARE(, max, double, f64)
GS_COLLECTIVE_DECLARE(, max, int64_t, i64)
/// !gs.stats records (telemetry::StatsField, 7 doubles each): every field
/// summed but the maximum magnitude, whose largest is taken.
GS_COLLECTIVE_DECLARE(, stats, double, f64)
/// Returns once the all-reduce `request` (of these buffers) is done.
GS_WAIT_DECLARE(, float, f32)
GS_WAIT_DECLARE(, double, f64)
GS_WAIT_DECLARE(, int64_t, i64)
/// The number of ranks.
int64_t gs_world_size(void);

/// On device buffers: sums and maxima; those of statistics records, field
/// by field (the compiler merges a record from one of each); and the
/// number of ranks, written to a one-element device buffer.
GS_COLLECTIVE_DECLARE(device_, sum, float, f32)
GS_COLLECTIVE_DECLARE(device_, sum, double, f64)
GS_COLLECTIVE_DECLARE(device_, sum, int64_t, i64)
GS_COLLECTIVE_DECLARE(device_, max, float, f32)
GS_COLLECTIVE_DECLARE(device_, max, double, f64)
GS_COLLECTIVE_DECLARE(device_, max, int64_t, i64)
GS_COLLECTIVE_DECLARE(device_, stats_sum, double, f64)
GS_COLLECTIVE_DECLARE(device_, stats_max, double, f64)
/// Queues the GPU's later work after the all-reduce `request`; the host
/// does not wait.
GS_WAIT_DECLARE(device_, float, f32)
GS_WAIT_DECLARE(device_, double, f64)
GS_WAIT_DECLARE(device_, int64_t, i64)
void gs_device_world_size(int64_t *outputAllocated, int64_t *output,
                          int64_t outputOffset, int64_t outputSize,
                          int64_t outputStride);
}

#undef GS_BUFFER_PARAMETERS
#undef GS_COLLECTIVE_DECLARE
#undef GS_WAIT_DECLARE

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
  /// The same, started: `output` holds the reduction once
  /// `finishAllReduce` of the request returned returns, and `input` must
  /// not change until then. Every request is finished, in any order. By
  /// default the reduction is done at once.
  virtual int64_t startAllReduce(const void *input, void *output, int64_t count,
                                 DType type, Reduction reduction);
  virtual void finishAllReduce(int64_t request);
  /// On device memory (a GPU transport), Sum and Max only: queued after
  /// the work queued on `stream` (a CUstream) so far; the work queued there
  /// after `finishAllReduceOnDevice` of `request` runs after it. False if
  /// this transport reduces host memory only.
  virtual bool startAllReduceOnDevice(const void *input, void *output,
                                      int64_t count, DType type,
                                      Reduction reduction, void *stream,
                                      int64_t &request);
  virtual void finishAllReduceOnDevice(int64_t request, void *stream);
  /// Copies `bytes` at `data` of rank `root` to every rank's `data`.
  virtual void broadcast(void *data, int64_t bytes, int root) = 0;
  /// Returns once every rank has called it.
  virtual void barrier() = 0;
  /// Ends every rank's process with `status`: after an error on one rank.
  [[noreturn]] virtual void abort(int status) = 0;
};

/// Operations in flight by the request handed out for each: the index of a
/// slot, reused once the operation is taken back (the compiled step's
/// all-reduces, a transport's own requests).
template <typename T> class RequestTable {
public:
  /// Stores `operation`; its request.
  int64_t add(T operation) {
    for (size_t i = 0; i < slots.size(); ++i)
      if (!slots[i]) {
        slots[i] = std::move(operation);
        return static_cast<int64_t>(i);
      }
    slots.push_back(std::move(operation));
    return static_cast<int64_t>(slots.size()) - 1;
  }
  /// The operation of `request`, removed; none if no operation is in
  /// flight under it.
  std::optional<T> take(int64_t request) {
    if (request < 0 || request >= static_cast<int64_t>(slots.size()))
      return std::nullopt;
    std::optional<T> operation = std::move(slots[request]);
    slots[request].reset();
    return operation;
  }

private:
  std::vector<std::optional<T>> slots;
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
/// (moments, histograms, cast counts). `seconds` is the time the step
/// spent in their calls, starting them and waiting for them, which
/// includes waiting for the other ranks to arrive, unless
/// `setCollectivesTimedApart(true)`: then the ranks meet at a barrier
/// before each collective (a cost of its own), and `waitingSeconds` is the
/// time spent there. `inFlightSeconds` runs from each start to the end of
/// its wait: the step computed the rest of that time.
struct CollectiveTime {
  int64_t calls = 0;
  int64_t bytes = 0;
  double seconds = 0;
  double inFlightSeconds = 0;
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
const std::vector<RuntimeFunction> &collectiveFunctions();

} // namespace mlir::gs::runtime

#endif // GS_RUNTIME_COLLECTIVES_H
