//===- Device.cpp - One GPU: context, stream, memory, kernels -------------===//

#include "gs/Runtime/Cuda/Device.h"

#include <algorithm>
#include <charconv>

using namespace mlir::gs::runtime::cuda;

/// Kernels may use this much dynamic shared memory without asking.
static constexpr unsigned kDefaultSharedBytes = 48 * 1024;

std::optional<ArchInfo>
mlir::gs::runtime::cuda::parseArch(std::string_view arch) {
  if (arch.substr(0, 3) != "sm_")
    return std::nullopt;
  arch.remove_prefix(3);
  bool specific = !arch.empty() && arch.back() == 'a';
  if (specific)
    arch.remove_suffix(1);
  int capability = 0;
  auto [end, error] =
      std::from_chars(arch.data(), arch.data() + arch.size(), capability);
  if (error != std::errc() || end != arch.data() + arch.size() ||
      capability < 10 || capability > 999)
    return std::nullopt;
  return ArchInfo{capability, specific};
}

const KernelImage *
mlir::gs::runtime::cuda::selectImage(const std::vector<KernelImage> &images,
                                     int capability) {
  // Ranks: the higher architecture, and the arch-specific one of two equal.
  const KernelImage *bestCubin = nullptr, *bestPtx = nullptr;
  int bestCubinRank = -1, bestPtxRank = -1;
  for (const KernelImage &image : images) {
    std::optional<ArchInfo> arch = parseArch(image.arch);
    if (!arch || arch->capability > capability)
      continue;
    if (arch->specific && arch->capability != capability)
      continue;
    int rank = arch->capability * 2 + (arch->specific ? 1 : 0);
    if (image.kind == KernelImage::Kind::Cubin) {
      // A cubin runs on its major version only.
      if (arch->capability / 10 != capability / 10 || rank <= bestCubinRank)
        continue;
      bestCubin = &image;
      bestCubinRank = rank;
    } else if (rank > bestPtxRank) {
      bestPtx = &image;
      bestPtxRank = rank;
    }
  }
  return bestCubin ? bestCubin : bestPtx;
}

static std::string archName(int capability) {
  return "sm_" + std::to_string(capability);
}

std::string Device::check(CUresult result, const std::string &what) const {
  if (result == kSuccess)
    return {};
  return describeResult(driver, result, what);
}

std::string Device::open(int ordinal, std::unique_ptr<Device> &device) {
  const DriverApi *api = nullptr;
  if (std::string error = openDriver(api); !error.empty())
    return error;
  int count = 0;
  if (CUresult result = api->deviceGetCount(&count); result != kSuccess)
    return describeResult(*api, result, "counting GPUs");
  if (ordinal < 0 || ordinal >= count)
    return "there is no GPU " + std::to_string(ordinal) + ": the driver sees " +
           std::to_string(count);
  CUdevice handle = 0;
  if (CUresult result = api->deviceGet(&handle, ordinal); result != kSuccess)
    return describeResult(*api, result,
                          "opening GPU " + std::to_string(ordinal));
  std::unique_ptr<Device> opened(new Device(*api, handle));
  char name[256] = {};
  int major = 0, minor = 0;
  if (std::string error =
          opened->check(api->deviceGetName(name, sizeof(name) - 1, handle),
                        "cuDeviceGetName");
      !error.empty())
    return error;
  if (std::string error =
          opened->check(api->deviceGetAttribute(
                            &major, kAttributeComputeCapabilityMajor, handle),
                        "reading the compute capability");
      !error.empty())
    return error;
  if (std::string error =
          opened->check(api->deviceGetAttribute(
                            &minor, kAttributeComputeCapabilityMinor, handle),
                        "reading the compute capability");
      !error.empty())
    return error;
  if (std::string error =
          opened->check(api->deviceTotalMem(&opened->memoryBytes, handle),
                        "cuDeviceTotalMem");
      !error.empty())
    return error;
  opened->deviceName = name;
  opened->computeCapability = major * 10 + minor;
  if (std::string error =
          opened->check(api->primaryCtxRetain(&opened->context, handle),
                        "retaining the GPU's primary context");
      !error.empty())
    return error;
  if (std::string error = opened->check(api->ctxSetCurrent(opened->context),
                                        "making the GPU's context current");
      !error.empty())
    return error;
  if (std::string error =
          opened->check(api->streamCreate(&opened->queue, kStreamNonBlocking),
                        "creating a stream");
      !error.empty())
    return error;
  CallCounts *counts = &opened->counts;
  opened->memory = std::make_unique<DeviceAllocator>(DeviceAllocator::Backend{
      [api, counts](CUdeviceptr *pointer, size_t bytes) {
        ++counts->hostSynchronizations;
        return api->memAlloc(pointer, bytes);
      },
      [api, counts](CUdeviceptr pointer) {
        ++counts->hostSynchronizations;
        return api->memFree(pointer);
      },
      [api](CUresult result, const std::string &what) {
        return describeResult(*api, result, what);
      }});
  device = std::move(opened);
  return {};
}

Device::~Device() {
  // Teardown errors have no one to go to; the context is released last.
  if (queue)
    (void)driver.streamSynchronize(queue);
  for (CUstream side : sideStreams)
    (void)driver.streamSynchronize(side);
  for (const auto &[graph, recorded] : graphs)
    (void)driver.graphExecDestroy(graph);
  memory.reset();
  for (const auto &[address, bytes] : hostBlocks)
    (void)driver.memFreeHost(reinterpret_cast<void *>(address));
  for (CUevent event : events)
    (void)driver.eventDestroy(event);
  for (CUstream side : sideStreams)
    (void)driver.streamDestroy(side);
  if (queue)
    (void)driver.streamDestroy(queue);
  if (context)
    (void)driver.primaryCtxRelease(handle);
}

std::string Device::loadModule(const std::vector<KernelImage> &images,
                               std::unique_ptr<Module> &module) {
  const KernelImage *image = selectImage(images, computeCapability);
  if (!image) {
    std::string available;
    for (const KernelImage &candidate : images)
      available +=
          (available.empty() ? "" : ", ") +
          std::string(candidate.kind == KernelImage::Kind::Cubin ? "cubin "
                                                                 : "PTX ") +
          candidate.arch;
    return "no kernel image runs on " + deviceName + " (" +
           archName(computeCapability) + "); the executable has " +
           (available.empty() ? std::string("none") : available) +
           ": compile it with --gpu-arch=" + archName(computeCapability);
  }
  return loadImage(*image, module);
}

std::string Device::loadImage(const KernelImage &image,
                              std::unique_ptr<Module> &module) {
  // The driver reads PTX up to its NUL.
  std::string text;
  const void *bytes = image.bytes.data();
  if (image.kind == KernelImage::Kind::Ptx) {
    text.assign(image.bytes);
    bytes = text.c_str();
  }
  CUmodule loaded = nullptr;
  ++counts.hostSynchronizations;
  CUresult result =
      driver.moduleLoadDataEx(&loaded, bytes, 0, nullptr, nullptr);
  if (result == kErrorUnsupportedPtxVersion)
    return "the NVIDIA driver is too old for the PTX of " + image.arch +
           " that this executable carries: update the driver";
  std::string what =
      std::string("loading the kernels (") +
      (image.kind == KernelImage::Kind::Cubin ? "cubin" : "PTX") +
      (image.arch.empty() ? "" : " " + image.arch) + ") on " + deviceName;
  if (std::string error = check(result, what); !error.empty())
    return error;
  module.reset(new Module(*this, loaded, image));
  return {};
}

Module::~Module() { (void)device.api().moduleUnload(module); }

std::string Module::function(const std::string &kernel, CUfunction &handle) {
  auto found = functions.find(kernel);
  if (found == functions.end()) {
    if (std::string error = device.check(
            device.api().moduleGetFunction(&handle, module, kernel.c_str()),
            "finding kernel '" + kernel + "'");
        !error.empty())
      return error;
    found = functions.emplace(kernel, handle).first;
  }
  handle = found->second;
  return {};
}

std::string Module::launch(const std::string &kernel, const unsigned grid[3],
                           const unsigned block[3], unsigned sharedBytes,
                           void **arguments) {
  CUfunction handle = nullptr;
  if (std::string error = function(kernel, handle); !error.empty())
    return error;
  return device.launch(handle, kernel, grid, block, sharedBytes, arguments);
}

std::string Device::launch(CUfunction function, const std::string &name,
                           const unsigned grid[3], const unsigned block[3],
                           unsigned sharedBytes, void **arguments) {
  if (sharedBytes > kDefaultSharedBytes) {
    unsigned &allowed = sharedLimits[function];
    if (sharedBytes > allowed) {
      if (std::string error = check(
              driver.funcSetAttribute(function,
                                      kFuncAttributeMaxDynamicSharedBytes,
                                      static_cast<int>(sharedBytes)),
              "giving kernel '" + name + "' " + std::to_string(sharedBytes) +
                  " bytes of shared memory");
          !error.empty())
        return error;
      allowed = sharedBytes;
    }
  }
  ++(capturing() ? captured.launches : counts.launches);
  return check(driver.launchKernel(function, grid[0], grid[1], grid[2],
                                   block[0], block[1], block[2], sharedBytes,
                                   queue, arguments, nullptr),
               "launching kernel '" + name + "'");
}

bool Device::pageLocked(const void *pointer, size_t bytes) const {
  auto address = reinterpret_cast<uintptr_t>(pointer);
  auto block = hostBlocks.upper_bound(address);
  if (block == hostBlocks.begin())
    return false;
  --block;
  return address - block->first <= block->second &&
         bytes <= block->second - (address - block->first);
}

std::string Device::copyToDevice(CUdeviceptr to, const void *from,
                                 size_t bytes) {
  ++(capturing() ? captured.copies : counts.copies);
  if (!pageLocked(from, bytes))
    ++counts.hostSynchronizations;
  return check(driver.memcpyHtoDAsync(to, from, bytes, queue),
               "copying " + std::to_string(bytes) + " bytes to the GPU");
}

std::string Device::copyToHost(void *to, CUdeviceptr from, size_t bytes) {
  ++(capturing() ? captured.copies : counts.copies);
  if (!pageLocked(to, bytes))
    ++counts.hostSynchronizations;
  return check(driver.memcpyDtoHAsync(to, from, bytes, queue),
               "copying " + std::to_string(bytes) + " bytes from the GPU");
}

std::string Device::allocateHost(size_t bytes, void *&pointer) {
  ++counts.hostSynchronizations;
  pointer = nullptr;
  if (std::string error =
          check(driver.memHostAlloc(&pointer, std::max<size_t>(bytes, 1), 0),
                "allocating " + std::to_string(bytes) +
                    " bytes of page-locked host memory");
      !error.empty())
    return error;
  hostBlocks[reinterpret_cast<uintptr_t>(pointer)] = bytes;
  return {};
}

std::string Device::freeHost(void *pointer) {
  if (!hostBlocks.erase(reinterpret_cast<uintptr_t>(pointer)))
    return "freeing host memory this device did not allocate";
  ++counts.hostSynchronizations;
  return check(driver.memFreeHost(pointer), "cuMemFreeHost");
}

std::string Device::copy(void *to, const void *from, size_t bytes) {
  ++(capturing() ? captured.copies : counts.copies);
  return check(driver.memcpyAsync(reinterpret_cast<CUdeviceptr>(to),
                                  reinterpret_cast<CUdeviceptr>(from), bytes,
                                  queue),
               "copying " + std::to_string(bytes) + " bytes");
}

std::string Device::synchronize() {
  ++counts.hostSynchronizations;
  return check(driver.streamSynchronize(queue), "running the GPU's work");
}

std::string Device::beginCapture() {
  if (!hasGraphs())
    return "this NVIDIA driver has no CUDA graphs";
  if (capturing())
    return "a CUDA graph capture began while another is under way";
  if (std::string error =
          check(driver.streamBeginCapture(queue, kStreamCaptureModeRelaxed),
                "beginning a CUDA graph capture");
      !error.empty())
    return error;
  captured = CallCounts();
  capturingNow = true;
  return {};
}

std::string Device::endCapture(CUgraphExec &exec) {
  exec = nullptr;
  if (!capturing())
    return "a CUDA graph capture ended that never began";
  CallCounts recorded = captured;
  capturingNow = false;
  CUgraph graph = nullptr;
  if (std::string error = check(driver.streamEndCapture(queue, &graph),
                                "capturing a CUDA graph");
      !error.empty()) {
    if (graph)
      (void)driver.graphDestroy(graph);
    return error;
  }
  std::string error = check(driver.graphInstantiate(&exec, graph, 0),
                            "instantiating a CUDA graph");
  (void)driver.graphDestroy(graph);
  if (error.empty())
    graphs[exec] = recorded;
  else
    exec = nullptr;
  return error;
}

std::string Device::launchGraph(CUgraphExec graph) {
  auto found = graphs.find(graph);
  if (found == graphs.end())
    return "launching a CUDA graph this device did not instantiate";
  ++counts.graphLaunches;
  counts.graphKernels += found->second.launches;
  counts.copies += found->second.copies;
  return check(driver.graphLaunch(graph, queue), "launching a CUDA graph");
}

std::string Device::destroyGraph(CUgraphExec graph) {
  if (!graphs.erase(graph))
    return "destroying a CUDA graph this device did not instantiate";
  return check(driver.graphExecDestroy(graph), "destroying a CUDA graph");
}

std::string Device::createEvent(CUevent &event) {
  if (std::string error = check(driver.eventCreate(&event, 0), "cuEventCreate");
      !error.empty())
    return error;
  events.push_back(event);
  return {};
}

std::string Device::recordEvent(CUevent event) {
  return recordEvent(event, queue);
}

std::string Device::createSideStream(CUstream &stream) {
  if (std::string error =
          check(driver.streamCreate(&stream, kStreamNonBlocking),
                "creating a stream");
      !error.empty())
    return error;
  sideStreams.push_back(stream);
  return {};
}

std::string Device::createOrderingEvent(CUevent &event) {
  if (std::string error = check(driver.eventCreate(&event, kEventDisableTiming),
                                "cuEventCreate");
      !error.empty())
    return error;
  events.push_back(event);
  return {};
}

std::string Device::recordEvent(CUevent event, CUstream stream) {
  return check(driver.eventRecord(event, stream), "cuEventRecord");
}

std::string Device::streamWaitEvent(CUstream stream, CUevent event) {
  return check(driver.streamWaitEvent(stream, event, 0), "cuStreamWaitEvent");
}

std::string Device::destroyEvent(CUevent event) {
  auto owned = std::find(events.begin(), events.end(), event);
  if (owned == events.end())
    return "destroying an event this device did not create";
  events.erase(owned);
  return check(driver.eventDestroy(event), "cuEventDestroy");
}

std::string Device::eventDone(CUevent event, bool &done) {
  CUresult result = driver.eventQuery(event);
  done = result == kSuccess;
  return result == kErrorNotReady ? std::string()
                                  : check(result, "querying an event");
}

std::string Device::waitForEvent(CUevent event) {
  ++counts.hostSynchronizations;
  return check(driver.eventSynchronize(event), "waiting for an event");
}

std::string Device::elapsedMs(CUevent start, CUevent end, float &milliseconds) {
  ++counts.hostSynchronizations;
  if (std::string error =
          check(driver.eventSynchronize(end), "waiting for a timing event");
      !error.empty())
    return error;
  return check(driver.eventElapsedTime(&milliseconds, start, end),
               "cuEventElapsedTime");
}
