//===- KernelEntry.cpp - Tensor-level entries of kernel functions -*- C++ -*-=//

#include "gs/Conversion/GSToGPU/KernelEntry.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

static RankedTensorType tensorTypeOf(Type memref) {
  auto type = cast<MemRefType>(memref);
  return RankedTensorType::get(type.getShape(), type.getElementType());
}

func::FuncOp mlir::gs::buildKernelEntry(OpBuilder &b, Location loc,
                                        func::FuncOp kernel, unsigned numInputs,
                                        ArrayRef<unsigned> scratch) {
  ArrayRef<Type> arguments = kernel.getFunctionType().getInputs();
  ArrayRef<Type> inputTypes = arguments.take_front(numInputs);
  ArrayRef<Type> outputTypes = arguments.drop_front(numInputs);
  auto returned = [&](unsigned output) {
    return !llvm::is_contained(scratch, output);
  };
  SmallVector<Type> inputs, results;
  for (Type type : inputTypes)
    inputs.push_back(tensorTypeOf(type));
  for (auto [i, type] : llvm::enumerate(outputTypes))
    if (returned(i))
      results.push_back(tensorTypeOf(type));
  auto entry = func::FuncOp::create(b, loc, (kernel.getName() + "_entry").str(),
                                    b.getFunctionType(inputs, results));
  Block *body = entry.addEntryBlock();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(body);
  SmallVector<Value> operands;
  // Kernels do not write their inputs: bufferization need not copy them.
  for (auto [argument, type] :
       llvm::zip_equal(body->getArguments(), inputTypes))
    operands.push_back(bufferization::ToBufferOp::create(b, loc, type, argument,
                                                         /*read_only=*/true));
  SmallVector<Value> buffers;
  for (Type type : outputTypes)
    buffers.push_back(memref::AllocOp::create(b, loc, cast<MemRefType>(type)));
  operands.append(buffers);
  func::CallOp::create(b, loc, kernel, operands);
  SmallVector<Value> tensors;
  // Scratch buffers are freed by the deallocation pipeline.
  for (auto [i, buffer] : llvm::enumerate(buffers))
    if (returned(i))
      tensors.push_back(bufferization::ToTensorOp::create(
          b, loc, tensorTypeOf(buffer.getType()), buffer, /*restrict=*/true));
  func::ReturnOp::create(b, loc, tensors);
  return entry;
}

std::string mlir::gs::uniqueKernelName(SymbolTable &symbols, StringRef stem) {
  std::string name = stem.str();
  for (int suffix = 1; symbols.lookup(name) || symbols.lookup(name + "_entry");
       ++suffix)
    name = (stem + "_" + Twine(suffix)).str();
  return name;
}

void mlir::gs::addPrivate(SymbolTable &symbols,
                          ArrayRef<func::FuncOp> functions) {
  for (func::FuncOp function : functions) {
    function.setPrivate();
    symbols.insert(function);
  }
}

bool mlir::gs::isHostCode(Operation *op) {
  return !op->getParentOfType<gpu::LaunchOp>() &&
         !op->getParentOfType<linalg::LinalgOp>();
}
