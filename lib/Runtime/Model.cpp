//===- Model.cpp - Running compiled models ----------------------*- C++ -*-===//

#include "gs/Runtime/Model.h"

#include "gs/Runtime/Collectives.h"
#include "gs/Runtime/DeviceModel.h"

#include <cstring>
#include <malloc.h>
#include <map>
#include <utility>

using namespace mlir::gs::runtime;

bool mlir::gs::runtime::toDType(int32_t dtype, DType &type) {
  switch (dtype) {
  case GS_DTYPE_F16:
    type = DType::F16;
    return true;
  case GS_DTYPE_F32:
    type = DType::F32;
    return true;
  case GS_DTYPE_F64:
    type = DType::F64;
    return true;
  case GS_DTYPE_I8:
    type = DType::I8;
    return true;
  case GS_DTYPE_I32:
    type = DType::I32;
    return true;
  case GS_DTYPE_I64:
    type = DType::I64;
    return true;
  case GS_DTYPE_BOOL:
    type = DType::Bool;
    return true;
  case GS_DTYPE_I16:
    type = DType::I16;
    return true;
  case GS_DTYPE_U8:
    type = DType::U8;
    return true;
  case GS_DTYPE_U16:
    type = DType::U16;
    return true;
  case GS_DTYPE_U32:
    type = DType::U32;
    return true;
  case GS_DTYPE_U64:
    type = DType::U64;
    return true;
  default:
    return false;
  }
}

std::vector<int64_t> mlir::gs::runtime::shapeOf(const gs_tensor_info &info) {
  return std::vector<int64_t>(info.shape, info.shape + info.rank);
}

int64_t mlir::gs::runtime::elementCount(const gs_tensor_info &info) {
  int64_t count = 1;
  for (int32_t i = 0; i < info.rank; ++i)
    count *= info.shape[i];
  return count;
}

size_t mlir::gs::runtime::byteSize(const gs_tensor_info &info) {
  DType type = DType::F32;
  toDType(info.dtype, type);
  return elementCount(info) * sizeOf(type);
}

Tensor mlir::gs::runtime::tensorFor(const gs_tensor_info &info) {
  DType type = DType::F32;
  toDType(info.dtype, type);
  return Tensor(type, shapeOf(info));
}

std::string mlir::gs::runtime::describe(const gs_tensor_info &info) {
  DType type = DType::F32;
  toDType(info.dtype, type);
  return std::string(info.name) + ": " + describeTensor(type, shapeOf(info));
}

const gs_entry_info *mlir::gs::runtime::findEntry(const gs_model_info &model,
                                                  const std::string &name) {
  for (int32_t i = 0; i < model.num_entries; ++i)
    if (name == model.entries[i].name)
      return &model.entries[i];
  return nullptr;
}

const gs_param_info *mlir::gs::runtime::findParam(const gs_model_info &model,
                                                  const std::string &name) {
  for (int32_t i = 0; i < model.num_params; ++i)
    if (name == model.params[i].tensor.name)
      return &model.params[i];
  return nullptr;
}

void mlir::gs::runtime::callPacked(
    const gs_entry_info &entry,
    std::vector<std::vector<int64_t>> &descriptors) {
  std::vector<void *> arguments;
  for (std::vector<int64_t> &descriptor : descriptors)
    arguments.push_back(descriptor.data());
  reinterpret_cast<void (*)(void **)>(entry.function)(arguments.data());
}

namespace {
/// Calls `entry` on dense buffers: its inputs, then its results.
void callEntry(const gs_entry_info &entry, const void *const *inputs,
               void *const *results) {
  std::vector<std::vector<int64_t>> descriptors;
  for (int32_t i = 0; i < entry.num_inputs; ++i)
    descriptors.push_back(
        memrefDescriptor(inputs[i], shapeOf(entry.inputs[i])));
  for (int32_t i = 0; i < entry.num_results; ++i)
    descriptors.push_back(
        memrefDescriptor(results[i], shapeOf(entry.results[i])));
  callPacked(entry, descriptors);
}

/// Runs `entry` of `model` where the model runs.
std::string runEntry(const gs_model_info &model, const gs_entry_info &entry,
                     const void *const *inputs, void *const *results) {
  if (runsOnDevice(model))
    return runOnDevice(model, entry, inputs, results);
  callEntry(entry, inputs, results);
  return {};
}

bool checkTensors(const gs_tensor_info *tensors, int32_t count,
                  const std::string &what, std::string &error) {
  DType type;
  for (int32_t i = 0; i < count; ++i) {
    if (!tensors[i].name || tensors[i].rank < 0 ||
        !toDType(tensors[i].dtype, type)) {
      error = what + " " + std::to_string(i) + " has an unknown type";
      return false;
    }
    if (tensors[i].rank > 0 && !tensors[i].shape) {
      error = what + " '" + tensors[i].name + "' has no shape";
      return false;
    }
    if (!checkedByteSize(type, shapeOf(tensors[i]))) {
      error = what + " '" + tensors[i].name +
              "' has a negative dimension or a size that overflows";
      return false;
    }
  }
  return true;
}
} // namespace

std::string mlir::gs::runtime::validate(const gs_model_info &model) {
  if (model.abi_version != GS_MODEL_ABI_VERSION)
    return "the model was compiled for runtime ABI " +
           std::to_string(model.abi_version) + ", this runtime is " +
           std::to_string(GS_MODEL_ABI_VERSION) + ": compile it again";
  if (model.device != GS_DEVICE_CPU && model.device != GS_DEVICE_CUDA)
    return "the model runs on an unknown device (" +
           std::to_string(model.device) + ")";
  std::string error;
  for (int32_t i = 0; i < model.num_params; ++i)
    if (!checkTensors(&model.params[i].tensor, 1, "parameter", error) ||
        !model.params[i].data)
      return error.empty() ? "parameter " + std::to_string(i) + " has no data"
                           : error;
  for (int32_t i = 0; i < model.num_params; ++i) {
    const gs_param_info &param = model.params[i];
    int32_t source = param.copy_of;
    if (param.kind != GS_PARAM_COPY)
      continue;
    if (source < 0 || source >= model.num_params ||
        model.params[source].kind != GS_PARAM_TRAINABLE ||
        model.params[source].tensor.dtype != GS_DTYPE_F32 ||
        param.tensor.dtype != GS_DTYPE_F16 ||
        shapeOf(model.params[source].tensor) != shapeOf(param.tensor))
      return std::string("parameter '") + param.tensor.name +
             "' is no FP16 copy of an FP32 weight of its shape";
  }
  for (int32_t i = 0; i < model.num_entries; ++i) {
    const gs_entry_info &entry = model.entries[i];
    if (!entry.function)
      return std::string("entry '") + entry.name + "' cannot be called";
    if (!checkTensors(entry.inputs, entry.num_inputs,
                      std::string(entry.name) + " input", error) ||
        !checkTensors(entry.results, entry.num_results,
                      std::string(entry.name) + " result", error))
      return error;
    int32_t loss = entry.loss_result;
    if (loss != -1 && (loss < 0 || loss >= entry.num_results ||
                       entry.results[loss].rank != 0 ||
                       (entry.results[loss].dtype != GS_DTYPE_F32 &&
                        entry.results[loss].dtype != GS_DTYPE_F64)))
      return std::string("entry '") + entry.name + "' names result " +
             std::to_string(loss) + " as its loss, which is no float scalar";
  }
  return {};
}

std::string mlir::gs::runtime::run(const gs_model_info &model,
                                   const gs_entry_info &entry,
                                   const std::vector<const Tensor *> &inputs,
                                   std::vector<Tensor> &results) {
  if (inputs.size() != static_cast<size_t>(entry.num_inputs))
    return std::string(entry.name) + " takes " +
           std::to_string(entry.num_inputs) + " inputs, got " +
           std::to_string(inputs.size());
  std::vector<const void *> inputData;
  for (int32_t i = 0; i < entry.num_inputs; ++i) {
    DType type = DType::F32;
    toDType(entry.inputs[i].dtype, type);
    std::vector<int64_t> shape = shapeOf(entry.inputs[i]);
    if (inputs[i]->type() != type || inputs[i]->shape() != shape)
      return std::string(entry.name) + " input '" + entry.inputs[i].name +
             "' is " + describeTensor(type, shape) + ", got " +
             inputs[i]->describe();
    inputData.push_back(inputs[i]->data());
  }
  results.clear();
  std::vector<void *> resultData;
  for (int32_t i = 0; i < entry.num_results; ++i) {
    results.push_back(tensorFor(entry.results[i]));
    resultData.push_back(results.back().data());
  }
  return runEntry(model, entry, inputData.data(), resultData.data());
}

std::vector<int64_t>
mlir::gs::runtime::memrefDescriptor(const void *data,
                                    const std::vector<int64_t> &shape) {
  std::vector<int64_t> words = {reinterpret_cast<intptr_t>(data),
                                reinterpret_cast<intptr_t>(data), 0};
  words.insert(words.end(), shape.begin(), shape.end());
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  words.insert(words.end(), strides.begin(), strides.end());
  return words;
}

void mlir::gs::runtime::keepFreedBuffersInHeap() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

Tensor mlir::gs::runtime::readParam(const gs_param_info &param) {
  Tensor value = tensorFor(param.tensor);
  std::memcpy(value.data(), hostCopy(param), value.byteSize());
  return value;
}

namespace {
/// Writes `data` (the parameter's size) to `param`, and the copies of it
/// derived from what was written.
std::string writeParamData(const gs_model_info &model,
                           const gs_param_info &param, const void *data) {
  if (param.kind == GS_PARAM_COPY)
    return std::string("parameter '") + param.tensor.name +
           "' is the FP16 copy of '" + model.params[param.copy_of].tensor.name +
           "', which the runtime derives: write that instead";
  std::memcpy(param.data, data, byteSize(param.tensor));
  hostCopyWritten(param);
  int32_t index = static_cast<int32_t>(&param - model.params);
  for (int32_t i = 0; i < model.num_params; ++i) {
    const gs_param_info &copy = model.params[i];
    if (copy.kind != GS_PARAM_COPY || copy.copy_of != index)
      continue;
    const float *weight = static_cast<const float *>(param.data);
    uint16_t *rounded = static_cast<uint16_t *>(copy.data);
    for (int64_t e = 0, n = elementCount(copy.tensor); e < n; ++e)
      rounded[e] = floatToHalf(weight[e]);
    hostCopyWritten(copy);
  }
  return {};
}
} // namespace

std::string mlir::gs::runtime::writeParam(const gs_model_info &model,
                                          const gs_param_info &param,
                                          const Tensor &value) {
  Tensor expected = tensorFor(param.tensor);
  if (value.type() != expected.type() || value.shape() != expected.shape())
    return std::string("parameter '") + param.tensor.name + "' is " +
           expected.describe() + ", got " + value.describe();
  return writeParamData(model, param, value.data());
}

//===----------------------------------------------------------------------===//
// The C API
//===----------------------------------------------------------------------===//

namespace {
thread_local std::string lastError;

int failWith(std::string message) {
  lastError = std::move(message);
  return -1;
}

/// The initial parameter values of each model gs_init has seen.
std::map<const gs_model_info *, std::vector<Tensor>> &initialValues() {
  static std::map<const gs_model_info *, std::vector<Tensor>> values;
  return values;
}

/// The parameter `name` if it holds `bytes` bytes.
const gs_param_info *sizedParam(const gs_model_info *model, const char *name,
                                size_t bytes) {
  const gs_param_info *param = findParam(*model, name ? name : "");
  if (!param) {
    failWith(std::string("the model has no parameter '") + (name ? name : "") +
             "'");
    return nullptr;
  }
  size_t size = byteSize(param->tensor);
  if (bytes != size) {
    failWith(std::string("parameter '") + name + "' has " +
             std::to_string(size) + " bytes, got " + std::to_string(bytes));
    return nullptr;
  }
  return param;
}
} // namespace

extern "C" const char *gs_last_error(void) { return lastError.c_str(); }

extern "C" int gs_init(const gs_model_info *model) {
  if (std::string error = validate(*model); !error.empty())
    return failWith(error);
  auto [it, first] = initialValues().try_emplace(model);
  for (int32_t i = 0; i < model->num_params; ++i) {
    if (first)
      it->second.push_back(readParam(model->params[i]));
    else if (model->params[i].kind != GS_PARAM_COPY)
      writeParam(*model, model->params[i], it->second[i]);
  }
  return 0;
}

extern "C" int gs_run(const gs_model_info *model, const char *name,
                      const void *const *inputs, void *const *results) {
  const gs_entry_info *entry = findEntry(*model, name ? name : "");
  if (!entry)
    return failWith(std::string("the model has no entry '") +
                    (name ? name : "") + "'");
  if (std::string error = runEntry(*model, *entry, inputs, results);
      !error.empty())
    return failWith(error);
  return 0;
}

extern "C" int gs_get_param(const gs_model_info *model, const char *name,
                            void *data, size_t bytes) {
  const gs_param_info *param = sizedParam(model, name, bytes);
  if (!param)
    return -1;
  std::memcpy(data, hostCopy(*param), bytes);
  return 0;
}

extern "C" int gs_set_param(const gs_model_info *model, const char *name,
                            const void *data, size_t bytes) {
  const gs_param_info *param = sizedParam(model, name, bytes);
  if (!param)
    return -1;
  if (std::string error = writeParamData(*model, *param, data); !error.empty())
    return failWith(error);
  return 0;
}

namespace {
/// The communicator gs_distributed_start started.
std::unique_ptr<Communicator> &started() {
  static std::unique_ptr<Communicator> job;
  return job;
}
} // namespace

extern "C" int gs_distributed_start(const char *transport, int *argc,
                                    char ***argv) {
  std::string name = transport ? transport : "";
  if (Communicator *joined = communicator())
    return failWith("gs_distributed_start: this process is in a '" +
                    std::string(joined->transport()) + "' job already");
  TransportFactory start = findTransport(name);
  if (!start)
    return failWith("gs_distributed_start: no transport '" + name +
                    "' in this program (link libGSRuntimeMPI.a, and for "
                    "nccl libGSRuntimeNCCL.a, whole: -Wl,--whole-archive)");
  int noArgc = 0;
  char **noArgv = nullptr;
  std::string error;
  started() = start(argc ? *argc : noArgc, argv ? *argv : noArgv, error);
  if (!started())
    return failWith("gs_distributed_start: " + name + ": " + error);
  setCommunicator(started().get());
  return 0;
}

extern "C" int gs_distributed_stop(void) {
  if (!started())
    return failWith("gs_distributed_stop: no job started");
  setCommunicator(nullptr);
  started().reset();
  return 0;
}

extern "C" int gs_distributed_rank(void) {
  return communicator() ? communicator()->rank() : 0;
}

extern "C" int gs_distributed_size(void) {
  return communicator() ? communicator()->size() : 1;
}
