//===- JitRunner.cpp - JIT-compile and call a gs function ------*- C++ -*-===//

#include "gs/Runner/JitRunner.h"

#include "gs/Compiler/ModelTable.h"
#include "gs/Dialect/GS/IR/GSOps.h"
#include "gs/Runtime/BufferCache.h"
#include "gs/Runtime/Collectives.h"
#include "gs/Runtime/DeviceModel.h"
#include "gs/Runtime/Model.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <cstring>

using namespace mlir;
using namespace mlir::gs;
using mlir::gs::runtime::DType;
using mlir::gs::runtime::Tensor;

JitFunction::JitFunction() = default;
JitFunction::~JitFunction() = default;

/// The runtime element type of an MLIR element type.
static std::optional<DType> dtypeOf(Type type) {
  std::optional<int32_t> abi = abiElementType(type);
  DType dtype;
  if (!abi || !runtime::toDType(*abi, dtype))
    return std::nullopt;
  return dtype;
}

/// Entry functions with more LLVM parameters than this are folded into the
/// wrapper the runner calls.
static constexpr size_t kWideCallParameters = 512;

/// Inlines every call of `callee` in `caller`; erases `callee` if nothing
/// else uses it.
static void inlineInto(llvm::Function &callee, llvm::Function &caller) {
  SmallVector<llvm::CallBase *> calls;
  for (llvm::User *user : callee.users())
    if (auto *call = dyn_cast<llvm::CallBase>(user))
      if (call->getFunction() == &caller)
        calls.push_back(call);
  for (llvm::CallBase *call : calls) {
    llvm::InlineFunctionInfo info;
    (void)llvm::InlineFunction(*call, info);
  }
  if (callee.use_empty())
    callee.eraseFromParent();
}

/// An entry taking many parameters (a memref is five or more) becomes one
/// function: the packed wrapper the runner calls
/// (`_mlir__mlir_ciface_<entry>`, which loads each argument) with the C
/// interface and the entry inlined, and the ExecutionEngine's unused packed
/// wrapper of the entry itself dropped. LLVM's optimizer and code
/// generator are quadratic in a call's argument count (interprocedural
/// propagation, the machine scheduler's stack-store dependences); loads
/// are linear.
static void foldWideEntry(llvm::Module &module, StringRef entry) {
  llvm::Function *function = module.getFunction(entry);
  llvm::Function *wrapper = module.getFunction(("_mlir_ciface_" + entry).str());
  llvm::Function *packed =
      module.getFunction(("_mlir__mlir_ciface_" + entry).str());
  if (!function || !wrapper || !packed || function->isDeclaration() ||
      function->arg_size() <= kWideCallParameters)
    return;
  if (llvm::Function *unused = module.getFunction(("_mlir_" + entry).str()))
    if (unused->use_empty())
      unused->eraseFromParent();
  inlineInto(*function, *wrapper);
  inlineInto(*wrapper, *packed);
}

/// The signature of a function's arguments or results.
static LogicalResult signatureOf(TypeRange types, ArrayAttr attrs,
                                 std::vector<TensorSignature> &out,
                                 std::string &error) {
  for (auto [i, type] : llvm::enumerate(types)) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    std::optional<DType> dtype =
        tensor ? dtypeOf(tensor.getElementType()) : std::nullopt;
    if (!dtype) {
      llvm::raw_string_ostream os(error);
      os << "cannot pass a value of type " << type << " to compiled code";
      return failure();
    }
    TensorSignature s{*dtype,
                      std::vector<int64_t>(tensor.getShape().begin(),
                                           tensor.getShape().end()),
                      "", -1};
    if (auto dict = attrs ? dyn_cast<DictionaryAttr>(attrs[i]) : nullptr) {
      if (auto name = dict.getAs<StringAttr>("onnx.name"))
        s.name = name.str();
      if (auto index = dict.getAs<IntegerAttr>("onnx.input_index"))
        s.onnxIndex = index.getInt();
    }
    out.push_back(std::move(s));
  }
  return success();
}

std::unique_ptr<JitFunction> JitFunction::forEntry(ModuleOp module,
                                                   StringRef entry,
                                                   func::FuncOp &function,
                                                   std::string &error) {
  function = module.lookupSymbol<func::FuncOp>(entry);
  if (!function) {
    error = ("the module has no function '" + entry + "'").str();
    return nullptr;
  }
  std::unique_ptr<JitFunction> jit(new JitFunction());
  if (failed(signatureOf(function.getArgumentTypes(),
                         function.getArgAttrsAttr(), jit->inputs_, error)) ||
      failed(signatureOf(function.getResultTypes(), function.getResAttrsAttr(),
                         jit->outputs_, error)))
    return nullptr;
  return jit;
}

std::unique_ptr<JitFunction>
JitFunction::compileForDevice(ModuleOp module, StringRef entry,
                              const CompileOptions &options,
                              std::string &error) {
  func::FuncOp function;
  std::unique_ptr<JitFunction> jit = forEntry(module, entry, function, error);
  if (!jit)
    return nullptr;
  ModelSpec spec;
  spec.device = options.device;
  if (failed(describeModel(module, {entry}, spec, error)))
    return nullptr;
  for (const ParamSpec &param : spec.params) {
    runtime::DType dtype;
    if (!runtime::toDType(param.tensor.dtype, dtype)) {
      error = "parameter '" + param.tensor.name + "' has no runtime type";
      return nullptr;
    }
    jit->parameters_.push_back(
        {dtype, param.tensor.shape, param.tensor.name, -1});
  }
  CompileOptions forDevice = options;
  forDevice.prefix = "gs_run";
  FailureOr<LoweredModel> lowered =
      lowerTrainStep(module, spec, forDevice, error);
  if (failed(lowered)) {
    if (error.empty())
      error = "lowering failed";
    return nullptr;
  }
  FailureOr<std::vector<std::string>> objects =
      emitObjectCode(*lowered, forDevice, error);
  if (failed(objects))
    return nullptr;
  CompiledModel compiled{std::move(*objects), forDevice.prefix, spec, ""};
  jit->loaded = LoadedModel::load(compiled, error);
  if (!jit->loaded)
    return nullptr;
  const gs_model_info &table = jit->loaded->table();
  if (std::string invalid = runtime::validate(table); !invalid.empty()) {
    error = invalid;
    return nullptr;
  }
  jit->deviceEntry = &table.entries[0];
  return jit;
}

std::unique_ptr<JitFunction>
JitFunction::compile(ModuleOp module, StringRef entry,
                     const CPUPipelineOptions &options, std::string &error) {
  CPUTarget host = CPUTarget::resolve("native", error);
  if (host.cpu.empty())
    return nullptr;
  return compile(module, entry, host, options, error);
}

std::unique_ptr<JitFunction>
JitFunction::compile(ModuleOp module, StringRef entry, const CPUTarget &cpu,
                     const CPUPipelineOptions &options, std::string &error) {
  func::FuncOp function;
  std::unique_ptr<JitFunction> jit = forEntry(module, entry, function, error);
  if (!jit)
    return nullptr;
  // Parameters the runtime can hold a copy of (readParameter).
  for (auto param : module.getOps<ParamOp>()) {
    RankedTensorType type = param.getType();
    std::optional<DType> dtype = dtypeOf(type.getElementType());
    if (!dtype)
      continue;
    jit->parameters_.push_back({*dtype, std::vector<int64_t>(type.getShape()),
                                param.getSymName().str(), -1});
  }
  function->setAttr("llvm.emit_c_interface",
                    UnitAttr::get(module.getContext()));

  // Lower, collecting the pipeline's diagnostics into `error`.
  {
    llvm::raw_string_ostream os(error);
    ScopedDiagnosticHandler capture(module.getContext(), [&](Diagnostic &d) {
      os << d.getLocation() << ": " << d << "\n";
      return success();
    });
    CPUPipelineOptions forCPU;
    forCPU.copyOptionValuesFrom(options);
    if (!forCPU.vectorBits)
      forCPU.vectorBits = cpu.vectorBits;
    PassManager pm(module.getContext());
    buildCPUPipeline(pm, forCPU);
    if (failed(pm.run(module))) {
      if (error.empty())
        error = "lowering to LLVM failed";
      return nullptr;
    }
  }

  std::unique_ptr<llvm::TargetMachine> machine =
      cpu.createTargetMachine(llvm::Reloc::PIC_, error);
  if (!machine)
    return nullptr;
  // The JIT's own target machine is the host's: the functions' attributes
  // select `cpu` for code generation.
  auto optimize = makeOptimizingTransformer(/*optLevel=*/3,
                                            /*sizeLevel=*/0, machine.get());
  std::string entryName = entry.str();
  auto transformer = [&, entryName](llvm::Module *llvmModule) {
    cpu.annotate(*llvmModule);
    foldWideEntry(*llvmModule, entryName);
    return optimize(llvmModule);
  };
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  auto engine =
      ExecutionEngine::create(module, engineOptions, std::move(machine));
  if (!engine) {
    error = "JIT compilation failed: " + llvm::toString(engine.takeError());
    return nullptr;
  }
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner mangle) {
    return runtimeFunctionSymbols(mangle);
  });
  jit->engine = std::move(*engine);
  jit->symbol = ("_mlir_ciface_" + entry).str();
  return jit;
}

std::string JitFunction::run(const std::vector<const Tensor *> &inputs,
                             std::vector<Tensor> &outputs) {
  if (inputs.size() != inputs_.size())
    return "expected " + std::to_string(inputs_.size()) + " inputs, got " +
           std::to_string(inputs.size());
  std::vector<std::vector<int64_t>> descriptors;
  for (auto [i, input] : llvm::enumerate(inputs)) {
    const TensorSignature &s = inputs_[i];
    if (input->type() != s.type || input->shape() != s.shape)
      return "input " + std::to_string(i) +
             (s.name.empty() ? "" : " '" + s.name + "'") + " is " +
             input->describe() + ", but the function takes " +
             runtime::describeTensor(s.type, s.shape);
    descriptors.push_back(
        runtime::memrefDescriptor(input->data(), input->shape()));
  }
  if (loaded)
    return runtime::run(loaded->table(), *deviceEntry, inputs, outputs);
  // Outputs of the right types and shapes are reused (a benchmark's
  // repeated calls); others are replaced.
  bool reusable = outputs.size() == outputs_.size();
  for (size_t i = 0; reusable && i < outputs.size(); ++i)
    reusable = outputs[i].type() == outputs_[i].type &&
               outputs[i].shape() == outputs_[i].shape;
  if (!reusable) {
    outputs.clear();
    outputs.resize(outputs_.size());
    for (auto [output, s] : llvm::zip(outputs, outputs_))
      if (std::string error = Tensor::allocate(s.type, s.shape, output);
          !error.empty())
        return "output '" + s.name + "': " + error;
  }
  for (Tensor &output : outputs)
    descriptors.push_back(
        runtime::memrefDescriptor(output.data(), output.shape()));
  // invokePacked takes a pointer to each argument, here a descriptor
  // pointer.
  SmallVector<void *> pointers, args;
  for (std::vector<int64_t> &d : descriptors)
    pointers.push_back(d.data());
  for (void *&pointer : pointers)
    args.push_back(&pointer);
  if (llvm::Error e = engine->invokePacked(symbol, args))
    return "calling the compiled function failed: " +
           llvm::toString(std::move(e));
  return {};
}

std::string JitFunction::readParameter(size_t index, Tensor &value) {
  if (index >= parameters_.size())
    return "no parameter " + std::to_string(index);
  const TensorSignature &s = parameters_[index];
  if (loaded) {
    value = runtime::readParam(loaded->table().params[index]);
    return {};
  }
  // A parameter is a global of the compiled module holding its elements.
  llvm::Expected<void *> address = engine->lookup(s.name);
  if (!address)
    return "parameter '" + s.name +
           "' is not in the compiled code: " + toString(address.takeError());
  value = Tensor(s.type, s.shape);
  std::memcpy(value.data(), *address, value.byteSize());
  return {};
}
