//===- FragmentLayout.cpp - Tensor Core register layouts --------*- C++ -*-===//
//
// In the PTX ISA's terms, groupID = lane / 4 and threadID_in_group =
// lane % 4; register r of a lane packs the ISA's elements 2r and 2r+1.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/GSToGPU/FragmentLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::gs::tensorcore;

int64_t AxisLayout::evaluate(int64_t lane, int64_t reg, int64_t element) const {
  int64_t value = registerOffsets[reg] + elementOffsets[element];
  for (const LaneTerm &term : laneTerms)
    value += ((lane / term.divisor) % term.modulus) * term.stride;
  return value;
}

Value AxisLayout::build(OpBuilder &b, Location loc, Value lane, int64_t reg,
                        int64_t element) const {
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value value = constant(registerOffsets[reg] + elementOffsets[element]);
  for (const LaneTerm &term : laneTerms) {
    Value divisor = constant(term.divisor);
    Value quotient = arith::DivUIOp::create(b, loc, lane, divisor);
    Value modulus = constant(term.modulus);
    Value digit = arith::RemUIOp::create(b, loc, quotient, modulus);
    Value stride = constant(term.stride);
    Value scaled = arith::MulIOp::create(b, loc, digit, stride);
    value = arith::AddIOp::create(b, loc, value, scaled);
  }
  return value;
}

namespace {
// groupID and threadID_in_group, as lane terms with a stride.
LaneTerm groupId(int64_t stride) { return {4, 8, stride}; }
LaneTerm threadInGroup(int64_t stride) { return {1, 4, stride}; }
} // namespace

const FragmentLayout &mlir::gs::tensorcore::mmaM16N8K16OperandA() {
  // a0,a1 (g, 2t+i)  a2,a3 (g+8, 2t+i)  a4,a5 (g, 2t+8+i)  a6,a7 (g+8, 2t+8+i)
  static const FragmentLayout layout{
      16, 16, 4, 2,
      AxisLayout{{groupId(1)}, {0, 8, 0, 8}, {0, 0}},
      AxisLayout{{threadInGroup(2)}, {0, 0, 8, 8}, {0, 1}}};
  return layout;
}

const FragmentLayout &mlir::gs::tensorcore::mmaM16N8K16OperandB() {
  // b0,b1 (k = 2t+i, n = g)  b2,b3 (k = 2t+8+i, n = g)
  static const FragmentLayout layout{
      16, 8, 2, 2,
      AxisLayout{{threadInGroup(2)}, {0, 8}, {0, 1}},
      AxisLayout{{groupId(1)}, {0, 0}, {0, 0}}};
  return layout;
}

const FragmentLayout &mlir::gs::tensorcore::mmaM16N8K16Accumulator() {
  // c0,c1 (g, 2t+i)  c2,c3 (g+8, 2t+i)
  static const FragmentLayout layout{
      16, 8, 2, 2,
      AxisLayout{{groupId(1)}, {0, 8}, {0, 0}},
      AxisLayout{{threadInGroup(2)}, {0, 0}, {0, 1}}};
  return layout;
}

FragmentLayout mlir::gs::tensorcore::wgmmaM64NK16Accumulator(int64_t n) {
  // d[j]: row 16 * warp + g + 8 * ((j / 2) % 2), column 8 * (j / 4) + 2t +
  // j % 2: d[4b] .. d[4b+3] are c0 .. c3 of n8 block b.
  FragmentLayout layout{
      64,
      n,
      n / 2,
      1,
      AxisLayout{{groupId(1), {kLanesPerWarp, 4, 16}}, {}, {0}},
      AxisLayout{{threadInGroup(2)}, {}, {0}}};
  for (int64_t j = 0; j < n / 2; ++j) {
    layout.row.registerOffsets.push_back(8 * ((j / 2) % 2));
    layout.col.registerOffsets.push_back(8 * (j / 4) + j % 2);
  }
  return layout;
}

const FragmentLayout &mlir::gs::tensorcore::ldmatrixFragment(bool transpose) {
  // Lane l receives row l/4, columns 2(l%4) and 2(l%4)+1; transposed, those
  // rows and that column.
  static const FragmentLayout stored{
      8, 8, 1, 2,
      AxisLayout{{groupId(1)}, {0}, {0, 0}},
      AxisLayout{{threadInGroup(2)}, {0}, {0, 1}}};
  static const FragmentLayout transposed{
      8, 8, 1, 2,
      AxisLayout{{threadInGroup(2)}, {0}, {0, 1}},
      AxisLayout{{groupId(1)}, {0}, {0, 0}}};
  return transpose ? transposed : stored;
}

const LaneAddress &mlir::gs::tensorcore::ldmatrixAddressOfOperandA() {
  // Matrix m = lane / 8 sits at rows 8(m % 2), columns 8(m / 2): registers
  // a0a1, a2a3, a4a5, a6a7.
  static const LaneAddress address{
      AxisLayout{{{1, 8, 1}, {8, 2, 8}}, {0}, {0}},
      AxisLayout{{{16, 2, 8}}, {0}, {0}}};
  return address;
}

const LaneAddress &mlir::gs::tensorcore::ldmatrixAddressOfOperandBPair() {
  // Matrix m = lane / 8 holds k rows 8(m % 2) of n tile m / 2: registers
  // b0b1, b2b3 of the first n8 tile, then of the second.
  static const LaneAddress address{
      AxisLayout{{{1, 8, 1}, {8, 2, 8}}, {0}, {0}},
      AxisLayout{{{16, 2, 8}}, {0}, {0}}};
  return address;
}

const LaneAddress &mlir::gs::tensorcore::ldmatrixAddressOfTransposedOperandA() {
  // Matrix m is register m's 8 x 8 block of A (m rows 8(m % 2), k columns
  // 8(m / 2)), stored transposed: k rows 8(m / 2), m columns 8(m % 2).
  static const LaneAddress address{
      AxisLayout{{{1, 8, 1}, {16, 2, 8}}, {0}, {0}},
      AxisLayout{{{8, 2, 8}}, {0}, {0}}};
  return address;
}

const LaneAddress &
mlir::gs::tensorcore::ldmatrixAddressOfTransposedOperandBPair() {
  // Matrix m holds k rows 8(m % 2) of n tile m / 2; stored N x K, that is n
  // rows 8(m / 2), k columns 8(m % 2): the addresses of transposed A.
  return ldmatrixAddressOfTransposedOperandA();
}
