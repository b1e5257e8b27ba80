//===- Compiler.cpp - A model to CPU or GPU code with its table -*- C++ -*-===//

#include "gs/Compiler/Compiler.h"

#include "gs/Conversion/GSToGPU/DeviceMemory.h"
#include "gs/Runtime/BufferCache.h"
#include "gs/Runtime/Collectives.h"
#include "gs/Runtime/Cuda/Device.h"
#include "gs/Runtime/DeviceModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ExecutionEngine/Orc/AbsoluteSymbols.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;
using namespace mlir::gs;

namespace {
void startPhase(const CompileOptions &options, StringRef name) {
  if (options.onPhase)
    options.onPhase(name);
}

LogicalResult configure(const CompileOptions &options, PassManager &pm) {
  return options.configurePassManager ? options.configurePassManager(pm)
                                      : success();
}

/// `message` about the model, for `error`.
std::string aboutModel(const CompileOptions &options, const Twine &message) {
  return ("'" + options.modelName + "': " + message).str();
}

/// The method as the table records it: `options.scaling`, or the
/// pipeline's.
std::string scalingName(const TrainPipelineOptions &train,
                        const CompileOptions &options) {
  if (!options.scaling.empty())
    return options.scaling;
  switch (train.scaling) {
  case ScalingMethod::GS:
    return "gs";
  case ScalingMethod::Fixed:
    return llvm::formatv(
        "fixed={0}", llvm::format("%g", static_cast<double>(train.lossScale)));
  case ScalingMethod::Dynamic:
    return "dynamic";
  case ScalingMethod::None:
    return "none";
  case ScalingMethod::FP32:
    return "fp32";
  }
  llvm_unreachable("a scaling method");
}
/// The C interfaces of a GPU model's entries take the parameters first, in
/// the table's order (gs-device-memory marks them `gs.param`); the marks
/// are dropped, as LLVM IR has no place for them.
LogicalResult checkParamArguments(ModuleOp module, const ModelSpec &spec,
                                  std::string &error) {
  StringRef mark = kParamArgumentAttr;
  for (const EntrySpec &entry : spec.entries) {
    auto function =
        module.lookupSymbol<LLVM::LLVMFuncOp>("_mlir_ciface_" + entry.name);
    if (!function || function.getNumArguments() < spec.params.size()) {
      error = "entry '" + entry.name + "' does not take the parameters";
      return failure();
    }
    for (auto [i, param] : llvm::enumerate(spec.params)) {
      auto name = function.getArgAttrOfType<FlatSymbolRefAttr>(i, mark);
      if (!name || name.getValue() != param.tensor.name) {
        error = "argument " + std::to_string(i) + " of entry '" + entry.name +
                "' is not parameter '" + param.tensor.name + "'";
        return failure();
      }
    }
  }
  module.walk([&](LLVM::LLVMFuncOp function) {
    for (unsigned i = 0; i < function.getNumArguments(); ++i)
      function.removeArgAttr(i, mark);
  });
  return success();
}
} // namespace

LoweredModel::LoweredModel() = default;
LoweredModel::LoweredModel(LoweredModel &&) = default;
LoweredModel::~LoweredModel() = default;

LogicalResult mlir::gs::runTrainPipeline(ModuleOp module,
                                         const TrainPipelineOptions &train,
                                         const CompileOptions &options) {
  startPhase(options, "train step (gs passes)");
  PassManager pm(module.getContext());
  if (failed(configure(options, pm)))
    return failure();
  buildTrainPipeline(pm, train);
  return pm.run(module);
}

FailureOr<ModelSpec> mlir::gs::describeTrainStep(ModuleOp module,
                                                 const CompileOptions &options,
                                                 std::string &whyNoEvalStep,
                                                 std::string &error) {
  ModelSpec spec;
  spec.scaling = options.scaling;
  spec.onnx = options.onnx;
  spec.device = options.device;
  spec.distributed = options.distributed;
  SmallVector<StringRef> entries = {"train_step"};
  {
    // Not a classifier: a reason, not an error.
    whyNoEvalStep.clear();
    ScopedDiagnosticHandler asReason(module.getContext(),
                                     [&](Diagnostic &diagnostic) {
                                       whyNoEvalStep = diagnostic.str();
                                       return success();
                                     });
    if (succeeded(addEvalStep(module)))
      entries.push_back("eval_step");
  }
  if (failed(describeModel(module, entries, spec, error))) {
    error = aboutModel(options, error);
    return failure();
  }
  return spec;
}

FailureOr<LoweredModel> mlir::gs::lowerTrainStep(ModuleOp module,
                                                 const ModelSpec &spec,
                                                 const CompileOptions &options,
                                                 std::string &error) {
  error.clear();
  MLIRContext *context = module.getContext();
  // C interfaces for the runtime, then the CPU pipeline.
  for (auto function : module.getOps<func::FuncOp>())
    if (!function.isDeclaration())
      function->setAttr("llvm.emit_c_interface", UnitAttr::get(context));
  bool onGPU = options.device == GS_DEVICE_CUDA;
  startPhase(options, onGPU ? "CUDA lowering (MLIR)" : "CPU lowering (MLIR)");
  PassManager lower(context);
  if (failed(configure(options, lower)))
    return failure();
  if (onGPU) {
    // The entries take the parameters first, in the order of the module's
    // gs.param ops, which is the table's (describeModel).
    CUDAPipelineOptions cuda;
    cuda.chip = options.cuda.chip;
    cuda.features = options.cuda.features;
    cuda.format = options.cuda.format;
    cuda.emulateKernels = options.cuda.emulateKernels;
    cuda.emulateCheckRaces = options.cuda.emulateCheckRaces;
    buildCUDAPipeline(lower, cuda);
  } else {
    CPUPipelineOptions cpuOptions;
    cpuOptions.vectorBits = options.target.vectorBits;
    buildCPUPipeline(lower, cpuOptions);
  }
  if (failed(lower.run(module))) {
    error = aboutModel(options, "lowering to LLVM failed");
    return failure();
  }
  if (onGPU && failed(checkParamArguments(module, spec, error))) {
    error = aboutModel(options, error);
    return failure();
  }
  LoweredModel lowered;
  lowered.context = std::make_unique<llvm::LLVMContext>();
  lowered.machine =
      options.target.createTargetMachine(llvm::Reloc::PIC_, error);
  if (!lowered.machine)
    return failure();

  startPhase(options, "translation to LLVM IR");
  lowered.module =
      translateModuleToLLVMIR(module, *lowered.context, options.modelName);
  if (!lowered.module) {
    error = aboutModel(options, "translation to LLVM IR failed");
    return failure();
  }
  std::string accessor = options.prefix + "_model";
  if (failed(emitModelTable(*lowered.module, spec, accessor, error))) {
    error = aboutModel(options, error);
    return failure();
  }
  std::string constructors = accessor + "_constructors";
  emitConstructorsFunction(*lowered.module, constructors);
  if (options.internalize)
    internalizeExcept(*lowered.module, {accessor, constructors});
  lowered.module->setTargetTriple(lowered.machine->getTargetTriple());
  lowered.module->setDataLayout(lowered.machine->createDataLayout());
  options.target.annotate(*lowered.module);
  return lowered;
}

FailureOr<CompiledModel>
mlir::gs::compileModel(ModuleOp module, const TrainPipelineOptions &train,
                       const CompileOptions &options, std::string &error) {
  error.clear();
  if (failed(runTrainPipeline(module, train, options))) {
    error = aboutModel(options, "building the train step failed");
    return failure();
  }
  CompileOptions named = options;
  named.scaling = scalingName(train, options);
  std::string whyNoEvalStep;
  FailureOr<ModelSpec> spec =
      describeTrainStep(module, named, whyNoEvalStep, error);
  if (failed(spec))
    return failure();
  FailureOr<LoweredModel> lowered = lowerTrainStep(module, *spec, named, error);
  if (failed(lowered))
    return failure();
  FailureOr<std::vector<std::string>> objects =
      emitObjectCode(*lowered, options, error);
  if (failed(objects))
    return failure();
  return CompiledModel{std::move(*objects), options.prefix, std::move(*spec),
                       std::move(whyNoEvalStep)};
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

struct LoadedModel::Linker {
  std::unique_ptr<llvm::orc::LLJIT> jit;
};

llvm::orc::SymbolMap
mlir::gs::runtimeFunctionSymbols(llvm::orc::MangleAndInterner &mangle) {
  llvm::orc::SymbolMap symbols;
  // Buffers come from the runtime's buffer cache; a data-parallel step
  // calls the collectives (one rank unless the process installed a
  // communicator); host code lowered for a GPU calls the mgpu* functions.
  for (const auto *functions :
       {&runtime::bufferCacheFunctions(), &runtime::collectiveFunctions(),
        &runtime::cuda::runtimeAPIFunctions()})
    for (const runtime::RuntimeFunction &function : *functions)
      symbols[mangle(function.name)] = {
          llvm::orc::ExecutorAddr::fromPtr(function.address),
          llvm::JITSymbolFlags::Exported};
  return symbols;
}

LoadedModel::LoadedModel() : linker(std::make_unique<Linker>()) {}
LoadedModel::~LoadedModel() {
  // Its tables go with the JIT; a model loaded later may take their
  // addresses, by which the GPU runtime knows its models.
  if (info && runtime::runsOnDevice(*info))
    runtime::forgetDeviceModel(*info);
}

std::unique_ptr<LoadedModel> LoadedModel::load(const CompiledModel &compiled,
                                               std::string &error) {
  auto fail = [&](llvm::Error err) {
    error = "loading the compiled model: " + llvm::toString(std::move(err));
    return nullptr;
  };
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  StringRef prefix = compiled.prefix;
  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> jit =
      llvm::orc::LLJITBuilder().create();
  if (!jit)
    return fail(jit.takeError());
  llvm::orc::JITDylib &dylib = (*jit)->getMainJITDylib();
  llvm::Expected<std::unique_ptr<llvm::orc::DynamicLibrarySearchGenerator>>
      process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
          (*jit)->getDataLayout().getGlobalPrefix());
  if (!process)
    return fail(process.takeError());
  dylib.addGenerator(std::move(*process));
  llvm::orc::MangleAndInterner mangle((*jit)->getExecutionSession(),
                                      (*jit)->getDataLayout());
  if (llvm::Error err = dylib.define(
          llvm::orc::absoluteSymbols(runtimeFunctionSymbols(mangle))))
    return fail(std::move(err));
  for (const std::string &object : compiled.objects)
    if (llvm::Error err = (*jit)->addObjectFile(
            llvm::MemoryBuffer::getMemBufferCopy(object, prefix)))
      return fail(std::move(err));
  llvm::Expected<llvm::orc::ExecutorAddr> accessor =
      (*jit)->lookup((prefix + "_model").str());
  if (!accessor)
    return fail(accessor.takeError());
  // The object's static constructors (a GPU model's), which the JIT does
  // not run; a model without any has no such function.
  if (llvm::Expected<llvm::orc::ExecutorAddr> constructors =
          (*jit)->lookup((prefix + "_model_constructors").str()))
    constructors->toPtr<void (*)()>()();
  else
    llvm::consumeError(constructors.takeError());
  std::unique_ptr<LoadedModel> loaded(new LoadedModel());
  loaded->linker->jit = std::move(*jit);
  loaded->info = accessor->toPtr<const gs_model_info *(*)()>()();
  return loaded;
}
