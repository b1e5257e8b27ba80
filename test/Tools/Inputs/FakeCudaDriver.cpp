//===- FakeCudaDriver.cpp - A libcuda stand-in for the runtime's tests ----===//
//
// Loaded through GS_LIBCUDA, it gives the GPU runtime a "GPU" in host
// memory so that its host side (context, stream, module loading, the
// allocator, copies, argument packing, events, error paths) runs in the
// tests. It knows one kernel, gs-gpu-info's gs_axpy, which it runs on the
// host over the launched grid. Environment: GS_FAKE_CUDA_CC (compute
// capability, default 90), GS_FAKE_CUDA_MEMORY (bytes, default 1 GiB),
// GS_FAKE_CUDA_ANY_KERNEL=1 (any kernel a loaded PTX module defines can be
// looked up and launched: a launch reads each argument at the size the
// PTX declares, and computes nothing), GS_FAKE_CUDA_PENDING_EVENTS=1 (the
// work before an event is reported done only once the host has waited for
// it, or for a later event or the stream: cuEventQuery answers
// CUDA_ERROR_NOT_READY until then, as on a GPU running behind the host).
// Memory comes zeroed. Not a CUDA emulator: any other kernel fails with
// CUDA_ERROR_NOT_FOUND.
//
// CUDA graphs: a stream between cuStreamBeginCapture and cuStreamEndCapture
// records its launches and copies (their arguments' bytes as they were)
// instead of running them, and cuGraphLaunch runs them again in order;
// synchronizing a capturing stream invalidates its capture, as on the
// driver. GS_FAKE_CUDA_CAPTURE_FAILS=1: every launch during a capture is
// unsupported (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED). Any launch of any
// kernel, captured or not, fails with CUDA_ERROR_ILLEGAL_ADDRESS if an
// argument addresses device memory that is no longer allocated.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {
using Result = int;
using DevicePointer = unsigned long long;
constexpr Result kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2,
                 kInvalidPtx = 218, kNotFound = 500, kNotReady = 600,
                 kIllegalAddress = 700, kCaptureUnsupported = 900,
                 kCaptureInvalidated = 901;

struct Event {
  std::chrono::steady_clock::time_point time;
  bool recorded = false;
  /// Which record this is, counting every event's (from 1).
  uint64_t record = 0;
};

/// The last record counted, and the last one the host has waited for.
uint64_t lastRecord = 0, waitedRecord = 0;

bool pendingEvents() {
  const char *text = std::getenv("GS_FAKE_CUDA_PENDING_EVENTS");
  return text && std::strcmp(text, "1") == 0;
}

/// What a graph replays: a launch (its arguments' bytes) or a copy.
struct Operation {
  void *function = nullptr;
  unsigned grid[3] = {}, block[3] = {};
  std::vector<std::vector<unsigned char>> arguments;
  void *to = nullptr;
  const void *from = nullptr;
  size_t bytes = 0;
};
struct Graph {
  std::vector<Operation> operations;
};

/// Each stream its own, so that a library checking which stream it is
/// given (the stand-in NCCL) tells them apart; a capturing one records.
struct Stream {
  bool capturing = false, invalidated = false;
  std::vector<Operation> captured;
};

Stream *capturingStream(void *stream) {
  auto *s = static_cast<Stream *>(stream);
  return s && s->capturing ? s : nullptr;
}

size_t capacity() {
  const char *text = std::getenv("GS_FAKE_CUDA_MEMORY");
  return text ? std::strtoull(text, nullptr, 10) : size_t(1) << 30;
}

int capability() {
  const char *text = std::getenv("GS_FAKE_CUDA_CC");
  return text ? std::atoi(text) : 90;
}

/// A PTX module loaded, and the kernels looked up in it: the byte size of
/// each parameter.
struct Module {
  std::string ptx;
};
struct Kernel {
  std::vector<size_t> parameterBytes;
};

bool anyKernel() {
  const char *text = std::getenv("GS_FAKE_CUDA_ANY_KERNEL");
  return text && std::strcmp(text, "1") == 0;
}

/// The parameters of `.entry name(...)` in `ptx`; false if there is none.
bool entryParameters(const std::string &ptx, const char *name,
                     std::vector<size_t> &bytes) {
  size_t at = ptx.find(std::string(".entry ") + name + "(");
  if (at == std::string::npos)
    return false;
  size_t end = ptx.find(')', at);
  std::string list = ptx.substr(at, end - at);
  for (size_t p = list.find(".param"); p != std::string::npos;
       p = list.find(".param", p + 1)) {
    std::string declaration = list.substr(p, list.find(',', p) - p);
    size_t size = 0;
    for (const char *type : {".b8", ".u8", ".s8"})
      if (declaration.find(type) != std::string::npos)
        size = 1;
    for (const char *type : {".b16", ".u16", ".s16", ".f16"})
      if (declaration.find(type) != std::string::npos)
        size = 2;
    for (const char *type : {".b32", ".u32", ".s32", ".f32"})
      if (declaration.find(type) != std::string::npos)
        size = 4;
    for (const char *type : {".b64", ".u64", ".s64", ".f64"})
      if (declaration.find(type) != std::string::npos)
        size = 8;
    size_t bracket = declaration.find('[');
    if (bracket != std::string::npos)
      size *= std::strtoull(declaration.c_str() + bracket + 1, nullptr, 10);
    if (size == 0)
      return false;
    bytes.push_back(size);
  }
  return true;
}

std::map<DevicePointer, size_t> &blocks() {
  static std::map<DevicePointer, size_t> live;
  return live;
}

/// cuMemHostAlloc's blocks.
std::set<void *> &hostBlocks() {
  static std::set<void *> live;
  return live;
}
size_t used = 0;
int functionToken, contextToken;
/// The span of every block cuMemAlloc has handed out.
DevicePointer lowest = ~0ull, highest = 0;

/// Whether `value` lies where blocks have been but none is now.
bool addressesFreedMemory(DevicePointer value) {
  if (value < lowest || value >= highest)
    return false;
  auto block = blocks().upper_bound(value);
  if (block == blocks().begin())
    return true;
  --block;
  return value - block->first >= std::max<size_t>(block->second, 1);
}

bool captureFails() {
  const char *text = std::getenv("GS_FAKE_CUDA_CAPTURE_FAILS");
  return text && std::strcmp(text, "1") == 0;
}
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
  case kNotReady:
    *name = "CUDA_ERROR_NOT_READY";
    return kSuccess;
  case kIllegalAddress:
    *name = "CUDA_ERROR_ILLEGAL_ADDRESS";
    return kSuccess;
  case kCaptureUnsupported:
    *name = "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
    return kSuccess;
  case kCaptureInvalidated:
    *name = "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED";
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
  *stream = new Stream();
  return kSuccess;
}
FAKE_EXPORT Result cuStreamDestroy_v2(void *stream) {
  delete static_cast<Stream *>(stream);
  return kSuccess;
}
FAKE_EXPORT Result cuStreamSynchronize(void *stream) {
  if (Stream *capturing = capturingStream(stream)) {
    capturing->invalidated = true;
    return kCaptureUnsupported;
  }
  waitedRecord = lastRecord;
  return kSuccess;
}
FAKE_EXPORT Result cuMemAlloc_v2(DevicePointer *pointer, size_t bytes) {
  if (used + bytes > capacity())
    return kOutOfMemory;
  *pointer = reinterpret_cast<DevicePointer>(std::calloc(bytes ? bytes : 1, 1));
  blocks()[*pointer] = bytes;
  lowest = std::min(lowest, *pointer);
  highest = std::max<DevicePointer>(highest, *pointer + (bytes ? bytes : 1));
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
FAKE_EXPORT Result cuMemHostAlloc(void **pointer, size_t bytes, unsigned) {
  size_t rounded = (bytes + 4095) / 4096 * 4096;
  *pointer = std::aligned_alloc(4096, rounded ? rounded : 4096);
  if (!*pointer)
    return kOutOfMemory;
  std::memset(*pointer, 0, rounded ? rounded : 4096);
  hostBlocks().insert(*pointer);
  return kSuccess;
}
FAKE_EXPORT Result cuMemFreeHost(void *pointer) {
  if (!hostBlocks().erase(pointer))
    return kInvalidValue;
  std::free(pointer);
  return kSuccess;
}
/// A copy, run or, on a capturing stream, recorded.
static Result copy(void *to, const void *from, size_t bytes, void *stream) {
  if (Stream *capturing = capturingStream(stream)) {
    Operation copy;
    copy.to = to;
    copy.from = from;
    copy.bytes = bytes;
    capturing->captured.push_back(std::move(copy));
    return kSuccess;
  }
  std::memcpy(to, from, bytes);
  return kSuccess;
}
FAKE_EXPORT Result cuMemcpyHtoDAsync_v2(DevicePointer to, const void *from,
                                        size_t bytes, void *stream) {
  return copy(reinterpret_cast<void *>(to), from, bytes, stream);
}
FAKE_EXPORT Result cuMemcpyDtoHAsync_v2(void *to, DevicePointer from,
                                        size_t bytes, void *stream) {
  return copy(to, reinterpret_cast<const void *>(from), bytes, stream);
}
FAKE_EXPORT Result cuMemcpyAsync(DevicePointer to, DevicePointer from,
                                 size_t bytes, void *stream) {
  return copy(reinterpret_cast<void *>(to),
              reinterpret_cast<const void *>(from), bytes, stream);
}
FAKE_EXPORT Result cuModuleLoadDataEx(void **module, const void *image,
                                      unsigned, int *, void **) {
  const char *text = static_cast<const char *>(image);
  // PTX, after the comments a compiler heads it with.
  while (std::strncmp(text, "//", 2) == 0 && std::strchr(text, '\n'))
    text = std::strchr(text, '\n') + 1;
  while (*text == '\n')
    ++text;
  if (std::strncmp(text, ".version", 8) != 0)
    return kInvalidPtx;
  *module = new Module{static_cast<const char *>(image)};
  return kSuccess;
}
FAKE_EXPORT Result cuModuleUnload(void *module) {
  delete static_cast<Module *>(module);
  return kSuccess;
}
FAKE_EXPORT Result cuModuleGetFunction(void **function, void *module,
                                       const char *name) {
  if (std::strcmp(name, "gs_axpy") == 0) {
    *function = &functionToken;
    return kSuccess;
  }
  auto *kernel = new Kernel();
  if (!anyKernel() || !entryParameters(static_cast<Module *>(module)->ptx, name,
                                       kernel->parameterBytes)) {
    delete kernel;
    return kNotFound;
  }
  *function = kernel;
  return kSuccess;
}
FAKE_EXPORT Result cuFuncSetAttribute(void *, int, int) { return kSuccess; }
/// Runs a launch: gs_axpy computes, any other kernel reads its arguments
/// (and fails where one addresses freed device memory).
static Result runKernel(void *function, unsigned gridX, unsigned blockX,
                        void **parameters) {
  if (function != &functionToken) {
    volatile unsigned char sum = 0;
    const std::vector<size_t> &bytes =
        static_cast<Kernel *>(function)->parameterBytes;
    for (size_t i = 0; i < bytes.size(); ++i) {
      for (size_t b = 0; b < bytes[i]; ++b)
        sum = sum + static_cast<unsigned char *>(parameters[i])[b];
      DevicePointer value = 0;
      if (bytes[i] == sizeof(value))
        std::memcpy(&value, parameters[i], sizeof(value));
      if (addressesFreedMemory(value))
        return kIllegalAddress;
    }
    return kSuccess;
  }
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

FAKE_EXPORT Result cuLaunchKernel(void *function, unsigned gridX,
                                  unsigned gridY, unsigned gridZ,
                                  unsigned blockX, unsigned blockY,
                                  unsigned blockZ, unsigned, void *stream,
                                  void **parameters, void **) {
  Stream *capturing = capturingStream(stream);
  if (!capturing)
    return runKernel(function, gridX, blockX, parameters);
  if (captureFails()) {
    capturing->invalidated = true;
    return kCaptureUnsupported;
  }
  Operation launch;
  launch.function = function;
  unsigned sizes[6] = {gridX, gridY, gridZ, blockX, blockY, blockZ};
  std::copy(sizes, sizes + 3, launch.grid);
  std::copy(sizes + 3, sizes + 6, launch.block);
  std::vector<size_t> bytes = {8, 8, 4, 4};
  if (function != &functionToken)
    bytes = static_cast<Kernel *>(function)->parameterBytes;
  for (size_t i = 0; i < bytes.size(); ++i) {
    auto *first = static_cast<unsigned char *>(parameters[i]);
    launch.arguments.emplace_back(first, first + bytes[i]);
  }
  capturing->captured.push_back(std::move(launch));
  return kSuccess;
}

FAKE_EXPORT Result cuStreamBeginCapture_v2(void *stream, int) {
  auto *s = static_cast<Stream *>(stream);
  if (s->capturing)
    return kInvalidValue;
  *s = Stream();
  s->capturing = true;
  return kSuccess;
}
FAKE_EXPORT Result cuStreamEndCapture(void *stream, void **graph) {
  auto *s = static_cast<Stream *>(stream);
  *graph = nullptr;
  if (!s->capturing)
    return kInvalidValue;
  bool invalidated = s->invalidated;
  std::vector<Operation> operations = std::move(s->captured);
  *s = Stream();
  if (invalidated)
    return kCaptureInvalidated;
  *graph = new Graph{std::move(operations)};
  return kSuccess;
}
FAKE_EXPORT Result cuGraphInstantiateWithFlags(void **exec, void *graph,
                                               unsigned long long) {
  *exec = new Graph(*static_cast<Graph *>(graph));
  return kSuccess;
}
FAKE_EXPORT Result cuGraphLaunch(void *exec, void *stream) {
  if (capturingStream(stream))
    return kCaptureUnsupported;
  for (Operation &operation : static_cast<Graph *>(exec)->operations) {
    if (!operation.function) {
      std::memcpy(operation.to, operation.from, operation.bytes);
      continue;
    }
    std::vector<void *> parameters;
    for (std::vector<unsigned char> &argument : operation.arguments)
      parameters.push_back(argument.data());
    if (Result result = runKernel(operation.function, operation.grid[0],
                                  operation.block[0], parameters.data()))
      return result;
  }
  return kSuccess;
}
FAKE_EXPORT Result cuGraphExecDestroy(void *exec) {
  delete static_cast<Graph *>(exec);
  return kSuccess;
}
FAKE_EXPORT Result cuGraphDestroy(void *graph) {
  delete static_cast<Graph *>(graph);
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
  static_cast<Event *>(event)->recorded = true;
  static_cast<Event *>(event)->record = ++lastRecord;
  return kSuccess;
}
FAKE_EXPORT Result cuEventSynchronize(void *event) {
  waitedRecord = std::max(waitedRecord, static_cast<Event *>(event)->record);
  return kSuccess;
}
FAKE_EXPORT Result cuEventQuery(void *event) {
  bool done =
      !pendingEvents() || static_cast<Event *>(event)->record <= waitedRecord;
  return done ? kSuccess : kNotReady;
}
// Every call completes before it returns: each stream's work is ordered
// after every other's already. Stricter than the driver (for which it is
// a no-op), waiting for an event never recorded is an error.
FAKE_EXPORT Result cuStreamWaitEvent(void *, void *event, unsigned) {
  return static_cast<Event *>(event)->recorded ? kSuccess : kInvalidValue;
}
FAKE_EXPORT Result cuEventElapsedTime(float *milliseconds, void *start,
                                      void *end) {
  *milliseconds =
      std::chrono::duration<float, std::milli>(
          static_cast<Event *>(end)->time - static_cast<Event *>(start)->time)
          .count();
  return kSuccess;
}
