//===- Driver.cpp - The CUDA driver API, opened at run time ---------------===//

#include "gs/Runtime/Cuda/Driver.h"

#include <dlfcn.h>

#include <cstdlib>

using namespace mlir::gs::runtime::cuda;

namespace {
/// The library opened, its entry points, and why opening failed.
struct OpenedDriver {
  DriverApi api{};
  std::string error;
};

/// One entry point: where it goes and the exported name with the
/// signature DriverApi declares (the _v2 names where cuda.h maps to them;
/// cuEventElapsedTime's _v2 needs CUDA 12.8, the plain name is the same).
struct EntryPoint {
  void **slot;
  const char *name;
};
} // namespace

/// The reason cuInit gives for having no GPU to run on.
static std::string explainInitFailure(const DriverApi &api, CUresult result,
                                      const std::string &library) {
  switch (result) {
  case kErrorStubLibrary:
    return library +
           " is the CUDA toolkit's stub library, not an NVIDIA driver: GPU "
           "executables run where a GPU and its driver are installed";
  case kErrorNoDevice:
    return "the NVIDIA driver (" + library + ") sees no GPU";
  case kErrorInsufficientDriver:
    return "the NVIDIA driver (" + library +
           ") is older than this CUDA runtime needs";
  default:
    return describeResult(api, result, "cuInit");
  }
}

static OpenedDriver open() {
  OpenedDriver driver;
  const char *override = std::getenv("GS_LIBCUDA");
  std::string library =
      override && *override ? std::string(override) : "libcuda.so.1";
  void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *reason = dlerror();
    driver.error = "no NVIDIA GPU driver here: cannot load " + library +
                   (reason ? std::string(" (") + reason + ")" : "") +
                   "; GPU executables need an NVIDIA GPU and its driver";
    return driver;
  }
  DriverApi &api = driver.api;
  const EntryPoint entryPoints[] = {
      {reinterpret_cast<void **>(&api.init), "cuInit"},
      {reinterpret_cast<void **>(&api.driverGetVersion), "cuDriverGetVersion"},
      {reinterpret_cast<void **>(&api.getErrorName), "cuGetErrorName"},
      {reinterpret_cast<void **>(&api.getErrorString), "cuGetErrorString"},
      {reinterpret_cast<void **>(&api.deviceGetCount), "cuDeviceGetCount"},
      {reinterpret_cast<void **>(&api.deviceGet), "cuDeviceGet"},
      {reinterpret_cast<void **>(&api.deviceGetName), "cuDeviceGetName"},
      {reinterpret_cast<void **>(&api.deviceGetAttribute),
       "cuDeviceGetAttribute"},
      {reinterpret_cast<void **>(&api.deviceTotalMem), "cuDeviceTotalMem_v2"},
      {reinterpret_cast<void **>(&api.primaryCtxRetain),
       "cuDevicePrimaryCtxRetain"},
      {reinterpret_cast<void **>(&api.primaryCtxRelease),
       "cuDevicePrimaryCtxRelease_v2"},
      {reinterpret_cast<void **>(&api.ctxSetCurrent), "cuCtxSetCurrent"},
      {reinterpret_cast<void **>(&api.streamCreate), "cuStreamCreate"},
      {reinterpret_cast<void **>(&api.streamDestroy), "cuStreamDestroy_v2"},
      {reinterpret_cast<void **>(&api.streamSynchronize),
       "cuStreamSynchronize"},
      {reinterpret_cast<void **>(&api.streamWaitEvent), "cuStreamWaitEvent"},
      {reinterpret_cast<void **>(&api.memAlloc), "cuMemAlloc_v2"},
      {reinterpret_cast<void **>(&api.memFree), "cuMemFree_v2"},
      {reinterpret_cast<void **>(&api.memHostAlloc), "cuMemHostAlloc"},
      {reinterpret_cast<void **>(&api.memFreeHost), "cuMemFreeHost"},
      {reinterpret_cast<void **>(&api.memcpyHtoDAsync), "cuMemcpyHtoDAsync_v2"},
      {reinterpret_cast<void **>(&api.memcpyDtoHAsync), "cuMemcpyDtoHAsync_v2"},
      {reinterpret_cast<void **>(&api.memcpyAsync), "cuMemcpyAsync"},
      {reinterpret_cast<void **>(&api.moduleLoadDataEx), "cuModuleLoadDataEx"},
      {reinterpret_cast<void **>(&api.moduleUnload), "cuModuleUnload"},
      {reinterpret_cast<void **>(&api.moduleGetFunction),
       "cuModuleGetFunction"},
      {reinterpret_cast<void **>(&api.funcSetAttribute), "cuFuncSetAttribute"},
      {reinterpret_cast<void **>(&api.launchKernel), "cuLaunchKernel"},
      {reinterpret_cast<void **>(&api.eventCreate), "cuEventCreate"},
      {reinterpret_cast<void **>(&api.eventDestroy), "cuEventDestroy_v2"},
      {reinterpret_cast<void **>(&api.eventRecord), "cuEventRecord"},
      {reinterpret_cast<void **>(&api.eventSynchronize), "cuEventSynchronize"},
      {reinterpret_cast<void **>(&api.eventQuery), "cuEventQuery"},
      {reinterpret_cast<void **>(&api.eventElapsedTime), "cuEventElapsedTime"},
  };
  for (const EntryPoint &entry : entryPoints) {
    *entry.slot = dlsym(handle, entry.name);
    if (!*entry.slot) {
      driver.error = library + " has no " + entry.name +
                     ": it is not an NVIDIA driver, or one too old for "
                     "GradScale";
      return driver;
    }
  }
  // Optional: without them, every run queues its kernels one by one.
  const EntryPoint graphEntryPoints[] = {
      {reinterpret_cast<void **>(&api.streamBeginCapture),
       "cuStreamBeginCapture_v2"},
      {reinterpret_cast<void **>(&api.streamEndCapture), "cuStreamEndCapture"},
      {reinterpret_cast<void **>(&api.graphInstantiate),
       "cuGraphInstantiateWithFlags"},
      {reinterpret_cast<void **>(&api.graphLaunch), "cuGraphLaunch"},
      {reinterpret_cast<void **>(&api.graphExecDestroy), "cuGraphExecDestroy"},
      {reinterpret_cast<void **>(&api.graphDestroy), "cuGraphDestroy"},
  };
  bool graphs = true;
  for (const EntryPoint &entry : graphEntryPoints)
    graphs = (*entry.slot = dlsym(handle, entry.name)) && graphs;
  if (!graphs)
    for (const EntryPoint &entry : graphEntryPoints)
      *entry.slot = nullptr;
  if (CUresult result = api.init(0); result != kSuccess)
    driver.error = explainInitFailure(api, result, library);
  // The library stays open for the process.
  return driver;
}

std::string mlir::gs::runtime::cuda::openDriver(const DriverApi *&api) {
  static const OpenedDriver driver = open();
  if (!driver.error.empty())
    return driver.error;
  api = &driver.api;
  return {};
}

std::string mlir::gs::runtime::cuda::describeResult(const DriverApi &api,
                                                    CUresult result,
                                                    const std::string &what) {
  const char *name = nullptr;
  const char *text = nullptr;
  if (api.getErrorName(result, &name) != kSuccess || !name)
    name = "an unknown CUDA error";
  std::string message = what + ": " + name;
  if (api.getErrorString(result, &text) == kSuccess && text)
    message += std::string(" (") + text + ")";
  return message + " [" + std::to_string(result) + "]";
}
