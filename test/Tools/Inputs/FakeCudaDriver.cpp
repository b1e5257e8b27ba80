//===- FakeCudaDriver.cpp - A libcuda stand-in for the runtime's tests ----===//
//
// Loaded through GS_LIBCUDA, it gives the GPU runtime a "GPU" in host
// memory so that its host side (context, stream, module loading, the
// allocator, copies, argument packing, events, error paths) runs in the
// tests. It knows one kernel, gs-gpu-info's gs_axpy, which it runs on the
// host over the launched grid. Environment: GS_FAKE_CUDA_CC (compute
// capability, default 90), GS_FAKE_CUDA_MEMORY (bytes, default 1 GiB).
// Not a CUDA emulator: anything else fails with CUDA_ERROR_NOT_FOUND.
//
//===----------------------------------------------------------------------===//

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>

namespace {
using Result = int;
using DevicePointer = unsigned long long;
constexpr Result kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2,
                 kInvalidPtx = 218, kNotFound = 500;

struct Event {
  std::chrono::steady_clock::time_point time;
};

size_t capacity() {
  const char *text = std::getenv("GS_FAKE_CUDA_MEMORY");
  return text ? std::strtoull(text, nullptr, 10) : size_t(1) << 30;
}

int capability() {
  const char *text = std::getenv("GS_FAKE_CUDA_CC");
  return text ? std::atoi(text) : 90;
}

std::map<DevicePointer, size_t> &blocks() {
  static std::map<DevicePointer, size_t> live;
  return live;
}
size_t used = 0;
int moduleToken, functionToken, contextToken, streamToken;
} // namespace

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

FAKE_EXPORT Result cuInit(unsigned) { return kSuccess; }
FAKE_EXPORT Result cuDriverGetVersion(int *version) {
  *version = 13000;
  return kSuccess;
}
FAKE_EXPORT Result cuGetErrorName(Result result, const char **name) {
  switch (result) {
  case kOutOfMemory:
    *name = "CUDA_ERROR_OUT_OF_MEMORY";
    return kSuccess;
  case kInvalidPtx:
    *name = "CUDA_ERROR_INVALID_PTX";
    return kSuccess;
  case kNotFound:
    *name = "CUDA_ERROR_NOT_FOUND";
    return kSuccess;
  case kInvalidValue:
    *name = "CUDA_ERROR_INVALID_VALUE";
    return kSuccess;
  default:
    *name = nullptr;
    return kInvalidValue;
  }
}
FAKE_EXPORT Result cuGetErrorString(Result result, const char **text) {
  *text = result == kOutOfMemory ? "out of memory" : "fake driver error";
  return kSuccess;
}
FAKE_EXPORT Result cuDeviceGetCount(int *count) {
  *count = 1;
  return kSuccess;
}
FAKE_EXPORT Result cuDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return ordinal == 0 ? kSuccess : kInvalidValue;
}
FAKE_EXPORT Result cuDeviceGetName(char *name, int length, int) {
  std::strncpy(name, "GradScale fake GPU", length);
  return kSuccess;
}
FAKE_EXPORT Result cuDeviceGetAttribute(int *value, int attribute, int) {
  if (attribute == 75)
    *value = capability() / 10;
  else if (attribute == 76)
    *value = capability() % 10;
  else
    return kInvalidValue;
  return kSuccess;
}
FAKE_EXPORT Result cuDeviceTotalMem_v2(size_t *bytes, int) {
  *bytes = capacity();
  return kSuccess;
}
FAKE_EXPORT Result cuDevicePrimaryCtxRetain(void **context, int) {
  *context = &contextToken;
  return kSuccess;
}
FAKE_EXPORT Result cuDevicePrimaryCtxRelease_v2(int) { return kSuccess; }
FAKE_EXPORT Result cuCtxSetCurrent(void *) { return kSuccess; }
FAKE_EXPORT Result cuStreamCreate(void **stream, unsigned) {
  *stream = &streamToken;
  return kSuccess;
}
FAKE_EXPORT Result cuStreamDestroy_v2(void *) { return kSuccess; }
FAKE_EXPORT Result cuStreamSynchronize(void *) { return kSuccess; }
FAKE_EXPORT Result cuMemAlloc_v2(DevicePointer *pointer, size_t bytes) {
  if (used + bytes > capacity())
    return kOutOfMemory;
  *pointer = reinterpret_cast<DevicePointer>(std::malloc(bytes));
  blocks()[*pointer] = bytes;
  used += bytes;
  return kSuccess;
}
FAKE_EXPORT Result cuMemFree_v2(DevicePointer pointer) {
  auto it = blocks().find(pointer);
  if (it == blocks().end())
    return kInvalidValue;
  used -= it->second;
  blocks().erase(it);
  std::free(reinterpret_cast<void *>(pointer));
  return kSuccess;
}
FAKE_EXPORT Result cuMemcpyHtoDAsync_v2(DevicePointer to, const void *from,
                                        size_t bytes, void *) {
  std::memcpy(reinterpret_cast<void *>(to), from, bytes);
  return kSuccess;
}
FAKE_EXPORT Result cuMemcpyDtoHAsync_v2(void *to, DevicePointer from,
                                        size_t bytes, void *) {
  std::memcpy(to, reinterpret_cast<const void *>(from), bytes);
  return kSuccess;
}
FAKE_EXPORT Result cuMemcpyAsync(DevicePointer to, DevicePointer from,
                                 size_t bytes, void *) {
  std::memcpy(reinterpret_cast<void *>(to),
              reinterpret_cast<const void *>(from), bytes);
  return kSuccess;
}
FAKE_EXPORT Result cuModuleLoadDataEx(void **module, const void *image,
                                      unsigned, int *, void **) {
  if (std::strncmp(static_cast<const char *>(image), ".version", 8) != 0)
    return kInvalidPtx;
  *module = &moduleToken;
  return kSuccess;
}
FAKE_EXPORT Result cuModuleUnload(void *) { return kSuccess; }
FAKE_EXPORT Result cuModuleGetFunction(void **function, void *,
                                       const char *name) {
  if (std::strcmp(name, "gs_axpy") != 0)
    return kNotFound;
  *function = &functionToken;
  return kSuccess;
}
FAKE_EXPORT Result cuFuncSetAttribute(void *, int, int) { return kSuccess; }
FAKE_EXPORT Result cuLaunchKernel(void *function, unsigned gridX, unsigned,
                                  unsigned, unsigned blockX, unsigned, unsigned,
                                  unsigned, void *, void **parameters,
                                  void **) {
  if (function != &functionToken)
    return kInvalidValue;
  // gs_axpy(y, x, a, n) over the threads launched.
  auto *y =
      reinterpret_cast<float *>(*static_cast<DevicePointer *>(parameters[0]));
  auto *x = reinterpret_cast<const float *>(
      *static_cast<DevicePointer *>(parameters[1]));
  float a = *static_cast<float *>(parameters[2]);
  unsigned n = *static_cast<unsigned *>(parameters[3]);
  uint64_t threads = uint64_t(gridX) * blockX;
  for (uint64_t i = 0; i < n && i < threads; ++i)
    y[i] = std::fmaf(a, x[i], y[i]);
  return kSuccess;
}
FAKE_EXPORT Result cuEventCreate(void **event, unsigned) {
  *event = new Event();
  return kSuccess;
}
FAKE_EXPORT Result cuEventDestroy_v2(void *event) {
  delete static_cast<Event *>(event);
  return kSuccess;
}
FAKE_EXPORT Result cuEventRecord(void *event, void *) {
  static_cast<Event *>(event)->time = std::chrono::steady_clock::now();
  return kSuccess;
}
FAKE_EXPORT Result cuEventSynchronize(void *) { return kSuccess; }
FAKE_EXPORT Result cuEventElapsedTime(float *milliseconds, void *start,
                                      void *end) {
  *milliseconds =
      std::chrono::duration<float, std::milli>(
          static_cast<Event *>(end)->time - static_cast<Event *>(start)->time)
          .count();
  return kSuccess;
}
