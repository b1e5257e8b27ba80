//===- MgpuWrappers.cpp - MLIR's GPU runtime calls on GSCudaRuntime -------===//
//
// Host code lowered by MLIR (gpu-to-llvm, and the translation of
// gpu.binary and gpu.launch_func) calls a small C API, mgpu*, which LLVM's
// libmlir_cuda_runtime implements; Debian's MLIR ships none. These
// functions implement it on GSCudaRuntime, so that such code runs on the
// driver opened at run time and the caching allocator: one device
// (mgpuSetDefaultDevice, else GS_CUDA_DEVICE, else 0), the process's
// (processDevice, which the runtime's parameter copies share), and one
// stream (every mgpuStreamCreate returns it), kernels from PTX
// (mgpuModuleLoadJIT) or cubins and fatbins (mgpuModuleLoad). Modules
// "load" from global constructors before main: they are only recorded
// there and loaded at their first kernel lookup, so that an executable
// starts, and can say there is no GPU, where there is none. The signatures
// are those MLIR 22 emits; test/Integration/GPU/mgpu-abi.test checks that
// every call it emits is defined here. The API has no error results: a
// failure prints what failed and exits with status 1 (a driver error
// during a CUDA graph capture is kept for the runtime instead, which runs
// the function again without one: setRuntimeAPIErrorSink). The device and
// modules live until the process ends (MLIR unloads modules from global
// destructors).
//
//===----------------------------------------------------------------------===//

#include "gs/Runtime/Cuda/Device.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

using namespace mlir::gs::runtime::cuda;

namespace {
/// A module as the host code registered it: its image, loaded at the first
/// lookup of one of its kernels.
struct LazyModule {
  std::vector<KernelImage> images;
  std::unique_ptr<Module> loaded;
};

/// The process's modules behind the C API.
struct MgpuState {
  std::map<void *, std::unique_ptr<LazyModule>> modules;
  std::map<CUfunction, std::string> functionNames;
};
} // namespace

static int defaultOrdinal = -1;
/// Where the driver's errors go instead of ending the process, while set.
static std::string *errorSink = nullptr;

[[noreturn]] static void fail(const std::string &message) {
  std::fprintf(stderr, "GradScale GPU runtime: error: %s\n", message.c_str());
  std::exit(1);
}

static void check(const std::string &error) {
  if (error.empty())
    return;
  if (!errorSink)
    fail(error);
  if (errorSink->empty())
    *errorSink = error;
}

void mlir::gs::runtime::cuda::setRuntimeAPIErrorSink(std::string *sink) {
  errorSink = sink;
}

std::string mlir::gs::runtime::cuda::processDevice(Device *&device) {
  // Never destroyed: global destructors may still unload modules.
  static std::unique_ptr<Device> *opened = nullptr;
  static std::string error;
  if (!opened && error.empty()) {
    int ordinal = defaultOrdinal;
    if (ordinal < 0) {
      const char *text = std::getenv("GS_CUDA_DEVICE");
      ordinal = text && *text ? std::atoi(text) : 0;
    }
    auto *created = new std::unique_ptr<Device>();
    error = Device::open(ordinal, *created);
    if (error.empty())
      opened = created;
    else
      delete created;
  }
  device = opened ? opened->get() : nullptr;
  return error;
}

void mlir::gs::runtime::cuda::setProcessDeviceOrdinal(int ordinal) {
  defaultOrdinal = ordinal;
}

static Device &device() {
  Device *opened = nullptr;
  check(processDevice(opened));
  return *opened;
}

static MgpuState &state() {
  static MgpuState *modules = new MgpuState();
  return *modules;
}

/// The architecture of PTX text's `.target` directive ("sm_80"), or "".
static std::string ptxTarget(const char *text) {
  const char *target = std::strstr(text, ".target");
  if (!target)
    return {};
  target += std::strlen(".target");
  while (*target == ' ' || *target == '\t')
    ++target;
  size_t length = std::strcspn(target, " \t\r\n,");
  return std::string(target, length);
}

static void *registerModule(std::vector<KernelImage> images) {
  auto module = std::make_unique<LazyModule>();
  module->images = std::move(images);
  void *handle = module.get();
  state().modules.emplace(handle, std::move(module));
  return handle;
}

extern "C" {

void mgpuSetDefaultDevice(int32_t ordinal) { defaultOrdinal = ordinal; }

/// A cubin or fatbin: the driver picks what runs on the device.
void *mgpuModuleLoad(void *data, size_t size) {
  return registerModule(
      {{KernelImage::Kind::Cubin, "",
        std::string_view(static_cast<const char *>(data), size)}});
}

/// PTX the driver compiles at its default optimization level.
void *mgpuModuleLoadJIT(void *data, int32_t /*optLevel*/) {
  const char *text = static_cast<const char *>(data);
  return registerModule({{KernelImage::Kind::Ptx, ptxTarget(text), text}});
}

void mgpuModuleUnload(void *module) { state().modules.erase(module); }

CUfunction mgpuModuleGetFunction(void *module, const char *name) {
  MgpuState &gpu = state();
  auto found = gpu.modules.find(module);
  if (found == gpu.modules.end())
    fail(std::string("kernel '") + name + "' looked up in a module not loaded");
  LazyModule &lazy = *found->second;
  if (!lazy.loaded) {
    const KernelImage &image = lazy.images.front();
    check(image.kind == KernelImage::Kind::Ptx
              ? device().loadModule(lazy.images, lazy.loaded)
              : device().loadImage(image, lazy.loaded));
    // Failed during a capture (the error kept): the launch fails too.
    if (!lazy.loaded)
      return nullptr;
  }
  CUfunction function = nullptr;
  check(lazy.loaded->function(name, function));
  gpu.functionNames.emplace(function, name);
  return function;
}

void mgpuLaunchKernel(CUfunction function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedBytes, CUstream /*stream*/,
                      void **parameters, void **extra, size_t /*count*/) {
  MgpuState &gpu = state();
  auto named = gpu.functionNames.find(function);
  std::string name =
      named == gpu.functionNames.end() ? std::string("?") : named->second;
  intptr_t sizes[6] = {gridX, gridY, gridZ, blockX, blockY, blockZ};
  unsigned grid[3], block[3];
  for (int i = 0; i < 6; ++i) {
    if (sizes[i] < 1 || sizes[i] > INT32_MAX)
      fail("kernel '" + name + "' launched with a " +
           (i < 3 ? "grid" : "block") + " size of " + std::to_string(sizes[i]));
    (i < 3 ? grid[i] : block[i - 3]) = static_cast<unsigned>(sizes[i]);
  }
  if (extra)
    fail("kernel '" + name + "' launched with packed arguments ('extra')");
  if (sharedBytes < 0)
    fail("kernel '" + name + "' launched with negative shared memory");
  check(device().launch(function, name, grid, block,
                        static_cast<unsigned>(sharedBytes), parameters));
}

/// Every stream is the device's one stream.
CUstream mgpuStreamCreate() { return device().stream(); }
void mgpuStreamDestroy(CUstream) {}
void mgpuStreamSynchronize(CUstream) { check(device().synchronize()); }
/// Work on one stream runs in order: waiting on its own events is implied.
void mgpuStreamWaitEvent(CUstream, CUevent) {}

CUevent mgpuEventCreate() {
  CUevent event = nullptr;
  check(device().createEvent(event));
  return event;
}
void mgpuEventDestroy(CUevent event) { check(device().destroyEvent(event)); }
void mgpuEventSynchronize(CUevent event) {
  check(device().waitForEvent(event));
}
void mgpuEventRecord(CUevent event, CUstream) {
  check(device().recordEvent(event));
}

void *mgpuMemAlloc(uint64_t bytes, CUstream, bool hostShared) {
  if (hostShared)
    fail("host-shared GPU memory (gpu.alloc host_shared) is not supported");
  CUdeviceptr pointer = 0;
  check(device().allocator().allocate(bytes, pointer));
  return reinterpret_cast<void *>(pointer);
}

void mgpuMemFree(void *pointer, CUstream) {
  check(
      device().allocator().deallocate(reinterpret_cast<CUdeviceptr>(pointer)));
}

void mgpuMemcpy(void *to, void *from, size_t bytes, CUstream) {
  check(device().copy(to, from, bytes));
}

} // extern "C"

const std::vector<mlir::gs::runtime::RuntimeFunction> &
mlir::gs::runtime::cuda::runtimeAPIFunctions() {
  static const std::vector<RuntimeFunction> functions = {
      {"mgpuSetDefaultDevice", reinterpret_cast<void *>(&mgpuSetDefaultDevice)},
      {"mgpuModuleLoad", reinterpret_cast<void *>(&mgpuModuleLoad)},
      {"mgpuModuleLoadJIT", reinterpret_cast<void *>(&mgpuModuleLoadJIT)},
      {"mgpuModuleUnload", reinterpret_cast<void *>(&mgpuModuleUnload)},
      {"mgpuModuleGetFunction",
       reinterpret_cast<void *>(&mgpuModuleGetFunction)},
      {"mgpuLaunchKernel", reinterpret_cast<void *>(&mgpuLaunchKernel)},
      {"mgpuStreamCreate", reinterpret_cast<void *>(&mgpuStreamCreate)},
      {"mgpuStreamDestroy", reinterpret_cast<void *>(&mgpuStreamDestroy)},
      {"mgpuStreamSynchronize",
       reinterpret_cast<void *>(&mgpuStreamSynchronize)},
      {"mgpuStreamWaitEvent", reinterpret_cast<void *>(&mgpuStreamWaitEvent)},
      {"mgpuEventCreate", reinterpret_cast<void *>(&mgpuEventCreate)},
      {"mgpuEventDestroy", reinterpret_cast<void *>(&mgpuEventDestroy)},
      {"mgpuEventSynchronize", reinterpret_cast<void *>(&mgpuEventSynchronize)},
      {"mgpuEventRecord", reinterpret_cast<void *>(&mgpuEventRecord)},
      {"mgpuMemAlloc", reinterpret_cast<void *>(&mgpuMemAlloc)},
      {"mgpuMemFree", reinterpret_cast<void *>(&mgpuMemFree)},
      {"mgpuMemcpy", reinterpret_cast<void *>(&mgpuMemcpy)},
  };
  return functions;
}
