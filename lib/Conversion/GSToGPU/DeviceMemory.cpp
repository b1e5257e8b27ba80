//===- DeviceMemory.cpp - A bufferized step's memory on the GPU -*- C++ -*-===//
//
// After bufferization and outlining, a step's host code allocates buffers,
// copies between them, reads and writes the parameters' memref globals and
// launches kernels on them. This pass puts that memory on the device (see
// the pass description): parameters become arguments the runtime passes
// device buffers for, allocations and copies become gpu ops, constants are
// copied to the device where they are read. Host code that would touch
// device memory itself is diagnosed.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/GSToGPU/DeviceMemory.h"
#include "gs/Conversion/GSToGPU/LastBlock.h"
#include "gs/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::gs {
#define GEN_PASS_DEF_DEVICEMEMORY
#include "gs/Conversion/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;

std::optional<std::pair<Value, Value>> mlir::gs::getBufferCopy(Operation *op) {
  if (auto copy = dyn_cast<memref::CopyOp>(op))
    return std::make_pair(copy.getSource(), copy.getTarget());
  if (auto copy = dyn_cast<linalg::CopyOp>(op);
      copy && copy.hasPureBufferSemantics())
    return std::make_pair(copy.getDpsInputOperand(0)->get(),
                          copy.getDpsInitOperand(0)->get());
  return std::nullopt;
}

/// Whether a copy between `type`s can be one contiguous memcpy.
static bool isContiguous(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && memref::isStaticShapeAndContiguousRowMajor(memref);
}

/// Whether `op` only computes values: no memory access, no allocation.
static bool isPureHostOp(Operation *op) {
  if (isa<ViewLikeOpInterface, memref::CastOp, memref::CollapseShapeOp,
          memref::ExpandShapeOp, memref::ExtractStridedMetadataOp,
          memref::DimOp>(op))
    return true;
  return op->getNumRegions() == 0 && isMemoryEffectFree(op);
}

/// Queues the gpu ops of `body` one after another on one stream: an async
/// token threaded through them from a `gpu.wait async` at the start, and
/// no wait at the end.
static LogicalResult queueOnOneStream(Block &body) {
  MLIRContext *context = body.getParentOp()->getContext();
  Type tokenType = gpu::AsyncTokenType::get(context);
  OpBuilder b(context);
  b.setInsertionPointToStart(&body);
  Value token = gpu::WaitOp::create(b, body.getParentOp()->getLoc(), tokenType,
                                    ValueRange())
                    .getAsyncToken();
  for (Operation &op : llvm::make_early_inc_range(body)) {
    if (!isa<gpu::AsyncOpInterface>(op) || isa<gpu::WaitOp>(op))
      continue;
    Location loc = op.getLoc();
    b.setInsertionPoint(&op);
    Operation *queued = nullptr;
    if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
      auto copy = gpu::AllocOp::create(
          b, loc, alloc.getMemref().getType(), tokenType, token,
          alloc.getDynamicSizes(), alloc.getSymbolOperands(),
          alloc.getHostShared());
      alloc.getMemref().replaceAllUsesWith(copy.getMemref());
      queued = copy;
    } else if (auto memcpy = dyn_cast<gpu::MemcpyOp>(op)) {
      queued = gpu::MemcpyOp::create(b, loc, tokenType, token, memcpy.getDst(),
                                     memcpy.getSrc());
    } else if (auto dealloc = dyn_cast<gpu::DeallocOp>(op)) {
      queued =
          gpu::DeallocOp::create(b, loc, tokenType, token, dealloc.getMemref());
    } else if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
      auto copy = gpu::LaunchFuncOp::create(
          b, loc, launch.getKernel(), launch.getGridSizeOperandValues(),
          launch.getBlockSizeOperandValues(),
          launch.getDynamicSharedMemorySize(), launch.getKernelOperands(),
          tokenType, token,
          launch.hasClusterSize() ? std::optional<gpu::KernelDim3>(
                                        launch.getClusterSizeOperandValues())
                                  : std::nullopt);
      copy->setDiscardableAttrs(launch->getDiscardableAttrDictionary());
      queued = copy;
    } else {
      return op.emitError("gs-device-memory: cannot queue ")
             << op.getName() << " (outline the kernels first)";
    }
    token = cast<gpu::AsyncOpInterface>(queued).getAsyncToken();
    op.erase();
  }
  return success();
}

namespace {
struct DeviceMemoryPass : mlir::gs::impl::DeviceMemoryBase<DeviceMemoryPass> {
  using DeviceMemoryBase::DeviceMemoryBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<memref::GlobalOp> params;
    for (auto global : module.getOps<memref::GlobalOp>())
      if (!global.getConstant() && !global->hasAttr(gs::kKernelStateAttrName))
        params.push_back(global);
    for (auto function : module.getOps<func::FuncOp>())
      if (!function.isDeclaration() && failed(place(function, params)))
        return signalPassFailure();
  }

  /// Passes the parameters to a public `function` as arguments.
  LogicalResult addParamArguments(func::FuncOp function,
                                  ArrayRef<memref::GlobalOp> params,
                                  llvm::StringMap<Value> &arguments) {
    Builder b(function.getContext());
    SmallVector<unsigned> indices(params.size(), 0);
    SmallVector<Type> types;
    SmallVector<DictionaryAttr> attrs;
    SmallVector<Location> locs;
    for (memref::GlobalOp param : params) {
      types.push_back(param.getType());
      attrs.push_back(b.getDictionaryAttr(
          b.getNamedAttr(gs::kParamArgumentAttr,
                         FlatSymbolRefAttr::get(param.getSymNameAttr()))));
      locs.push_back(param.getLoc());
    }
    if (failed(function.insertArguments(indices, types, attrs, locs)))
      return function.emitError("gs-device-memory: cannot add the "
                                "parameters as arguments");
    for (auto [i, param] : llvm::enumerate(params))
      arguments[memref::GlobalOp(param).getSymName()] = function.getArgument(i);
    return success();
  }

  LogicalResult place(func::FuncOp function,
                      ArrayRef<memref::GlobalOp> params) {
    if (!function.getBody().hasOneBlock())
      return function.emitError("gs-device-memory: host code must be "
                                "straight-line (one block)");
    llvm::StringMap<Value> paramArguments;
    if (function.isPublic() &&
        failed(addParamArguments(function, params, paramArguments)))
      return failure();

    Block &body = function.getBody().front();
    OpBuilder b(function.getContext());
    // The device buffers this function allocates, to free after their last
    // use; those it frees itself are dropped.
    SmallVector<Value> owned;
    for (Operation &op : llvm::make_early_inc_range(body)) {
      Location loc = op.getLoc();
      b.setInsertionPoint(&op);
      if (auto read = dyn_cast<memref::GetGlobalOp>(op)) {
        auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
            read, read.getNameAttr());
        if (global && !global.getConstant()) {
          Value argument = paramArguments.lookup(read.getName());
          if (!argument)
            return read.emitError("gs-device-memory: parameter @")
                   << read.getName()
                   << " is accessed outside a public function; inline the "
                      "functions that access parameters first";
          read.replaceAllUsesWith(argument);
          read.erase();
          continue;
        }
        // A constant: a device copy, made where it is read.
        b.setInsertionPointAfter(read);
        auto copy =
            gpu::AllocOp::create(b, loc, read.getType(), Type(), ValueRange(),
                                 ValueRange(), ValueRange());
        read.getResult().replaceAllUsesWith(copy.getMemref());
        gpu::MemcpyOp::create(b, loc, Type(), ValueRange(), copy.getMemref(),
                              read.getResult());
        owned.push_back(copy.getMemref());
        continue;
      }
      if (isa<memref::AllocOp, memref::AllocaOp>(op)) {
        auto type = cast<MemRefType>(op.getResult(0).getType());
        auto alloc = gpu::AllocOp::create(b, loc, type, Type(), ValueRange(),
                                          op.getOperands(), ValueRange());
        op.getResult(0).replaceAllUsesWith(alloc.getMemref());
        op.erase();
        owned.push_back(alloc.getMemref());
        continue;
      }
      if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        gpu::DeallocOp::create(b, loc, Type(), ValueRange(),
                               dealloc.getMemref());
        llvm::erase(owned, dealloc.getMemref());
        dealloc.erase();
        continue;
      }
      if (std::optional<std::pair<Value, Value>> copy =
              gs::getBufferCopy(&op)) {
        auto [from, to] = *copy;
        if (from.getType() != to.getType() || !isContiguous(from.getType()))
          return op.emitError("gs-device-memory: a copy between buffers that "
                              "are not contiguous and alike: ")
                 << from.getType() << " to " << to.getType();
        gpu::MemcpyOp::create(b, loc, Type(), ValueRange(), to, from);
        op.erase();
        continue;
      }
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        for (Value value : ret.getOperands())
          if (isa<BaseMemRefType>(value.getType()))
            return ret.emitError("gs-device-memory: a function returns a "
                                 "buffer; pass results as out-parameters");
        continue;
      }
      if (isa<gpu::LaunchFuncOp, gpu::LaunchOp, gpu::AllocOp, gpu::DeallocOp,
              gpu::MemcpyOp, func::CallOp>(op) ||
          isPureHostOp(&op))
        continue;
      return op.emitError("gs-device-memory: host code would access device "
                          "memory: ")
             << op.getName();
    }
    if (failed(freeAfterLastUse(body, owned)))
      return failure();
    return success(!queue || succeeded(queueOnOneStream(body)));
  }

  /// Frees each of `buffers` after the last op of `body` that uses it or a
  /// view of it.
  LogicalResult freeAfterLastUse(Block &body, ArrayRef<Value> buffers) {
    llvm::DenseMap<Operation *, unsigned> position;
    for (auto [i, op] : llvm::enumerate(body))
      position[&op] = i;
    OpBuilder b(body.getParentOp()->getContext());
    for (Value buffer : buffers) {
      Operation *last = buffer.getDefiningOp();
      SmallVector<Value> aliases = {buffer};
      while (!aliases.empty()) {
        Value alias = aliases.pop_back_val();
        for (Operation *user : alias.getUsers()) {
          Operation *top = body.findAncestorOpInBlock(*user);
          if (isa<func::ReturnOp>(top))
            return top->emitError("gs-device-memory: a buffer the function "
                                  "allocates escapes through its return");
          if (position.lookup(top) > position.lookup(last))
            last = top;
          // Views of the buffer keep it alive.
          if (top == user && isPureHostOp(user))
            for (Value result : user->getResults())
              if (isa<BaseMemRefType>(result.getType()))
                aliases.push_back(result);
        }
      }
      b.setInsertionPointAfter(last);
      gpu::DeallocOp::create(b, last->getLoc(), Type(), ValueRange(), buffer);
    }
    return success();
  }
};
} // namespace
