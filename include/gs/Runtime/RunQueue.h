//===- RunQueue.h - Runs queued ahead of their results ---------*- C++ -*-===//
//
// A trainer runs its step over and over and reads each step's results (the
// loss) and a few parameters (the scaling telemetry) after it. On a GPU,
// waiting for them after every step leaves the device idle while the host
// reads them and fills the next batch. A RunQueue lets the host run ahead
// instead: it fills and queues the next steps while the device is still on
// earlier ones, and reads each step's results once the device is done with
// it. Every run has its own slot: its inputs, its results and the values of
// the watched parameters after it, in page-locked host memory that the
// device copies to and from while the host goes on. The host waits only
// when every slot is queued. On the CPU a run is done when it is queued.
//
//===----------------------------------------------------------------------===//

#ifndef GS_RUNTIME_RUNQUEUE_H
#define GS_RUNTIME_RUNQUEUE_H

#include "gs/Runtime/DeviceModel.h"
#include "gs/Runtime/ModelABI.h"
#include "gs/Runtime/Tensor.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mlir::gs::runtime {

class RunQueue {
public:
  /// One run: filled by the host, queued, then read back.
  struct Run {
    /// The entry's inputs, in its order.
    std::vector<Tensor> inputs;
    /// The entry's results, once the run is done.
    std::vector<Tensor> results;
    /// The watched parameters' values after the run, in their order.
    std::vector<Tensor> params;
    /// What the caller queued it as (a step number).
    int64_t tag = 0;
  };

  /// A queue of runs of `entry` of `model`, with `depth` slots on a GPU
  /// (one on the CPU), reading `watched` after each.
  static std::string create(const gs_model_info &model,
                            const gs_entry_info &entry,
                            std::vector<const gs_param_info *> watched,
                            int depth, std::unique_ptr<RunQueue> &queue);

  /// Reads a run the device is done with.
  using Reader = std::function<void(const Run &)>;

  /// The run to fill next. While every slot holds a run queued, the host
  /// waits for the oldest and gives it to `read` first.
  std::string next(const Reader &read, Run *&run);

  /// Queues the run `next` gave, with its inputs filled, as `tag`.
  std::string submit(int64_t tag);

  /// Gives the runs queued that the device is done with to `read`, oldest
  /// first; with `all`, waits until it is done with all of them (one wait,
  /// for the newest).
  std::string readDone(bool all, const Reader &read);

private:
  RunQueue(const gs_model_info &model, const gs_entry_info &entry,
           std::vector<const gs_param_info *> watched)
      : model(model), entry(entry), watched(std::move(watched)) {}

  /// The oldest run queued, once the device is done with it: with `wait`
  /// the host waits for it; without, `run` is null while it is not done.
  /// Null when no run is queued.
  std::string take(bool wait, Run *&run);

  /// A run and where the device's work for it ends (GPU models only).
  struct Slot {
    Run run;
    std::unique_ptr<DeviceMarker> done;
  };

  const gs_model_info &model;
  const gs_entry_info &entry;
  std::vector<const gs_param_info *> watched;
  std::vector<Slot> slots;
  /// The oldest run queued and not taken, and how many are.
  int first = 0, count = 0;
};

} // namespace mlir::gs::runtime

#endif // GS_RUNTIME_RUNQUEUE_H
