//===- Driver.h - The CUDA driver API, opened at run time -------*- C++ -*-===//
//
// GPU executables reach the NVIDIA driver through libcuda.so.1, opened with
// dlopen on the first GPU call: they link and start on machines without a
// GPU, and say there that none is present. Only the entry points GradScale
// calls are resolved, by the names whose C signatures the driver keeps
// across CUDA versions; no CUDA header is needed to build them.
//
// GS_LIBCUDA names another library to open (a driver installed elsewhere).
//
//===----------------------------------------------------------------------===//

#ifndef GS_RUNTIME_CUDA_DRIVER_H
#define GS_RUNTIME_CUDA_DRIVER_H

#include <cstddef>
#include <string>

namespace mlir::gs::runtime::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;

/// The driver's result codes this runtime tells apart (cuda.h's values).
enum : CUresult {
  kSuccess = 0,
  kErrorOutOfMemory = 2,
  kErrorStubLibrary = 34,
  kErrorInsufficientDriver = 35,
  kErrorNoDevice = 100,
  kErrorNoBinaryForGpu = 209,
  kErrorUnsupportedPtxVersion = 222,
  kErrorNotReady = 600,
  kErrorStreamCaptureUnsupported = 900,
  kErrorStreamCaptureInvalidated = 901,
};

/// cuDeviceGetAttribute's attributes and other enumerators used.
enum : int {
  kAttributeComputeCapabilityMajor = 75,
  kAttributeComputeCapabilityMinor = 76,
  kFuncAttributeMaxDynamicSharedBytes = 8,
  kStreamNonBlocking = 1,
  kEventDisableTiming = 2,
  kStreamCaptureModeRelaxed = 2,
};

/// The resolved entry points.
struct DriverApi {
  CUresult (*init)(unsigned flags);
  CUresult (*driverGetVersion)(int *version);
  CUresult (*getErrorName)(CUresult result, const char **name);
  CUresult (*getErrorString)(CUresult result, const char **text);
  CUresult (*deviceGetCount)(int *count);
  CUresult (*deviceGet)(CUdevice *device, int ordinal);
  CUresult (*deviceGetName)(char *name, int length, CUdevice device);
  CUresult (*deviceGetAttribute)(int *value, int attribute, CUdevice device);
  CUresult (*deviceTotalMem)(size_t *bytes, CUdevice device);
  CUresult (*primaryCtxRetain)(CUcontext *context, CUdevice device);
  CUresult (*primaryCtxRelease)(CUdevice device);
  CUresult (*ctxSetCurrent)(CUcontext context);
  CUresult (*streamCreate)(CUstream *stream, unsigned flags);
  CUresult (*streamDestroy)(CUstream stream);
  CUresult (*streamSynchronize)(CUstream stream);
  CUresult (*streamWaitEvent)(CUstream stream, CUevent event, unsigned flags);
  CUresult (*memAlloc)(CUdeviceptr *pointer, size_t bytes);
  CUresult (*memFree)(CUdeviceptr pointer);
  /// Page-locked host memory, which copies reach without the host waiting.
  CUresult (*memHostAlloc)(void **pointer, size_t bytes, unsigned flags);
  CUresult (*memFreeHost)(void *pointer);
  CUresult (*memcpyHtoDAsync)(CUdeviceptr to, const void *from, size_t bytes,
                              CUstream stream);
  CUresult (*memcpyDtoHAsync)(void *to, CUdeviceptr from, size_t bytes,
                              CUstream stream);
  /// Either direction, by unified addressing.
  CUresult (*memcpyAsync)(CUdeviceptr to, CUdeviceptr from, size_t bytes,
                          CUstream stream);
  CUresult (*moduleLoadDataEx)(CUmodule *module, const void *image,
                               unsigned numOptions, int *options,
                               void **values);
  CUresult (*moduleUnload)(CUmodule module);
  CUresult (*moduleGetFunction)(CUfunction *function, CUmodule module,
                                const char *name);
  CUresult (*funcSetAttribute)(CUfunction function, int attribute, int value);
  CUresult (*launchKernel)(CUfunction function, unsigned gridX, unsigned gridY,
                           unsigned gridZ, unsigned blockX, unsigned blockY,
                           unsigned blockZ, unsigned sharedBytes,
                           CUstream stream, void **parameters, void **extra);
  CUresult (*eventCreate)(CUevent *event, unsigned flags);
  CUresult (*eventDestroy)(CUevent event);
  CUresult (*eventRecord)(CUevent event, CUstream stream);
  CUresult (*eventSynchronize)(CUevent event);
  /// kSuccess once the work before the event's last record is done,
  /// kErrorNotReady before.
  CUresult (*eventQuery)(CUevent event);
  CUresult (*eventElapsedTime)(float *milliseconds, CUevent start, CUevent end);
  /// CUDA graphs (CUDA 11.4 and later drivers; null where the driver has
  /// none): work queued on a stream between the begin and end of a capture
  /// is recorded into a graph instead of run, and an instantiated graph
  /// replays it with one launch.
  CUresult (*streamBeginCapture)(CUstream stream, int mode);
  CUresult (*streamEndCapture)(CUstream stream, CUgraph *graph);
  CUresult (*graphInstantiate)(CUgraphExec *exec, CUgraph graph,
                               unsigned long long flags);
  CUresult (*graphLaunch)(CUgraphExec exec, CUstream stream);
  CUresult (*graphExecDestroy)(CUgraphExec exec);
  CUresult (*graphDestroy)(CUgraph graph);
};

/// Opens the driver (once per process) and initializes it. On success sets
/// `api` and returns an empty string; otherwise says why there is no GPU
/// to run on: no driver library, a library without an entry point, the
/// CUDA toolkit's stub in the driver's place, a driver older than the
/// runtime needs, no device.
std::string openDriver(const DriverApi *&api);

/// "`what`: CUDA_ERROR_NAME (the driver's text)".
std::string describeResult(const DriverApi &api, CUresult result,
                           const std::string &what);

} // namespace mlir::gs::runtime::cuda

#endif // GS_RUNTIME_CUDA_DRIVER_H
