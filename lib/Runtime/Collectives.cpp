//===- Collectives.cpp - The collectives compiled steps call ---*- C++ -*-===//

#include "gs/Runtime/Collectives.h"
#include "gs/Runtime/Cuda/Device.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

using namespace mlir::gs::runtime;

Communicator::~Communicator() = default;

int64_t Communicator::startAllReduce(const void *input, void *output,
                                     int64_t count, DType type,
                                     Reduction reduction) {
  allReduce(input, output, count, type, reduction);
  return 0;
}

void Communicator::finishAllReduce(int64_t) {}

bool Communicator::startAllReduceOnDevice(const void *, void *, int64_t, DType,
                                          Reduction, void *, int64_t &) {
  return false;
}

void Communicator::finishAllReduceOnDevice(int64_t, void *) {}

namespace {
Communicator *current = nullptr;
CollectiveTimes times;

std::map<std::string, TransportFactory> &transports() {
  static std::map<std::string, TransportFactory> registry;
  return registry;
}

[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "gs_all_reduce: %s\n", message.c_str());
  if (current)
    current->abort(1);
  std::abort();
}

/// The elements of a compiled buffer and its result, which gs.all_reduce's
/// lowering passes contiguous and alike.
int64_t checkedSize(int64_t inputSize, int64_t inputStride, int64_t outputSize,
                    int64_t outputStride) {
  if (inputSize != outputSize ||
      (inputSize > 1 && (inputStride != 1 || outputStride != 1)))
    fail("buffers of " + std::to_string(inputSize) + " elements (stride " +
         std::to_string(inputStride) + ") and " + std::to_string(outputSize) +
         " (stride " + std::to_string(outputStride) + ")");
  return inputSize;
}

/// The process's GPU, which a step's device buffers are on.
cuda::Device &processDevice() {
  cuda::Device *device = nullptr;
  std::string error = cuda::processDevice(device);
  if (!device)
    fail("a step's collective on device memory, but no GPU: " + error);
  return *device;
}

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// A compiled step's all-reduce between its start and its wait.
struct InFlight {
  const void *input;
  void *output;
  int64_t size;
  bool onDevice;
  bool statistics;
  /// The communicator's request; none without one.
  int64_t request;
  Clock::time_point started;
};

/// The all-reduces in flight, by the request the step holds.
RequestTable<InFlight> inFlight;

/// Starts the all-reduce of a compiled buffer into another: on the
/// communicator (counted and timed, `statistics` or values), or alone a
/// copy, made now. Returns the request to wait for.
template <typename T>
int64_t startBuffer(const T *input, int64_t inputSize, int64_t inputStride,
                    T *output, int64_t outputSize, int64_t outputStride,
                    DType type, Reduction reduction, bool onDevice,
                    bool statistics) {
  int64_t size = checkedSize(inputSize, inputStride, outputSize, outputStride);
  InFlight flight{input, output, size, onDevice, statistics, -1, Clock::now()};
  if (!current) {
    if (!onDevice)
      std::copy(input, input + size, output);
    else if (input != output)
      if (std::string error =
              processDevice().copy(output, input, size * sizeof(T));
          !error.empty())
        fail(error);
    return inFlight.add(flight);
  }
  if (times.timedApart) {
    current->barrier();
    times.waitingSeconds += secondsSince(flight.started);
  }
  flight.started = Clock::now();
  if (!onDevice) {
    flight.request =
        current->startAllReduce(input, output, size, type, reduction);
  } else {
    times.onDevice = true;
    if (!current->startAllReduceOnDevice(input, output, size, type, reduction,
                                         processDevice().stream(),
                                         flight.request))
      fail(std::string("the step's buffers are in GPU memory, which the '") +
           current->transport() +
           "' transport does not reduce: compile it for a GPU transport "
           "(gs-compile --distributed=nccl)");
  }
  CollectiveTime &time = statistics ? times.statistics : times.values;
  ++time.calls;
  time.bytes += size * static_cast<int64_t>(sizeof(T));
  time.seconds += secondsSince(flight.started);
  return inFlight.add(flight);
}

/// Waits for the all-reduce `request` of these buffers (on the device:
/// queues the GPU's later work after it).
void waitForBuffer(int64_t request, const void *input, int64_t inputSize,
                   const void *output, int64_t outputSize) {
  std::optional<InFlight> taken = inFlight.take(request);
  if (!taken)
    fail("no all-reduce in flight has request " + std::to_string(request));
  const InFlight &flight = *taken;
  if (flight.input != input || flight.output != output ||
      flight.size != inputSize || flight.size != outputSize)
    fail("the wait for request " + std::to_string(request) +
         " names other buffers than its start");
  if (!current)
    return;
  auto waited = Clock::now();
  if (flight.onDevice)
    current->finishAllReduceOnDevice(flight.request, processDevice().stream());
  else
    current->finishAllReduce(flight.request);
  CollectiveTime &time = flight.statistics ? times.statistics : times.values;
  time.seconds += secondsSince(waited);
  time.inFlightSeconds += secondsSince(flight.started);
}
} // namespace

Communicator *mlir::gs::runtime::communicator() { return current; }

const CollectiveTimes &mlir::gs::runtime::collectiveTimes() { return times; }

void mlir::gs::runtime::setCollectivesTimedApart(bool apart) {
  times.timedApart = apart;
}

void mlir::gs::runtime::setCommunicator(Communicator *communicator) {
  current = communicator;
}

TransportRegistration::TransportRegistration(const char *name,
                                             TransportFactory factory) {
  transports()[name] = factory;
}

TransportFactory mlir::gs::runtime::findTransport(const std::string &name) {
  auto it = transports().find(name);
  return it == transports().end() ? nullptr : it->second;
}

#define GS_BUFFER_PARAMETERS(T)                                                \
  const T *, const T *input, int64_t inputOffset, int64_t inputSize,           \
      int64_t inputStride, T *, T *output, int64_t outputOffset,               \
      int64_t outputSize, int64_t outputStride
#define GS_START_DEFINE(prefix, name, T, dtype, kind, onDevice, statistics)    \
  extern "C" int64_t gs_##prefix##all_reduce_start_##name(                     \
      GS_BUFFER_PARAMETERS(T)) {                                               \
    return startBuffer(input + inputOffset, inputSize, inputStride,            \
                       output + outputOffset, outputSize, outputStride, dtype, \
                       kind, onDevice, statistics);                            \
  }
#define GS_WAIT_DEFINE(prefix, suffix, T)                                      \
  extern "C" void gs_##prefix##all_reduce_wait_##suffix(                       \
      int64_t request, GS_BUFFER_PARAMETERS(T)) {                              \
    (void)inputStride;                                                         \
    (void)outputStride;                                                        \
    waitForBuffer(request, input + inputOffset, inputSize,                     \
                  output + outputOffset, outputSize);                          \
  }

// On the host, statistics are the records and the counts (the only
// integers reduced).
GS_START_DEFINE(, sum_f32, float, DType::F32, Reduction::Sum, false, false)
GS_START_DEFINE(, sum_f64, double, DType::F64, Reduction::Sum, false, false)
GS_START_DEFINE(, sum_i64, int64_t, DType::I64, Reduction::Sum, false, true)
GS_START_DEFINE(, max_f32, float, DType::F32, Reduction::Max, false, false)
GS_START_DEFINE(, max_f64, double, DType::F64, Reduction::Max, false, false)
GS_START_DEFINE(, max_i64, int64_t, DType::I64, Reduction::Max, false, true)
GS_START_DEFINE(, stats_f64, double, DType::F64, Reduction::Stats, false, true)
GS_WAIT_DEFINE(, f32, float)
GS_WAIT_DEFINE(, f64, double)
GS_WAIT_DEFINE(, i64, int64_t)

GS_START_DEFINE(device_, sum_f32, float, DType::F32, Reduction::Sum, true,
                false)
GS_START_DEFINE(device_, sum_f64, double, DType::F64, Reduction::Sum, true,
                false)
GS_START_DEFINE(device_, sum_i64, int64_t, DType::I64, Reduction::Sum, true,
                true)
GS_START_DEFINE(device_, max_f32, float, DType::F32, Reduction::Max, true,
                false)
GS_START_DEFINE(device_, max_f64, double, DType::F64, Reduction::Max, true,
                false)
GS_START_DEFINE(device_, max_i64, int64_t, DType::I64, Reduction::Max, true,
                true)
GS_START_DEFINE(device_, stats_sum_f64, double, DType::F64, Reduction::Sum,
                true, true)
GS_START_DEFINE(device_, stats_max_f64, double, DType::F64, Reduction::Max,
                true, true)
GS_WAIT_DEFINE(device_, f32, float)
GS_WAIT_DEFINE(device_, f64, double)
GS_WAIT_DEFINE(device_, i64, int64_t)

#undef GS_BUFFER_PARAMETERS
#undef GS_START_DEFINE
#undef GS_WAIT_DEFINE

extern "C" int64_t gs_world_size(void) { return current ? current->size() : 1; }

extern "C" void gs_device_world_size(int64_t *, int64_t *output,
                                     int64_t outputOffset, int64_t outputSize,
                                     int64_t) {
  if (outputSize != 1)
    fail("gs_device_world_size: a buffer of " + std::to_string(outputSize) +
         " elements");
  // A device copy of the size, made once, copied on the stream at each
  // call: the host writes no device memory it would have to wait for.
  static cuda::CUdeviceptr size = 0;
  cuda::Device &device = processDevice();
  if (!size) {
    int64_t ranks = gs_world_size();
    std::string error = device.allocator().allocate(sizeof ranks, size);
    if (error.empty())
      error = device.copyToDevice(size, &ranks, sizeof ranks);
    if (error.empty())
      error = device.synchronize();
    if (!error.empty())
      fail("gs_device_world_size: " + error);
  }
  if (std::string error =
          device.copy(output + outputOffset,
                      reinterpret_cast<const void *>(size), sizeof(int64_t));
      !error.empty())
    fail("gs_device_world_size: " + error);
}

const std::vector<RuntimeFunction> &mlir::gs::runtime::collectiveFunctions() {
#define GS_COLLECTIVE_ENTRY(name)                                              \
  { #name, reinterpret_cast < void *>(&name) }
  static const std::vector<RuntimeFunction> functions = {
      GS_COLLECTIVE_ENTRY(gs_all_reduce_start_sum_f32),
      GS_COLLECTIVE_ENTRY(gs_all_reduce_start_sum_f64),
      GS_COLLECTIVE_ENTRY(gs_all_reduce_start_sum_i64),
      GS_COLLECTIVE_ENTRY(gs_all_reduce_start_max_f32),
      GS_COLLECTIVE_ENTRY(gs_all_reduce_start_max_f64),
      GS_COLLECTIVE_ENTRY(gs_all_reduce_start_max_i64),
      GS_COLLECTIVE_ENTRY(gs_all_reduce_start_stats_f64),
      GS_COLLECTIVE_ENTRY(gs_all_reduce_wait_f32),
      GS_COLLECTIVE_ENTRY(gs_all_reduce_wait_f64),
      GS_COLLECTIVE_ENTRY(gs_all_reduce_wait_i64),
      GS_COLLECTIVE_ENTRY(gs_world_size),
      GS_COLLECTIVE_ENTRY(gs_device_all_reduce_start_sum_f32),
      GS_COLLECTIVE_ENTRY(gs_device_all_reduce_start_sum_f64),
      GS_COLLECTIVE_ENTRY(gs_device_all_reduce_start_sum_i64),
      GS_COLLECTIVE_ENTRY(gs_device_all_reduce_start_max_f32),
      GS_COLLECTIVE_ENTRY(gs_device_all_reduce_start_max_f64),
      GS_COLLECTIVE_ENTRY(gs_device_all_reduce_start_max_i64),
      GS_COLLECTIVE_ENTRY(gs_device_all_reduce_start_stats_sum_f64),
      GS_COLLECTIVE_ENTRY(gs_device_all_reduce_start_stats_max_f64),
      GS_COLLECTIVE_ENTRY(gs_device_all_reduce_wait_f32),
      GS_COLLECTIVE_ENTRY(gs_device_all_reduce_wait_f64),
      GS_COLLECTIVE_ENTRY(gs_device_all_reduce_wait_i64),
      GS_COLLECTIVE_ENTRY(gs_device_world_size),
  };
#undef GS_COLLECTIVE_ENTRY
  return functions;
}
