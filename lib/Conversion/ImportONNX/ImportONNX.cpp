//===- ImportONNX.cpp - ONNX models into the gs dialect --------*- C++ -*-===//
//
// Entry points of the importer: options, loading and checking with libonnx,
// pinning input shapes, shape inference, then the graph importer.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/ImportONNX/ImportONNX.h"

#include "Importer.h"
#include "OnnxFrontend.h"
#include "TensorData.h"

#include "gs/Dialect/GS/IR/ShapeUtils.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <climits>

using namespace mlir;
using namespace mlir::gs;

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

LogicalResult mlir::gs::parseOnnxInputShape(StringRef spec,
                                            OnnxImportOptions &options,
                                            std::string &error) {
  auto [name, dims] = spec.rsplit('=');
  if (name.empty() || dims.empty() || spec.count('=') == 0) {
    error = ("input shape '" + spec + "' is not of the form name=1x3x224x224")
                .str();
    return failure();
  }
  SmallVector<int64_t> shape;
  SmallVector<StringRef> parts;
  dims.split(parts, 'x');
  for (StringRef part : parts) {
    int64_t size;
    if (part.trim().getAsInteger(10, size) || size < 0) {
      error = ("input shape '" + spec + "': '" + part +
               "' is not a non-negative dimension")
                  .str();
      return failure();
    }
    shape.push_back(size);
  }
  std::optional<int64_t> elements = checkedNumElements(shape);
  if (!elements || *elements > kMaxNumElements) {
    error = ("input shape '" + spec +
             "' has more elements than 64-bit sizes can address")
                .str();
    return failure();
  }
  options.inputShapes[name] = shape;
  return success();
}

LogicalResult mlir::gs::parseOnnxTrainingOptions(StringRef spec,
                                                 OnnxImportOptions &options,
                                                 std::string &error) {
  OnnxTrainingOptions &training = options.training;
  SmallVector<StringRef> items;
  spec.split(items, ' ', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (StringRef item : items) {
    auto [key, value] = item.split('=');
    if (value.empty()) {
      error =
          ("training option '" + item + "' is not of the form key=value").str();
      return failure();
    }
    training.requested = true;
    if (key == "loss") {
      training.loss = value.str();
      continue;
    }
    if (key == "optimizer") {
      if (!llvm::is_contained(
              {"sgd", "momentum", "nesterov", "adagrad", "adam"}, value)) {
        error = ("unknown optimizer '" + value +
                 "' (expected sgd, momentum, nesterov, adagrad or adam)")
                    .str();
        return failure();
      }
      training.optimizer = value.str();
      continue;
    }
    double *target = llvm::StringSwitch<double *>(key)
                         .Case("lr", &training.learningRate)
                         .Case("momentum", &training.momentum)
                         .Case("dampening", &training.dampening)
                         .Case("weight_decay", &training.weightDecay)
                         .Case("beta1", &training.beta1)
                         .Case("beta2", &training.beta2)
                         .Case("epsilon", &training.epsilon)
                         .Case("lr_decay", &training.lrDecay)
                         .Default(nullptr);
    if (!target) {
      error = ("unknown training option '" + key +
               "' (expected loss, optimizer, lr, momentum, dampening, "
               "weight_decay, beta1, beta2, epsilon, lr_decay)")
                  .str();
      return failure();
    }
    if (!llvm::to_float(value, *target)) {
      error =
          ("training option " + key + "=" + value + " is not a number").str();
      return failure();
    }
  }
  if (!(training.learningRate > 0)) {
    error = "the learning rate must be positive";
    return failure();
  }
  return success();
}

/// `file` for a file location, `file: node 'n'` for a node of the model.
static void printLocation(Location loc, llvm::raw_ostream &os) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    printLocation(name.getChildLoc(), os);
    os << ": node '" << name.getName().getValue() << "'";
    return;
  }
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    os << file.getFilename().getValue();
    if (file.getLine() > 1 || !file.getFilename().getValue().ends_with(".onnx"))
      os << ":" << file.getLine() << ":" << file.getColumn();
    return;
  }
  os << loc;
}

void mlir::gs::printOnnxDiagnostic(Diagnostic &diag, llvm::raw_ostream &os) {
  auto print = [&](Diagnostic &d) {
    printLocation(d.getLocation(), os);
    switch (d.getSeverity()) {
    case DiagnosticSeverity::Error:
      os << ": error: ";
      break;
    case DiagnosticSeverity::Warning:
      os << ": warning: ";
      break;
    case DiagnosticSeverity::Note:
      os << ": note: ";
      break;
    case DiagnosticSeverity::Remark:
      os << ": remark: ";
      break;
    }
    os << d << "\n";
  };
  print(diag);
  for (Diagnostic &note : diag.getNotes())
    print(note);
}

OnnxDiagnosticPrinter::OnnxDiagnosticPrinter(MLIRContext *context,
                                             llvm::raw_ostream &os)
    : ScopedDiagnosticHandler(context, [&os](Diagnostic &diag) {
        printOnnxDiagnostic(diag, os);
        return success();
      }) {}

LogicalResult mlir::gs::parseOnnxConstantInput(StringRef spec,
                                               OnnxImportOptions &options,
                                               std::string &error) {
  auto [name, path] = spec.split('=');
  if (name.empty() || path.empty()) {
    error =
        ("constant input '" + spec + "' is not of the form name=file.pb").str();
    return failure();
  }
  options.constantInputs[name] = path.str();
  return success();
}

bool mlir::gs::isOnnxFile(StringRef path) {
  return path.ends_with(".onnx") || path.ends_with(".onnxtext");
}

//===----------------------------------------------------------------------===//
// Import
//===----------------------------------------------------------------------===//

/// Replaces the shapes of the named graph inputs. A symbolic dimension
/// (dim_param) a pinned input fixes takes that size in every other input.
static LogicalResult pinInputShapes(onnx::ModelProto &model,
                                    const OnnxImportOptions &options,
                                    Location loc) {
  llvm::StringSet<> pinned;
  llvm::StringMap<int64_t> symbols;
  auto *inputs = model.mutable_graph()->mutable_input();
  for (onnx::ValueInfoProto &input : *inputs) {
    auto it = options.inputShapes.find(input.name());
    if (it == options.inputShapes.end())
      continue;
    auto *tensor = input.mutable_type()->mutable_tensor_type();
    int rank = tensor->has_shape() ? tensor->shape().dim_size() : -1;
    if (rank >= 0 && rank != static_cast<int>(it->second.size()))
      return emitError(loc)
             << "input shape for '" << input.name() << "' has rank "
             << it->second.size() << ", but the input has rank " << rank;
    auto *shape = tensor->mutable_shape();
    for (int i = 0; i < rank; ++i)
      if (shape->dim(i).has_dim_param())
        symbols[shape->dim(i).dim_param()] = it->second[i];
    shape->clear_dim();
    for (int64_t size : it->second)
      shape->add_dim()->set_dim_value(size);
    pinned.insert(input.name());
  }
  for (const auto &entry : options.inputShapes)
    if (!pinned.contains(entry.getKey()))
      return emitError(loc) << "input shape given for '" << entry.getKey()
                            << "', which is not a graph input";
  for (onnx::ValueInfoProto &input : *inputs) {
    if (!input.type().tensor_type().has_shape())
      continue;
    auto *shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
    for (auto &dim : *shape->mutable_dim())
      if (dim.has_dim_param())
        if (auto it = symbols.find(dim.dim_param()); it != symbols.end())
          dim.set_dim_value(it->second);
  }
  return success();
}

/// Adds the parameter-like inputs (integer, boolean or scalar, or read by
/// an operator as a parameter: Resize's scales) that have a test data file
/// to the constant inputs.
static void addParameterInputs(const onnx::ModelProto &model,
                               OnnxImportOptions &options) {
  llvm::StringSet<> initializers, parameters;
  for (const onnx::TensorProto &tensor : model.graph().initializer())
    initializers.insert(tensor.name());
  for (const onnx::NodeProto &node : model.graph().node())
    if (node.op_type() == "Resize" || node.op_type() == "Upsample")
      for (int i = 1; i < node.input_size(); ++i)
        parameters.insert(node.input(i));
  int64_t position = 0;
  for (const onnx::ValueInfoProto &input : model.graph().input()) {
    if (initializers.contains(input.name()))
      continue;
    const auto &tensor = input.type().tensor_type();
    int32_t type = tensor.elem_type();
    bool integer = type == onnx::TensorProto::INT64 ||
                   type == onnx::TensorProto::INT32 ||
                   type == onnx::TensorProto::BOOL;
    bool scalar = tensor.has_shape() && tensor.shape().dim_size() == 0;
    SmallString<256> path(options.parameterInputDir);
    llvm::sys::path::append(path,
                            "input_" + std::to_string(position++) + ".pb");
    if ((integer || scalar || parameters.contains(input.name())) &&
        llvm::sys::fs::exists(path) &&
        !options.constantInputs.count(input.name()))
      options.constantInputs[input.name()] = std::string(path);
  }
}

/// Turns the named graph inputs into initializers read from .pb files.
static LogicalResult bindConstantInputs(onnx::ModelProto &model,
                                        const OnnxImportOptions &options,
                                        Location loc) {
  for (const auto &entry : options.constantInputs) {
    StringRef name = entry.getKey();
    const onnx::ValueInfoProto *input = nullptr;
    for (const onnx::ValueInfoProto &candidate : model.graph().input())
      if (candidate.name() == name)
        input = &candidate;
    if (!input)
      return emitError(loc) << "constant given for '" << name
                            << "', which is not a graph input";
    onnx::TensorProto tensor;
    if (std::string error = onnx_frontend::loadTensor(entry.getValue(), tensor);
        !error.empty())
      return emitError(loc) << "constant input '" << name << "': " << error;
    if (tensor.data_type() != input->type().tensor_type().elem_type())
      return emitError(loc)
             << "constant input '" << name << "' has element type "
             << onnx_import::elementTypeName(tensor.data_type())
             << ", but the graph input is "
             << onnx_import::elementTypeName(
                    input->type().tensor_type().elem_type());
    tensor.set_name(name.str());
    *model.mutable_graph()->add_initializer() = std::move(tensor);
  }
  return success();
}

OwningOpRef<ModuleOp>
mlir::gs::importOnnxModel(onnx::ModelProto &model, StringRef modelDir,
                          StringRef sourceName, MLIRContext *context,
                          const OnnxImportOptions &givenOptions) {
  OnnxImportOptions options = givenOptions;
  if (!options.parameterInputDir.empty())
    addParameterInputs(model, options);
  context->loadDialect<GSDialect, func::FuncDialect, tensor::TensorDialect>();
  Location loc = FileLineColLoc::get(context, sourceName, 1, 1);
  // Where external data lives is checked before libonnx opens any file.
  for (const onnx::TensorProto &tensor : model.graph().initializer())
    if (std::string error =
            onnx_import::checkExternalLocation(tensor, modelDir);
        !error.empty()) {
      emitError(loc) << error;
      return nullptr;
    }
  if (model.ir_version() > onnx_import::kNewestIrVersion) {
    emitError(loc) << "ONNX IR version " << model.ir_version()
                   << " is newer than GradScale reads (IR versions 1 to "
                   << onnx_import::kNewestIrVersion
                   << ", as ONNX 1.16 and 1.17 write them)";
    return nullptr;
  }
  int declaredOpset = -1;
  if (std::string error = onnx_import::adaptToOpset17(model, declaredOpset);
      !error.empty()) {
    emitError(loc) << error;
    return nullptr;
  }
  if (std::string error = onnx_frontend::checkModel(model, modelDir.str());
      !error.empty()) {
    emitError(loc) << error;
    return nullptr;
  }
  if (failed(pinInputShapes(model, options, loc)) ||
      failed(bindConstantInputs(model, options, loc)))
    return nullptr;
  // Shape inference and the evaluation of shape computations feed each
  // other: repeat until nothing more folds. A fold can give a value a rank
  // it did not have, so the checks libonnx relies on run before each round.
  constexpr int kMaxRounds = 8;
  for (int round = 0; round < kMaxRounds; ++round) {
    if (std::string error = onnx_import::checkBeforeInference(model);
        !error.empty()) {
      emitError(loc) << error;
      return nullptr;
    }
    if (std::string error = onnx_frontend::inferShapes(model); !error.empty()) {
      emitError(loc) << error;
      return nullptr;
    }
    if (!onnx_import::foldShapeComputations(model))
      break;
  }
  onnx_import::ModelImporter importer(context, model, modelDir, sourceName,
                                      options);
  importer.declaredOnnxOpset = declaredOpset;
  return importer.run();
}

std::string mlir::gs::readOnnxModel(StringRef path, onnx::ModelProto &model) {
  if (!path.ends_with(".onnxtext"))
    return onnx_frontend::loadBinaryModel(path.str(), model);
  llvm::sys::fs::file_status status;
  if (std::error_code error = llvm::sys::fs::status(path, status))
    return ("cannot read '" + path + "': " + error.message()).str();
  if (!llvm::sys::fs::is_regular_file(status))
    return ("'" + path + "' is not a regular file").str();
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!text)
    return ("cannot read '" + path + "': " + text.getError().message()).str();
  return onnx_frontend::parseTextModel((*text)->getBuffer().str(), model);
}

std::string mlir::gs::parseOnnxModel(StringRef bytes, bool text,
                                     onnx::ModelProto &model) {
  if (text)
    return onnx_frontend::parseTextModel(bytes.str(), model);
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    return "the model is larger than protobuf's 2 GiB limit";
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return "not a valid ONNX model (truncated or not a protobuf)";
  if (!model.has_graph() || model.ir_version() <= 0)
    return "not an ONNX model (no graph or IR version)";
  return {};
}

OwningOpRef<ModuleOp>
mlir::gs::importOnnxFile(StringRef path, MLIRContext *context,
                         const OnnxImportOptions &options) {
  onnx::ModelProto model;
  if (std::string error = readOnnxModel(path, model); !error.empty()) {
    emitError(FileLineColLoc::get(context, path, 1, 1)) << error;
    return nullptr;
  }
  return importOnnxModel(model, llvm::sys::path::parent_path(path), path,
                         context, options);
}
