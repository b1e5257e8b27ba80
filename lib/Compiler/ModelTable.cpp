//===- ModelTable.cpp - The table a compiled model exports ------*- C++ -*-===//

#include "gs/Compiler/ModelTable.h"

#include "gs/Dialect/GS/IR/GSOps.h"
#include "gs/Runtime/Model.h"
#include "gs/Runtime/ModelABI.h"
#include "gs/Runtime/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::gs;
namespace runtime = mlir::gs::runtime;

//===----------------------------------------------------------------------===//
// Reading the gs module
//===----------------------------------------------------------------------===//

static LogicalResult tensorSpec(Type type, llvm::StringRef name,
                                TensorSpec &spec, std::string &error) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  spec.name = name.str();
  std::optional<int32_t> dtype =
      ranked ? abiElementType(ranked.getElementType()) : std::nullopt;
  if (!ranked || !ranked.hasStaticShape() || !dtype) {
    llvm::raw_string_ostream os(error);
    os << "'" << name << "' is " << type
       << ": a compiled model needs static shapes (pin them with "
          "--onnx-shape) and float (f16, f32, f64), bool or 8- to 64-bit "
          "integer elements";
    return failure();
  }
  spec.dtype = *dtype;
  spec.shape.assign(ranked.getShape().begin(), ranked.getShape().end());
  if (name.contains('\0')) {
    error = "a tensor name holds a NUL byte, which C strings cannot carry";
    return failure();
  }
  runtime::DType runtimeType;
  runtime::toDType(spec.dtype, runtimeType);
  std::optional<uint64_t> bytes =
      runtime::checkedByteSize(runtimeType, spec.shape);
  if (!bytes || *bytes > runtime::tensorByteLimit()) {
    llvm::raw_string_ostream os(error);
    os << "'" << name << "' is " << type << ": "
       << (bytes ? std::to_string(*bytes) + " bytes" : "a size that overflows")
       << ", more than the limit of " << runtime::tensorByteLimit()
       << " bytes a tensor of a compiled model may take (raise it with "
          "--max-tensor-bytes)";
    return failure();
  }
  return success();
}

static std::string nameAttr(DictionaryAttr attrs, const std::string &fallback) {
  if (attrs)
    if (auto name = attrs.getAs<StringAttr>("onnx.name"))
      return name.str();
  return fallback;
}

LogicalResult mlir::gs::describeModel(ModuleOp module,
                                      llvm::ArrayRef<llvm::StringRef> entries,
                                      ModelSpec &spec, std::string &error) {
  llvm::StringMap<int32_t> indices;
  for (auto param : module.getOps<gs::ParamOp>()) {
    indices[param.getSymName()] = spec.params.size();
    ParamSpec &p = spec.params.emplace_back();
    if (failed(tensorSpec(param.getInitialValue().getType(), param.getSymName(),
                          p.tensor, error)))
      return failure();
    switch (param.getKind()) {
    case gs::ParamKind::trainable:
      p.kind = GS_PARAM_TRAINABLE;
      break;
    case gs::ParamKind::buffer:
      p.kind = GS_PARAM_BUFFER;
      break;
    case gs::ParamKind::state:
      p.kind = GS_PARAM_STATE;
      break;
    case gs::ParamKind::copy:
      p.kind = GS_PARAM_COPY;
      break;
    }
    if (auto site = param->getAttrOfType<StringAttr>("gs.site"))
      p.site = site.str();
    if (p.kind == GS_PARAM_TRAINABLE || p.kind == GS_PARAM_BUFFER)
      p.onnxName = nameAttr(param->getAttrDictionary(), p.tensor.name);
  }
  for (auto param : module.getOps<gs::ParamOp>())
    if (FlatSymbolRefAttr source = param.getSourceAttr())
      spec.params[indices[param.getSymName()]].copyOf =
          indices.lookup(source.getValue());
  for (llvm::StringRef name : entries) {
    auto function = module.lookupSymbol<func::FuncOp>(name);
    if (!function) {
      error = ("the module has no function '" + name + "'").str();
      return failure();
    }
    if (auto graph = function->getAttrOfType<StringAttr>("onnx.graph_name"))
      spec.graphName = graph.str();
    EntrySpec &entry = spec.entries.emplace_back();
    entry.name = name.str();
    for (auto [i, type] : llvm::enumerate(function.getArgumentTypes()))
      if (failed(tensorSpec(
              type,
              nameAttr(function.getArgAttrDict(i), "input" + std::to_string(i)),
              entry.inputs.emplace_back(), error)))
        return failure();
    for (auto [i, type] : llvm::enumerate(function.getResultTypes()))
      if (failed(tensorSpec(type,
                            nameAttr(function.getResultAttrDict(i),
                                     "result" + std::to_string(i)),
                            entry.results.emplace_back(), error)))
        return failure();
    if (auto loss = function->getAttrOfType<IntegerAttr>(kLossResultAttr)) {
      int64_t index = loss.getInt();
      if (index < 0 || index >= int64_t(entry.results.size()) ||
          !entry.results[index].shape.empty()) {
        error = ("the loss result " + std::to_string(index) + " of '" + name +
                 "' is not a scalar result")
                    .str();
        return failure();
      }
      entry.lossResult = static_cast<int32_t>(index);
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// The LLVM table
//===----------------------------------------------------------------------===//

namespace {
/// Builds the constants of one table in `module`.
class TableBuilder {
public:
  explicit TableBuilder(llvm::Module &module)
      : module(module), context(module.getContext()),
        i32(llvm::Type::getInt32Ty(context)),
        i64(llvm::Type::getInt64Ty(context)),
        ptr(llvm::PointerType::getUnqual(context)),
        tensorType(llvm::StructType::get(context, {ptr, i32, i32, ptr})),
        paramType(llvm::StructType::get(context,
                                        {tensorType, i32, ptr, ptr, ptr, i32})),
        entryType(llvm::StructType::get(context,
                                        {ptr, ptr, i32, i32, ptr, ptr, i32})),
        modelType(llvm::StructType::get(context, {i32, i32, i32, ptr, ptr, ptr,
                                                  ptr, ptr, i64, i32, ptr})) {}

  llvm::Constant *string(llvm::StringRef value) {
    return privateConstant(llvm::ConstantDataArray::getString(context, value),
                           "gs.str");
  }
  /// A string, or null when empty.
  llvm::Constant *optionalString(llvm::StringRef value) {
    if (value.empty())
      return llvm::ConstantPointerNull::get(ptr);
    return string(value);
  }
  llvm::Constant *bytes(llvm::StringRef value) {
    if (value.empty())
      return llvm::ConstantPointerNull::get(ptr);
    return privateConstant(
        llvm::ConstantDataArray::getString(context, value, /*AddNull=*/false),
        "gs.onnx");
  }
  llvm::Constant *tensor(const TensorSpec &spec) {
    llvm::Constant *shape =
        spec.shape.empty()
            ? llvm::ConstantPointerNull::get(ptr)
            : privateConstant(llvm::ConstantDataArray::get(context, spec.shape),
                              "gs.shape");
    return llvm::ConstantStruct::get(
        tensorType, {string(spec.name), i32Value(spec.dtype),
                     i32Value(static_cast<int32_t>(spec.shape.size())), shape});
  }
  llvm::Constant *tensors(llvm::ArrayRef<TensorSpec> specs) {
    std::vector<llvm::Constant *> values;
    for (const TensorSpec &spec : specs)
      values.push_back(tensor(spec));
    return array(tensorType, values, "gs.tensors");
  }
  llvm::Constant *array(llvm::StructType *type,
                        llvm::ArrayRef<llvm::Constant *> values,
                        llvm::StringRef name) {
    if (values.empty())
      return llvm::ConstantPointerNull::get(ptr);
    return privateConstant(
        llvm::ConstantArray::get(llvm::ArrayType::get(type, values.size()),
                                 values),
        name);
  }
  llvm::Constant *i32Value(int64_t value) {
    return llvm::ConstantInt::get(i32, value);
  }
  llvm::Constant *privateConstant(llvm::Constant *value, llvm::StringRef name) {
    auto *global = new llvm::GlobalVariable(
        module, value->getType(), /*isConstant=*/true,
        llvm::GlobalValue::PrivateLinkage, value, name);
    global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    return global;
  }

  llvm::Module &module;
  llvm::LLVMContext &context;
  llvm::Type *i32, *i64;
  llvm::PointerType *ptr;
  llvm::StructType *tensorType, *paramType, *entryType, *modelType;
};
} // namespace

/// `void <name>_packed(void **args)`, calling the C interface `function`
/// with args[0], args[1], ...: how the runtime calls an entry of any arity.
static llvm::Function *packedInterface(llvm::Module &module,
                                       llvm::Function &function) {
  llvm::LLVMContext &context = module.getContext();
  auto *ptr = llvm::PointerType::getUnqual(context);
  auto *packed = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(context), {ptr},
                              /*isVarArg=*/false),
      llvm::GlobalValue::InternalLinkage, function.getName() + "_packed",
      module);
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context, "entry", packed));
  std::vector<llvm::Value *> arguments;
  for (unsigned i = 0; i < function.arg_size(); ++i)
    arguments.push_back(builder.CreateLoad(
        ptr, builder.CreateConstInBoundsGEP1_64(ptr, packed->getArg(0), i)));
  builder.CreateCall(&function, arguments);
  builder.CreateRetVoid();
  return packed;
}

LogicalResult mlir::gs::emitModelTable(llvm::Module &module,
                                       const ModelSpec &spec,
                                       llvm::StringRef accessor,
                                       std::string &error) {
  TableBuilder table(module);
  std::vector<llvm::Constant *> params;
  for (const ParamSpec &param : spec.params) {
    llvm::GlobalVariable *storage = module.getNamedGlobal(param.tensor.name);
    if (!storage || storage->isConstant()) {
      error = "parameter '" + param.tensor.name +
              "' has no storage in the compiled code";
      return failure();
    }
    params.push_back(llvm::ConstantStruct::get(
        table.paramType,
        {table.tensor(param.tensor), table.i32Value(param.kind), storage,
         table.optionalString(param.site), table.optionalString(param.onnxName),
         table.i32Value(param.copyOf)}));
  }
  std::vector<llvm::Constant *> entries;
  for (const EntrySpec &entry : spec.entries) {
    llvm::Function *function = module.getFunction("_mlir_ciface_" + entry.name);
    if (!function) {
      error = "entry '" + entry.name + "' has no C interface";
      return failure();
    }
    size_t arguments = entry.inputs.size() + entry.results.size() +
                       (spec.device == GS_DEVICE_CUDA ? spec.params.size() : 0);
    if (function->arg_size() != arguments) {
      error = "entry '" + entry.name + "' takes " +
              std::to_string(function->arg_size()) + " arguments, its table " +
              std::to_string(arguments);
      return failure();
    }
    entries.push_back(llvm::ConstantStruct::get(
        table.entryType,
        {table.string(entry.name), packedInterface(module, *function),
         table.i32Value(static_cast<int32_t>(entry.inputs.size())),
         table.i32Value(static_cast<int32_t>(entry.results.size())),
         table.tensors(entry.inputs), table.tensors(entry.results),
         table.i32Value(entry.lossResult)}));
  }
  llvm::Constant *model = table.privateConstant(
      llvm::ConstantStruct::get(
          table.modelType,
          {table.i32Value(GS_MODEL_ABI_VERSION),
           table.i32Value(static_cast<int32_t>(params.size())),
           table.i32Value(static_cast<int32_t>(entries.size())),
           table.string(spec.graphName), table.string(spec.scaling),
           table.array(table.paramType, params, "gs.params"),
           table.array(table.entryType, entries, "gs.entries"),
           table.bytes(spec.onnx),
           llvm::ConstantInt::get(table.i64, spec.onnx.size()),
           table.i32Value(spec.device),
           table.optionalString(spec.distributed)}),
      "gs.model");

  if (module.getNamedValue(accessor)) {
    error = ("the symbol '" + accessor + "' is already defined").str();
    return failure();
  }
  auto *function = llvm::Function::Create(
      llvm::FunctionType::get(table.ptr, /*isVarArg=*/false),
      llvm::GlobalValue::ExternalLinkage, accessor, module);
  llvm::IRBuilder<> builder(
      llvm::BasicBlock::Create(module.getContext(), "entry", function));
  builder.CreateRet(model);
  return success();
}

void mlir::gs::emitConstructorsFunction(llvm::Module &module,
                                        llvm::StringRef name) {
  SmallVector<llvm::orc::CtorDtorIterator::Element> constructors;
  for (llvm::orc::CtorDtorIterator::Element constructor :
       llvm::orc::getConstructors(module))
    constructors.push_back(constructor);
  if (constructors.empty())
    return;
  llvm::stable_sort(constructors, [](const auto &a, const auto &b) {
    return a.Priority < b.Priority;
  });
  llvm::LLVMContext &context = module.getContext();
  llvm::Function *function = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(context),
                              /*isVarArg=*/false),
      llvm::GlobalValue::ExternalLinkage, name, module);
  llvm::IRBuilder<> builder(
      llvm::BasicBlock::Create(context, "entry", function));
  for (const llvm::orc::CtorDtorIterator::Element &constructor : constructors)
    builder.CreateCall(constructor.Func->getFunctionType(), constructor.Func);
  builder.CreateRetVoid();
}

void mlir::gs::internalizeExcept(llvm::Module &module,
                                 llvm::ArrayRef<llvm::StringRef> keep) {
  for (llvm::GlobalValue &value : module.global_values())
    if (!value.isDeclaration() && !llvm::is_contained(keep, value.getName()) &&
        !value.hasLocalLinkage() && !value.getName().starts_with("llvm."))
      value.setLinkage(llvm::GlobalValue::InternalLinkage);
}

//===----------------------------------------------------------------------===//
// The C header
//===----------------------------------------------------------------------===//

namespace {
const char *cType(int32_t dtype) {
  switch (dtype) {
  case GS_DTYPE_F16:
    return "uint16_t"; // IEEE binary16 bits
  case GS_DTYPE_F32:
    return "float";
  case GS_DTYPE_F64:
    return "double";
  case GS_DTYPE_I8:
    return "int8_t";
  case GS_DTYPE_I32:
    return "int32_t";
  case GS_DTYPE_I64:
    return "int64_t";
  case GS_DTYPE_I16:
    return "int16_t";
  case GS_DTYPE_U16:
    return "uint16_t";
  case GS_DTYPE_U32:
    return "uint32_t";
  case GS_DTYPE_U64:
    return "uint64_t";
  default:
    return "uint8_t"; // bool, uint8
  }
}

/// C and C++ keywords, which no generated identifier may be.
bool isKeyword(llvm::StringRef id) {
  static const llvm::StringSet<> keywords = {
      "alignas",       "alignof",     "and",
      "and_eq",        "asm",         "auto",
      "bitand",        "bitor",       "bool",
      "break",         "case",        "catch",
      "char",          "class",       "compl",
      "const",         "constexpr",   "const_cast",
      "continue",      "decltype",    "default",
      "delete",        "do",          "double",
      "dynamic_cast",  "else",        "enum",
      "explicit",      "export",      "extern",
      "false",         "float",       "for",
      "friend",        "goto",        "if",
      "inline",        "int",         "long",
      "mutable",       "namespace",   "new",
      "noexcept",      "not",         "not_eq",
      "nullptr",       "operator",    "or",
      "or_eq",         "private",     "protected",
      "public",        "register",    "reinterpret_cast",
      "restrict",      "return",      "short",
      "signed",        "sizeof",      "static",
      "static_assert", "static_cast", "struct",
      "switch",        "template",    "this",
      "throw",         "true",        "try",
      "typedef",       "typeid",      "typename",
      "union",         "unsigned",    "using",
      "virtual",       "void",        "volatile",
      "wchar_t",       "while",       "xor",
      "xor_eq"};
  return keywords.contains(id);
}

/// A C identifier for an ONNX name, unique among `taken`.
std::string identifier(llvm::StringRef name, llvm::StringSet<> &taken) {
  std::string id;
  for (char c : name)
    id += llvm::isAlnum(c) ? c : '_';
  if (id.empty() || llvm::isDigit(id.front()))
    id = "t_" + id;
  if (isKeyword(id))
    id += "_";
  std::string unique = id;
  for (int suffix = 2; !taken.insert(unique).second; ++suffix)
    unique = id + "_" + std::to_string(suffix);
  return unique;
}

/// `text` safe inside a C comment.
std::string commentText(llvm::StringRef text) {
  std::string safe;
  for (char c : text) {
    if (c == '/' && !safe.empty() && safe.back() == '*')
      safe += ' ';
    safe += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
  }
  return safe;
}

std::string shapeText(const TensorSpec &spec) {
  std::string text;
  for (int64_t size : spec.shape)
    text += "[" + std::to_string(size) + "]";
  return text.empty() ? " (scalar)" : text;
}
} // namespace

std::string mlir::gs::renderHeader(const ModelSpec &spec, llvm::StringRef name,
                                   llvm::StringRef source) {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::string guard = llvm::StringRef(name).upper() + "_H";
  os << "/* " << name << ".h: generated by gs-compile from "
     << commentText(source) << " (scaling " << spec.scaling << ").\n"
     << " * Link " << name
     << ".o with the GradScale runtime: libGSRuntime.a libGSCudaRuntime.a "
        "-lz -ldl (and -lstdc++ -lm from C).\n"
     << " * Calls return 0, or -1 with gs_last_error() saying why.";
  if (!spec.distributed.empty())
    os << "\n * A data-parallel replica over " << spec.distributed
       << ": one rank until gs_distributed_start(\"" << spec.distributed
       << "\", &argc, &argv)\n * joins the job; link libGSRuntimeMPI.a"
       << (spec.distributed == "nccl" ? " and libGSRuntimeNCCL.a" : "")
       << " whole\n * (-Wl,--whole-archive) and MPI's libraries.";
  os << " */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include \"gs/Runtime/ModelABI.h\"\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
     << "/* The model's table: entries and parameters. */\n"
     << "const gs_model_info *" << name << "_model(void);\n\n"
     << "/* Sets every parameter to its initial value: call it first. */\n"
     << "static inline int " << name << "_init(void) {\n"
     << "  return gs_init(" << name << "_model());\n}\n";
  for (const EntrySpec &entry : spec.entries) {
    // Names the generated function uses besides its parameters.
    llvm::StringSet<> taken = {"inputs",  "results", "gs_run",  "int8_t",
                               "int32_t", "int64_t", "uint8_t", "uint16_t"};
    taken.insert((name + "_model").str());
    std::vector<std::string> inputs, results;
    os << "\n/* " << commentText(entry.name) << ": dense row-major buffers.\n";
    for (const TensorSpec &input : entry.inputs) {
      inputs.push_back(identifier(input.name, taken));
      os << " *   in  " << inputs.back() << ": " << cType(input.dtype)
         << shapeText(input) << "\n";
    }
    for (const TensorSpec &result : entry.results) {
      results.push_back(identifier(result.name, taken));
      os << " *   out " << results.back() << ": " << cType(result.dtype)
         << shapeText(result) << "\n";
    }
    os << " */\nstatic inline int " << name << "_" << entry.name << "(";
    llvm::ListSeparator comma;
    for (auto [i, input] : llvm::enumerate(entry.inputs))
      os << comma << "const " << cType(input.dtype) << " *" << inputs[i];
    for (auto [i, result] : llvm::enumerate(entry.results))
      os << comma << cType(result.dtype) << " *" << results[i];
    os << ") {\n  const void *inputs[] = {";
    llvm::ListSeparator inputComma;
    for (const std::string &input : inputs)
      os << inputComma << input;
    if (inputs.empty())
      os << "0";
    os << "};\n  void *results[] = {";
    llvm::ListSeparator resultComma;
    for (const std::string &result : results)
      os << resultComma << result;
    if (results.empty())
      os << "0";
    os << "};\n  return gs_run(" << name << "_model(), \"" << entry.name
       << "\", inputs, results);\n}\n";
  }
  os << "\n/* Parameters by name; `bytes` must be the parameter's size:\n";
  for (const ParamSpec &param : spec.params)
    os << " *   " << commentText(param.tensor.name) << ": "
       << cType(param.tensor.dtype) << shapeText(param.tensor)
       << (param.kind == GS_PARAM_TRAINABLE ? " (trainable)"
           : param.kind == GS_PARAM_BUFFER  ? " (buffer)"
           : param.kind == GS_PARAM_COPY
               ? " (FP16 copy of " +
                     commentText(spec.params[param.copyOf].tensor.name) +
                     ", read only)"
               : std::string(" (training state)"))
       << "\n";
  os << " */\nstatic inline int " << name
     << "_get_param(const char *name, void *data, size_t bytes) {\n"
     << "  return gs_get_param(" << name << "_model(), name, data, bytes);\n}\n"
     << "static inline int " << name
     << "_set_param(const char *name, const void *data, size_t bytes) {\n"
     << "  return gs_set_param(" << name << "_model(), name, data, bytes);\n}\n"
     << "\n#ifdef __cplusplus\n} /* extern \"C\" */\n#endif\n\n#endif /* "
     << guard << " */\n";
  return text;
}
