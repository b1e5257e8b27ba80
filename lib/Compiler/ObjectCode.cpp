//===- ObjectCode.cpp - LLVM optimization and code generation --*- C++ -*-===//
//
// A lowered model's LLVM module to object code: on this thread, or with
// its functions shared out among threads that optimize and compile them
// side by side, each part in an LLVM context of its own (contexts are not
// thread-safe). The data (weights, the embedded ONNX model: most of a
// large model's bytes) stays in the module this thread compiles, so that
// only code travels between contexts, as bitcode.
//
//===----------------------------------------------------------------------===//

#include "gs/Compiler/Compiler.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <algorithm>
#include <thread>

using namespace mlir;
using namespace mlir::gs;

namespace {
/// LLVM's O3, for `machine`.
LogicalResult optimize(llvm::Module &module, llvm::TargetMachine &machine,
                       std::string &error) {
  if (llvm::Error err = makeOptimizingTransformer(
          /*optLevel=*/3, /*sizeLevel=*/0, &machine)(&module)) {
    error = "optimizing LLVM IR: " + llvm::toString(std::move(err));
    return failure();
  }
  return success();
}

FailureOr<std::string> generateCode(llvm::Module &module,
                                    llvm::TargetMachine &machine,
                                    std::string &error) {
  llvm::SmallString<0> bytes;
  llvm::raw_svector_ostream os(bytes);
  llvm::legacy::PassManager codegen;
  if (machine.addPassesToEmitFile(codegen, os, nullptr,
                                  llvm::CodeGenFileType::ObjectFile)) {
    error = "the target cannot emit object files";
    return failure();
  }
  codegen.run(module);
  return std::string(bytes.str());
}

/// O3 unless `optimized`, then code generation.
FailureOr<std::string> compileModule(llvm::Module &module,
                                     llvm::TargetMachine &machine,
                                     bool optimized, std::string &error) {
  if (!optimized && failed(optimize(module, machine, error)))
    return failure();
  return generateCode(module, machine, error);
}

/// One part of a split module, as bitcode, to object code: what a thread
/// runs, in a context of its own.
FailureOr<std::string> compilePart(StringRef bitcode, const CPUTarget &target,
                                   bool optimized, std::string &error) {
  llvm::LLVMContext context;
  llvm::Expected<std::unique_ptr<llvm::Module>> module =
      llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode, "part"), context);
  if (!module) {
    error =
        "reading a part of the module: " + llvm::toString(module.takeError());
    return failure();
  }
  std::unique_ptr<llvm::TargetMachine> machine =
      target.createTargetMachine(llvm::Reloc::PIC_, error);
  if (!machine)
    return failure();
  return compileModule(**module, *machine, optimized, error);
}

/// Makes every local symbol external and hidden, so that a part may use
/// it from another. Their names come from the model (ONNX initializers),
/// so they take the model's prefix, lest one clash with a symbol of the
/// runtime or of another model.
void externalizeLocalSymbols(llvm::Module &module, StringRef prefix) {
  for (llvm::GlobalValue &value : module.global_values()) {
    if (!value.hasLocalLinkage())
      continue;
    value.setName(prefix + "." + (value.hasName() ? value.getName() : "local"));
    value.setLinkage(llvm::GlobalValue::ExternalLinkage);
    value.setVisibility(llvm::GlobalValue::HiddenVisibility);
  }
}

/// Shares the function definitions of `module` out among `parts` parts,
/// the largest first, each to the part with the fewest instructions so
/// far. Part 0 is `module` itself (its data and its functions); the others
/// come back as bitcode of modules holding only their functions, the rest
/// declared, and their definitions leave `module`.
std::vector<llvm::SmallString<0>> splitFunctions(llvm::Module &module,
                                                 unsigned parts) {
  std::vector<llvm::Function *> functions;
  for (llvm::Function &function : module)
    if (!function.isDeclaration() && !function.hasComdat())
      functions.push_back(&function);
  llvm::stable_sort(functions, [](llvm::Function *a, llvm::Function *b) {
    return a->getInstructionCount() > b->getInstructionCount();
  });
  std::vector<uint64_t> load(parts, 0);
  llvm::DenseMap<const llvm::GlobalValue *, unsigned> partOf;
  for (llvm::Function *function : functions) {
    unsigned part = std::min_element(load.begin(), load.end()) - load.begin();
    partOf[function] = part;
    load[part] += function->getInstructionCount();
  }

  std::vector<llvm::SmallString<0>> bitcode(parts - 1);
  for (unsigned part = 1; part < parts; ++part) {
    llvm::ValueToValueMapTy mapping;
    std::unique_ptr<llvm::Module> copy =
        llvm::CloneModule(module, mapping, [&](const llvm::GlobalValue *value) {
          auto it = partOf.find(value);
          return it != partOf.end() && it->second == part;
        });
    llvm::raw_svector_ostream os(bitcode[part - 1]);
    llvm::WriteBitcodeToFile(*copy, os);
  }
  for (llvm::Function *function : functions)
    if (partOf[function] != 0)
      function->deleteBody();
  return bitcode;
}

/// How many parts to compile `lowered` in: `options.threads`, or one per
/// core the process may run on. Host code of a GPU model (with its
/// kernels' binaries and constructors) stays whole.
unsigned partsFor(const CompileOptions &options) {
  if (options.device != GS_DEVICE_CPU)
    return 1;
  if (options.threads)
    return options.threads;
  return llvm::hardware_concurrency().compute_thread_count();
}
} // namespace

LogicalResult mlir::gs::optimizeModule(LoweredModel &lowered,
                                       std::string &error) {
  if (lowered.optimized)
    return success();
  if (failed(optimize(*lowered.module, *lowered.machine, error)))
    return failure();
  lowered.optimized = true;
  return success();
}

FailureOr<std::vector<std::string>>
mlir::gs::emitObjectCode(LoweredModel &lowered, const CompileOptions &options,
                         std::string &error) {
  error.clear();
  unsigned parts = partsFor(options);
  if (parts <= 1) {
    if (!lowered.optimized && options.onPhase)
      options.onPhase("LLVM optimization");
    if (failed(optimizeModule(lowered, error)))
      return failure();
    if (options.onPhase)
      options.onPhase("code generation");
    FailureOr<std::string> object =
        generateCode(*lowered.module, *lowered.machine, error);
    if (failed(object))
      return failure();
    return std::vector<std::string>{std::move(*object)};
  }

  if (options.onPhase)
    options.onPhase(
        llvm::formatv("O3 and code generation ({0} threads)", parts).str());
  externalizeLocalSymbols(*lowered.module, options.prefix);
  std::vector<llvm::SmallString<0>> bitcode =
      splitFunctions(*lowered.module, parts);
  // Part 0 here, the others on threads of their own.
  std::vector<FailureOr<std::string>> objects(parts, failure());
  std::vector<std::string> errors(parts);
  {
    std::vector<std::thread> threads;
    threads.reserve(bitcode.size());
    for (size_t i = 0; i < bitcode.size(); ++i)
      threads.emplace_back([&, i] {
        objects[i + 1] = compilePart(bitcode[i], options.target,
                                     lowered.optimized, errors[i + 1]);
      });
    objects[0] = compileModule(*lowered.module, *lowered.machine,
                               lowered.optimized, errors[0]);
    for (std::thread &thread : threads)
      thread.join();
  }
  std::vector<std::string> result;
  for (size_t i = 0; i < objects.size(); ++i) {
    if (failed(objects[i])) {
      error = errors[i];
      return failure();
    }
    result.push_back(std::move(*objects[i]));
  }
  return result;
}
