//===- CPUTarget.cpp - The CPU that code is generated for -------*- C++ -*-===//

#include "gs/Pipelines/CPUTarget.h"

#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/Triple.h"

#include <cstdlib>

using namespace mlir::gs;

/// The widest SIMD registers a subtarget has, in bits.
static unsigned vectorBitsOf(const llvm::MCSubtargetInfo &subtarget) {
  if (subtarget.checkFeatures("+avx512f"))
    return 512;
  if (subtarget.checkFeatures("+avx"))
    return 256;
  return 128;
}

/// The LLVM target of `triple`, its targets initialized once.
static const llvm::Target *lookupTarget(const llvm::Triple &triple,
                                        std::string &error) {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
  return llvm::TargetRegistry::lookupTarget(triple, error);
}

CPUTarget CPUTarget::resolve(llvm::StringRef name, std::string &error) {
  CPUTarget target;
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  target.triple = triple.str();
  if (name == "native") {
    target.cpu = llvm::sys::getHostCPUName().str();
    llvm::SubtargetFeatures features;
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      features.AddFeature(feature.first(), feature.second);
    target.features = features.getString();
  } else if (name == "generic") {
    target.cpu = triple.isX86() ? "x86-64" : "generic";
  } else {
    target.cpu = name.str();
  }
  const llvm::Target *llvmTarget = lookupTarget(triple, error);
  if (!llvmTarget)
    return CPUTarget();
  // Checked on a subtarget of the default CPU: LLVM warns on stderr when a
  // subtarget is made for a CPU it does not know.
  std::unique_ptr<llvm::MCSubtargetInfo> baseline(
      llvmTarget->createMCSubtargetInfo(triple, "", ""));
  if (!baseline || !baseline->isCPUStringValid(target.cpu)) {
    error = "'" + name.str() + "' is not a CPU of " + target.triple +
            " (try native, generic or x86-64-v3)";
    return CPUTarget();
  }
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      llvmTarget->createMCSubtargetInfo(triple, target.cpu, target.features));
  target.vectorBits = vectorBitsOf(*subtarget);
  // Every feature spelled out, on or off: a function carrying these
  // attributes gets this subtarget whatever CPU the compiling target
  // machine was made for (the JIT's is the host's).
  if (target.features.empty()) {
    llvm::SubtargetFeatures features;
    for (const llvm::SubtargetFeatureKV &feature :
         subtarget->getAllProcessorFeatures())
      features.AddFeature(feature.Key, subtarget->checkFeatures(
                                           std::string("+") + feature.Key));
    target.features = features.getString();
  }
  return target;
}

std::string CPUTarget::defaultName() {
  const char *fromEnvironment = std::getenv("GS_CPU");
  return fromEnvironment && *fromEnvironment ? fromEnvironment : "native";
}

std::unique_ptr<llvm::TargetMachine>
CPUTarget::createTargetMachine(llvm::Reloc::Model relocation,
                               std::string &error) const {
  llvm::Triple llvmTriple(triple);
  const llvm::Target *llvmTarget = lookupTarget(llvmTriple, error);
  if (!llvmTarget)
    return nullptr;
  std::unique_ptr<llvm::TargetMachine> machine(llvmTarget->createTargetMachine(
      llvmTriple, cpu, features, llvm::TargetOptions(), relocation,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    error = "cannot create a target machine for " + triple;
  return machine;
}

void CPUTarget::annotate(llvm::Module &module) const {
  for (llvm::Function &function : module) {
    if (function.isDeclaration())
      continue;
    function.addFnAttr("target-cpu", cpu);
    if (!features.empty())
      function.addFnAttr("target-features", features);
  }
}
