//===- Device.h - One GPU: context, stream, memory, kernels -----*- C++ -*-===//
//
// The host side of GPU execution: a device's primary context, the stream
// everything is queued on (copies, launches, timing events) and side
// streams whose work runs beside it (collectives), its
// caching allocator, and kernel modules loaded from the images an
// executable embeds (cubins per architecture, PTX the driver compiles for
// newer GPUs). Every call returns an error message, empty on success.
//
//===----------------------------------------------------------------------===//

#ifndef GS_RUNTIME_CUDA_DEVICE_H
#define GS_RUNTIME_CUDA_DEVICE_H

#include "gs/Runtime/Cuda/DeviceAllocator.h"
#include "gs/Runtime/Cuda/Driver.h"
#include "gs/Runtime/RuntimeFunction.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlir::gs::runtime::cuda {

/// A kernel module compiled for one architecture.
struct KernelImage {
  enum class Kind { Cubin, Ptx };
  Kind kind;
  /// "sm_80", "sm_90a": the architecture it was compiled for.
  std::string arch;
  /// The image (PTX text NUL-terminated, as the driver reads it).
  std::string_view bytes;
};

/// An architecture name's compute capability (major * 10 + minor) and
/// whether it is architecture-specific ("sm_90a": that GPU only); nullopt
/// for a name that is not sm_XY[a].
struct ArchInfo {
  int capability;
  bool specific;
};
std::optional<ArchInfo> parseArch(std::string_view arch);

/// The image to load on a GPU of compute capability `capability`: the
/// cubin of the highest architecture the GPU runs (same major, minor not
/// above; an arch-specific one only on its own GPU), else the PTX of the
/// highest architecture not above the GPU's, which the driver compiles.
/// Null if none runs there.
const KernelImage *selectImage(const std::vector<KernelImage> &images,
                               int capability);

class Device;

/// A loaded module; its functions are looked up once. It lives no longer
/// than its device.
class Module {
public:
  ~Module();
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  /// The function `kernel` of the module (looked up once).
  std::string function(const std::string &kernel, CUfunction &handle);

  /// Launches `kernel` on the device's stream with the addresses of its
  /// arguments in `arguments`; `sharedBytes` of dynamic shared memory.
  std::string launch(const std::string &kernel, const unsigned grid[3],
                     const unsigned block[3], unsigned sharedBytes,
                     void **arguments);

  /// The image loaded (which architecture, cubin or PTX).
  const KernelImage &image() const { return loaded; }

private:
  friend class Device;
  Module(Device &device, CUmodule module, KernelImage loaded)
      : device(device), module(module), loaded(loaded) {}

  Device &device;
  CUmodule module;
  KernelImage loaded;
  std::map<std::string, CUfunction> functions;
};

/// The driver calls a device has made, by what they cost the host.
struct CallCounts {
  /// Kernels launched one by one.
  int64_t launches = 0;
  /// CUDA graphs launched, and the kernels they ran (their copies count
  /// as copies).
  int64_t graphLaunches = 0;
  int64_t graphKernels = 0;
  /// Calls that wait for the GPU: stream and event synchronization,
  /// cuMemAlloc and cuMemFree, cuMemHostAlloc and cuMemFreeHost, module
  /// loads, and copies between the device and pageable host memory (the
  /// driver returns from one to pageable memory once it is done, and may
  /// wait for the stream before one from there).
  int64_t hostSynchronizations = 0;
  /// Copies queued.
  int64_t copies = 0;
};

class Device {
public:
  /// Opens GPU `ordinal`: the driver, the device's primary context, a
  /// stream.
  static std::string open(int ordinal, std::unique_ptr<Device> &device);
  ~Device();
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  const DriverApi &api() const { return driver; }
  const std::string &name() const { return deviceName; }
  /// major * 10 + minor.
  int capability() const { return computeCapability; }
  size_t totalMemory() const { return memoryBytes; }
  CUstream stream() const { return queue; }
  DeviceAllocator &allocator() { return *memory; }

  /// Loads the image of `images` selectImage picks.
  std::string loadModule(const std::vector<KernelImage> &images,
                         std::unique_ptr<Module> &module);
  /// Loads `image` as it is (the driver tells whether it runs here).
  std::string loadImage(const KernelImage &image,
                        std::unique_ptr<Module> &module);

  /// Queues `function` (named `name` in errors); see Module::launch.
  std::string launch(CUfunction function, const std::string &name,
                     const unsigned grid[3], const unsigned block[3],
                     unsigned sharedBytes, void **arguments);

  /// Copies between the device and host memory, queued on the stream; the
  /// host waits unless the host memory is page-locked (allocateHost).
  std::string copyToDevice(CUdeviceptr to, const void *from, size_t bytes);
  std::string copyToHost(void *to, CUdeviceptr from, size_t bytes);
  /// Host or device to host or device (unified addressing).
  std::string copy(void *to, const void *from, size_t bytes);
  /// Waits for everything queued.
  std::string synchronize();

  /// Timing: an event the device owns, queued again at each record;
  /// `elapsedMs` waits for `end` and gives the milliseconds since `start`.
  std::string createEvent(CUevent &event);
  std::string recordEvent(CUevent event);
  std::string elapsedMs(CUevent start, CUevent end, float &milliseconds);
  std::string waitForEvent(CUevent event);
  std::string destroyEvent(CUevent event);
  /// Whether the work queued before `event`'s last record is done, without
  /// waiting for it.
  std::string eventDone(CUevent event, bool &done);

  /// Page-locked host memory (cuMemHostAlloc), which copies to and from the
  /// device reach without the host waiting; freed with freeHost.
  std::string allocateHost(size_t bytes, void *&pointer);
  std::string freeHost(void *pointer);

  /// Ordering across streams, the host not waiting: a stream the device
  /// owns, whose work may run beside the main stream's; an event without
  /// timing, recorded on `stream`; and `stream`'s later work made to wait
  /// for the work queued before `event`'s last record.
  std::string createSideStream(CUstream &stream);
  std::string createOrderingEvent(CUevent &event);
  std::string recordEvent(CUevent event, CUstream stream);
  std::string streamWaitEvent(CUstream stream, CUevent event);

  /// CUDA graphs: whether the driver has them. Between beginCapture and
  /// endCapture, the work queued on the stream is recorded, not run (its
  /// launches and copies counted when the graph runs); endCapture
  /// instantiates it (an error if a call during the capture could not be
  /// recorded), and each launchGraph queues all of it with one call.
  bool hasGraphs() const { return driver.streamBeginCapture != nullptr; }
  std::string beginCapture();
  bool capturing() const { return capturingNow; }
  std::string endCapture(CUgraphExec &graph);
  std::string launchGraph(CUgraphExec graph);
  std::string destroyGraph(CUgraphExec graph);

  /// What this device's calls have cost so far: a train step's count is
  /// the difference over it (the target is no host synchronization).
  const CallCounts &callCounts() const { return counts; }

  /// The driver's error text for `result` of `what`; empty on success.
  std::string check(CUresult result, const std::string &what) const;

private:
  Device(const DriverApi &driver, CUdevice handle)
      : driver(driver), handle(handle) {}

  const DriverApi &driver;
  CUdevice handle;
  CUcontext context = nullptr;
  CUstream queue = nullptr;
  std::string deviceName;
  int computeCapability = 0;
  size_t memoryBytes = 0;
  std::unique_ptr<DeviceAllocator> memory;
  CallCounts counts;
  /// The dynamic shared memory each function has been allowed beyond the
  /// 48 KiB it may use unasked.
  std::map<CUfunction, unsigned> sharedLimits;
  /// Whether `bytes` at `pointer` lie in one block of allocateHost.
  bool pageLocked(const void *pointer, size_t bytes) const;

  std::vector<CUevent> events;
  /// While capturing, the launches and copies recorded so far.
  bool capturingNow = false;
  CallCounts captured;
  /// The instantiated graphs and the launches and copies each replays.
  std::map<CUgraphExec, CallCounts> graphs;
  std::vector<CUstream> sideStreams;
  /// allocateHost's blocks: their byte sizes by address.
  std::map<uintptr_t, size_t> hostBlocks;
};

/// The process's GPU, which compiled host code (MLIR's GPU runtime calls,
/// MgpuWrappers.cpp) and the runtime's parameter copies share: GPU
/// `GS_CUDA_DEVICE` (default 0, or what mgpuSetDefaultDevice set), opened
/// at the first call. Null with an error saying why there is none.
std::string processDevice(Device *&device);

/// The GPU processDevice opens, chosen before its first call (a rank's GPU
/// among its machine's); GS_CUDA_DEVICE does not override it.
void setProcessDeviceOrdinal(int ordinal);

/// While `sink` is set, the driver errors of MLIR's GPU runtime API calls
/// (MgpuWrappers.cpp) go to it (the first one) instead of ending the
/// process: a CUDA graph capture that a call spoils is dropped, and the
/// function it captured runs again without one. Null restores exiting.
void setRuntimeAPIErrorSink(std::string *sink);

/// The functions of MLIR's GPU runtime API (mgpu*) as GSCudaRuntime defines
/// them (MgpuWrappers.cpp), for a JIT that links host code lowered for a
/// GPU into a process whose dynamic symbol table need not hold them.
const std::vector<RuntimeFunction> &runtimeAPIFunctions();

} // namespace mlir::gs::runtime::cuda

#endif // GS_RUNTIME_CUDA_DEVICE_H
