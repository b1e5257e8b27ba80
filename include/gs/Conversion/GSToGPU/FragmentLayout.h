//===- FragmentLayout.h - Which lane holds which matrix element -*- C++ -*-===//
//
// The register layouts of the warp-level Tensor Core operations the GPU
// kernels use, transcribed from the PTX ISA ("Matrix Fragments for
// mma.m16n8k16 with floating point type", "Warp-level matrix load
// instruction: ldmatrix"). The kernel generator builds the epilogue's index
// math from these descriptions, and the CPU emulation of mma.sync and
// ldmatrix gathers and scatters the 32 lanes' registers with them, so a
// layout is written down once.
//
//===----------------------------------------------------------------------===//

#ifndef GS_CONVERSION_GSTOGPU_FRAGMENTLAYOUT_H
#define GS_CONVERSION_GSTOGPU_FRAGMENTLAYOUT_H

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <utility>

namespace mlir::gs::tensorcore {

/// Lanes per warp.
inline constexpr int64_t kLanesPerWarp = 32;

/// One term `((lane / divisor) % modulus) * stride` of a coordinate.
struct LaneTerm {
  int64_t divisor;
  int64_t modulus;
  int64_t stride;
};

/// A row or column coordinate as a function of (lane, register, element):
/// the sum of the lane terms, plus an offset per register and per element
/// of the register.
struct AxisLayout {
  llvm::SmallVector<LaneTerm, 2> laneTerms;
  llvm::SmallVector<int64_t, 4> registerOffsets;
  llvm::SmallVector<int64_t, 2> elementOffsets;

  int64_t evaluate(int64_t lane, int64_t reg, int64_t element) const;
  /// The same in index arithmetic on `lane`, for static `reg`, `element`.
  Value build(OpBuilder &b, Location loc, Value lane, int64_t reg,
              int64_t element) const;
};

/// Where each lane's registers sit in a `rows` x `cols` matrix. A lane holds
/// `numRegisters` registers of `elementsPerRegister` elements: in MLIR's
/// nvgpu dialect, a `vector<numRegisters x elementsPerRegister x T>`.
struct FragmentLayout {
  int64_t rows;
  int64_t cols;
  int64_t numRegisters;
  int64_t elementsPerRegister;
  AxisLayout row;
  AxisLayout col;

  std::pair<int64_t, int64_t> coordinate(int64_t lane, int64_t reg,
                                         int64_t element) const {
    return {row.evaluate(lane, reg, element), col.evaluate(lane, reg, element)};
  }
};

/// mma.sync.m16n8k16 with f16 operands and f32 accumulators: A is 16 x 16
/// (M x K, row), B is 16 x 8 (K x N, col), C and D are 16 x 8 (M x N).
const FragmentLayout &mmaM16N8K16OperandA();
const FragmentLayout &mmaM16N8K16OperandB();
const FragmentLayout &mmaM16N8K16Accumulator();

/// Threads per warpgroup, the unit wgmma.mma_async runs on.
inline constexpr int64_t kThreadsPerWarpgroup = 128;

/// The f32 accumulator of wgmma.mma_async.m64nNk16 (64 x n, n a multiple of
/// 8 up to 256): each of the warpgroup's 128 threads holds n / 2 registers
/// of one element. Its "lane" is the thread's index in the warpgroup: warp
/// w of the group holds rows 16w .. 16w+15, each n8 column block of them as
/// mma.sync.m16n8k16's accumulator.
FragmentLayout wgmmaM64NK16Accumulator(int64_t n);

/// One 8 x 8 matrix of 16-bit elements loaded by ldmatrix: a lane receives
/// one register of two elements, from the matrix as stored, or (`.trans`)
/// from its transpose. The row addresses of matrix `m` come from lanes
/// 8m .. 8m+7 in row order.
const FragmentLayout &ldmatrixFragment(bool transpose);

/// The lane whose address ldmatrix reads as row `row` of matrix `matrix`.
inline int64_t ldmatrixAddressLane(int64_t matrix, int64_t row) {
  return 8 * matrix + row;
}

/// The element of a 16 x 16 tile whose address a lane gives ldmatrix.x4, so
/// that matrix m of the load is the 8 x 8 block that register m of an
/// operand holds: for A (.x4), the four registers of a 16 x 16 A fragment;
/// for B (.x4.trans on a K x N tile), the two registers of the B fragments
/// of two adjacent n8 tiles. The register and element offsets are unused.
struct LaneAddress {
  AxisLayout row;
  AxisLayout col;
};
const LaneAddress &ldmatrixAddressOfOperandA();
const LaneAddress &ldmatrixAddressOfOperandBPair();

/// The same for operands stored transposed: A as a K x M tile (loaded with
/// .x4.trans), B as an N x K tile (loaded with .x4, no .trans). Both name
/// the stored tile's row and column.
const LaneAddress &ldmatrixAddressOfTransposedOperandA();
const LaneAddress &ldmatrixAddressOfTransposedOperandBPair();

} // namespace mlir::gs::tensorcore

#endif // GS_CONVERSION_GSTOGPU_FRAGMENTLAYOUT_H
