//===- ShapeUtilsTest.cpp - Shape arithmetic of gs ops ---------*- C++ -*-===//

#include "gs/Dialect/GS/IR/ShapeUtils.h"

#include <gtest/gtest.h>

using namespace mlir::gs;
using llvm::SmallVector;

TEST(ShapeUtils, BroadcastAlignsTrailingDimensions) {
  auto shape = broadcastShapes({8, 1, 6, 1}, {7, 1, 5});
  ASSERT_TRUE(shape.has_value());
  EXPECT_EQ(*shape, (SmallVector<int64_t>{8, 7, 6, 5}));
  EXPECT_EQ(*broadcastShapes({}, {3, 4}), (SmallVector<int64_t>{3, 4}));
  EXPECT_FALSE(broadcastShapes({2, 3}, {4, 3}).has_value());
}

TEST(ShapeUtils, UnidirectionalBroadcast) {
  EXPECT_TRUE(isBroadcastableTo({3, 1}, {2, 3, 4}));
  EXPECT_TRUE(isBroadcastableTo({}, {2, 3}));
  EXPECT_FALSE(isBroadcastableTo({2, 3, 4}, {3, 4}));
  EXPECT_FALSE(isBroadcastableTo({5}, {3, 4}));
  // Multidirectional would give 2x4 here; unidirectional must not.
  EXPECT_FALSE(isBroadcastableTo({2, 1}, {1, 4}));
}

TEST(ShapeUtils, ConvolutionOutputSize) {
  // 32 with a 3x3 kernel, pad 1: same size; stride 2 halves it.
  EXPECT_EQ(windowOutputSize(32, 3, 1, 1, 1, 1), 32);
  EXPECT_EQ(windowOutputSize(32, 3, 2, 1, 1, 1), 16);
  // ResNet stem: 224, 7x7, stride 2, pad 3 -> 112.
  EXPECT_EQ(windowOutputSize(224, 7, 2, 3, 3, 1), 112);
  // Dilation 2 turns a 3-kernel into a 5-wide window.
  EXPECT_EQ(windowOutputSize(7, 3, 1, 0, 0, 2), 3);
  EXPECT_LT(windowOutputSize(2, 3, 1, 0, 0, 1), 1);
}

TEST(ShapeUtils, CeilModePooling) {
  // ONNX maxpool_2d_ceil: 4x4, kernel 3, stride 2 -> 2x2 (floor gives 1).
  EXPECT_EQ(windowOutputSize(4, 3, 2, 0, 0, 1, /*ceilMode=*/false), 1);
  EXPECT_EQ(windowOutputSize(4, 3, 2, 0, 0, 1, /*ceilMode=*/true), 2);
  // ONNX keeps a last window that starts in the end padding (PyTorch drops
  // it): 5, kernel 2, stride 2, pad 1+1: ceil((5+2-2)/2)+1 = 4.
  EXPECT_EQ(windowOutputSize(5, 2, 2, 1, 1, 1, /*ceilMode=*/true), 4);
}

TEST(ShapeUtils, TransposedConvolutionOutputSize) {
  // ONNX convtranspose: 3x3 input, 3x3 kernel, stride 1 -> 5x5.
  EXPECT_EQ(transposedWindowOutputSize(3, 3, 1, 0, 0, 1, 0), 5);
  // Stride 3, output padding 1 (ONNX convtranspose_pad): 3 -> 10.
  EXPECT_EQ(transposedWindowOutputSize(3, 3, 3, 0, 0, 1, 1), 10);
}

TEST(ShapeUtils, SliceSize) {
  EXPECT_EQ(sliceSize(0, 10, 1), 10);
  EXPECT_EQ(sliceSize(1, 10, 3), 3);   // 1, 4, 7
  EXPECT_EQ(sliceSize(9, -1, -1), 10); // whole dimension reversed
  EXPECT_EQ(sliceSize(9, 0, -4), 3);   // 9, 5, 1
  EXPECT_EQ(sliceSize(5, 5, 1), 0);
  EXPECT_EQ(sliceSize(2, 7, -1), 0);
}
