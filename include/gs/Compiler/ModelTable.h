//===- ModelTable.h - The table a compiled model exports --------*- C++ -*-===//
//
// What a compiled model tells the runtime about itself
// (gs/Runtime/ModelABI.h): read from the gs train step before lowering,
// emitted into the LLVM module as a gs_model_info and its accessor, and
// rendered as a library-mode C header.
//
//===----------------------------------------------------------------------===//

#ifndef GS_COMPILER_MODELTABLE_H
#define GS_COMPILER_MODELTABLE_H

#include "gs/Runtime/ModelABI.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class Module;
} // namespace llvm

namespace mlir::gs {

/// The gs_dtype of an element type, or nullopt for one compiled code cannot
/// exchange.
inline std::optional<int32_t> abiElementType(Type type) {
  if (type.isF16())
    return GS_DTYPE_F16;
  if (type.isF32())
    return GS_DTYPE_F32;
  if (type.isF64())
    return GS_DTYPE_F64;
  auto integer = dyn_cast<IntegerType>(type);
  if (!integer)
    return std::nullopt;
  bool isUnsigned = integer.isUnsigned();
  switch (integer.getWidth()) {
  case 1:
    return isUnsigned ? std::nullopt : std::optional<int32_t>(GS_DTYPE_BOOL);
  case 8:
    return isUnsigned ? GS_DTYPE_U8 : GS_DTYPE_I8;
  case 16:
    return isUnsigned ? GS_DTYPE_U16 : GS_DTYPE_I16;
  case 32:
    return isUnsigned ? GS_DTYPE_U32 : GS_DTYPE_I32;
  case 64:
    return isUnsigned ? GS_DTYPE_U64 : GS_DTYPE_I64;
  default:
    return std::nullopt;
  }
}

struct TensorSpec {
  std::string name;
  int32_t dtype = 0; // enum gs_dtype
  std::vector<int64_t> shape;
};

struct ParamSpec {
  TensorSpec tensor;
  int32_t kind = 0; // enum gs_param_kind
  std::string site;
  /// The ONNX initializer's name; empty for state the compiler added.
  std::string onnxName;
  /// GS_PARAM_COPY: the index of the weight it copies; else -1.
  int32_t copyOf = -1;
};

struct EntrySpec {
  std::string name;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> results;
  /// The result that is the loss (the function's `gs.loss_result`), or -1.
  int32_t lossResult = -1;
};

struct ModelSpec {
  std::string graphName;
  std::string scaling;
  std::vector<ParamSpec> params;
  std::vector<EntrySpec> entries;
  /// The ONNX model (binary protobuf); empty when compiled from MLIR.
  std::string onnx;
  /// Where the entries run (enum gs_device); on a GPU they take the
  /// parameters' device buffers first.
  int32_t device = GS_DEVICE_CPU;
  /// The transport of a data-parallel train step ("mpi"); empty
  /// for none.
  std::string distributed;
};

/// Describes the parameters and the functions `entries` of a gs module
/// whose tensors all have static shapes. Sets `error` on failure.
LogicalResult describeModel(ModuleOp module,
                            llvm::ArrayRef<llvm::StringRef> entries,
                            ModelSpec &spec, std::string &error);

/// Adds the gs_model_info of `spec` to the lowered `module`, returned by
/// `const gs_model_info *<accessor>(void)`. Sets `error` on failure.
LogicalResult emitModelTable(llvm::Module &module, const ModelSpec &spec,
                             llvm::StringRef accessor, std::string &error);

/// Adds `void <name>(void)`, which runs `module`'s static constructors (a
/// GPU model's module registrations) in priority order, if it has any: a
/// JIT that links the object without running them (LoadedModel) calls it.
void emitConstructorsFunction(llvm::Module &module, llvm::StringRef name);

/// Gives every definition but those named in `keep` internal linkage: an
/// object that exports only its table links beside other compiled models.
void internalizeExcept(llvm::Module &module,
                       llvm::ArrayRef<llvm::StringRef> keep);

/// The C header of library mode: typed entry points, init and parameter
/// access for a model whose table `<name>_model()` returns.
std::string renderHeader(const ModelSpec &spec, llvm::StringRef name,
                         llvm::StringRef source);

} // namespace mlir::gs

#endif // GS_COMPILER_MODELTABLE_H
