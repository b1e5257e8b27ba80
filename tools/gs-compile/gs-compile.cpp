//===- gs-compile.cpp - Ahead-of-time compiled train steps ------*- C++ -*-===//
//
// Compiles a model (.onnx, .onnxtext or .mlir) into its train step in
// mixed precision with the chosen gradient-precision method, ahead of time
// for the host CPU: the gs train step (--emit=mlir), LLVM IR (llvm), a
// relocatable, position-independent object file (obj) exporting the C
// interfaces and the model's table (gs/Runtime/ModelABI.h), a library (lib:
// an object exporting only `<name>_model` and its C header) or a training
// executable (exe: the object linked with the runtime's trainer by the
// system C++ compiler). Outputs are written through a temporary file and a
// rename: a failure never leaves a half-written file.
//
// Exit status: 0 on success, 1 on an error (bad model, flags or output).
//
//===----------------------------------------------------------------------===//

#include "CompileCache.h"
#include "gs/Compiler/Compiler.h"
#include "gs/Compiler/TargetOptionsCL.h"
#include "gs/Conversion/ImportONNX/ImportONNX.h"
#include "gs/Conversion/ImportONNX/ImportOptionsCL.h"
#include "gs/InitAll.h"
#include "gs/Pipelines/CPUTarget.h"
#include "gs/Pipelines/Pipelines.h"
#include "gs/Runtime/Tensor.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/BuryPointer.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"

#include <onnx/onnx_pb.h>

#include <chrono>
#include <cmath>
#include <csignal>

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory compileCategory("gs-compile options");

static cl::opt<std::string> modelPath(cl::Positional, cl::Required,
                                      cl::desc("<model.onnx|.onnxtext|.mlir>"),
                                      cl::cat(compileCategory));
static cl::opt<std::string> outputPath("o", cl::Required,
                                       cl::desc("Output file"),
                                       cl::value_desc("file"),
                                       cl::cat(compileCategory));
static cl::opt<std::string>
    scaling("scaling",
            cl::desc("Gradient precision: gs (mixed precision with gradient "
                     "scaling), fixed (loss scaling by --loss-scale; fixed=S "
                     "is short for --scaling=fixed --loss-scale=S), dynamic, "
                     "none (mixed precision unscaled), fp32"),
            cl::init("gs"), cl::cat(compileCategory));
static cl::opt<double>
    lossScale("loss-scale",
              cl::desc("--scaling=fixed: the loss scale (default 128), as "
                       "gs-opt's --gs-train=\"scaling=fixed loss-scale=S\""),
              cl::init(gs::TrainPipelineOptions().lossScale),
              cl::cat(compileCategory));
static cl::opt<double>
    threshold("threshold",
              cl::desc("--scaling=gs: the target underflow rate per tensor"),
              cl::init(1e-3), cl::cat(compileCategory));
static cl::opt<int64_t>
    interval("interval",
             cl::desc("--scaling=gs: recompute the scales every N steps"),
             cl::init(1), cl::cat(compileCategory));
static cl::opt<gs::ScaleModel> castModel(
    "cast-model", cl::desc("--scaling=gs: the model at FP32->FP16 casts"),
    cl::init(gs::ScaleModel::log_normal),
    gs::scaleModelValues(/*withHalfNormal=*/false), cl::cat(compileCategory));
static cl::opt<gs::ScaleModel> gemmModel(
    "gemm-model",
    cl::desc("--scaling=gs: the model at contractions with an FP16 result "
             "(half_normal: the paper's Theorem 1 on the operands)"),
    cl::init(gs::ScaleModel::half_normal),
    gs::scaleModelValues(/*withHalfNormal=*/true), cl::cat(compileCategory));
static cl::opt<bool> skipNonFinite(
    "skip-non-finite",
    cl::desc("--scaling=fixed and none: skip a step whose gradients hold an "
             "inf or NaN, counted as a skipped step (default on; gs and "
             "dynamic always do)"),
    cl::init(true), cl::cat(compileCategory));
static cl::list<std::string> fp32Ops(
    "fp32-ops",
    cl::desc("gs ops kept in FP32 besides softmax, log_softmax, the losses "
             "and the reductions (e.g. gs.sigmoid,gs.exp), as gs-opt's "
             "--gs-train=\"fp32-ops=...\""),
    cl::CommaSeparated, cl::value_desc("op,..."), cl::cat(compileCategory));
static cl::opt<bool> fp16WeightCopies(
    "fp16-weight-copies",
    cl::desc("Mixed precision: the step reads FP16 copies of the weights, "
             "which their updates write, as gs-opt's "
             "--gs-train=\"fp16-weight-copies=...\" (default: on for "
             "--target=cuda; off for the CPU, whose GEMMs round the FP32 "
             "weights as they pack them)"),
    cl::cat(compileCategory));
enum class Distributed { None, MPI, NCCL };
static cl::opt<Distributed> distributed(
    "distributed",
    cl::desc("Compile the train step as a data-parallel replica: ranks "
             "train on shards of each global batch and sum their gradients "
             "and scaling statistics (docs/Distributed.md)"),
    cl::init(Distributed::None),
    cl::values(clEnumValN(Distributed::None, "none", "one process (default)"),
               clEnumValN(Distributed::MPI, "mpi",
                          "the ranks of mpirun, on CPUs (Open MPI); "
                          "--emit=exe links the MPI transport"),
               clEnumValN(Distributed::NCCL, "nccl",
                          "the ranks of mpirun, a GPU each (--target=cuda), "
                          "reducing on the GPU with NCCL; --emit=exe links "
                          "the NCCL and MPI transports")),
    cl::cat(compileCategory));
static cl::opt<uint64_t> bucketBytes(
    "bucket-bytes",
    cl::desc("--distributed: gradients smaller than this many bytes are "
             "summed together, in buckets of at most this size, one "
             "all-reduce each (0: each gradient alone)"),
    cl::init(1 << 20), cl::value_desc("bytes"), cl::cat(compileCategory));
enum class Emit { MLIR, LLVM, Object, Library, Executable };
static cl::opt<Emit> emit(
    "emit", cl::desc("What to write"), cl::init(Emit::Executable),
    cl::values(
        clEnumValN(Emit::MLIR, "mlir", "the gs train step"),
        clEnumValN(Emit::LLVM, "llvm", "LLVM IR, optimized"),
        clEnumValN(Emit::Object, "obj",
                   "a PIC object file exporting every function"),
        clEnumValN(Emit::Library, "lib",
                   "a PIC object exporting only <name>_model, and a C "
                   "header (--header) with init, train and eval steps and "
                   "parameter access"),
        clEnumValN(Emit::Executable, "exe",
                   "a training executable (the default): the object linked "
                   "with the runtime's trainer by the C++ compiler $CXX "
                   "(default c++)")),
    cl::cat(compileCategory));
static cl::opt<std::string>
    libraryName("name",
                cl::desc("--emit=obj|lib: the C prefix of the model's "
                         "functions (default: the output file's stem)"),
                cl::cat(compileCategory));
static cl::opt<std::string>
    headerPath("header",
               cl::desc("--emit=lib: the header to write (default: the "
                        "output with the extension .h)"),
               cl::value_desc("file"), cl::cat(compileCategory));
static cl::opt<bool>
    timePhases("time-phases",
               cl::desc("Print the wall time of each compilation phase"),
               cl::init(false), cl::cat(compileCategory));
static cl::opt<std::string>
    runtimeDir("runtime-dir",
               cl::desc("--emit=exe: the directory of libGSRuntimeMain.a, "
                        "libGSRuntime.a and libGSCudaRuntime.a (default: "
                        "../lib beside gs-compile)"),
               cl::value_desc("dir"), cl::cat(compileCategory));
static cl::opt<std::string>
    cpu("cpu",
        cl::desc("CPU to generate code for: native (the host's model and "
                 "features; the default unless the environment sets GS_CPU), "
                 "generic (a portable baseline of the architecture), or an "
                 "LLVM CPU name such as x86-64-v3 or znver3"),
        cl::init(gs::CPUTarget::defaultName()), cl::cat(compileCategory));
static cl::opt<std::string> cacheDir(
    "cache-dir",
    cl::desc("Where compiled models are kept, so that compiling an unchanged "
             "model again (same model, flags, CPU and gs-compile) only "
             "links (default: $GS_CACHE_DIR, else "
             "$XDG_CACHE_HOME/gradscale or ~/.cache/gradscale; "
             "GS_CACHE_DIR=off keeps none)"),
    cl::value_desc("dir"), cl::cat(compileCategory));
static cl::opt<bool> noCache("no-cache",
                             cl::desc("Neither reuse nor keep compiled models"),
                             cl::init(false), cl::cat(compileCategory));
static cl::opt<uint64_t> cacheMaxMiB(
    "cache-max-mib",
    cl::desc("The most MiB the cache keeps; the least recently used models "
             "go first (default 2048)"),
    cl::init(2048), cl::cat(compileCategory));
static cl::opt<unsigned> jobs(
    "jobs",
    cl::desc("How many threads LLVM's optimization and code generation of "
             "an executable use, each on a part of the model's code "
             "(default 0: one per core gs-compile may run on); a library "
             "or object file is compiled on one"),
    cl::init(0), cl::cat(compileCategory));
static cl::opt<uint64_t> maxTensorBytes(
    "max-tensor-bytes",
    cl::desc("The most bytes one input, result or parameter of the compiled "
             "model may take (default 2 GiB)"),
    cl::init(gs::runtime::kDefaultTensorByteLimit), cl::cat(compileCategory));

/// The most threads --jobs may ask for.
constexpr unsigned kMaxJobs = 256;

namespace {
/// An error for the user: `gs-compile: <message>`, exit status 1.
int fail(const llvm::Twine &message) {
  llvm::errs() << "gs-compile: error: " << message << "\n";
  return 1;
}

/// With --time-phases, prints how long each phase took, on stderr.
class PhaseTimer {
public:
  /// Ends the current phase and starts `name`.
  void next(llvm::StringRef name) {
    stop();
    phase = name.str();
    start = std::chrono::steady_clock::now();
  }
  void stop() {
    if (!timePhases || phase.empty())
      return;
    std::chrono::duration<double> seconds =
        std::chrono::steady_clock::now() - start;
    llvm::errs() << llvm::format("gs-compile: %-36s %8.2f s\n",
                                 (phase + ":").c_str(), seconds.count());
    phase.clear();
  }
  ~PhaseTimer() { stop(); }

private:
  std::string phase;
  std::chrono::steady_clock::time_point start;
};

/// Where the model runs: --target and the --gpu-* flags.
static gs::CompileOptions targetOptions;

/// The gs-train options for --scaling and the gs options.
LogicalResult trainOptions(gs::TrainPipelineOptions &options,
                           std::string &error) {
  llvm::StringRef spec = scaling;
  auto [method, value] = spec.split('=');
  if (method == "gs")
    options.scaling = gs::ScalingMethod::GS;
  else if (method == "fixed")
    options.scaling = gs::ScalingMethod::Fixed;
  else if (method == "dynamic")
    options.scaling = gs::ScalingMethod::Dynamic;
  else if (method == "none")
    options.scaling = gs::ScalingMethod::None;
  else if (method == "fp32")
    options.scaling = gs::ScalingMethod::FP32;
  else {
    error = "--scaling: expected gs, fixed=S, dynamic, none or fp32, got '" +
            spec.str() + "'";
    return failure();
  }
  if (lossScale.getNumOccurrences() &&
      (method != "fixed" || spec.contains('='))) {
    error = method != "fixed"
                ? "--loss-scale: only --scaling=fixed takes a loss scale"
                : "--loss-scale: the loss scale is given twice (--scaling=" +
                      spec.str() + ")";
    return failure();
  }
  double scale = lossScale;
  if (!value.empty() || spec.contains('=')) {
    if (method != "fixed" || value.getAsDouble(scale) || !(scale > 0) ||
        !std::isfinite(scale)) {
      error = "--scaling: only fixed takes a value, a positive, finite loss "
              "scale (fixed=128), got '" +
              spec.str() + "'";
      return failure();
    }
  }
  if (method == "fixed") {
    if (!(scale > 0) || !std::isfinite(scale)) {
      error = "--loss-scale: expected a positive, finite loss scale, got " +
              llvm::formatv("{0}", llvm::format("%g", scale)).str();
      return failure();
    }
    options.lossScale = scale;
  }
  options.threshold = threshold;
  options.interval = interval;
  options.castModel = castModel;
  options.gemmModel = gemmModel;
  options.skipNonFinite = skipNonFinite;
  if (fp32Ops.getNumOccurrences() && method == "fp32") {
    error = "--fp32-ops: --scaling=fp32 runs every op in FP32 already";
    return failure();
  }
  std::vector<std::string> ops(fp32Ops.begin(), fp32Ops.end());
  options.fp32Ops = ops;
  if (fp16WeightCopies.getNumOccurrences() && method == "fp32") {
    error = "--fp16-weight-copies: --scaling=fp32 has no FP16 weights";
    return failure();
  }
  options.fp16WeightCopies = fp16WeightCopies.getNumOccurrences()
                                 ? bool(fp16WeightCopies)
                                 : targetOptions.device == GS_DEVICE_CUDA;
  options.dataParallel = distributed != Distributed::None;
  if (bucketBytes.getNumOccurrences() && !options.dataParallel) {
    error = "--bucket-bytes: only for a data-parallel step (--distributed)";
    return failure();
  }
  if (bucketBytes > static_cast<uint64_t>(INT64_MAX)) {
    error = "--bucket-bytes: at most " + std::to_string(INT64_MAX);
    return failure();
  }
  options.bucketBytes = static_cast<int64_t>(bucketBytes);
  return success();
}

/// The transport --distributed names, as the model's table records it.
std::string transportName() {
  switch (distributed) {
  case Distributed::None:
    return "";
  case Distributed::MPI:
    return "mpi";
  case Distributed::NCCL:
    return "nccl";
  }
  llvm_unreachable("a --distributed value");
}

/// The module at `path`: an ONNX model through the importer (with the
/// --onnx-* options), or parsed MLIR.
OwningOpRef<ModuleOp> loadModel(llvm::StringRef path, MLIRContext &context,
                                llvm::SourceMgr &sourceMgr) {
  if (!gs::isOnnxInput(path))
    return parseSourceFile<ModuleOp>(path, sourceMgr, &context);
  gs::OnnxImportOptions options;
  std::string error;
  if (failed(gs::onnxImportOptionsFromCL(options, error))) {
    fail(error);
    return nullptr;
  }
  return gs::importOnnxFile(path, &context, options);
}

/// Whether the flag `name` (registered by libMLIR) was given.
bool givenOnCommandLine(StringRef name) {
  cl::Option *option = cl::getRegisteredOptions().lookup(name);
  return option && option->getNumOccurrences();
}

/// Shows MLIR's debugging flags (--mlir-print-ir-after-all, --mlir-timing,
/// ...) in --help next to gs-compile's own.
void showMLIRFlags(cl::OptionCategory &category) {
  for (auto &entry : cl::getRegisteredOptions())
    if (entry.first.starts_with("mlir-"))
      entry.second->addCategory(category);
}

/// Writes `bytes` to `path` (default --o) through a temporary file and a
/// rename.
int writeOutput(llvm::StringRef bytes,
                const std::string &path = outputPath.getValue()) {
  std::string error = gs::runtime::writeFileAtomically(
      path, std::string_view(bytes.data(), bytes.size()));
  return error.empty() ? 0 : fail(error);
}

/// Fails before compiling when `path` cannot be written.
LogicalResult checkWritable(const std::string &path, std::string &error) {
  error = gs::runtime::checkWritable(path);
  return success(error.empty());
}

/// The C prefix of the model's functions: --name, or the output's stem
/// made an identifier.
std::string symbolPrefix() {
  std::string name = libraryName.empty()
                         ? llvm::sys::path::stem(outputPath).str()
                         : libraryName.getValue();
  for (char &c : name)
    if (!llvm::isAlnum(c))
      c = '_';
  if (name.empty() || llvm::isDigit(name.front()))
    name = "model_" + name;
  return name;
}

/// --emit=lib's header: --header, or the output with the extension .h.
std::string libraryHeader() {
  if (!headerPath.empty())
    return headerPath;
  llvm::SmallString<256> path(outputPath);
  llvm::sys::path::replace_extension(path, "h");
  return path.str().str();
}

/// The ONNX model to embed for exporting trained weights, as binary
/// protobuf; empty for MLIR input.
LogicalResult onnxBytes(std::string &bytes, std::string &error) {
  if (!gs::isOnnxInput(modelPath))
    return success();
  onnx::ModelProto model;
  if (!(error = gs::readOnnxModel(modelPath, model)).empty() ||
      !model.SerializeToString(&bytes)) {
    error = "'" + modelPath + "': cannot embed the ONNX model" +
            (error.empty() ? "" : ": " + error);
    return failure();
  }
  return success();
}

/// Links `objects` with the runtime's trainer into --o (through a temporary
/// file and a rename) with $CXX or c++.
int linkExecutable(const std::vector<std::string> &objects, const char *argv0) {
  std::string dir = runtimeDir;
  if (dir.empty()) {
    std::string self = llvm::sys::fs::getMainExecutable(
        argv0, reinterpret_cast<void *>(&linkExecutable));
    llvm::SmallString<256> lib(llvm::sys::path::parent_path(self));
    llvm::sys::path::append(lib, "..", "lib");
    dir = lib.str().str();
  }
  std::vector<std::string> libraries;
  auto addLibrary = [&](llvm::StringRef name) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, name);
    if (!llvm::sys::fs::exists(path))
      return false;
    libraries.push_back(path.str().str());
    return true;
  };
  auto missing = [&](llvm::StringRef name) {
    return fail("the runtime library '" + dir + "/" + name +
                "' is missing: build GradScale's runtime or pass "
                "--runtime-dir");
  };
  if (distributed != Distributed::None) {
    // Whole: a transport registers itself from a static object. NCCL's
    // bootstraps over MPI's.
    libraries.push_back("-Wl,--whole-archive");
    if (!addLibrary("libGSRuntimeMPI.a") || GS_MPI_LIBRARIES[0] == '\0')
      return fail("--distributed=" + transportName() +
                  ": this GradScale was built without MPI (install Open "
                  "MPI, libopenmpi-dev, and build again)");
    if (distributed == Distributed::NCCL && !addLibrary("libGSRuntimeNCCL.a"))
      return missing("libGSRuntimeNCCL.a");
    libraries.push_back("-Wl,--no-whole-archive");
  }
  for (const char *name :
       {"libGSRuntimeMain.a", "libGSRuntime.a", "libGSCudaRuntime.a"})
    if (!addLibrary(name))
      return missing(name);
  if (distributed != Distributed::None) {
    llvm::SmallVector<llvm::StringRef> mpi;
    llvm::StringRef(GS_MPI_LIBRARIES).split(mpi, ';', -1, false);
    for (llvm::StringRef library : mpi)
      libraries.push_back(library.str());
  }
  const char *cxxEnv = std::getenv("CXX");
  std::string cxxName = cxxEnv && *cxxEnv ? cxxEnv : "c++";
  llvm::ErrorOr<std::string> cxx = llvm::sys::findProgramByName(cxxName);
  if (!cxx)
    return fail("cannot find the C++ compiler '" + cxxName +
                "' to link with: install one or set CXX");
  std::string temporary =
      outputPath + ".tmp." + std::to_string(llvm::sys::Process::getProcessId());
  std::vector<llvm::StringRef> args = {*cxx, "-o", temporary};
  args.insert(args.end(), objects.begin(), objects.end());
  args.insert(args.end(), libraries.begin(), libraries.end());
  args.push_back("-lz");
  args.push_back("-ldl");
  std::string message;
  int status =
      llvm::sys::ExecuteAndWait(*cxx, args, std::nullopt, {}, 0, 0, &message);
  if (status != 0) {
    llvm::sys::fs::remove(temporary);
    return fail("linking with '" + *cxx + "' failed" +
                (message.empty()
                     ? " (exit status " + std::to_string(status) + ")"
                     : ": " + message));
  }
  if (std::error_code ec = llvm::sys::fs::rename(temporary, outputPath)) {
    llvm::sys::fs::remove(temporary);
    return fail("cannot write '" + outputPath + "': " + ec.message());
  }
  return 0;
}
/// The options of the library's compilation, from the flags.
gs::CompileOptions compileOptions(const gs::CPUTarget &cpuTarget,
                                  llvm::StringRef prefix) {
  gs::CompileOptions options;
  options.target = cpuTarget;
  options.device = targetOptions.device;
  options.cuda = targetOptions.cuda;
  options.prefix = prefix.str();
  options.internalize = emit == Emit::Library || emit == Emit::Executable;
  // A library or object file is one object.
  options.threads = emit == Emit::Executable ? jobs.getValue() : 1;
  options.scaling = scaling;
  options.modelName = modelPath;
  options.distributed = transportName();
  return options;
}

/// The runtime's view of the model: its parameters, the train step and, for
/// classifiers, an eval step (a model that is not a classifier gets a note).
/// Its notes go to stderr and to `notes`.
FailureOr<gs::ModelSpec> describeForRuntime(ModuleOp module,
                                            gs::CompileOptions &options,
                                            std::string &notes,
                                            std::string &error) {
  if (options.onnx.empty() && failed(onnxBytes(options.onnx, error)))
    return failure();
  std::string whyNoEvalStep;
  FailureOr<gs::ModelSpec> spec =
      gs::describeTrainStep(module, options, whyNoEvalStep, error);
  if (succeeded(spec) && !whyNoEvalStep.empty() &&
      (emit == Emit::Executable || emit == Emit::Library)) {
    notes +=
        "gs-compile: note: no eval_step, so no accuracy: " + whyNoEvalStep +
        "\n";
    llvm::errs() << notes;
  }
  return spec;
}

/// Whether an MLIR debugging flag (--mlir-print-ir-after-all, ...) is
/// given: its output comes from compiling, which a cache hit skips.
bool mlirFlagsGiven() {
  for (auto &entry : cl::getRegisteredOptions())
    if (entry.first.starts_with("mlir-") && entry.second->getNumOccurrences())
      return true;
  return false;
}

/// Whether this compilation's output may come from, and go to, the cache.
bool usesCache() {
  return !noCache && !mlirFlagsGiven() &&
         (emit == Emit::Object || emit == Emit::Library ||
          emit == Emit::Executable);
}

/// The BLAKE3 digest of the running gs-compile (its code generation), or
/// empty if it cannot be read.
std::string compilerDigest(const char *argv0) {
  std::string self = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&compilerDigest));
  gs::HashingStream hash;
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> binary =
      llvm::MemoryBuffer::getFile(self, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!binary)
    return std::string();
  hash << (*binary)->getBuffer();
  return hash.digest();
}

/// The cache key of a compilation: everything its output depends on, the
/// imported model (weights included) as bytecode, the embedded ONNX, the
/// train and compile options, the CPU, and gs-compile and LLVM themselves.
/// Empty when some part cannot be read (then nothing is cached).
std::string cacheKey(ModuleOp module, const gs::TrainPipelineOptions &train,
                     const gs::CompileOptions &compile, const char *argv0) {
  std::string compiler = compilerDigest(argv0);
  if (compiler.empty())
    return std::string();
  gs::HashingStream model;
  if (failed(writeBytecodeToFile(module, model)))
    return std::string();
  std::string trainOptions;
  llvm::raw_string_ostream os(trainOptions);
  train.print(os);
  gs::CacheKey key;
  key.add("gs-compile cache 2")
      .add(compiler)
      .add(LLVM_VERSION_STRING)
      .add(model.digest())
      .add(compile.onnx)
      .add(trainOptions)
      .add(static_cast<uint64_t>(emit.getValue()))
      .add(compile.prefix)
      .add(static_cast<uint64_t>(compile.internalize))
      .add(compile.scaling)
      .add(compile.modelName)
      .add(compile.target.triple)
      .add(compile.target.cpu)
      .add(compile.target.features)
      .add(static_cast<uint64_t>(compile.target.vectorBits))
      .add(static_cast<uint64_t>(compile.device))
      .add(compile.cuda.chip)
      .add(compile.cuda.features)
      .add(compile.cuda.format)
      .add(static_cast<uint64_t>(compile.cuda.emulateKernels))
      .add(static_cast<uint64_t>(compile.cuda.emulateCheckRaces))
      .add(static_cast<uint64_t>(maxTensorBytes))
      .add(compile.distributed)
      // The parts the code is compiled in: objects of their own.
      .add(static_cast<uint64_t>(compile.threads));
  return key.hex();
}

/// Writes what --emit=obj|lib|exe asks for from a compiled model: the
/// object file, a library (object and header) or a linked executable.
int writeCompiled(const gs::CachedModel &compiled, PhaseTimer &timer,
                  const char *argv0) {
  if (emit == Emit::Executable) {
    std::vector<std::string> objects;
    std::vector<llvm::FileRemover> removers;
    removers.reserve(compiled.objects.size());
    for (const std::string &bytes : compiled.objects) {
      llvm::SmallString<128> object;
      if (std::error_code ec =
              llvm::sys::fs::createTemporaryFile("gs-compile", "o", object))
        return fail("cannot create a temporary object file: " + ec.message());
      removers.emplace_back(object);
      if (int status = writeOutput(bytes, object.str().str()))
        return status;
      objects.push_back(object.str().str());
    }
    timer.next("link");
    return linkExecutable(objects, argv0);
  }
  if (compiled.objects.size() != 1)
    return fail("the compiled model is in " +
                std::to_string(compiled.objects.size()) +
                " objects, not the one file --emit asks for");
  if (int status = writeOutput(compiled.objects[0]))
    return status;
  if (emit != Emit::Library)
    return 0;
  return writeOutput(compiled.header, libraryHeader());
}

/// Writes what --emit asks for from the optimized LLVM module: its text, or
/// (through writeCompiled) its object code, which `remember` keeps.
int writeEmitted(gs::LoweredModel &lowered, const gs::ModelSpec &spec,
                 const gs::CompileOptions &compile, std::string notes,
                 PhaseTimer &timer, const char *argv0,
                 llvm::function_ref<void(const gs::CachedModel &)> remember) {
  std::string error;
  if (emit == Emit::LLVM) {
    timer.next("LLVM optimization");
    if (failed(gs::optimizeModule(lowered, error)))
      return fail(error);
    std::string text;
    llvm::raw_string_ostream os(text);
    lowered.module->print(os, nullptr);
    return writeOutput(text);
  }
  FailureOr<std::vector<std::string>> objects =
      gs::emitObjectCode(lowered, compile, error);
  if (failed(objects))
    return fail(error);
  gs::CachedModel compiled{std::move(*objects), std::string(),
                           std::move(notes)};
  if (emit == Emit::Library)
    compiled.header = gs::renderHeader(spec, compile.prefix,
                                       llvm::sys::path::filename(modelPath));
  // Kept before linking, so that a failed link (say, a missing $CXX)
  // does not cost the next compilation its code generation.
  remember(compiled);
  return writeCompiled(compiled, timer, argv0);
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // A write past RLIMIT_FSIZE is an error to report (EFBIG), not a kill.
  std::signal(SIGXFSZ, SIG_IGN);
  gs::registerOnnxImportCLOptions();
  // Pass names for --mlir-print-ir-after=<pass> and the like.
  gs::registerAllPasses();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerAsmPrinterCLOptions();
  registerDefaultTimingManagerCLOptions();
  cl::OptionCategory mlirCategory("MLIR debugging options");
  showMLIRFlags(mlirCategory);
  cl::HideUnrelatedOptions({&compileCategory, &gs::targetCLCategory(),
                            &gs::onnxImportCLCategory(), &mlirCategory});
  cl::ParseCommandLineOptions(
      argc, argv,
      "GradScale ahead-of-time compiler: an ONNX model to a mixed-precision "
      "training executable or library for the CPU or an NVIDIA GPU "
      "(docs/Runtime.md, docs/GPU.md)\n");
  if (std::string error; failed(gs::targetOptionsFromCL(targetOptions, error)))
    return fail(error);
  if (distributed == Distributed::MPI && targetOptions.device != GS_DEVICE_CPU)
    return fail("--distributed=mpi reduces host memory, for steps on CPUs "
                "(--target=cpu); for a GPU, --distributed=nccl");
  if (distributed == Distributed::NCCL &&
      targetOptions.device != GS_DEVICE_CUDA)
    return fail("--distributed=nccl reduces GPU memory, for steps on NVIDIA "
                "GPUs (--target=cuda); for CPUs, --distributed=mpi");
  if (jobs > kMaxJobs)
    return fail("--jobs=" + std::to_string(jobs) + ": at most " +
                std::to_string(kMaxJobs));
  gs::runtime::setTensorByteLimit(maxTensorBytes);
  gs::TrainPipelineOptions options;
  std::string error;
  gs::CPUTarget cpuTarget = gs::CPUTarget::resolve(cpu, error);
  if (cpuTarget.cpu.empty())
    return fail("--cpu: " + error);
  if (failed(trainOptions(options, error)) ||
      failed(checkWritable(outputPath, error)) ||
      (emit == Emit::Library && failed(checkWritable(libraryHeader(), error))))
    return fail(error);
  if (emit == Emit::Library && symbolPrefix() == "gs")
    return fail("--name: 'gs' is the runtime's prefix (gs_init, gs_run, ...); "
                "name the model otherwise");

  DialectRegistry registry;
  gs::registerAllDialects(registry);
  MLIRContext context(registry);
  // A failing pass's op is printed in full only on request.
  if (!givenOnCommandLine("mlir-print-op-on-diagnostic"))
    context.printOpOnDiagnostic(false);
  // Diagnostics of every phase: ONNX node names, or MLIR source lines.
  llvm::SourceMgr sourceMgr;
  std::optional<gs::OnnxDiagnosticPrinter> onnxDiagnostics;
  std::optional<SourceMgrDiagnosticHandler> mlirDiagnostics;
  if (gs::isOnnxInput(modelPath))
    onnxDiagnostics.emplace(&context, llvm::errs());
  else
    mlirDiagnostics.emplace(sourceMgr, &context);
  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope timingScope = timing.getRootScope();
  auto passManager = [&](PassManager &pm) {
    pm.enableTiming(timingScope);
    return applyPassManagerCLOptions(pm);
  };

  PhaseTimer timer;
  timer.next("import");
  OwningOpRef<ModuleOp> module = loadModel(modelPath, context, sourceMgr);
  if (!module)
    return 1;

  std::string prefix = emit == Emit::Executable ? "gs_program" : symbolPrefix();
  gs::CompileOptions compile = compileOptions(cpuTarget, prefix);
  compile.configurePassManager = passManager;
  compile.onPhase = [&](StringRef phase) { timer.next(phase); };
  // An unchanged model compiled before is only linked.
  std::optional<gs::CompileCache> cache;
  std::string key;
  if (usesCache()) {
    std::string directory =
        cacheDir.empty() ? gs::defaultCacheDirectory() : cacheDir.getValue();
    if (!directory.empty()) {
      timer.next("cache lookup");
      if (failed(onnxBytes(compile.onnx, error)))
        return fail(error);
      key = cacheKey(*module, options, compile, argv[0]);
      if (!key.empty())
        cache.emplace(directory, llvm::SaturatingMultiply(uint64_t(cacheMaxMiB),
                                                          uint64_t{1} << 20));
    }
  }
  if (cache) {
    std::string warning;
    std::optional<gs::CachedModel> cached = cache->lookup(key, warning);
    if (!warning.empty())
      llvm::errs() << "gs-compile: warning: " << warning << "\n";
    if (cached) {
      timer.next("cache hit");
      llvm::errs() << cached->notes;
      return writeCompiled(*cached, timer, argv[0]);
    }
  }

  if (failed(gs::runTrainPipeline(*module, options, compile)))
    return fail("'" + modelPath + "': building the train step failed");
  if (emit == Emit::MLIR) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    return writeOutput(text);
  }

  std::string notes;
  FailureOr<gs::ModelSpec> spec =
      describeForRuntime(*module, compile, notes, error);
  if (failed(spec))
    return fail(error);

  FailureOr<gs::LoweredModel> lowered =
      gs::lowerTrainStep(*module, *spec, compile, error);
  if (failed(lowered))
    return error.empty() ? 1 : fail(error);
  auto remember = [&](const gs::CachedModel &compiled) {
    if (!cache)
      return;
    std::string warning;
    cache->store(key, compiled, warning);
    if (!warning.empty())
      llvm::errs() << "gs-compile: warning: " << warning << "\n";
  };
  int status = writeEmitted(*lowered, *spec, compile, std::move(notes), timer,
                            argv[0], remember);
  // gs-compile exits next: the model's IR and LLVM code go back to the
  // system with the process, not op by op (seconds for ResNet-18).
  llvm::BuryPointer(module.release().getOperation());
  llvm::BuryPointer(std::move(lowered->module));
  llvm::BuryPointer(std::move(lowered->context));
  return status;
}
