//===- WgmmaDescriptor.cpp - What a wgmma operand descriptor reads -------===//

#include "gs/Conversion/GSToGPU/WgmmaDescriptor.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

Value mlir::gs::buildWgmmaOperandIndex(OpBuilder &b, Location l,
                                       Value descriptor, Value mnIndex,
                                       Value kIndex, bool kMajor) {
  Type i64 = b.getI64Type();
  auto i64Constant = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, l, i64, v);
  };
  auto field = [&](int64_t shift) {
    // A 14-bit field of the descriptor, in bytes.
    Value shifted =
        arith::ShRUIOp::create(b, l, descriptor, i64Constant(shift));
    Value bits = arith::AndIOp::create(b, l, shifted, i64Constant(0x3FFF));
    return arith::ShLIOp::create(b, l, bits, i64Constant(4)).getResult();
  };
  auto mulI = [&](Value x, Value y) {
    return arith::MulIOp::create(b, l, x, y).getResult();
  };
  auto addI = [&](Value x, Value y) {
    return arith::AddIOp::create(b, l, x, y).getResult();
  };
  auto divI = [&](Value x, Value y) {
    return arith::DivUIOp::create(b, l, x, y).getResult();
  };
  auto remI = [&](Value x, Value y) {
    return arith::RemUIOp::create(b, l, x, y).getResult();
  };
  Value start = field(0);
  Value leading = field(16);
  Value stride = field(32);
  Value mode = arith::ShRUIOp::create(b, l, descriptor, i64Constant(62));
  // Bytes per row of a swizzle atom: 128, 64, 32 for modes 1, 2, 3; 16
  // (one core matrix row) without swizzling.
  auto modeIs = [&](int64_t m) {
    return arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, mode,
                                 i64Constant(m))
        .getResult();
  };
  auto select = [&](Value condition, Value x, Value y) {
    return arith::SelectOp::create(b, l, condition, x, y).getResult();
  };
  Value is1 = modeIs(1), is2 = modeIs(2), is3 = modeIs(3);
  Value bytes128 = i64Constant(128), bytes64 = i64Constant(64);
  Value bytes32 = i64Constant(32), bytes16 = i64Constant(16);
  Value under64 = select(is3, bytes32, bytes16);
  Value under128 = select(is2, bytes64, under64);
  Value rowBytes = select(is1, bytes128, under128);
  Value mn = arith::IndexCastUIOp::create(b, l, i64, mnIndex);
  Value k = arith::IndexCastUIOp::create(b, l, i64, kIndex);
  Value two = i64Constant(2), eight = i64Constant(8);
  Value sixteen = bytes16;
  // Sum of products of values already built, in order.
  auto sumOfProducts = [&](ArrayRef<std::pair<Value, Value>> terms) {
    Value sum;
    for (auto [x, y] : terms) {
      Value product = mulI(x, y);
      sum = sum ? addI(sum, product) : product;
    }
    return sum;
  };
  Value mnRow = remI(mn, eight);
  Value mnAtom = divI(mn, eight);
  Value kRow = remI(k, eight);
  Value kAtom = divI(k, eight);
  Value swizzled, interleaved;
  if (kMajor) {
    // ((8,m),(T,2k)):((rowBytes,SBO),(1,T)) swizzled;
    // ((8,m),(T,2k)):((16,SBO),(1,LBO)) without.
    swizzled = sumOfProducts({{mnRow, rowBytes}, {mnAtom, stride}, {k, two}});
    interleaved = sumOfProducts(
        {{mnRow, sixteen}, {mnAtom, stride}, {kRow, two}, {kAtom, leading}});
  } else {
    // ((T,rowBytes/16,m),(8,k)):((1,T,LBO),(rowBytes,SBO)) swizzled;
    // ((T,1,m),(8,k)):((1,T,SBO),(16,LBO)) without.
    Value rowElements = divI(rowBytes, two);
    Value mnColumn = remI(mn, rowElements);
    Value mnAtomColumn = divI(mn, rowElements);
    swizzled = sumOfProducts({{mnColumn, two},
                              {mnAtomColumn, leading},
                              {kRow, rowBytes},
                              {kAtom, stride}});
    interleaved = sumOfProducts(
        {{mnRow, two}, {mnAtom, stride}, {kRow, sixteen}, {kAtom, leading}});
  }
  Value unswizzled = modeIs(0);
  Value offset = select(unswizzled, interleaved, swizzled);
  Value address = addI(start, offset);
  // Swizzle<B,4,3>: bits 4.. XOR bits 7.., B bits (none unswizzled).
  Value rowChunks = divI(rowBytes, sixteen);
  Value one = i64Constant(1);
  Value chunkMask = arith::SubIOp::create(b, l, rowChunks, one);
  Value seven = i64Constant(7);
  Value rowOfAtom = arith::ShRUIOp::create(b, l, address, seven);
  Value rowBits = arith::AndIOp::create(b, l, rowOfAtom, chunkMask);
  Value four = i64Constant(4);
  Value chunkXor = arith::ShLIOp::create(b, l, rowBits, four);
  Value physical = arith::XOrIOp::create(b, l, address, chunkXor);
  Value element = divI(physical, two);
  return arith::IndexCastUIOp::create(b, l, b.getIndexType(), element)
      .getResult();
}
