//===- Collectives.cpp - The collectives compiled steps call ---*- C++ -*-===//

#include "gs/Runtime/Collectives.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>

using namespace mlir::gs::runtime;

Communicator::~Communicator() = default;

namespace {
Communicator *current = nullptr;
CollectiveTimes times;

std::map<std::string, TransportFactory> &transports() {
  static std::map<std::string, TransportFactory> registry;
  return registry;
}

/// Reduces a compiled buffer into another; alone, a copy.
template <typename T>
void reduceBuffer(const T *input, int64_t inputSize, int64_t inputStride,
                  T *output, int64_t outputSize, int64_t outputStride,
                  DType type, Reduction reduction) {
  // gs.all_reduce's lowering passes contiguous buffers alike.
  if (inputSize != outputSize ||
      (inputSize > 1 && (inputStride != 1 || outputStride != 1))) {
    std::fprintf(stderr,
                 "gs_all_reduce: buffers of %lld elements (stride %lld) and "
                 "%lld (stride %lld)\n",
                 static_cast<long long>(inputSize),
                 static_cast<long long>(inputStride),
                 static_cast<long long>(outputSize),
                 static_cast<long long>(outputStride));
    std::abort();
  }
  int64_t size = inputSize;
  if (!current) {
    std::copy(input, input + size, output);
    return;
  }
  auto now = [] { return std::chrono::steady_clock::now(); };
  auto arrived = now();
  if (times.timedApart) {
    current->barrier();
    times.waitingSeconds +=
        std::chrono::duration<double>(now() - arrived).count();
  }
  auto start = now();
  current->allReduce(input, output, size, type, reduction);
  CollectiveTime &time = reduction == Reduction::Stats || type == DType::I64
                             ? times.statistics
                             : times.values;
  ++time.calls;
  time.bytes += size * static_cast<int64_t>(sizeof(T));
  time.seconds += std::chrono::duration<double>(now() - start).count();
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

#undef GS_COLLECTIVE_DEFINE

extern "C" int64_t gs_world_size(void) { return current ? current->size() : 1; }

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
  };
#undef GS_COLLECTIVE_ENTRY
  return functions;
}
