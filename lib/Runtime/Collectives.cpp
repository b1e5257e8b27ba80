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

bool Communicator::allReduceOnDevice(const void *, void *, int64_t, DType,
                                     Reduction, void *) {
  return false;
}

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

/// Runs `reduce` (a collective on the communicator), counted and timed as
/// `statistics` or values: `elements` of `elementBytes`.
template <typename Reduce>
void timeCollective(int64_t elements, int64_t elementBytes, bool statistics,
                    Reduce reduce) {
  auto now = [] { return std::chrono::steady_clock::now(); };
  auto arrived = now();
  if (times.timedApart) {
    current->barrier();
    times.waitingSeconds +=
        std::chrono::duration<double>(now() - arrived).count();
  }
  auto start = now();
  reduce();
  CollectiveTime &time = statistics ? times.statistics : times.values;
  ++time.calls;
  time.bytes += elements * elementBytes;
  time.seconds += std::chrono::duration<double>(now() - start).count();
}

/// Reduces a compiled buffer into another; alone, a copy.
template <typename T>
void reduceBuffer(const T *input, int64_t inputSize, int64_t inputStride,
                  T *output, int64_t outputSize, int64_t outputStride,
                  DType type, Reduction reduction) {
  int64_t size = checkedSize(inputSize, inputStride, outputSize, outputStride);
  if (!current) {
    std::copy(input, input + size, output);
    return;
  }
  // Statistics: the records, and the counts (the only integers reduced).
  bool statistics = reduction == Reduction::Stats || type == DType::I64;
  timeCollective(size, sizeof(T), statistics, [&] {
    current->allReduce(input, output, size, type, reduction);
  });
}

/// The process's GPU, which a step's device buffers are on.
cuda::Device &processDevice() {
  cuda::Device *device = nullptr;
  std::string error = cuda::processDevice(device);
  if (!device)
    fail("a step's collective on device memory, but no GPU: " + error);
  return *device;
}

/// Reduces a compiled device buffer into another on the GPU's stream;
/// alone, a copy there. `statistics`: of records or counts.
template <typename T>
void reduceDeviceBuffer(const T *input, int64_t inputSize, int64_t inputStride,
                        T *output, int64_t outputSize, int64_t outputStride,
                        DType type, Reduction reduction, bool statistics) {
  int64_t size = checkedSize(inputSize, inputStride, outputSize, outputStride);
  cuda::Device &device = processDevice();
  if (!current) {
    if (input != output)
      if (std::string error = device.copy(output, input, size * sizeof(T));
          !error.empty())
        fail(error);
    return;
  }
  times.onDevice = true;
  timeCollective(size, sizeof(T), statistics, [&] {
    if (!current->allReduceOnDevice(input, output, size, type, reduction,
                                    device.stream()))
      fail(std::string("the step's buffers are in GPU memory, which the '") +
           current->transport() +
           "' transport does not reduce: compile it for a GPU transport "
           "(gs-compile --distributed=nccl)");
  });
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

#define GS_COLLECTIVE_DEFINE(reduction, suffix, T, dtype, kind)                \
  extern "C" void gs_all_reduce_##reduction##_##suffix(                        \
      const T *, const T *input, int64_t inputOffset, int64_t inputSize,       \
      int64_t inputStride, T *, T *output, int64_t outputOffset,               \
      int64_t outputSize, int64_t outputStride) {                              \
    reduceBuffer(input + inputOffset, inputSize, inputStride,                  \
                 output + outputOffset, outputSize, outputStride, dtype,       \
                 kind);                                                        \
  }

GS_COLLECTIVE_DEFINE(sum, f32, float, DType::F32, Reduction::Sum)
GS_COLLECTIVE_DEFINE(sum, f64, double, DType::F64, Reduction::Sum)
GS_COLLECTIVE_DEFINE(sum, i64, int64_t, DType::I64, Reduction::Sum)
GS_COLLECTIVE_DEFINE(max, f32, float, DType::F32, Reduction::Max)
GS_COLLECTIVE_DEFINE(max, f64, double, DType::F64, Reduction::Max)
GS_COLLECTIVE_DEFINE(max, i64, int64_t, DType::I64, Reduction::Max)
GS_COLLECTIVE_DEFINE(stats, f64, double, DType::F64, Reduction::Stats)

#define GS_DEVICE_COLLECTIVE_DEFINE(name, T, dtype, kind, statistics)          \
  extern "C" void gs_device_all_reduce_##name(                                 \
      const T *, const T *input, int64_t inputOffset, int64_t inputSize,       \
      int64_t inputStride, T *, T *output, int64_t outputOffset,               \
      int64_t outputSize, int64_t outputStride) {                              \
    reduceDeviceBuffer(input + inputOffset, inputSize, inputStride,            \
                       output + outputOffset, outputSize, outputStride, dtype, \
                       kind, statistics);                                      \
  }

GS_DEVICE_COLLECTIVE_DEFINE(sum_f32, float, DType::F32, Reduction::Sum, false)
GS_DEVICE_COLLECTIVE_DEFINE(sum_f64, double, DType::F64, Reduction::Sum, false)
GS_DEVICE_COLLECTIVE_DEFINE(sum_i64, int64_t, DType::I64, Reduction::Sum, true)
GS_DEVICE_COLLECTIVE_DEFINE(max_f32, float, DType::F32, Reduction::Max, false)
GS_DEVICE_COLLECTIVE_DEFINE(max_f64, double, DType::F64, Reduction::Max, false)
GS_DEVICE_COLLECTIVE_DEFINE(max_i64, int64_t, DType::I64, Reduction::Max, true)
GS_DEVICE_COLLECTIVE_DEFINE(stats_sum_f64, double, DType::F64, Reduction::Sum,
                            true)
GS_DEVICE_COLLECTIVE_DEFINE(stats_max_f64, double, DType::F64, Reduction::Max,
                            true)

#undef GS_COLLECTIVE_DEFINE
#undef GS_DEVICE_COLLECTIVE_DEFINE

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

const std::vector<CollectiveFunction> &
mlir::gs::runtime::collectiveFunctions() {
#define GS_COLLECTIVE_ENTRY(name)                                              \
  { #name, reinterpret_cast < void *>(&name) }
  static const std::vector<CollectiveFunction> functions = {
      GS_COLLECTIVE_ENTRY(gs_all_reduce_sum_f32),
      GS_COLLECTIVE_ENTRY(gs_all_reduce_sum_f64),
      GS_COLLECTIVE_ENTRY(gs_all_reduce_sum_i64),
      GS_COLLECTIVE_ENTRY(gs_all_reduce_max_f32),
      GS_COLLECTIVE_ENTRY(gs_all_reduce_max_f64),
      GS_COLLECTIVE_ENTRY(gs_all_reduce_max_i64),
      GS_COLLECTIVE_ENTRY(gs_all_reduce_stats_f64),
      GS_COLLECTIVE_ENTRY(gs_world_size),
      GS_COLLECTIVE_ENTRY(gs_device_all_reduce_sum_f32),
      GS_COLLECTIVE_ENTRY(gs_device_all_reduce_sum_f64),
      GS_COLLECTIVE_ENTRY(gs_device_all_reduce_sum_i64),
      GS_COLLECTIVE_ENTRY(gs_device_all_reduce_max_f32),
      GS_COLLECTIVE_ENTRY(gs_device_all_reduce_max_f64),
      GS_COLLECTIVE_ENTRY(gs_device_all_reduce_max_i64),
      GS_COLLECTIVE_ENTRY(gs_device_all_reduce_stats_sum_f64),
      GS_COLLECTIVE_ENTRY(gs_device_all_reduce_stats_max_f64),
      GS_COLLECTIVE_ENTRY(gs_device_world_size),
  };
#undef GS_COLLECTIVE_ENTRY
  return functions;
}
