//===- OutlineKernels.cpp - Each loop nest a function of its own *- C++ -*-===//

#include "gs/Pipelines/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::gs {
#define GEN_PASS_DEF_OUTLINEKERNELS
#include "gs/Pipelines/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;

namespace {

/// An outermost loop nest: a linalg op or a loop not inside another.
bool isKernel(Operation *op) {
  return isa<linalg::LinalgOp, LoopLikeOpInterface>(op);
}

/// Ops a kernel recomputes rather than takes: constants, and views of
/// buffers (free, and they let the kernel take the buffer viewed).
bool isRecomputed(Operation *op) {
  if (op->getNumRegions() != 0 || !isPure(op))
    return false;
  return op->hasTrait<OpTrait::ConstantLike>() || isa<ViewLikeOpInterface>(op);
}

/// What a kernel needs from outside it: the values it takes as arguments
/// and the ops it recomputes, in an order where operands come first.
struct Captures {
  llvm::SetVector<Value> arguments;
  llvm::SetVector<Operation *> recomputed;

  void add(Value value) {
    Operation *def = value.getDefiningOp();
    if (!def || !isRecomputed(def)) {
      arguments.insert(value);
      return;
    }
    if (recomputed.contains(def))
      return;
    for (Value operand : def->getOperands())
      add(operand);
    recomputed.insert(def);
  }

  /// Whether every buffer argument is an allocation or a global that
  /// nothing else in `kernel` reaches (no other argument, no get_global of
  /// its own).
  bool buffersAreDistinct(Operation *kernel) const {
    llvm::StringSet<> globals;
    kernel->walk(
        [&](memref::GetGlobalOp global) { globals.insert(global.getName()); });
    for (Value value : arguments) {
      if (!isa<BaseMemRefType>(value.getType()))
        continue;
      Operation *def = value.getDefiningOp();
      if (isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(def))
        continue;
      auto global = dyn_cast_or_null<memref::GetGlobalOp>(def);
      if (!global || !globals.insert(global.getName()).second)
        return false;
    }
    return true;
  }
};

/// Structural hash of a function: its type and every op of its body, up
/// to SSA names and locations.
llvm::hash_code hashFunction(func::FuncOp function) {
  llvm::hash_code hash = hash_value(function.getFunctionType());
  function.getBody().walk([&](Operation *op) {
    hash =
        llvm::hash_combine(hash, OperationEquivalence::computeHash(
                                     op, OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::IgnoreLocations));
  });
  return hash;
}

bool sameKernel(func::FuncOp a, func::FuncOp b) {
  return a.getFunctionType() == b.getFunctionType() &&
         a->hasAttr(gs::kDistinctBuffersAttrName) ==
             b->hasAttr(gs::kDistinctBuffersAttrName) &&
         OperationEquivalence::isRegionEquivalentTo(
             &a.getBody(), &b.getBody(), OperationEquivalence::IgnoreLocations);
}

struct OutlineKernelsPass : gs::impl::OutlineKernelsBase<OutlineKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> steps;
    for (auto function : module.getOps<func::FuncOp>())
      if (!function.isDeclaration())
        steps.push_back(function);
    for (func::FuncOp step : steps) {
      SmallVector<Operation *> kernels;
      step.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (!isKernel(op))
          return WalkResult::advance();
        kernels.push_back(op);
        return WalkResult::skip();
      });
      for (Operation *kernel : kernels)
        outline(kernel, step.getSymName(), symbols);
    }
  }

private:
  /// Replaces `kernel` by a call of a function holding it: a new one, or
  /// one made before for the same kernel.
  void outline(Operation *kernel, StringRef stepName, SymbolTable &symbols) {
    Captures captures;
    for (Value operand : kernel->getOperands())
      captures.add(operand);
    llvm::SetVector<Value> usedAbove;
    getUsedValuesDefinedAbove(kernel->getRegions(), usedAbove);
    for (Value value : usedAbove)
      captures.add(value);

    func::FuncOp function = build(kernel, captures, stepName, symbols);
    llvm::hash_code hash = hashFunction(function);
    SmallVector<func::FuncOp> &same = outlined[hash];
    auto existing = llvm::find_if(
        same, [&](func::FuncOp other) { return sameKernel(other, function); });
    if (existing != same.end()) {
      symbols.erase(function);
      function = *existing;
    } else {
      same.push_back(function);
    }

    OpBuilder builder(kernel);
    auto call = func::CallOp::create(builder, kernel->getLoc(), function,
                                     captures.arguments.getArrayRef());
    kernel->replaceAllUsesWith(call.getResults());
    kernel->erase();
  }

  func::FuncOp build(Operation *kernel, const Captures &captures,
                     StringRef stepName, SymbolTable &symbols) {
    MLIRContext *context = kernel->getContext();
    OpBuilder builder(context);
    auto type = builder.getFunctionType(
        ValueRange(captures.arguments.getArrayRef()).getTypes(),
        kernel->getResultTypes());
    auto function = func::FuncOp::create(
        builder, kernel->getLoc(),
        (stepName + "_kernel_" + Twine(nextKernel++)).str(), type);
    function.setPrivate();
    function->setAttr("llvm.linkage",
                      LLVM::LinkageAttr::get(context, LLVM::Linkage::Internal));
    // Else LLVM inlines a function called once, undoing the outlining.
    function->setAttr(
        "passthrough",
        builder.getArrayAttr({builder.getStringAttr("noinline"),
                              builder.getStringAttr("no-builtin-memcpy"),
                              builder.getStringAttr("no-builtin-memmove")}));
    if (captures.buffersAreDistinct(kernel))
      function->setAttr(gs::kDistinctBuffersAttrName, builder.getUnitAttr());
    symbols.insert(function);

    Block *entry = function.addEntryBlock();
    IRMapping mapping;
    mapping.map(captures.arguments.getArrayRef(), entry->getArguments());
    builder.setInsertionPointToStart(entry);
    for (Operation *op : captures.recomputed)
      builder.clone(*op, mapping);
    Operation *copy = builder.clone(*kernel, mapping);
    func::ReturnOp::create(builder, kernel->getLoc(), copy->getResults());
    return function;
  }

  unsigned nextKernel = 0;
  llvm::DenseMap<llvm::hash_code, SmallVector<func::FuncOp>> outlined;
};

} // namespace
