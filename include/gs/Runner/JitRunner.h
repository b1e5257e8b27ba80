//===- JitRunner.h - JIT-compile and call a gs function ---------*- C++ -*-===//
//
// Lowers a module with the CPU pipeline, JIT-compiles it with MLIR's
// ExecutionEngine and calls one of its functions on runtime tensors; or,
// for a GPU, compiles it as gs-compile does, links it into the process and
// calls it through the runtime, its parameters kept on the device.
//
//===----------------------------------------------------------------------===//

#ifndef GS_RUNNER_JITRUNNER_H
#define GS_RUNNER_JITRUNNER_H

#include "gs/Compiler/Compiler.h"
#include "gs/Pipelines/CPUTarget.h"
#include "gs/Pipelines/Pipelines.h"
#include "gs/Runtime/Tensor.h"

#include "mlir/IR/BuiltinOps.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir {
class ExecutionEngine;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace mlir::gs {

/// One argument or result of the compiled function.
struct TensorSignature {
  runtime::DType type;
  std::vector<int64_t> shape;
  /// The ONNX value name, when the module came from ONNX.
  std::string name;
  /// The position among the ONNX graph's (non-initializer) inputs; -1 when
  /// unknown.
  int64_t onnxIndex = -1;
};

class JitFunction {
public:
  ~JitFunction();

  /// Lowers `module` (in place) and compiles function `entry` for `cpu`
  /// (the kernel schedule blocks for its vector width unless `options`
  /// names one). On failure returns null and sets `error` (pipeline
  /// diagnostics included).
  static std::unique_ptr<JitFunction> compile(ModuleOp module, StringRef entry,
                                              const CPUTarget &cpu,
                                              const CPUPipelineOptions &options,
                                              std::string &error);
  /// The same for the host CPU ("native").
  static std::unique_ptr<JitFunction> compile(ModuleOp module, StringRef entry,
                                              const CPUPipelineOptions &options,
                                              std::string &error);
  /// Lowers `module` (in place) for the device `options` names (an NVIDIA
  /// GPU: GS_DEVICE_CUDA, host code for `options.target`) with function
  /// `entry` as the model table's one entry, and links it into this
  /// process. Calls run on the GPU with the parameters kept there
  /// (runtime/DeviceModel.h); they fail, saying why, where there is none.
  static std::unique_ptr<JitFunction>
  compileForDevice(ModuleOp module, StringRef entry,
                   const CompileOptions &options, std::string &error);

  const std::vector<TensorSignature> &inputs() const { return inputs_; }
  const std::vector<TensorSignature> &outputs() const { return outputs_; }
  /// The module's parameters (gs.param: weights, optimizer state, step
  /// counters), which persist across calls; `name` is the symbol.
  const std::vector<TensorSignature> &parameters() const { return parameters_; }

  /// Calls the function. Inputs must match `inputs()` in element type and
  /// shape; `outputs` that already match `outputs()` are written in place.
  /// Returns an error message, empty on success.
  std::string run(const std::vector<const runtime::Tensor *> &inputs,
                  std::vector<runtime::Tensor> &outputs);

  /// Copies the current value of parameter `index` (of `parameters()`).
  /// Returns an error message, empty on success.
  std::string readParameter(size_t index, runtime::Tensor &value);

private:
  JitFunction();
  /// A function for `module`'s function `entry` (returned in `function`),
  /// its inputs and outputs set from the signature. Null on failure, with
  /// `error` set.
  static std::unique_ptr<JitFunction> forEntry(ModuleOp module, StringRef entry,
                                               func::FuncOp &function,
                                               std::string &error);

  /// On the CPU: the engine and the symbol it calls.
  std::unique_ptr<ExecutionEngine> engine;
  /// On a device: the linked model and its entry.
  std::unique_ptr<LoadedModel> loaded;
  const gs_entry_info *deviceEntry = nullptr;
  std::string symbol;
  std::vector<TensorSignature> inputs_, outputs_, parameters_;
};

} // namespace mlir::gs

#endif // GS_RUNNER_JITRUNNER_H
