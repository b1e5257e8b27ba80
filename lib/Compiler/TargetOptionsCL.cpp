//===- TargetOptionsCL.cpp - The --target and --gpu-* flags -----*- C++ -*-===//

#include "gs/Compiler/TargetOptionsCL.h"

#include "gs/Runtime/Cuda/Device.h"

#include "llvm/Support/CommandLine.h"

using namespace mlir;
using namespace mlir::gs;
namespace cl = llvm::cl;

namespace {
struct TargetFlags {
  cl::OptionCategory category{"Target options"};
  cl::opt<std::string> target{
      "target",
      cl::desc("Where the compiled code runs: cpu (the host's architecture) "
               "or cuda (an NVIDIA GPU; host code for --cpu)"),
      cl::init("cpu"), cl::cat(category)};
  cl::opt<std::string> gpuArch{
      "gpu-arch",
      cl::desc("--target=cuda: the GPU architecture the kernels are "
               "compiled for (sm_80, sm_86, sm_89, sm_90, sm_90a, ...; "
               "newer GPUs compile the embedded PTX)"),
      cl::init("sm_80"), cl::cat(category)};
  cl::opt<std::string> gpuFormat{
      "gpu-format",
      cl::desc("--target=cuda: how the kernels are embedded: fatbin (the "
               "cubin and its PTX; the default), cubin, or ptx (compiled by "
               "the driver at the first launch). fatbin and cubin need the "
               "CUDA toolkit's ptxas (found through CUDA_HOME or "
               "/usr/local/cuda)"),
      cl::init("fatbin"), cl::cat(category)};
  cl::opt<bool> emulateKernels{
      "emulate-gpu-kernels",
      cl::desc("--target=cuda: run the kernels on the CPU and only the "
               "memory through the GPU runtime (tests the host side "
               "without a GPU)"),
      cl::init(false), cl::Hidden, cl::cat(category)};
  cl::opt<bool> emulateCheckRaces{
      "emulate-gpu-check-races",
      cl::desc("--emulate-gpu-kernels: stop after a launch in which two "
               "threads of a block accessed the same shared memory, one "
               "writing it, with no barrier between them"),
      cl::init(false), cl::Hidden, cl::cat(category)};
};

TargetFlags &flags() {
  static TargetFlags instance;
  return instance;
}
} // namespace

cl::OptionCategory &mlir::gs::targetCLCategory() { return flags().category; }

LogicalResult mlir::gs::targetOptionsFromCL(CompileOptions &options,
                                            std::string &error) {
  TargetFlags &f = flags();
  if (f.target != "cpu" && f.target != "cuda") {
    error = "--target: expected cpu or cuda, got '" + f.target + "'";
    return failure();
  }
  if (f.target == "cpu") {
    for (cl::Option *option : {static_cast<cl::Option *>(&f.gpuArch),
                               static_cast<cl::Option *>(&f.gpuFormat),
                               static_cast<cl::Option *>(&f.emulateKernels),
                               static_cast<cl::Option *>(&f.emulateCheckRaces)})
      if (option->getNumOccurrences()) {
        error = "--" + option->ArgStr.str() + ": only --target=cuda takes it";
        return failure();
      }
    options.device = GS_DEVICE_CPU;
    return success();
  }
  std::optional<runtime::cuda::ArchInfo> arch =
      runtime::cuda::parseArch(f.gpuArch.getValue());
  if (!arch || arch->capability < 80) {
    error = "--gpu-arch: expected an NVIDIA architecture sm_80 or newer (the "
            "kernels use cp.async and ldmatrix), got '" +
            f.gpuArch + "'";
    return failure();
  }
  StringRef format = f.gpuFormat.getValue();
  if (format != "fatbin" && format != "cubin" && format != "ptx") {
    error = "--gpu-format: expected fatbin, cubin or ptx, got '" +
            format.str() + "'";
    return failure();
  }
  options.device = GS_DEVICE_CUDA;
  options.cuda.chip = f.gpuArch;
  // gpu-module-to-binary's names for them.
  options.cuda.format = format == "cubin" ? "bin"
                        : format == "ptx" ? "isa"
                                          : format.str();
  options.cuda.emulateKernels = f.emulateKernels;
  if (f.emulateCheckRaces && !f.emulateKernels) {
    error = "--emulate-gpu-check-races: only --emulate-gpu-kernels takes it";
    return failure();
  }
  options.cuda.emulateCheckRaces = f.emulateCheckRaces;
  return success();
}
