//===- Model.h - A compiled model, from C++ ---------------------*- C++ -*-===//
//
// The C++ side of ModelABI.h: the table gs-compile emits read as runtime
// tensors, and entries run on them. Errors are messages, empty on success.
//
//===----------------------------------------------------------------------===//

#ifndef GS_RUNTIME_MODEL_H
#define GS_RUNTIME_MODEL_H

#include "gs/Runtime/ModelABI.h"
#include "gs/Runtime/Tensor.h"

#include <string>
#include <vector>

namespace mlir::gs::runtime {

/// The runtime type of a table's element type; false if it has none.
bool toDType(int32_t dtype, DType &type);

/// The shape of a table tensor.
std::vector<int64_t> shapeOf(const gs_tensor_info &info);

/// The number of elements of a table tensor (without allocating it).
int64_t elementCount(const gs_tensor_info &info);

/// The bytes of a table tensor (without allocating it) whose type
/// validate() checked.
size_t byteSize(const gs_tensor_info &info);

/// "x: float32[64x784]".
std::string describe(const gs_tensor_info &info);

/// A zero tensor of a table tensor's type and shape.
Tensor tensorFor(const gs_tensor_info &info);

/// Null when the model has no such entry or parameter.
const gs_entry_info *findEntry(const gs_model_info &model,
                               const std::string &name);
const gs_param_info *findParam(const gs_model_info &model,
                               const std::string &name);

/// Checks the table: ABI version, element types, entries with functions.
std::string validate(const gs_model_info &model);

/// Runs `entry` of `model` on `inputs`, whose types and shapes must be the
/// entry's; `results` become the entry's results.
std::string run(const gs_model_info &model, const gs_entry_info &entry,
                const std::vector<const Tensor *> &inputs,
                std::vector<Tensor> &results);

/// The memref descriptor of a dense row-major buffer, as compiled C
/// interfaces take it: allocated and aligned pointers, offset, sizes,
/// strides.
std::vector<int64_t> memrefDescriptor(const void *data,
                                      const std::vector<int64_t> &shape);

/// Calls `entry` through its packed interface, on one memref descriptor
/// (memrefDescriptor) per argument, in the order the entry takes them.
void callPacked(const gs_entry_info &entry,
                std::vector<std::vector<int64_t>> &descriptors);

/// Keeps freed buffers in the process's heap instead of returning them to
/// the system: a compiled step allocates and frees the same buffers every
/// call, and mapping them anew each time costs page faults.
void keepFreedBuffersInHeap();

/// A parameter's current value (for a model on a GPU, copied from the
/// device where it is newer there: DeviceModel.h).
Tensor readParam(const gs_param_info &param);

/// Sets a parameter of `model` and derives its FP16 copies (a copy itself
/// is read only); `value` must have its type and shape. (A model on a GPU
/// gets them before its next run.)
std::string writeParam(const gs_model_info &model, const gs_param_info &param,
                       const Tensor &value);

} // namespace mlir::gs::runtime

#endif // GS_RUNTIME_MODEL_H
