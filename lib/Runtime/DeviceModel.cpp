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

/// How an entry runs: its kernels queued one by one, or replayed as a CUDA
/// graph. The first run queues them (loading the modules, filling the
/// allocator's cache); the second is captured into a graph, which it and
/// every later run launch. The graph owns the device buffers it
/// addresses: the inputs and results (which every run uses, from the
/// first), and the buffers the host code allocates and frees during the
/// capture (DeviceAllocator::beginClaim), until the device runs out of
/// memory (releaseGraphs). Without a graph: an entry whose
/// first run launched no kernel (emulated kernels, which run on the host),
/// a data-parallel replica's (its collectives), GS_CUDA_GRAPHS=0, a driver
/// without graphs, and an entry whose capture failed (said once).
struct EntryRuns {
  int64_t runs = 0;
  bool eager = false;
  /// The inputs, then the results, where the graph reads and writes them.
  std::vector<CUdeviceptr> buffers;
  std::vector<CUdeviceptr> claimed;
  cuda::CUgraphExec graph = nullptr;
};

std::map<const gs_entry_info *, EntryRuns> &entryRuns() {
  static auto *runs = new std::map<const gs_entry_info *, EntryRuns>();
  return *runs;
}

bool graphsWanted(const gs_model_info &model, const cuda::Device &gpu) {
  const char *setting = std::getenv("GS_CUDA_GRAPHS");
  return gpu.hasGraphs() && !model.distributed &&
         !(setting && std::strcmp(setting, "0") == 0);
}

/// Destroys `runs`' graph and gives back the buffers it claimed; the
/// first error.
std::string dropGraph(cuda::Device &gpu, EntryRuns &runs) {
  std::string error;
  if (runs.graph)
    error = gpu.destroyGraph(runs.graph);
  runs.graph = nullptr;
  for (CUdeviceptr pointer : runs.claimed)
    if (std::string freed = gpu.allocator().deallocate(pointer); error.empty())
      error = freed;
  runs.claimed.clear();
  return error;
}

/// Gives back `runs`' input and result buffers.
void dropBuffers(cuda::Device &gpu, EntryRuns &runs) {
  for (CUdeviceptr pointer : runs.buffers)
    (void)gpu.allocator().deallocate(pointer);
  runs.buffers.clear();
}

/// The entry queueOnDevice is running, if any.
const gs_entry_info *runningEntry = nullptr;

/// Out of GPU memory: every entry launches its kernels one by one from
/// now on, and gives back (once the stream is done with them) its graph,
/// the buffers the graph claimed, and its input and result buffers (the
/// running entry's with its run's others). False where none held any.
bool releaseGraphs(cuda::Device &gpu) {
  bool synchronized = false;
  for (auto &[entry, runs] : entryRuns()) {
    runs.eager = true;
    bool held = runs.graph || !runs.claimed.empty() ||
                (entry != runningEntry && !runs.buffers.empty());
    if (!held)
      continue;
    if (!synchronized && !gpu.synchronize().empty())
      return false;
    synchronized = true;
    (void)dropGraph(gpu, runs);
    if (entry != runningEntry)
      dropBuffers(gpu, runs);
    std::fprintf(stderr,
                 "GradScale GPU runtime: note: out of GPU memory: '%s' gives "
                 "its CUDA graph's buffers back and launches its kernels one "
                 "by one from now on\n",
                 entry->name);
  }
  return synchronized;
}

/// Captures `entry`'s run on `descriptors` into `runs.graph`: null (and
/// the entry eager) with a note on stderr where the capture fails.
std::string captureGraph(cuda::Device &gpu, const gs_entry_info &entry,
                         std::vector<std::vector<int64_t>> &descriptors,
                         EntryRuns &runs) {
  std::string failure = gpu.beginCapture();
  if (failure.empty()) {
    gpu.allocator().beginClaim();
    cuda::setRuntimeAPIErrorSink(&failure);
    callPacked(entry, descriptors);
    cuda::setRuntimeAPIErrorSink(nullptr);
    std::string captured = gpu.endCapture(runs.graph);
    std::string claim = gpu.allocator().endClaim(runs.claimed);
    for (const std::string &error : {claim, captured})
      if (failure.empty())
        failure = error;
  }
  if (failure.empty())
    return {};
  std::fprintf(stderr,
               "GradScale GPU runtime: note: '%s' runs without a CUDA graph: "
               "%s\n",
               entry.name, failure.c_str());
  runs.eager = true;
  return dropGraph(gpu, runs);
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
  static bool reclaiming = false;
  if (!reclaiming) {
    gpu->allocator().setReclaim([gpu] { return releaseGraphs(*gpu); });
    reclaiming = true;
  }
  EntryRuns &runs = entryRuns()[&entry];
  bool graphs = !runs.eager && graphsWanted(model, *gpu);
  struct Running {
    explicit Running(const gs_entry_info &entry) { runningEntry = &entry; }
    ~Running() { runningEntry = nullptr; }
  } running(entry);
  // A graph's buffers stay; the others are freed after the copies are
  // queued (the stream reuses them after those).
  RunBuffers buffers(*gpu);
  std::vector<CUdeviceptr> resultPointers;
  for (int32_t i = 0; i < entry.num_inputs + entry.num_results; ++i) {
    bool input = i < entry.num_inputs;
    const gs_tensor_info &info =
        input ? entry.inputs[i] : entry.results[i - entry.num_inputs];
    CUdeviceptr pointer = 0;
    if (graphs && static_cast<size_t>(i) < runs.buffers.size()) {
      pointer = runs.buffers[i];
    } else if (std::string error =
                   graphs ? gpu->allocator().allocate(
                                std::max<size_t>(byteSize(info), 1), pointer)
                          : buffers.allocate(byteSize(info), pointer);
               !error.empty()) {
      return std::string(entry.name) + " '" + info.name + "': " + error;
    } else if (graphs) {
      runs.buffers.push_back(pointer);
    }
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
  // (Out of memory on the way, it no longer wants one.)
  if (graphs && !runs.eager && !runs.graph && runs.runs > 0)
    if (std::string error = captureGraph(*gpu, entry, descriptors, runs);
        !error.empty())
      return error;
  if (runs.graph) {
    if (std::string error = gpu->launchGraph(runs.graph); !error.empty())
      return error;
  } else {
    int64_t launched = gpu->callCounts().launches;
    callPacked(entry, descriptors);
    if (gpu->callCounts().launches == launched)
      runs.eager = true;
  }
  ++runs.runs;
  if (runs.eager) {
    // Freed with this run's others.
    buffers.pointers.insert(buffers.pointers.end(), runs.buffers.begin(),
                            runs.buffers.end());
    runs.buffers.clear();
  }
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

void mlir::gs::runtime::forgetDeviceModel(const gs_model_info &model) {
  auto &runs = entryRuns();
  auto &copies = deviceCopies();
  bool held = false;
  for (int32_t i = 0; i < model.num_entries; ++i)
    held |= runs.count(&model.entries[i]) != 0;
  for (int32_t i = 0; i < model.num_params; ++i)
    held |= copies.count(&model.params[i]) != 0;
  cuda::Device *gpu = nullptr;
  // Held means the device is open.
  if (!held || !cuda::processDevice(gpu).empty() || !gpu)
    return;
  // The stream may still use what goes back.
  (void)gpu->synchronize();
  for (int32_t i = 0; i < model.num_entries; ++i) {
    auto found = runs.find(&model.entries[i]);
    if (found == runs.end())
      continue;
    (void)dropGraph(*gpu, found->second);
    dropBuffers(*gpu, found->second);
    runs.erase(found);
  }
  for (int32_t i = 0; i < model.num_params; ++i) {
    auto found = copies.find(&model.params[i]);
    if (found == copies.end())
      continue;
    (void)gpu->allocator().deallocate(found->second.pointer);
    copies.erase(found);
  }
}

DeviceCalls mlir::gs::runtime::deviceCalls() {
  cuda::Device *gpu = nullptr;
  if (!cuda::processDevice(gpu).empty() || !gpu)
    return {};
  const cuda::CallCounts &counts = gpu->callCounts();
  return {counts.launches, counts.graphLaunches, counts.graphKernels,
          counts.copies, counts.hostSynchronizations};
}
