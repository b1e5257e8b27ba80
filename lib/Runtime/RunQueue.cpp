//===- RunQueue.cpp - Runs of an entry queued ahead of their results ------===//

#include "gs/Runtime/RunQueue.h"

#include "gs/Runtime/Model.h"

#include <algorithm>
#include <cstring>

using namespace mlir::gs::runtime;

/// A slot's tensors for `infos` (`what` names them in errors): page-locked
/// for a GPU model.
static std::string allocateAll(bool pageLocked, const gs_tensor_info *infos,
                               size_t count, const std::string &what,
                               std::vector<Tensor> &tensors) {
  for (size_t i = 0; i < count; ++i) {
    DType type = DType::F32;
    toDType(infos[i].dtype, type);
    tensors.emplace_back();
    std::string error =
        pageLocked ? allocatePageLocked(infos[i], tensors.back())
                   : Tensor::allocate(type, shapeOf(infos[i]), tensors.back());
    if (!error.empty())
      return what + " '" + infos[i].name + "': " + error;
  }
  return {};
}

std::string RunQueue::create(const gs_model_info &model,
                             const gs_entry_info &entry,
                             std::vector<const gs_param_info *> watched,
                             int depth, std::unique_ptr<RunQueue> &queue) {
  bool gpu = runsOnDevice(model);
  if (gpu) {
    std::string description;
    if (std::string error = openDevice(description); !error.empty())
      return error;
  }
  std::unique_ptr<RunQueue> created(
      new RunQueue(model, entry, std::move(watched)));
  created->slots.resize(gpu ? std::max(depth, 1) : 1);
  std::string name = entry.name;
  for (Slot &slot : created->slots) {
    if (std::string error = allocateAll(gpu, entry.inputs, entry.num_inputs,
                                        name + " input", slot.run.inputs);
        !error.empty())
      return error;
    if (std::string error = allocateAll(gpu, entry.results, entry.num_results,
                                        name + " result", slot.run.results);
        !error.empty())
      return error;
    for (const gs_param_info *param : created->watched)
      if (std::string error =
              allocateAll(gpu, &param->tensor, 1, "parameter", slot.run.params);
          !error.empty())
        return error;
    if (gpu)
      if (std::string error = DeviceMarker::create(slot.done); !error.empty())
        return error;
  }
  queue = std::move(created);
  return {};
}

std::string RunQueue::next(const Reader &read, Run *&run) {
  while (count == static_cast<int>(slots.size())) {
    Run *oldest = nullptr;
    if (std::string error = take(/*wait=*/true, oldest); !error.empty())
      return error;
    read(*oldest);
  }
  run = &slots[(first + count) % slots.size()].run;
  return {};
}

std::string RunQueue::submit(int64_t tag) {
  if (count == static_cast<int>(slots.size()))
    return std::string(entry.name) +
           ": a run queued while every slot holds one not taken yet";
  Slot &slot = slots[(first + count) % slots.size()];
  Run &run = slot.run;
  run.tag = tag;
  if (!slot.done) {
    std::vector<const Tensor *> inputs;
    for (const Tensor &input : run.inputs)
      inputs.push_back(&input);
    if (std::string error =
            mlir::gs::runtime::run(model, entry, inputs, run.results);
        !error.empty())
      return error;
    for (size_t i = 0; i < watched.size(); ++i)
      std::memcpy(run.params[i].data(), hostCopy(*watched[i]),
                  run.params[i].byteSize());
  } else {
    std::vector<const void *> inputs;
    std::vector<void *> results, params;
    for (const Tensor &input : run.inputs)
      inputs.push_back(input.data());
    for (Tensor &result : run.results)
      results.push_back(result.data());
    for (Tensor &param : run.params)
      params.push_back(param.data());
    if (std::string error =
            queueOnDevice(model, entry, inputs.data(), results.data(), watched,
                          params.data());
        !error.empty())
      return error;
    if (std::string error = slot.done->record(); !error.empty())
      return error;
  }
  ++count;
  return {};
}

std::string RunQueue::take(bool wait, Run *&run) {
  run = nullptr;
  if (count == 0)
    return {};
  Slot &slot = slots[first];
  if (slot.done && wait) {
    if (std::string error = slot.done->wait(); !error.empty())
      return error;
  } else if (slot.done) {
    bool reached = false;
    if (std::string error = slot.done->reached(reached);
        !error.empty() || !reached)
      return error;
  }
  run = &slot.run;
  first = (first + 1) % slots.size();
  --count;
  return {};
}

std::string RunQueue::readDone(bool all, const Reader &read) {
  if (all && count > 0) {
    Slot &newest = slots[(first + count - 1) % slots.size()];
    if (newest.done)
      if (std::string error = newest.done->wait(); !error.empty())
        return error;
  }
  for (;;) {
    Run *done = nullptr;
    if (std::string error = take(/*wait=*/false, done); !error.empty())
      return error;
    if (!done)
      return {};
    read(*done);
  }
}
