//===- Compiler.h - A model to CPU or GPU code with its table ---*- C++ -*-===//
//
// The ahead-of-time compilation as a library that gs-compile and the
// Python package (python-bindings/) share: a gs module (an imported model
// with its gs.training) to its train step, the runtime's description of it
// (ModelTable.h), an optimized LLVM module for a CPU (with, for a model on
// a GPU, the kernels' binaries embedded) that exports the table as
// `<prefix>_model`, and object code.
//
//   mlir::gs::CompileOptions options;
//   options.target = mlir::gs::CPUTarget::resolve("native", error);
//   mlir::FailureOr<mlir::gs::CompiledModel> compiled =
//       mlir::gs::compileModel(module, trainOptions, options, error);
//   // compiled->objects: PIC objects; compiled->spec: its table.
//   auto loaded = mlir::gs::LoadedModel::load(*compiled, error);
//   // loaded->table(): what gs/Runtime/Model.h runs.
//
//===----------------------------------------------------------------------===//

#ifndef GS_COMPILER_COMPILER_H
#define GS_COMPILER_COMPILER_H

#include "gs/Compiler/ModelTable.h"
#include "gs/Pipelines/CPUTarget.h"
#include "gs/Pipelines/Pipelines.h"
#include "gs/Runtime/ModelABI.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir::gs {

/// How a model is compiled, beyond the training pipeline's options.
struct CompileOptions {
  /// The CPU the code is for (CPUTarget::resolve; required): for a model on
  /// a GPU, the host code's.
  CPUTarget target;
  /// Where the entries run (enum gs_device): the CPU, or an NVIDIA GPU
  /// (buildCUDAPipeline, with `cuda`'s options of the same names).
  int32_t device = GS_DEVICE_CPU;
  struct {
    std::string chip = "sm_80";
    std::string features = "+ptx80";
    std::string format = "fatbin";
    bool emulateKernels = false;
    /// With emulateKernels: gs-emulate-gpu's check-races.
    bool emulateCheckRaces = false;
  } cuda;
  /// The C prefix of the table's accessor, `<prefix>_model`.
  std::string prefix = "gs_program";
  /// Leave only the accessor external, so that the object links beside
  /// other compiled models (an executable, a library).
  bool internalize = true;
  /// The method's name as the table records it (reports print it); empty:
  /// the training pipeline's (`gs`, `fixed=S`, `dynamic`, `none`, `fp32`).
  std::string scaling;
  /// The model's name in error messages and the LLVM module.
  std::string modelName = "model";
  /// The ONNX model (binary protobuf) to embed for exporting trained
  /// weights; empty for none.
  std::string onnx;
  /// Called on each pass manager before it runs (timing, IR printing);
  /// a failure stops the compilation.
  std::function<LogicalResult(PassManager &)> configurePassManager;
  /// Called as each phase starts, with its name (a phase timer).
  std::function<void(StringRef)> onPhase;
  /// How many threads optimize and compile a CPU model's LLVM module, each
  /// a part of it (an object file of its own); 0: one per core this
  /// process may run on. A GPU model's host code is compiled whole.
  unsigned threads = 0;
  /// The transport of a data-parallel train step (TrainPipelineOptions'
  /// data-parallel) as the table records it: "mpi"; empty for none.
  std::string distributed;
};

/// Runs the training pipeline `train` (no lowering) on `module`: the train
/// step, with its precision and scaling method.
LogicalResult runTrainPipeline(ModuleOp module,
                               const TrainPipelineOptions &train,
                               const CompileOptions &options);

/// The runtime's view of a train-step module: its parameters, the train
/// step and, for classifiers, an eval step returning the class scores,
/// added here. A model that is no classifier gets no eval step;
/// `whyNoEvalStep` then says why. Sets `error` on failure.
FailureOr<ModelSpec> describeTrainStep(ModuleOp module,
                                       const CompileOptions &options,
                                       std::string &whyNoEvalStep,
                                       std::string &error);

/// A train step lowered for a CPU: an LLVM module with its model table,
/// the LLVM context it lives in, and the target machine it is for.
struct LoweredModel {
  LoweredModel();
  LoweredModel(LoweredModel &&);
  ~LoweredModel();
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::TargetMachine> machine;
  std::unique_ptr<llvm::Module> module;
  /// Whether LLVM's optimizations ran on `module` (optimizeModule).
  bool optimized = false;
};

/// Lowers the train-step module `module` (in place) described by `spec`
/// to LLVM IR for `options.target`. On failure, `error` says why, or is
/// empty where a diagnostic did.
FailureOr<LoweredModel> lowerTrainStep(ModuleOp module, const ModelSpec &spec,
                                       const CompileOptions &options,
                                       std::string &error);

/// Runs LLVM's O3 on a lowered model's module (once).
LogicalResult optimizeModule(LoweredModel &lowered, std::string &error);

/// The object code of a lowered model, optimized first if it is not yet:
/// one object, or, with `options.threads` other than 1 on a CPU, one per
/// thread, each compiling a share of the functions (this thread the data
/// too). The module is left with this thread's share only.
FailureOr<std::vector<std::string>>
emitObjectCode(LoweredModel &lowered, const CompileOptions &options,
               std::string &error);

/// A compiled model: PIC object code exporting `<prefix>_model` (in one
/// object or several, linked together), and the table it returns.
struct CompiledModel {
  std::vector<std::string> objects;
  std::string prefix;
  ModelSpec spec;
  /// Why the model has no eval step; empty when it has one.
  std::string whyNoEvalStep;
};

/// All of the above: `module` (an imported model with its gs.training, in
/// a context with gs::registerAllDialects) to object code; `module` is
/// transformed in place. On failure, `error` says why, or is empty where a
/// diagnostic did.
FailureOr<CompiledModel> compileModel(ModuleOp module,
                                      const TrainPipelineOptions &train,
                                      const CompileOptions &options,
                                      std::string &error);

/// The runtime's functions that compiled code calls (the buffer cache's
/// allocation functions, the collectives, the GPU runtime API), by their
/// names as `mangle` makes them: for a JIT that links compiled code into a
/// process whose dynamic symbol table need not hold them.
llvm::orc::SymbolMap
runtimeFunctionSymbols(llvm::orc::MangleAndInterner &mangle);

/// A compiled model linked into this process (by LLVM's ORC JIT), for the
/// runtime to run: its table stays valid while the object lives.
class LoadedModel {
public:
  /// Links `compiled`'s objects; their undefined symbols resolve against
  /// this process (libc, the gs runtime). Null on failure, with `error`
  /// set.
  static std::unique_ptr<LoadedModel> load(const CompiledModel &compiled,
                                           std::string &error);
  ~LoadedModel();

  /// The table the object's `<prefix>_model()` returns.
  const gs_model_info &table() const { return *info; }

private:
  LoadedModel();
  struct Linker;
  std::unique_ptr<Linker> linker;
  const gs_model_info *info = nullptr;
};

} // namespace mlir::gs

#endif // GS_COMPILER_COMPILER_H
