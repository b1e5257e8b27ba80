//===- GradScaleModule.cpp - The gradscale Python extension -----*- C++ -*-===//
//
// `gradscale._gradscale`: the compiler library (gs/Compiler/Compiler.h) and
// the runtime (gs/Runtime) for Python. The package's __init__.py turns
// Python arguments (paths, onnx.ModelProto, dicts of shapes and options)
// into the bytes and option strings these functions take, and arrays into
// the element types the compiled entries take.
//
//===----------------------------------------------------------------------===//

#include "gs/Compiler/Compiler.h"
#include "gs/Conversion/ImportONNX/ImportONNX.h"
#include "gs/InitAll.h"
#include "gs/Runtime/Checkpoint.h"
#include "gs/Runtime/Model.h"
#include "gs/Runtime/OnnxExport.h"
#include "gs/Runtime/Report.h"
#include "gs/Support/Telemetry.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <onnx/onnx_pb.h>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <stdexcept>

namespace nb = nanobind;
using namespace mlir;
namespace runtime = mlir::gs::runtime;
namespace telemetry = mlir::gs::telemetry;

namespace {
/// An error of the compiler or the runtime; its message carries the
/// diagnostics, with their locations.
struct GradScaleError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void raise(const std::string &message) {
  throw GradScaleError(message);
}

/// The diagnostics of a context while in scope, as `loc: error: message`
/// lines (notes indented below theirs).
class CollectedDiagnostics {
public:
  explicit CollectedDiagnostics(MLIRContext *context)
      : handler(context, [this](Diagnostic &diagnostic) {
          append(diagnostic, "");
          return success();
        }) {}

  /// `what`, then the diagnostics collected.
  std::string message(const std::string &what) const {
    return text.empty() ? what : what + ":\n" + text;
  }

private:
  void append(Diagnostic &diagnostic, StringRef indent) {
    llvm::raw_string_ostream os(text);
    const char *severity =
        diagnostic.getSeverity() == DiagnosticSeverity::Error     ? "error"
        : diagnostic.getSeverity() == DiagnosticSeverity::Warning ? "warning"
        : diagnostic.getSeverity() == DiagnosticSeverity::Note    ? "note"
                                                                  : "remark";
    os << indent << diagnostic.getLocation() << ": " << severity << ": "
       << diagnostic << "\n";
    for (Diagnostic &note : diagnostic.getNotes())
      append(note, "  ");
  }

  ScopedDiagnosticHandler handler;
  std::string text;
};

std::unique_ptr<MLIRContext> newContext() {
  DialectRegistry registry;
  gs::registerAllDialects(registry);
  auto context = std::make_unique<MLIRContext>(registry);
  context->loadAllAvailableDialects();
  context->printOpOnDiagnostic(false);
  return context;
}

//===----------------------------------------------------------------------===//
// Module: an imported model, for compiler users
//===----------------------------------------------------------------------===//

class Module {
public:
  Module(std::unique_ptr<MLIRContext> context, OwningOpRef<ModuleOp> module,
         std::string onnx, std::string name)
      : context(std::move(context)), module(std::move(module)),
        onnx(std::move(onnx)), name(std::move(name)) {}

  std::string str() const {
    std::string text;
    llvm::raw_string_ostream os(text);
    module.get().print(os);
    return text;
  }

  void runPipeline(const std::string &pipeline) {
    CollectedDiagnostics diagnostics(context.get());
    PassManager pm(context.get());
    std::string parseErrors;
    llvm::raw_string_ostream errors(parseErrors);
    // `builtin.module(a,b)` as mlir-opt's --pass-pipeline takes it, or the
    // list `a,b` of passes on the module.
    StringRef text = StringRef(pipeline).trim();
    StringRef head = text.take_until([](char c) { return c == '('; });
    bool anchored = head.size() < text.size() &&
                    head.find_first_of(",{") == StringRef::npos;
    if (anchored) {
      FailureOr<OpPassManager> parsed = parsePassPipeline(text, errors);
      if (succeeded(parsed) && parsed->getOpAnchorName() != "builtin.module") {
        errors << "the pipeline runs on '" << parsed->getOpAnchorName()
               << "', not on the module (builtin.module)";
        parsed = failure();
      }
      if (failed(parsed))
        raise("invalid pass pipeline '" + pipeline + "': " + parseErrors);
      static_cast<OpPassManager &>(pm) = std::move(*parsed);
    } else if (failed(parsePassPipeline(text, pm, errors))) {
      raise("invalid pass pipeline '" + pipeline + "': " + parseErrors);
    }
    if (failed(pm.run(*module)))
      raise(diagnostics.message("the pipeline '" + pipeline + "' failed on " +
                                name));
  }

  MLIRContext *getContext() const { return context.get(); }
  ModuleOp get() const { return module.get(); }
  const std::string &onnxBytes() const { return onnx; }
  const std::string &getName() const { return name; }

private:
  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
  std::string onnx;
  std::string name;
};

Module importOnnx(nb::bytes model, bool text, const std::string &name,
                  const std::string &modelDir,
                  const std::vector<std::string> &shapes,
                  const std::string &training) {
  gs::OnnxImportOptions options;
  std::string error;
  for (const std::string &shape : shapes)
    if (failed(gs::parseOnnxInputShape(shape, options, error)))
      raise("input_shapes: " + error);
  if (!training.empty() &&
      failed(gs::parseOnnxTrainingOptions(training, options, error)))
    raise("optimizer: " + error);
  std::string bytes(model.c_str(), model.size());
  onnx::ModelProto proto;
  if (std::string parseError = gs::parseOnnxModel(bytes, text, proto);
      !parseError.empty())
    raise(name + ": " + parseError);
  std::unique_ptr<MLIRContext> context = newContext();
  std::string printed;
  OwningOpRef<ModuleOp> module;
  {
    llvm::raw_string_ostream os(printed);
    gs::OnnxDiagnosticPrinter diagnostics(context.get(), os);
    module = gs::importOnnxModel(proto, modelDir, name, context.get(), options);
  }
  if (!module)
    raise(printed.empty() ? name + ": the import failed" : printed);
  // Binary ONNX to embed, for exporting trained weights.
  std::string binary;
  if (text) {
    onnx::ModelProto reparsed;
    if (gs::parseOnnxModel(bytes, text, reparsed).empty())
      reparsed.SerializeToString(&binary);
  } else {
    binary = std::move(bytes);
  }
  return Module(std::move(context), std::move(module), std::move(binary), name);
}

//===----------------------------------------------------------------------===//
// Trainer: a compiled model in this process
//===----------------------------------------------------------------------===//

const char *numpyName(int32_t dtype) {
  runtime::DType type;
  if (!runtime::toDType(dtype, type))
    return "unknown";
  return runtime::nameOf(type);
}

nb::dlpack::dtype dlpackType(int32_t dtype) {
  switch (dtype) {
  case GS_DTYPE_F16: {
    nb::dlpack::dtype half;
    half.code = static_cast<uint8_t>(nb::dlpack::dtype_code::Float);
    half.bits = 16;
    half.lanes = 1;
    return half;
  }
  case GS_DTYPE_F32:
    return nb::dtype<float>();
  case GS_DTYPE_F64:
    return nb::dtype<double>();
  case GS_DTYPE_I8:
    return nb::dtype<int8_t>();
  case GS_DTYPE_I32:
    return nb::dtype<int32_t>();
  case GS_DTYPE_I64:
    return nb::dtype<int64_t>();
  case GS_DTYPE_I16:
    return nb::dtype<int16_t>();
  case GS_DTYPE_U8:
    return nb::dtype<uint8_t>();
  case GS_DTYPE_U16:
    return nb::dtype<uint16_t>();
  case GS_DTYPE_U32:
    return nb::dtype<uint32_t>();
  case GS_DTYPE_U64:
    return nb::dtype<uint64_t>();
  default:
    return nb::dtype<bool>();
  }
}

/// A new NumPy array of `info`'s type and shape, owning its buffer.
nb::object newArray(const gs_tensor_info &info, void *&data) {
  std::vector<size_t> shape(info.shape, info.shape + info.rank);
  size_t bytes = runtime::byteSize(info);
  data = std::calloc(bytes ? bytes : 1, 1);
  if (!data)
    throw std::bad_alloc();
  nb::capsule owner(data, [](void *p) noexcept { std::free(p); });
  return nb::ndarray<nb::numpy>(data, shape.size(), shape.data(), owner,
                                nullptr, dlpackType(info.dtype))
      .cast();
}

/// A read-only view of any array, as inputs and parameters are read.
using InputArray = nb::ndarray<nb::ro>;

/// Checks that `array` is a dense CPU tensor of `info`'s type and shape.
void checkArray(const InputArray &array, const gs_tensor_info &info,
                const std::string &what) {
  bool dense = array.device_type() == nb::device::cpu::value &&
               array.ndim() == static_cast<size_t>(info.rank) &&
               array.dtype() == dlpackType(info.dtype);
  int64_t expectedStride = 1;
  for (int32_t d = info.rank - 1; dense && d >= 0; --d) {
    dense = static_cast<int64_t>(array.shape(d)) == info.shape[d] &&
            (info.shape[d] == 1 || array.stride(d) == expectedStride);
    expectedStride *= info.shape[d];
  }
  if (!dense)
    raise(what + " must be a C-contiguous CPU array of " +
          runtime::describe(info));
}

class Trainer {
public:
  Trainer(gs::CompiledModel compiled, std::unique_ptr<gs::LoadedModel> loaded)
      : compiled(std::move(compiled)), loaded(std::move(loaded)) {
    if (std::string error = runtime::validate(table()); !error.empty())
      raise(error);
    // Kept here rather than by gs_init, whose record is keyed by the
    // table's address, which a later Trainer's object may reuse.
    for (int32_t i = 0; i < table().num_params; ++i)
      initial.push_back(runtime::readParam(table().params[i]));
  }

  const gs_model_info &table() const { return loaded->table(); }

  bool hasEntry(const std::string &entry) const {
    return runtime::findEntry(table(), entry) != nullptr;
  }

  /// (name, dtype, shape) of each input of `entry`.
  nb::list inputs(const std::string &entry) const {
    return describeAll(requireEntry(entry).inputs,
                       requireEntry(entry).num_inputs);
  }
  nb::list outputs(const std::string &entry) const {
    return describeAll(requireEntry(entry).results,
                       requireEntry(entry).num_results);
  }
  /// The name of `entry`'s loss result; None when it has none.
  nb::object lossName(const std::string &entry) const {
    const gs_entry_info &info = requireEntry(entry);
    if (info.loss_result < 0)
      return nb::none();
    return nb::str(info.results[info.loss_result].name);
  }

  /// Runs `entry` on `arrays`, in its input order; returns its results
  /// by name.
  nb::dict run(const std::string &entryName, const nb::list &arrays) {
    const gs_entry_info &entry = requireEntry(entryName);
    if (nb::len(arrays) != static_cast<size_t>(entry.num_inputs))
      raise(entryName + " takes " + std::to_string(entry.num_inputs) +
            " inputs, got " + std::to_string(nb::len(arrays)));
    std::vector<InputArray> held;
    std::vector<const void *> inputs;
    for (int32_t i = 0; i < entry.num_inputs; ++i) {
      InputArray array;
      if (!nb::try_cast(arrays[i], array))
        raise(std::string("input '") + entry.inputs[i].name +
              "' is not an array");
      checkArray(array, entry.inputs[i],
                 std::string("input '") + entry.inputs[i].name + "'");
      inputs.push_back(array.data());
      held.push_back(std::move(array));
    }
    nb::dict results;
    std::vector<void *> outputs;
    for (int32_t i = 0; i < entry.num_results; ++i) {
      void *data = nullptr;
      results[entry.results[i].name] = newArray(entry.results[i], data);
      outputs.push_back(data);
    }
    {
      nb::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(busy);
      if (gs_run(&table(), entry.name, inputs.data(), outputs.data()) != 0)
        raise(gs_last_error());
    }
    return results;
  }

  /// (name, dtype, shape) of every parameter.
  nb::list parameterSpecs() const {
    std::vector<gs_tensor_info> infos;
    for (int32_t i = 0; i < table().num_params; ++i)
      infos.push_back(table().params[i].tensor);
    return describeAll(infos.data(), table().num_params);
  }

  /// Every parameter's value; the optimizer and scaling state too with
  /// `state`.
  nb::dict parameters(bool state) const {
    std::lock_guard<std::mutex> lock(busy);
    nb::dict values;
    for (int32_t i = 0; i < table().num_params; ++i) {
      const gs_param_info &param = table().params[i];
      if (param.kind == GS_PARAM_COPY ||
          (!state && param.kind == GS_PARAM_STATE))
        continue;
      runtime::Tensor value = runtime::readParam(param);
      void *data = nullptr;
      values[param.tensor.name] = newArray(param.tensor, data);
      std::memcpy(data, value.data(), value.byteSize());
    }
    return values;
  }

  void loadParameters(const nb::dict &values) {
    // Checked first, so that an error changes no parameter.
    std::vector<std::pair<const gs_param_info *, InputArray>> checked;
    for (auto [key, value] : values) {
      std::string name = nb::cast<std::string>(key);
      const gs_param_info *param = runtime::findParam(table(), name);
      if (!param)
        raise("the model has no parameter '" + name + "'");
      InputArray array;
      if (!nb::try_cast(value, array))
        raise("parameter '" + name + "' is not an array");
      if (param->kind == GS_PARAM_COPY)
        raise("parameter '" + name + "' is the FP16 copy of '" +
              table().params[param->copy_of].tensor.name +
              "', which the runtime derives: set that instead");
      checkArray(array, param->tensor, "parameter '" + name + "'");
      checked.emplace_back(param, std::move(array));
    }
    std::lock_guard<std::mutex> lock(busy);
    for (auto &[param, array] : checked)
      if (gs_set_param(&table(), param->tensor.name, array.data(),
                       array.nbytes()) != 0)
        raise(gs_last_error());
  }

  /// One dict per FP32->FP16 rounding of a gradient, with its latest step.
  nb::list telemetryRecords() const {
    std::lock_guard<std::mutex> lock(busy);
    nb::list records;
    for (int32_t i = 0; i < table().num_params; ++i) {
      const gs_param_info &param = table().params[i];
      if (!param.site ||
          std::string_view(param.tensor.name).rfind(telemetry::kSitePrefix,
                                                    0) != 0)
        continue;
      runtime::Tensor value = runtime::readParam(param);
      if (value.numElements() != telemetry::NumRecordFields)
        continue;
      std::array<double, telemetry::NumRecordFields> f;
      std::memcpy(f.data(), value.data(), sizeof(f));
      double nonzero = f[telemetry::FirstCount + telemetry::Nonzero];
      double flushed = f[telemetry::FirstCount + telemetry::Flushed];
      nb::dict record;
      record["name"] = param.tensor.name;
      record["site"] = param.site;
      record["scale"] = f[telemetry::Scale];
      record["site_scale"] = f[telemetry::SiteScale];
      record["estimated_underflow"] = f[telemetry::Estimate];
      record["measured_underflow"] = runtime::measuredUnderflow(f);
      record["nonzero"] = static_cast<int64_t>(nonzero);
      record["flushed"] = static_cast<int64_t>(flushed);
      record["subnormal"] =
          static_cast<int64_t>(f[telemetry::FirstCount + telemetry::Subnormal]);
      record["overflow"] =
          static_cast<int64_t>(f[telemetry::FirstCount + telemetry::Overflow]);
      records.append(record);
    }
    return records;
  }

  /// counter() for Python, between steps.
  int64_t readCounter(const std::string &name) const {
    std::lock_guard<std::mutex> lock(busy);
    return counter(name.c_str());
  }

  /// A scalar state parameter's value; 0 when the model has none.
  int64_t counter(const char *name) const {
    const gs_param_info *param = runtime::findParam(table(), name);
    if (!param)
      return 0;
    return static_cast<int64_t>(
        runtime::elementAt(runtime::readParam(*param), 0));
  }

  void reset() {
    std::lock_guard<std::mutex> lock(busy);
    for (int32_t i = 0; i < table().num_params; ++i)
      if (table().params[i].kind != GS_PARAM_COPY)
        if (std::string error =
                runtime::writeParam(table(), table().params[i], initial[i]);
            !error.empty())
          raise(error);
  }

  /// Writes the parameters and `losses`, the loss of each step taken (NaN
  /// for steps it does not know).
  void saveCheckpoint(const std::string &path,
                      std::vector<double> losses) const {
    std::lock_guard<std::mutex> lock(busy);
    // The last `step` losses, NaN-padded in front for steps before this
    // Trainer's history.
    int64_t step = std::max<int64_t>(stepsTaken(), 0);
    if (static_cast<int64_t>(losses.size()) > step)
      losses.erase(losses.begin(), losses.end() - step);
    losses.insert(losses.begin(), step - losses.size(),
                  std::numeric_limits<double>::quiet_NaN());
    // The caller fed the batches: no data order to record.
    runtime::DataIdentity data;
    data.examples = runtime::kUnknownDataOrder;
    data.shuffle = false;
    data.batch = batchSize();
    if (std::string error =
            runtime::saveCheckpoint(path, table(), step, data, losses);
        !error.empty())
      raise(error);
  }

  /// Steps taken, skipped ones too: what a checkpoint counts.
  int64_t stepsTaken() const {
    return counter("gs.step") + counter("gs.skipped_steps");
  }

  /// The train step's batch: its first input's leading dimension.
  int64_t batchSize() const {
    const gs_entry_info &step = requireEntry("train_step");
    return step.num_inputs && step.inputs[0].rank ? step.inputs[0].shape[0] : 1;
  }

  /// Loads a checkpoint; returns its loss history and its warnings.
  nb::tuple loadCheckpoint(const std::string &path) {
    std::lock_guard<std::mutex> lock(busy);
    runtime::DataIdentity data;
    std::vector<double> losses;
    int64_t step = 0;
    std::vector<std::string> warnings;
    // The caller feeds the batches: any data order is this Trainer's.
    if (std::string error = runtime::loadCheckpoint(
            path, table(), data, /*seedGiven=*/false, losses, step, warnings,
            /*checkData=*/false);
        !error.empty())
      raise(error);
    return nb::make_tuple(losses, warnings);
  }

  void exportOnnx(const std::string &path) const {
    std::lock_guard<std::mutex> lock(busy);
    if (!table().onnx || table().onnx_size == 0)
      raise("the model was not compiled from ONNX: nothing to export into");
    std::vector<std::pair<std::string, runtime::Tensor>> weights;
    for (int32_t i = 0; i < table().num_params; ++i) {
      const gs_param_info &param = table().params[i];
      if (param.onnx_name)
        weights.emplace_back(param.onnx_name, runtime::readParam(param));
    }
    std::string exported;
    size_t replaced = 0;
    std::string_view model(reinterpret_cast<const char *>(table().onnx),
                           table().onnx_size);
    if (std::string error =
            runtime::replaceInitializers(model, weights, exported, replaced);
        !error.empty())
      raise(error);
    if (std::string error = runtime::writeFileAtomically(path, exported);
        !error.empty())
      raise(error);
  }

  const std::string &scaling() const { return compiled.spec.scaling; }

private:
  const gs_entry_info &requireEntry(const std::string &name) const {
    const gs_entry_info *entry = runtime::findEntry(table(), name);
    if (!entry)
      raise("the model has no " + name);
    return *entry;
  }

  static nb::list describeAll(const gs_tensor_info *infos, int32_t count) {
    nb::list described;
    for (int32_t i = 0; i < count; ++i) {
      std::vector<int64_t> shape(infos[i].shape,
                                 infos[i].shape + infos[i].rank);
      described.append(
          nb::make_tuple(infos[i].name, numpyName(infos[i].dtype), shape));
    }
    return described;
  }

  gs::CompiledModel compiled;
  std::unique_ptr<gs::LoadedModel> loaded;
  std::vector<runtime::Tensor> initial;
  /// The runtime is not thread-safe: one step or state access at a time
  /// (steps run without the GIL).
  mutable std::mutex busy;
};

Trainer *compileModule(const Module &module, const std::string &train,
                       const std::string &cpu) {
  CollectedDiagnostics diagnostics(module.getContext());
  gs::TrainPipelineOptions options;
  std::string optionErrors;
  llvm::raw_string_ostream optionStream(optionErrors);
  if (failed(options.parseFromString(train, optionStream)))
    raise("invalid training options '" + train + "': " + optionErrors);
  gs::CompileOptions compile;
  std::string error;
  compile.target = gs::CPUTarget::resolve(cpu, error);
  if (compile.target.cpu.empty())
    raise("cpu: " + error);
  compile.prefix = "gs_python";
  compile.modelName = module.getName();
  compile.onnx = module.onnxBytes();
  // The pipeline transforms the module: compile a copy, so that the Module
  // stays as it was imported.
  OwningOpRef<ModuleOp> copy = module.get().clone();
  FailureOr<gs::CompiledModel> compiled = failure();
  std::unique_ptr<gs::LoadedModel> loaded;
  {
    nb::gil_scoped_release release;
    compiled = gs::compileModel(*copy, options, compile, error);
    if (succeeded(compiled))
      loaded = gs::LoadedModel::load(*compiled, error);
  }
  if (failed(compiled))
    raise(diagnostics.message(
        error.empty() ? "compiling " + module.getName() + " failed" : error));
  if (!loaded)
    raise(error);
  return new Trainer(std::move(*compiled), std::move(loaded));
}
} // namespace

NB_MODULE(_gradscale, m) {
  m.doc() = "GradScale's compiler and runtime (use the gradscale package).";
  // Pass names for Module.run_pipeline.
  gs::registerAllPasses();
  nb::exception<GradScaleError>(m, "GradScaleError", PyExc_RuntimeError);

  nb::class_<Module>(m, "Module",
                     "An imported model: the gs dialect module of an ONNX "
                     "model, for compiler users.")
      .def("__str__", &Module::str, "The module as MLIR text.")
      .def("run_pipeline", &Module::runPipeline, nb::arg("pipeline"),
           "Runs a textual pass pipeline, e.g. "
           "'builtin.module(gs-train-step,gs-autodiff)', on the module in "
           "place.")
      .def_prop_ro("name", &Module::getName);

  m.def("_import_onnx", &importOnnx, nb::arg("model"), nb::arg("text"),
        nb::arg("name"), nb::arg("model_dir"), nb::arg("shapes"),
        nb::arg("training"));
  m.def("_compile", &compileModule, nb::arg("module"), nb::arg("train"),
        nb::arg("cpu"), nb::rv_policy::take_ownership);

  nb::class_<Trainer>(m, "_Trainer")
      .def("has_entry", &Trainer::hasEntry)
      .def("inputs", &Trainer::inputs)
      .def("outputs", &Trainer::outputs)
      .def("loss_name", &Trainer::lossName)
      .def("run", &Trainer::run)
      .def("parameters", &Trainer::parameters, nb::arg("state"))
      .def("parameter_specs", &Trainer::parameterSpecs)
      .def("load_parameters", &Trainer::loadParameters)
      .def("telemetry", &Trainer::telemetryRecords)
      .def("counter", &Trainer::readCounter)
      .def("reset", &Trainer::reset)
      .def("save_checkpoint", &Trainer::saveCheckpoint)
      .def("load_checkpoint", &Trainer::loadCheckpoint)
      .def("export_onnx", &Trainer::exportOnnx)
      .def_prop_ro("scaling", &Trainer::scaling);
}
