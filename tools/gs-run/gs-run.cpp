//===- gs-run.cpp - JIT-run a model on the CPU ------------------*- C++ -*-===//
//
// Compiles a model (.onnx, .onnxtext or .mlir) with the CPU pipeline (or,
// with --target=cuda, for an NVIDIA GPU), JIT-runs one function on inputs
// from TensorProto (.pb) or NumPy (.npy) files and writes its outputs in
// the same formats. `--check DIR` runs an
// ONNX backend test directory (model.onnx and test_data_set_*/) and
// compares the outputs with the expected ones.
//
// Exit status: 0 on success, 1 on an error (bad model, flags or files), 2
// when --check finds outputs that differ from the expected ones.
//
//===----------------------------------------------------------------------===//

#include "TensorProtoIO.h"

#include "gs/Compiler/TargetOptionsCL.h"
#include "gs/Conversion/ImportONNX/ImportONNX.h"
#include "gs/Conversion/ImportONNX/ImportOptionsCL.h"
#include "gs/Dialect/GS/Transforms/Passes.h"
#include "gs/InitAll.h"
#include "gs/Runner/JitRunner.h"
#include "gs/Runtime/Dataset.h"
#include "gs/Runtime/Model.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <limits>

using namespace mlir;
using gs::runtime::DType;
using gs::runtime::elementAt;
using gs::runtime::Tensor;
namespace cl = llvm::cl;

static cl::OptionCategory runnerCategory("gs-run options");

static cl::opt<std::string> modelPath(cl::Positional,
                                      cl::desc("<model.onnx|.onnxtext|.mlir>"),
                                      cl::cat(runnerCategory));
static cl::opt<std::string>
    checkDir("check",
             cl::desc("Run an ONNX backend test directory (model.onnx and "
                      "test_data_set_*/) and compare its outputs"),
             cl::value_desc("dir"), cl::cat(runnerCategory));
static cl::opt<std::string> entry("entry", cl::desc("Function to run"),
                                  cl::init("forward"), cl::cat(runnerCategory));
static cl::list<std::string> inputFiles(
    "i",
    cl::desc("Input tensor file, in argument order (repeatable): a "
             "TensorProto (.pb), .npy, a .npz member (file.npz:ARRAY, or "
             "file.npz holding one array) or IDX. An array with one more "
             "leading axis than the input holds one input per step"),
    cl::value_desc("file"), cl::cat(runnerCategory));
static cl::opt<std::string>
    outputDir("output-dir", cl::desc("Write output_N.<format> files here"),
              cl::value_desc("dir"), cl::cat(runnerCategory));
static cl::opt<std::string> outputFormat("format",
                                         cl::desc("Output format: pb or npy"),
                                         cl::init("npy"),
                                         cl::cat(runnerCategory));
static cl::opt<bool> printOutputs("print",
                                  cl::desc("Print the outputs' values"),
                                  cl::cat(runnerCategory));
static cl::opt<double>
    relTolerance("rtol",
                 cl::desc("Relative tolerance of --check for "
                          "float32/float64 (ONNX's default)"),
                 cl::init(1e-3), cl::cat(runnerCategory));
static cl::opt<double>
    absTolerance("atol",
                 cl::desc("Absolute tolerance of --check for "
                          "float32/float64 (ONNX's default)"),
                 cl::init(1e-7), cl::cat(runnerCategory));
static cl::opt<unsigned> benchmarkRuns(
    "benchmark",
    cl::desc("After one warm-up call, time N calls and print the median and "
             "the fastest (inputs are zeros unless given with -i)"),
    cl::value_desc("N"), cl::init(0), cl::cat(runnerCategory));
static cl::opt<unsigned>
    steps("steps",
          cl::desc("Call the function N times; parameters persist, so each "
                   "call of a train step trains one step (outputs are those "
                   "of the last call). Call k takes step k of the inputs "
                   "that hold one per step, the others every time (default: "
                   "as many steps as those inputs hold, else 1)"),
          cl::value_desc("N"), cl::init(1), cl::cat(runnerCategory));
static cl::opt<std::string> dumpParams(
    "dump-params",
    cl::desc("After each call, write every parameter (weights, optimizer "
             "state, step counter) to DIR/step_<N>/<name>.npy, with "
             "characters other than letters, digits, '.', '-' and '_' in "
             "the name replaced by '_'"),
    cl::value_desc("DIR"), cl::cat(runnerCategory));
static cl::opt<std::string>
    cpu("cpu",
        cl::desc("CPU to generate code for: native (the host's model and "
                 "features; the default unless the environment sets GS_CPU), "
                 "generic (a portable baseline of the architecture), or an "
                 "LLVM CPU name such as x86-64-v3"),
        cl::init(gs::CPUTarget::defaultName()), cl::cat(runnerCategory));
static cl::opt<uint64_t> maxTensorBytes(
    "max-tensor-bytes",
    cl::desc("The most bytes one tensor read from a file may take (default "
             "2 GiB)"),
    cl::init(gs::runtime::kDefaultTensorByteLimit), cl::cat(runnerCategory));
static cl::opt<bool>
    kernelSchedule("kernel-schedule",
                   cl::desc("Tile and vectorize GEMMs and convolutions"),
                   cl::init(true), cl::cat(runnerCategory));
static cl::opt<bool> fuseSiblings(
    "fuse-siblings",
    cl::desc("Compute elementwise ops and reductions that read the same "
             "tensor in one loop nest (off: a pass over memory each; the "
             "results are the same bits)"),
    cl::init(true), cl::cat(runnerCategory));
static cl::opt<bool> fuseTileConsumers(
    "fuse-tile-consumers",
    cl::desc("Compute the elementwise ops and statistics that read a GEMM's "
             "or convolution's result in its tile loop (off: a pass over "
             "memory each; the results are the same bits)"),
    cl::init(true), cl::cat(runnerCategory));

/// Parses or imports the model: ONNX through the importer, MLIR parsed.
static OwningOpRef<ModuleOp> parseModel(StringRef path, MLIRContext &context,
                                        const gs::OnnxImportOptions &options) {
  if (gs::isOnnxInput(path)) {
    gs::OnnxDiagnosticPrinter diagnostics(&context, llvm::errs());
    return gs::importOnnxFile(path, &context, options);
  }
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  return parseSourceFile<ModuleOp>(path, sourceMgr, &context);
}

/// Loads the model and differentiates what it asks for: its gradient
/// requests (ONNX Gradient operators), and its train step when --entry
/// names a function the model does not define.
static OwningOpRef<ModuleOp> loadModel(StringRef path, MLIRContext &context,
                                       const gs::OnnxImportOptions &options) {
  OwningOpRef<ModuleOp> module = parseModel(path, context, options);
  if (!module)
    return nullptr;
  PassManager pm(&context);
  if (!module->lookupSymbol(entry)) {
    gs::TrainStepOptions trainStep;
    trainStep.stepName = entry;
    pm.addPass(gs::createTrainStep(trainStep));
  }
  pm.addPass(gs::createAutodiff());
  if (failed(pm.run(*module)))
    return nullptr;
  return module;
}

/// The CPU of --cpu and the device of --target, resolved once by main.
static gs::CPUTarget cpuTarget;
static gs::CompileOptions targetOptions;

/// JIT-compiles --entry of `module` for --target; reports a failure naming
/// the model.
static std::unique_ptr<gs::JitFunction> compileEntry(ModuleOp module,
                                                     StringRef model) {
  std::string error;
  std::unique_ptr<gs::JitFunction> function;
  if (targetOptions.device != GS_DEVICE_CPU) {
    gs::CompileOptions options = targetOptions;
    options.target = cpuTarget;
    options.modelName = model.str();
    function = gs::JitFunction::compileForDevice(module, entry, options, error);
  } else {
    gs::CPUPipelineOptions pipeline;
    pipeline.kernelSchedule = kernelSchedule;
    pipeline.fuseSiblings = fuseSiblings;
    pipeline.fuseTileConsumers = fuseTileConsumers;
    function =
        gs::JitFunction::compile(module, entry, cpuTarget, pipeline, error);
  }
  if (!function)
    llvm::errs() << "gs-run: error: " << model << ": " << error << "\n";
  return function;
}

/// `name` with every character outside [A-Za-z0-9._-] replaced by '_'.
static std::string fileNameOf(StringRef name) {
  std::string file(name);
  for (char &c : file)
    if (!llvm::isAlnum(c) && c != '.' && c != '-' && c != '_')
      c = '_';
  return file;
}

/// Writes the parameters after call `step` under --dump-params.
static std::string dumpParameters(gs::JitFunction &function, unsigned step) {
  SmallString<256> dir(dumpParams);
  llvm::sys::path::append(dir, "step_" + std::to_string(step));
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return "--dump-params: cannot create '" + std::string(dir) +
           "': " + ec.message();
  llvm::StringMap<std::string> written; // file name -> parameter
  for (auto [i, parameter] : llvm::enumerate(function.parameters())) {
    std::string file = fileNameOf(parameter.name);
    auto [it, fresh] = written.try_emplace(file, parameter.name);
    if (!fresh)
      return "--dump-params: parameters '" + it->second + "' and '" +
             parameter.name + "' would both be written to " + file + ".npy";
    Tensor value;
    if (std::string e = function.readParameter(i, value); !e.empty())
      return e;
    SmallString<256> path(dir);
    llvm::sys::path::append(path, file + ".npy");
    if (std::string e = gs::runtime::writeNpy(std::string(path), value);
        !e.empty())
      return e;
  }
  return {};
}

/// Reads a tensor from a TensorProto (.pb) or an array file (.npy, .npz
/// member, IDX).
static std::string readTensor(const std::string &path, Tensor &tensor) {
  if (StringRef(path).ends_with(".pb"))
    return gs::readTensorProto(path, tensor);
  return gs::runtime::readArray(path, tensor);
}

namespace {
/// One -i input: the same tensor at every call, or one per step along a
/// leading axis the function's input does not have.
struct RunInput {
  Tensor data;
  /// The steps it holds; 0 when it is the same at every call.
  int64_t steps = 0;
  /// The current step's slice of a per-step input.
  Tensor slice;

  const Tensor *at(int64_t step) {
    if (steps == 0)
      return &data;
    size_t bytes = slice.byteSize();
    std::memcpy(slice.data(), data.data() + step * bytes, bytes);
    return &slice;
  }
};
} // namespace

/// Reads the -i files for `function`; sets `streamSteps` to the steps the
/// per-step inputs hold (0 when none does).
static std::string readInputs(const gs::JitFunction &function,
                              std::vector<RunInput> &inputs,
                              int64_t &streamSteps) {
  streamSteps = 0;
  std::string first;
  inputs.resize(inputFiles.size());
  for (auto [i, file] : llvm::enumerate(inputFiles)) {
    RunInput &input = inputs[i];
    if (std::string e = readTensor(file, input.data); !e.empty())
      return e;
    const gs::TensorSignature &signature = function.inputs()[i];
    ArrayRef<int64_t> shape = input.data.shape();
    if (shape.size() != signature.shape.size() + 1 ||
        shape.drop_front() != ArrayRef<int64_t>(signature.shape))
      continue;
    std::string name =
        "input " + std::to_string(i) +
        (signature.name.empty() ? "" : " '" + signature.name + "'");
    if (streamSteps && shape[0] != streamSteps)
      return "the per-step inputs hold different numbers of steps: " + first +
             " holds " + std::to_string(streamSteps) + ", " + name + " " +
             std::to_string(shape[0]);
    if (shape[0] == 0 || input.data.byteSize() == 0)
      return name + " ('" + file + "') holds no steps";
    if (shape[0] > int64_t(std::numeric_limits<unsigned>::max()))
      return name + " ('" + file + "') holds " + std::to_string(shape[0]) +
             " steps, more than gs-run makes calls";
    if (!streamSteps)
      first = name;
    streamSteps = shape[0];
    input.steps = shape[0];
    if (std::string e =
            Tensor::allocate(input.data.type(), signature.shape, input.slice);
        !e.empty())
      return e;
  }
  if (streamSteps && steps.getNumOccurrences() && steps > streamSteps)
    return "--steps=" + std::to_string(steps) +
           ", but the per-step inputs hold " + std::to_string(streamSteps) +
           " steps";
  return {};
}

static std::string writeTensor(const std::string &path, const Tensor &tensor) {
  if (StringRef(path).ends_with(".npy"))
    return gs::runtime::writeNpy(path, tensor);
  return gs::writeTensorProto(path, tensor);
}

/// Compares `got` with `expected`; describes the first mismatches.
static bool compare(const Tensor &got, const Tensor &expected,
                    const std::string &what, llvm::raw_ostream &os) {
  if (got.type() != expected.type() || got.shape() != expected.shape()) {
    os << what << ": got " << got.describe() << ", expected "
       << expected.describe() << "\n";
    return false;
  }
  bool isFloat = got.type() == DType::F16 || got.type() == DType::F32 ||
                 got.type() == DType::F64;
  // FP16 carries 11 significant bits.
  double r = got.type() == DType::F16 ? std::max<double>(relTolerance, 4e-3)
                                      : relTolerance;
  double a = got.type() == DType::F16 ? std::max<double>(absTolerance, 1e-5)
                                      : absTolerance;
  int64_t mismatches = 0, worst = -1;
  double worstExcess = 0;
  for (int64_t i = 0; i < got.numElements(); ++i) {
    double x = elementAt(got, i), y = elementAt(expected, i);
    size_t width = gs::runtime::sizeOf(got.type());
    bool ok;
    if (!isFloat) // bit-exact, also for 64-bit integers beyond 2^53
      ok = std::memcmp(got.data() + i * width, expected.data() + i * width,
                       width) == 0;
    else if (std::isnan(y))
      ok = std::isnan(x);
    else if (std::isinf(y))
      ok = x == y;
    else
      ok = std::fabs(x - y) <= a + r * std::fabs(y);
    if (ok)
      continue;
    ++mismatches;
    double excess = std::isfinite(x - y) ? std::fabs(x - y) : INFINITY;
    if (worst < 0 || excess > worstExcess) {
      worst = i;
      worstExcess = excess;
    }
  }
  if (!mismatches)
    return true;
  os << what << ": " << mismatches << " of " << got.numElements()
     << " elements differ (rtol " << r << ", atol " << a << "); worst at flat "
     << "index " << worst << ": got " << elementAt(got, worst) << ", expected "
     << elementAt(expected, worst) << "\n";
  return false;
}

/// Writes element `i`: integers and booleans exactly, floats as
/// raw_ostream formats doubles.
static void printElement(const Tensor &t, int64_t i, llvm::raw_ostream &os) {
  switch (t.type()) {
  case DType::F16:
  case DType::F32:
  case DType::F64:
    os << elementAt(t, i);
    return;
  case DType::I64:
    os << t.as<int64_t>()[i];
    return;
  case DType::U64:
    os << t.as<uint64_t>()[i];
    return;
  default: // narrower integers and booleans: exact as doubles
    os << static_cast<int64_t>(elementAt(t, i));
    return;
  }
}

static void print(const Tensor &t, StringRef name, llvm::raw_ostream &os) {
  os << name << " " << t.describe() << " =";
  int64_t n = t.numElements();
  for (int64_t i = 0; i < std::min<int64_t>(n, 64); ++i) {
    os << " ";
    printElement(t, i, os);
  }
  if (n > 64)
    os << " ... (" << n - 64 << " more)";
  os << "\n";
}

/// --benchmark: times `benchmarkRuns` calls after a warm-up call. Without
/// given inputs, every input is zeros.
static int benchmark(gs::JitFunction &function,
                     std::vector<const Tensor *> inputs) {
  std::vector<Tensor> zeros;
  if (inputs.empty()) {
    for (const gs::TensorSignature &s : function.inputs()) {
      if (std::string error =
              Tensor::allocate(s.type, s.shape, zeros.emplace_back());
          !error.empty()) {
        llvm::errs() << "gs-run: error: input '" << s.name << "': " << error
                     << "\n";
        return 1;
      }
    }
    for (const Tensor &t : zeros)
      inputs.push_back(&t);
  }
  std::vector<Tensor> outputs;
  std::vector<double> milliseconds;
  for (unsigned i = 0; i <= benchmarkRuns; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (std::string e = function.run(inputs, outputs); !e.empty()) {
      llvm::errs() << "gs-run: error: " << e << "\n";
      return 1;
    }
    std::chrono::duration<double, std::milli> took =
        std::chrono::steady_clock::now() - start;
    if (i > 0)
      milliseconds.push_back(took.count());
  }
  llvm::sort(milliseconds);
  llvm::outs() << llvm::format(
      "@%s: median %.3f ms, fastest %.3f ms, %u runs\n", entry.c_str(),
      milliseconds[milliseconds.size() / 2], milliseconds.front(),
      benchmarkRuns.getValue());
  return 0;
}

/// --check: every test_data_set_* of an ONNX backend test directory.
static int runCheck(DialectRegistry &registry) {
  SmallString<256> model(checkDir);
  llvm::sys::path::append(model, "model.onnx");
  std::vector<std::string> dataSets;
  std::error_code ec;
  llvm::sys::fs::directory_iterator it(checkDir, ec), end;
  if (ec) {
    llvm::errs() << "gs-run: error: --check: cannot open directory '"
                 << checkDir << "': " << ec.message() << "\n";
    return 1;
  }
  for (; it != end && !ec; it.increment(ec))
    if (llvm::sys::path::filename(it->path()).starts_with("test_data_set_"))
      dataSets.push_back(it->path());
  llvm::sort(dataSets);
  if (dataSets.empty()) {
    llvm::errs() << "gs-run: error: " << checkDir << ": no test_data_set_* "
                 << "directories\n";
    return 1;
  }
  MLIRContext context(registry);
  gs::OnnxImportOptions options;
  options.parameterInputDir = dataSets.front();
  OwningOpRef<ModuleOp> module = loadModel(model, context, options);
  if (!module)
    return 1;
  std::unique_ptr<gs::JitFunction> function = compileEntry(*module, model);
  if (!function)
    return 1;
  if (function->outputs().empty()) {
    llvm::errs() << "gs-run: error: " << model
                 << ": the model has no outputs: nothing to check\n";
    return 1;
  }
  bool allPassed = true;
  for (const std::string &dataSet : dataSets) {
    std::vector<Tensor> inputs(function->inputs().size());
    std::vector<const Tensor *> pointers;
    for (auto [i, s] : llvm::enumerate(function->inputs())) {
      SmallString<256> path(dataSet);
      llvm::sys::path::append(path,
                              "input_" + std::to_string(s.onnxIndex) + ".pb");
      if (std::string e = readTensor(std::string(path), inputs[i]);
          !e.empty()) {
        llvm::errs() << "gs-run: error: " << e << "\n";
        return 1;
      }
      pointers.push_back(&inputs[i]);
    }
    std::vector<Tensor> outputs;
    if (std::string e = function->run(pointers, outputs); !e.empty()) {
      llvm::errs() << "gs-run: error: " << dataSet << ": " << e << "\n";
      return 1;
    }
    for (auto [i, got] : llvm::enumerate(outputs)) {
      SmallString<256> path(dataSet);
      llvm::sys::path::append(path, "output_" + std::to_string(i) + ".pb");
      Tensor expected;
      if (std::string e = readTensor(std::string(path), expected); !e.empty()) {
        llvm::errs() << "gs-run: error: " << e << "\n";
        return 1;
      }
      std::string what = llvm::sys::path::filename(dataSet).str() + " output " +
                         std::to_string(i) + " '" +
                         function->outputs()[i].name + "'";
      allPassed &= compare(got, expected, what, llvm::errs());
    }
    SmallString<256> extra(dataSet);
    llvm::sys::path::append(extra,
                            "output_" + std::to_string(outputs.size()) + ".pb");
    if (llvm::sys::fs::exists(extra)) {
      llvm::errs() << "gs-run: error: " << extra
                   << " has no counterpart: the model "
                   << "has " << outputs.size() << " output"
                   << (outputs.size() > 1 ? "s" : "") << "\n";
      return 1;
    }
  }
  if (!allPassed)
    return 2;
  llvm::outs() << "passed: " << dataSets.size() << " data set"
               << (dataSets.size() > 1 ? "s" : "") << "\n";
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // A write past RLIMIT_FSIZE is an error to report (EFBIG), not a kill.
  std::signal(SIGXFSZ, SIG_IGN);
  cl::HideUnrelatedOptions(
      {&runnerCategory, &gs::targetCLCategory(), &gs::onnxImportCLCategory()});
  cl::ParseCommandLineOptions(
      argc, argv,
      "GradScale model runner\n\n"
      "Exit status: 0 on success, 1 on an error, 2 when --check finds "
      "outputs that differ from the expected ones.\n");
  gs::runtime::setTensorByteLimit(maxTensorBytes);
  {
    std::string error;
    if (failed(gs::targetOptionsFromCL(targetOptions, error))) {
      llvm::errs() << "gs-run: error: " << error << "\n";
      return 1;
    }
    for (cl::Option *cpuOnly :
         {static_cast<cl::Option *>(&kernelSchedule),
          static_cast<cl::Option *>(&fuseSiblings),
          static_cast<cl::Option *>(&fuseTileConsumers)})
      if (targetOptions.device != GS_DEVICE_CPU &&
          cpuOnly->getNumOccurrences()) {
        llvm::errs() << "gs-run: error: --" << cpuOnly->ArgStr
                     << ": only --target=cpu takes it\n";
        return 1;
      }
    cpuTarget = gs::CPUTarget::resolve(cpu, error);
    if (cpuTarget.cpu.empty()) {
      llvm::errs() << "gs-run: error: --cpu: " << error << "\n";
      return 1;
    }
  }
  DialectRegistry registry;
  gs::registerAllDialects(registry);
  if (!checkDir.empty())
    return runCheck(registry);
  if (modelPath.empty()) {
    llvm::errs() << "gs-run: error: give a model, or --check DIR\n";
    return 1;
  }
  if (outputFormat != "pb" && outputFormat != "npy") {
    llvm::errs() << "gs-run: error: --format must be pb or npy, got '"
                 << outputFormat << "'\n";
    return 1;
  }
  if (!outputDir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(outputDir)) {
      llvm::errs() << "gs-run: error: --output-dir: cannot create '"
                   << outputDir << "': " << ec.message() << "\n";
      return 1;
    }
  MLIRContext context(registry);
  gs::OnnxImportOptions options;
  std::string error;
  if (failed(gs::onnxImportOptionsFromCL(options, error))) {
    llvm::errs() << "gs-run: error: " << error << "\n";
    return 1;
  }
  OwningOpRef<ModuleOp> module = loadModel(modelPath, context, options);
  if (!module)
    return 1;
  std::unique_ptr<gs::JitFunction> function = compileEntry(*module, modelPath);
  if (!function)
    return 1;
  if (benchmarkRuns > 0 && inputFiles.empty())
    return benchmark(*function, {});
  if (inputFiles.size() != function->inputs().size()) {
    llvm::errs() << "gs-run: error: @" << entry << " takes "
                 << function->inputs().size() << " inputs, "
                 << inputFiles.size() << " given with -i\n";
    return 1;
  }
  std::vector<RunInput> inputs;
  int64_t streamSteps = 0;
  if (std::string e = readInputs(*function, inputs, streamSteps); !e.empty()) {
    llvm::errs() << "gs-run: error: " << e << "\n";
    return 1;
  }
  auto pointersAt = [&](int64_t step) {
    std::vector<const Tensor *> pointers;
    for (RunInput &input : inputs)
      pointers.push_back(input.at(step));
    return pointers;
  };
  if (benchmarkRuns > 0)
    return benchmark(*function, pointersAt(0));
  unsigned calls =
      streamSteps && !steps.getNumOccurrences() ? streamSteps : steps;
  std::vector<Tensor> outputs;
  // Parameters persist across calls: each call of a train step is a step.
  for (unsigned step = 1; step <= calls; ++step) {
    if (std::string e = function->run(pointersAt(step - 1), outputs);
        !e.empty()) {
      llvm::errs() << "gs-run: error: " << e << "\n";
      return 1;
    }
    if (!dumpParams.empty())
      if (std::string e = dumpParameters(*function, step); !e.empty()) {
        llvm::errs() << "gs-run: error: " << e << "\n";
        return 1;
      }
    if (!printOutputs)
      continue;
    if (calls > 1)
      llvm::outs() << "step " << step << ": ";
    for (auto [i, output] : llvm::enumerate(outputs)) {
      std::string name = function->outputs()[i].name;
      print(output, name.empty() ? "output_" + std::to_string(i) : name,
            llvm::outs());
    }
  }
  for (auto [i, output] : llvm::enumerate(outputs)) {
    if (outputDir.empty())
      continue;
    SmallString<256> path(outputDir);
    llvm::sys::path::append(path,
                            "output_" + std::to_string(i) + "." + outputFormat);
    if (std::string e = writeTensor(std::string(path), output); !e.empty()) {
      llvm::errs() << "gs-run: error: " << e << "\n";
      return 1;
    }
  }
  return 0;
}
