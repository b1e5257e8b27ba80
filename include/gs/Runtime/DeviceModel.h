//===- DeviceModel.h - Running models compiled for a GPU --------*- C++ -*-===//
//
// A model compiled for a GPU (`gs-compile --target=cuda`, gs_model_info's
// `device`) keeps its parameters on the device for the whole run. Each
// parameter has a device copy, allocated and filled from the host copy
// (the table's `data`) at the first run and passed to every entry, and is
// copied back only when the host reads it (checkpoints, reports,
// telemetry, export). Per parameter the runtime knows which copy is newer:
// the host's after a write (uploaded before the next run), the device's
// after a run (downloaded at the next read).
//
// runOnDevice waits for its results. queueOnDevice does not: with inputs
// and results in page-locked host memory (allocatePageLocked) the host
// queues a run and goes on, and learns from a DeviceMarker recorded after
// it when its results are there (RunQueue.h builds a trainer's pipeline of
// steps on it). From an entry's second run on, its kernels run as one CUDA
// graph (DeviceModel.cpp, EntryRuns; GS_CUDA_GRAPHS=0 turns graphs off).
//
//===----------------------------------------------------------------------===//

#ifndef GS_RUNTIME_DEVICEMODEL_H
#define GS_RUNTIME_DEVICEMODEL_H

#include "gs/Runtime/Cuda/Driver.h"
#include "gs/Runtime/ModelABI.h"
#include "gs/Runtime/Tensor.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::gs::runtime {

namespace cuda {
class Device;
} // namespace cuda

/// Whether `model`'s entries run on a GPU.
bool runsOnDevice(const gs_model_info &model);

/// Opens the GPU models run on; `description` names it ("NVIDIA H200,
/// compute capability 9.0"). The error says why there is none.
std::string openDevice(std::string &description);

/// Runs `entry` of a GPU model on dense host buffers: the inputs are copied
/// to the device, the results back, the parameters stay there.
std::string runOnDevice(const gs_model_info &model, const gs_entry_info &entry,
                        const void *const *inputs, void *const *results);

/// Queues what runOnDevice does without waiting for it, and after the run
/// the copies of the parameters `snapshot` names into `snapshots` (their
/// values after this run, whatever later runs write). The host may reuse
/// `inputs` and read `results` and `snapshots` once a DeviceMarker
/// recorded after this call is reached; none of them should be pageable
/// memory (the driver waits for copies from and to it).
std::string queueOnDevice(const gs_model_info &model,
                          const gs_entry_info &entry, const void *const *inputs,
                          void *const *results,
                          const std::vector<const gs_param_info *> &snapshot,
                          void *const *snapshots);

/// A zero tensor of `info`'s type and shape in page-locked host memory,
/// which the GPU copies to and from while the host goes on.
std::string allocatePageLocked(const gs_tensor_info &info, Tensor &tensor);

/// A point in the GPU's queue of work: `record` places it after the work
/// queued so far (moving it there), `reached` asks whether the GPU has done
/// that work, `wait` waits until it has (asking first: the host waits for
/// the GPU only where it has not).
class DeviceMarker {
public:
  static std::string create(std::unique_ptr<DeviceMarker> &marker);
  ~DeviceMarker();
  DeviceMarker(const DeviceMarker &) = delete;
  DeviceMarker &operator=(const DeviceMarker &) = delete;

  std::string record();
  std::string reached(bool &reached);
  std::string wait();

private:
  DeviceMarker(cuda::Device &gpu, cuda::CUevent event)
      : gpu(gpu), event(event) {}
  /// The process's GPU, which is never closed.
  cuda::Device &gpu;
  cuda::CUevent event;
};

/// The current value of `param`'s host copy (copied back from the device
/// where the device's is newer). A failed copy ends the process with a
/// message: the GPU's state is lost.
const void *hostCopy(const gs_param_info &param);

/// To call after writing `param`'s host copy (the whole of it): the device
/// gets it before the next run.
void hostCopyWritten(const gs_param_info &param);

/// Gives back what the runtime keeps on the device for `model` (its
/// parameters' device copies, its entries' CUDA graphs and buffers), once
/// the stream is done with them: for a model about to be unloaded, whose
/// tables' addresses another may take. Nothing for a model never run.
void forgetDeviceModel(const gs_model_info &model);

/// The driver calls the GPU has been sent so far (all zero where none is
/// open): a step's count is a difference over it.
struct DeviceCalls {
  /// Kernels launched one by one; CUDA graphs launched and their kernels.
  int64_t launches = 0, graphLaunches = 0, graphKernels = 0;
  int64_t copies = 0, hostSynchronizations = 0;
};
DeviceCalls deviceCalls();

} // namespace mlir::gs::runtime

#endif // GS_RUNTIME_DEVICEMODEL_H
