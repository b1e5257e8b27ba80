//===- OnnxFrontend.cpp - libonnx parsing, checking, inference -*- C++ -*-===//
//
// Compiled with -fexceptions: every libonnx exception stops here.
//
//===----------------------------------------------------------------------===//

#include "OnnxFrontend.h"

#include "onnx/checker.h"
#include "onnx/defs/parser.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir::gs;

/// Opens `path` for reading without blocking on a FIFO, and only when it is
/// a regular file. Returns the descriptor, or -1 with `error` set.
static int openRegularFile(const std::string &path, std::string &error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return -1;
  }
  struct stat status;
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    error = "'" + path + "' is not a regular file";
    ::close(fd);
    return -1;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

std::string onnx_frontend::loadBinaryModel(const std::string &path,
                                           onnx::ModelProto &model) {
  std::string error;
  int fd = openRegularFile(path, error);
  if (fd < 0)
    return error;
  bool parsed;
  {
    // Parse straight from the file: no copy of the whole file in memory.
    google::protobuf::io::FileInputStream stream(fd);
    parsed = model.ParseFromZeroCopyStream(&stream);
    if (stream.GetErrno() != 0) {
      std::string message =
          "cannot read '" + path + "': " + std::strerror(stream.GetErrno());
      ::close(fd);
      return message;
    }
  }
  ::close(fd);
  if (!parsed)
    return "'" + path +
           "' is not a valid ONNX model (truncated or not a protobuf)";
  if (!model.has_graph() || model.ir_version() <= 0)
    return "'" + path + "' is not an ONNX model (no graph or IR version)";
  return {};
}

std::string onnx_frontend::loadTensor(const std::string &path,
                                      onnx::TensorProto &tensor) {
  std::string error;
  int fd = openRegularFile(path, error);
  if (fd < 0)
    return error;
  google::protobuf::io::FileInputStream stream(fd);
  bool parsed = tensor.ParseFromZeroCopyStream(&stream);
  ::close(fd);
  if (!parsed)
    return "'" + path + "' is not a valid TensorProto file";
  return {};
}

std::string onnx_frontend::parseTextModel(const std::string &text,
                                          onnx::ModelProto &model) {
  try {
    onnx::OnnxParser parser(text.c_str());
    onnx::Common::Status status = parser.Parse(model);
    if (!status.IsOK())
      return "cannot parse the ONNX text model: " + status.ErrorMessage();
    if (!parser.EndOfInput())
      return "cannot parse the ONNX text model: unexpected text after the "
             "graph";
  } catch (const std::exception &e) {
    return std::string("cannot parse the ONNX text model: ") + e.what();
  }
  return {};
}

std::string onnx_frontend::checkModel(const onnx::ModelProto &model,
                                      const std::string &modelDir) {
  // onnx::checker::check_model(ModelProto) resolves external data against
  // the working directory; this is the same check with the model's own.
  try {
    if (model.ir_version() <= 0)
      return "invalid ONNX model: no IR version";
    std::unordered_map<std::string, int> opsets;
    const auto &known =
        onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    for (const auto &opset : model.opset_import()) {
      std::string domain = opset.domain().empty() ? "ai.onnx" : opset.domain();
      if (opsets.count(opset.domain()))
        return "invalid ONNX model: opset_import names domain '" + domain +
               "' twice";
      auto range = known.find(opset.domain());
      int64_t newest = range == known.end() ? INT32_MAX : range->second.second;
      if (opset.version() < 1 || opset.version() > newest)
        return "invalid ONNX model: opset_import of domain '" + domain +
               "' has version " + std::to_string(opset.version()) +
               (range == known.end() ? "; versions start at 1"
                                     : "; this libonnx knows versions 1 to " +
                                           std::to_string(newest));
      opsets[opset.domain()] = static_cast<int>(opset.version());
    }
    if (model.ir_version() >= 3 && opsets.empty())
      return "invalid ONNX model: no opset_import";
    onnx::checker::CheckerContext context;
    // IR versions 9 and 10 add element types (float 8, 4-bit integers)
    // and function overloads, which libonnx 1.12 does not know and the
    // importer refuses by name; the rest checks as at IR version 8.
    context.set_ir_version(static_cast<int>(
        std::min<int64_t>(model.ir_version(), onnx::IR_VERSION)));
    context.set_opset_imports(opsets);
    context.set_model_dir(modelDir.empty() ? "." : modelDir);
    onnx::checker::LexicalScopeContext scope;
    onnx::checker::check_graph(model.graph(), context, scope);
    if (model.ir_version() >= 8)
      onnx::checker::check_model_local_functions(model, context, scope);
  } catch (const std::exception &e) {
    return std::string("invalid ONNX model: ") + e.what();
  }
  return {};
}

/// libonnx's error modes: 1 throws on a node it cannot infer, 0 goes on.
static std::string runShapeInference(onnx::ModelProto &model, int errorMode) {
  try {
    onnx::ShapeInferenceOptions options(/*check_type_val=*/true,
                                        /*strict_mode_val=*/errorMode,
                                        /*data_prop_val=*/false);
    onnx::shape_inference::InferShapes(
        model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception &e) {
    return std::string("ONNX shape inference failed: ") + e.what();
  }
  return {};
}

std::string onnx_frontend::inferShapes(onnx::ModelProto &model) {
  return runShapeInference(model, /*errorMode=*/1);
}

std::string onnx_frontend::inferShapesPastNodeErrors(onnx::ModelProto &model) {
  return runShapeInference(model, /*errorMode=*/0);
}

bool onnx_frontend::hasSchema(const std::string &opType, int opset,
                              const std::string &domain) {
  try {
    return onnx::OpSchemaRegistry::Schema(opType, opset, domain) != nullptr;
  } catch (const std::exception &) {
    return false;
  }
}
