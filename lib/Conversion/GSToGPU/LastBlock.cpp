//===- LastBlock.cpp - Work a kernel's last block finishes -----*- C++ -*-===//

#include "gs/Conversion/GSToGPU/LastBlock.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;

MemRefType mlir::gs::getLastBlockFlagType(MLIRContext *context) {
  return MemRefType::get(
      {1}, IntegerType::get(context, 32), MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup));
}

memref::GlobalOp mlir::gs::createTicketCounter(Location loc, StringRef name,
                                               SymbolTable &symbols,
                                               Block::iterator at) {
  MLIRContext *context = loc.getContext();
  OpBuilder b(context);
  auto i32 = IntegerType::get(context, 32);
  auto counter = memref::GlobalOp::create(
      b, loc, name, b.getStringAttr("private"), MemRefType::get({1}, i32),
      DenseElementsAttr::get(RankedTensorType::get({1}, i32),
                             b.getI32IntegerAttr(0)),
      /*constant=*/false, /*alignment=*/nullptr);
  counter->setAttr(kKernelStateAttrName, UnitAttr::get(context));
  symbols.insert(counter, at);
  return counter;
}

scf::IfOp mlir::gs::buildLastBlockIf(OpBuilder &b, Location loc, Value thread,
                                     int64_t numBlocks,
                                     memref::GlobalOp counter, Value flag) {
  auto fence = [&] { NVVM::MembarOp::create(b, loc, NVVM::MemScopeKind::GPU); };
  Type i32 = b.getI32Type();
  // Every thread's writes reach the device before its block's ticket.
  fence();
  gpu::BarrierOp::create(b, loc);
  Value zeroIndex = arith::ConstantIndexOp::create(b, loc, 0);
  Value firstThread = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            thread, zeroIndex);
  auto takeTicket = scf::IfOp::create(b, loc, firstThread, false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(takeTicket.thenBlock()->getTerminator());
    Value tickets = memref::GetGlobalOp::create(b, loc, counter.getType(),
                                                counter.getSymName());
    Value one = arith::ConstantIntOp::create(b, loc, i32, 1);
    Value ticket = memref::AtomicRMWOp::create(
        b, loc, arith::AtomicRMWKind::addi, one, tickets, zeroIndex);
    // What the other blocks wrote before their tickets, seen from here on
    // (and, through the barrier, by this block's other threads).
    fence();
    Value lastTicket = arith::ConstantIntOp::create(b, loc, i32, numBlocks - 1);
    Value isLast = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         ticket, lastTicket);
    auto reset = scf::IfOp::create(b, loc, isLast, false);
    {
      OpBuilder::InsertionGuard resetGuard(b);
      b.setInsertionPoint(reset.thenBlock()->getTerminator());
      Value zero = arith::ConstantIntOp::create(b, loc, i32, 0);
      memref::StoreOp::create(b, loc, zero, tickets, zeroIndex);
    }
    Value asFlag = arith::ExtUIOp::create(b, loc, i32, isLast);
    memref::StoreOp::create(b, loc, asFlag, flag, zeroIndex);
  }
  gpu::BarrierOp::create(b, loc);
  Value flagValue = memref::LoadOp::create(b, loc, flag, zeroIndex);
  Value zero = arith::ConstantIntOp::create(b, loc, i32, 0);
  Value lastBlock =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, flagValue, zero);
  auto finish = scf::IfOp::create(b, loc, lastBlock, false);
  finish->setAttr(kBlockUniformAttrName, b.getUnitAttr());
  b.setInsertionPoint(finish.thenBlock()->getTerminator());
  fence();
  return finish;
}
