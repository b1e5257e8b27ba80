//===- FragmentLayoutTest.cpp - Tensor Core layouts vs the PTX ISA -*- C++ -*-//
//
// The emulation and the kernel read the same layout descriptions, so a
// wrong description would pass the emulated-kernel tests; these pin them
// to the PTX ISA's tables (PTX ISA 8.x, "Matrix Fragments for
// mma.m16n8k16 with floating point type" and "ldmatrix"), entry by entry
// as the ISA writes them, and check that ldmatrix.x4 at the kernel's lane
// addresses yields exactly the mma.sync operand fragments.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/GSToGPU/FragmentLayout.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>

using namespace mlir::gs::tensorcore;

namespace {
using Coordinate = std::pair<int64_t, int64_t>;

/// Every lane, register and element names a distinct matrix element, and
/// every element is named.
void expectBijection(const FragmentLayout &layout) {
  std::set<Coordinate> seen;
  for (int64_t lane = 0; lane < kLanesPerWarp; ++lane)
    for (int64_t r = 0; r < layout.numRegisters; ++r)
      for (int64_t e = 0; e < layout.elementsPerRegister; ++e) {
        Coordinate c = layout.coordinate(lane, r, e);
        EXPECT_GE(c.first, 0);
        EXPECT_LT(c.first, layout.rows);
        EXPECT_GE(c.second, 0);
        EXPECT_LT(c.second, layout.cols);
        EXPECT_TRUE(seen.insert(c).second)
            << "lane " << lane << " reg " << r << " elem " << e;
      }
  EXPECT_EQ(static_cast<int64_t>(seen.size()), layout.rows * layout.cols);
}

TEST(FragmentLayout, EachCoversItsMatrixOnce) {
  expectBijection(mmaM16N8K16OperandA());
  expectBijection(mmaM16N8K16OperandB());
  expectBijection(mmaM16N8K16Accumulator());
  expectBijection(ldmatrixFragment(false));
  expectBijection(ldmatrixFragment(true));
}

// The ISA's formulas, with groupID = lane >> 2, threadID_in_group = lane % 4
// and a_i / b_i / c_i the i-th element (register i / 2, element i % 2).
TEST(FragmentLayout, MmaOperandAMatchesTheIsa) {
  const FragmentLayout &a = mmaM16N8K16OperandA();
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t i = 0; i < 8; ++i) {
      int64_t group = lane >> 2, thread = lane % 4;
      int64_t row = (i < 2 || (i >= 4 && i < 6)) ? group : group + 8;
      int64_t col = thread * 2 + (i & 1) + (i >= 4 ? 8 : 0);
      EXPECT_EQ(a.coordinate(lane, i / 2, i % 2), Coordinate(row, col))
          << "lane " << lane << " a" << i;
    }
  // Two entries as printed in the figure: T5 holds a2 at (9, 2), T31 a7 at
  // (15, 15).
  EXPECT_EQ(a.coordinate(5, 1, 0), Coordinate(9, 2));
  EXPECT_EQ(a.coordinate(31, 3, 1), Coordinate(15, 15));
}

TEST(FragmentLayout, MmaOperandBMatchesTheIsa) {
  const FragmentLayout &b = mmaM16N8K16OperandB();
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t i = 0; i < 4; ++i) {
      int64_t row = (lane % 4) * 2 + (i & 1) + (i >= 2 ? 8 : 0);
      int64_t col = lane >> 2;
      EXPECT_EQ(b.coordinate(lane, i / 2, i % 2), Coordinate(row, col))
          << "lane " << lane << " b" << i;
    }
  EXPECT_EQ(b.coordinate(5, 1, 1), Coordinate(11, 1));
}

TEST(FragmentLayout, MmaAccumulatorMatchesTheIsa) {
  const FragmentLayout &c = mmaM16N8K16Accumulator();
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t i = 0; i < 4; ++i) {
      int64_t row = (lane >> 2) + (i >= 2 ? 8 : 0);
      int64_t col = (lane % 4) * 2 + (i & 1);
      EXPECT_EQ(c.coordinate(lane, i / 2, i % 2), Coordinate(row, col))
          << "lane " << lane << " c" << i;
    }
  EXPECT_EQ(c.coordinate(31, 1, 1), Coordinate(15, 7));
}

TEST(FragmentLayout, LdmatrixMatchesTheIsa) {
  // Each thread receives two elements of row lane / 4 (transposed: of
  // column lane / 4).
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t e = 0; e < 2; ++e) {
      Coordinate stored(lane / 4, (lane % 4) * 2 + e);
      EXPECT_EQ(ldmatrixFragment(false).coordinate(lane, 0, e), stored);
      EXPECT_EQ(ldmatrixFragment(true).coordinate(lane, 0, e),
                Coordinate(stored.second, stored.first));
    }
}

/// The element of the 16 x 16 tile that lane `lane` receives as element `e`
/// of register (matrix) `m` of an ldmatrix.x4 whose row addresses come from
/// `address`: stored row `first` of the matrix is at the address of lane
/// 8m + first, and the element is `second` columns on (with .trans too: the
/// transposed fragment names the stored row and column).
Coordinate loaded(const LaneAddress &address, bool transpose, int64_t lane,
                  int64_t m, int64_t e) {
  Coordinate inMatrix = ldmatrixFragment(transpose).coordinate(lane, 0, e);
  int64_t addressLane = ldmatrixAddressLane(m, inMatrix.first);
  int64_t row = address.row.evaluate(addressLane, 0, 0);
  int64_t col = address.col.evaluate(addressLane, 0, 0);
  return {row, col + inMatrix.second};
}

/// Element `e` of register `m` of the B fragments of two adjacent n8
/// tiles: registers 0, 1 are tile 0's fragment, 2, 3 tile 1's (columns 8
/// to 15).
Coordinate bPairCoordinate(int64_t lane, int64_t m, int64_t e) {
  Coordinate c = mmaM16N8K16OperandB().coordinate(lane, m % 2, e);
  c.second += 8 * (m / 2);
  return c;
}

Coordinate transposed(Coordinate c) { return {c.second, c.first}; }

TEST(FragmentLayout, LdmatrixAtTheKernelsAddressesGivesOperandA) {
  const FragmentLayout &a = mmaM16N8K16OperandA();
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t m = 0; m < 4; ++m)
      for (int64_t e = 0; e < 2; ++e)
        EXPECT_EQ(loaded(ldmatrixAddressOfOperandA(), false, lane, m, e),
                  a.coordinate(lane, m, e))
            << "lane " << lane << " reg " << m << " elem " << e;
}

TEST(FragmentLayout, LdmatrixTransAtTheKernelsAddressesGivesOperandBPair) {
  // The transposed load reads a K x N tile by rows of k.
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t m = 0; m < 4; ++m)
      for (int64_t e = 0; e < 2; ++e)
        EXPECT_EQ(loaded(ldmatrixAddressOfOperandBPair(), true, lane, m, e),
                  bPairCoordinate(lane, m, e))
            << "lane " << lane << " reg " << m << " elem " << e;
}

TEST(FragmentLayout, LdmatrixTransAtTheKernelsAddressesGivesTransposedA) {
  // A stored K x M: the loaded element's stored (row, column) is the
  // operand's (column, row).
  const FragmentLayout &a = mmaM16N8K16OperandA();
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t m = 0; m < 4; ++m)
      for (int64_t e = 0; e < 2; ++e)
        EXPECT_EQ(
            loaded(ldmatrixAddressOfTransposedOperandA(), true, lane, m, e),
            transposed(a.coordinate(lane, m, e)))
            << "lane " << lane << " reg " << m << " elem " << e;
}

TEST(FragmentLayout, LdmatrixAtTheKernelsAddressesGivesTransposedBPair) {
  // B stored N x K, read by rows of n without .trans.
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t m = 0; m < 4; ++m)
      for (int64_t e = 0; e < 2; ++e)
        EXPECT_EQ(loaded(ldmatrixAddressOfTransposedOperandBPair(), false,
                         lane, m, e),
                  transposed(bPairCoordinate(lane, m, e)))
            << "lane " << lane << " reg " << m << " elem " << e;
}
} // namespace

// wgmma.mma_async.m64nNk16's f32 accumulator (PTX ISA, "Matrix Fragments
// for wgmma.mma_async.m64nNk16", Figure "accumulator matrix D"): thread T
// of the warpgroup, in warp T / 32, holds d_i at row 16 (T / 32) + (T % 32)
// / 4 + 8 ((i / 2) % 2), column 8 (i / 4) + 2 (T % 4) + i % 2, N / 2 of
// them; every element of the 64 x N matrix once.
TEST(FragmentLayout, WgmmaAccumulatorMatchesTheIsa) {
  for (int64_t n : {8, 64, 128, 256}) {
    FragmentLayout d = wgmmaM64NK16Accumulator(n);
    EXPECT_EQ(d.numRegisters, n / 2);
    std::set<Coordinate> seen;
    for (int64_t thread = 0; thread < kThreadsPerWarpgroup; ++thread)
      for (int64_t i = 0; i < n / 2; ++i) {
        int64_t lane = thread % 32;
        int64_t row = 16 * (thread / 32) + lane / 4 + 8 * ((i / 2) % 2);
        int64_t col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
        EXPECT_EQ(d.coordinate(thread, i, 0), Coordinate(row, col))
            << "n " << n << " thread " << thread << " d" << i;
        seen.insert(d.coordinate(thread, i, 0));
      }
    EXPECT_EQ(static_cast<int64_t>(seen.size()), 64 * n);
  }
}
