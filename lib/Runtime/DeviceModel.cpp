//===- DeviceModel.cpp - Running models compiled for a GPU ------*- C++ -*-===//

#include "gs/Runtime/DeviceModel.h"

#include "gs/Runtime/Cuda/Device.h"
#include "gs/Runtime/Model.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

using namespace mlir::gs::runtime;
namespace cuda = mlir::gs::runtime::cuda;
using cuda::CUdeviceptr;

namespace {
/// A parameter's device copy and which of its two copies is newer.
struct DeviceCopy {
  CUdeviceptr pointer = 0;
  size_t bytes = 0;
  enum class Newer { Neither, Host, Device } newer = Newer::Host;
};

/// The device copies of every parameter of the models run so far.
std::map<const gs_param_info *, DeviceCopy> &deviceCopies() {
  static auto *copies = new std::map<const gs_param_info *, DeviceCopy>();
  return *copies;
}

std::string device(cuda::Device *&gpu) {
  std::string error = cuda::processDevice(gpu);
  if (!error.empty())
    return "the model was compiled for NVIDIA GPUs (gs-compile "
           "--target=cuda), but none can be used: " +
           error;
  return {};
}

/// Allocates the device copies of `model`'s parameters not allocated yet.
std::string allocateParams(cuda::Device &gpu, const gs_model_info &model) {
  for (int32_t i = 0; i < model.num_params; ++i) {
    const gs_param_info *param = &model.params[i];
    if (deviceCopies().count(param))
      continue;
    DeviceCopy copy;
    copy.bytes = byteSize(param->tensor);
    if (std::string error = gpu.allocator().allocate(
            std::max<size_t>(copy.bytes, 1), copy.pointer);
        !error.empty())
      return "parameter '" + std::string(param->tensor.name) + "': " + error;
    deviceCopies().emplace(param, copy);
  }
  return {};
}

/// Device buffers of one run, returned to the allocator's cache.
struct RunBuffers {
  explicit RunBuffers(cuda::Device &gpu) : gpu(gpu) {}
  ~RunBuffers() {
    for (CUdeviceptr pointer : pointers)
      (void)gpu.allocator().deallocate(pointer);
  }
  std::string allocate(size_t bytes, CUdeviceptr &pointer) {
    std::string error =
        gpu.allocator().allocate(std::max<size_t>(bytes, 1), pointer);
    if (error.empty())
      pointers.push_back(pointer);
    return error;
  }
  cuda::Device &gpu;
  std::vector<CUdeviceptr> pointers;
};

void *asPointer(CUdeviceptr pointer) {
  return reinterpret_cast<void *>(static_cast<uintptr_t>(pointer));
}
} // namespace

bool mlir::gs::runtime::runsOnDevice(const gs_model_info &model) {
  return model.device == GS_DEVICE_CUDA;
}

std::string mlir::gs::runtime::openDevice(std::string &description) {
  cuda::Device *gpu = nullptr;
  if (std::string error = device(gpu); !error.empty())
    return error;
  description = gpu->name() + ", compute capability " +
                std::to_string(gpu->capability() / 10) + "." +
                std::to_string(gpu->capability() % 10);
  return {};
}

std::string mlir::gs::runtime::queueOnDevice(
    const gs_model_info &model, const gs_entry_info &entry,
    const void *const *inputs, void *const *results,
    const std::vector<const gs_param_info *> &snapshot,
    void *const *snapshots) {
  cuda::Device *gpu = nullptr;
  if (std::string error = device(gpu); !error.empty())
    return error;
  if (std::string error = allocateParams(*gpu, model); !error.empty())
    return error;
  std::vector<std::vector<int64_t>> descriptors;
  for (int32_t i = 0; i < model.num_params; ++i) {
    const gs_param_info &param = model.params[i];
    DeviceCopy &copy = deviceCopies()[&param];
    if (copy.newer == DeviceCopy::Newer::Host)
      if (std::string error =
              gpu->copyToDevice(copy.pointer, param.data, copy.bytes);
          !error.empty())
        return error;
    // Entries may write any parameter.
    copy.newer = DeviceCopy::Newer::Device;
    descriptors.push_back(
        memrefDescriptor(asPointer(copy.pointer), shapeOf(param.tensor)));
  }
  // Freed after the copies are queued: the stream reuses them after those.
  RunBuffers buffers(*gpu);
  std::vector<CUdeviceptr> resultPointers;
  for (int32_t i = 0; i < entry.num_inputs + entry.num_results; ++i) {
    bool input = i < entry.num_inputs;
    const gs_tensor_info &info =
        input ? entry.inputs[i] : entry.results[i - entry.num_inputs];
    CUdeviceptr pointer = 0;
    if (std::string error = buffers.allocate(byteSize(info), pointer);
        !error.empty())
      return std::string(entry.name) + " '" + info.name + "': " + error;
    if (input) {
      if (std::string error =
              gpu->copyToDevice(pointer, inputs[i], byteSize(info));
          !error.empty())
        return error;
    } else {
      resultPointers.push_back(pointer);
    }
    descriptors.push_back(memrefDescriptor(asPointer(pointer), shapeOf(info)));
  }
  callPacked(entry, descriptors);
  for (int32_t i = 0; i < entry.num_results; ++i)
    if (std::string error = gpu->copyToHost(results[i], resultPointers[i],
                                            byteSize(entry.results[i]));
        !error.empty())
      return error;
  for (size_t i = 0; i < snapshot.size(); ++i) {
    auto copy = deviceCopies().find(snapshot[i]);
    if (copy == deviceCopies().end())
      return "parameter '" + std::string(snapshot[i]->tensor.name) +
             "' is not one of the model's";
    if (std::string error = gpu->copyToHost(snapshots[i], copy->second.pointer,
                                            copy->second.bytes);
        !error.empty())
      return error;
  }
  return {};
}

std::string mlir::gs::runtime::runOnDevice(const gs_model_info &model,
                                           const gs_entry_info &entry,
                                           const void *const *inputs,
                                           void *const *results) {
  if (std::string error =
          queueOnDevice(model, entry, inputs, results, {}, nullptr);
      !error.empty())
    return error;
  cuda::Device *gpu = nullptr;
  if (std::string error = device(gpu); !error.empty())
    return error;
  return gpu->synchronize();
}

static void freePageLocked(void *pointer) {
  cuda::Device *gpu = nullptr;
  // Only the process's device allocates them, and it is never closed.
  if (cuda::processDevice(gpu).empty())
    (void)gpu->freeHost(pointer);
}

std::string mlir::gs::runtime::allocatePageLocked(const gs_tensor_info &info,
                                                  Tensor &tensor) {
  cuda::Device *gpu = nullptr;
  if (std::string error = device(gpu); !error.empty())
    return error;
  DType type = DType::F32;
  toDType(info.dtype, type);
  size_t bytes = byteSize(info);
  void *pointer = nullptr;
  if (std::string error = gpu->allocateHost(bytes, pointer); !error.empty())
    return error;
  std::memset(pointer, 0, bytes);
  tensor = Tensor::adopt(type, shapeOf(info), static_cast<char *>(pointer),
                         &freePageLocked);
  return {};
}

std::string DeviceMarker::create(std::unique_ptr<DeviceMarker> &marker) {
  cuda::Device *gpu = nullptr;
  if (std::string error = device(gpu); !error.empty())
    return error;
  cuda::CUevent event = nullptr;
  if (std::string error = gpu->createOrderingEvent(event); !error.empty())
    return error;
  marker.reset(new DeviceMarker(*gpu, event));
  return {};
}

DeviceMarker::~DeviceMarker() { (void)gpu.destroyEvent(event); }

std::string DeviceMarker::record() { return gpu.recordEvent(event); }

std::string DeviceMarker::reached(bool &reached) {
  return gpu.eventDone(event, reached);
}

std::string DeviceMarker::wait() {
  bool done = false;
  if (std::string error = gpu.eventDone(event, done); !error.empty() || done)
    return error;
  return gpu.waitForEvent(event);
}

const void *mlir::gs::runtime::hostCopy(const gs_param_info &param) {
  auto found = deviceCopies().find(&param);
  if (found == deviceCopies().end() ||
      found->second.newer != DeviceCopy::Newer::Device)
    return param.data;
  cuda::Device *gpu = nullptr;
  std::string error = device(gpu);
  if (error.empty())
    error =
        gpu->copyToHost(param.data, found->second.pointer, found->second.bytes);
  if (error.empty())
    error = gpu->synchronize();
  if (!error.empty()) {
    std::fprintf(stderr,
                 "GradScale runtime: error: reading parameter '%s' from the "
                 "GPU: %s\n",
                 param.tensor.name, error.c_str());
    std::exit(1);
  }
  found->second.newer = DeviceCopy::Newer::Neither;
  return param.data;
}

void mlir::gs::runtime::hostCopyWritten(const gs_param_info &param) {
  auto found = deviceCopies().find(&param);
  if (found != deviceCopies().end())
    found->second.newer = DeviceCopy::Newer::Host;
}

DeviceCalls mlir::gs::runtime::deviceCalls() {
  cuda::Device *gpu = nullptr;
  if (!cuda::processDevice(gpu).empty() || !gpu)
    return {};
  const cuda::CallCounts &counts = gpu->callCounts();
  return {counts.launches, counts.copies, counts.hostSynchronizations};
}
