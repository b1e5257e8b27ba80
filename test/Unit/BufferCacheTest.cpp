//===- BufferCacheTest.cpp - The compiled code's heap buffers ------------===//

#include "gs/Runtime/BufferCache.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

using namespace mlir::gs::runtime;

namespace {
constexpr uint64_t kBig = 3 << 20;

TEST(BufferCacheTest, FreedBlockIsHandedOutAgainForTheSameShape) {
  releaseIdleBuffers();
  BufferCacheStats before = bufferCacheStats();
  void *first = _mlir_memref_to_llvm_aligned_alloc(64, kBig);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
  std::memset(first, 1, kBig);
  EXPECT_EQ(bufferCacheStats().liveBytes, before.liveBytes + kBig);
  _mlir_memref_to_llvm_free(first);
  BufferCacheStats idle = bufferCacheStats();
  EXPECT_EQ(idle.liveBytes, before.liveBytes);
  EXPECT_EQ(idle.idleBlocks, 1u);
  EXPECT_EQ(idle.idleBytes, kBig);
  // The same size and alignment: the same block.
  void *again = _mlir_memref_to_llvm_aligned_alloc(64, kBig);
  EXPECT_EQ(again, first);
  EXPECT_EQ(bufferCacheStats().idleBlocks, 0u);
  // Another alignment or size: another block.
  void *aligned = _mlir_memref_to_llvm_aligned_alloc(4096, kBig);
  EXPECT_NE(aligned, first);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(aligned) % 4096, 0u);
  _mlir_memref_to_llvm_free(again);
  _mlir_memref_to_llvm_free(aligned);
  EXPECT_EQ(bufferCacheStats().idleBlocks, 2u);
  releaseIdleBuffers();
  EXPECT_EQ(bufferCacheStats().idleBlocks, 0u);
  EXPECT_EQ(bufferCacheStats().idleBytes, 0u);
}

TEST(BufferCacheTest, SmallBlocksAreNotCached) {
  releaseIdleBuffers();
  BufferCacheStats before = bufferCacheStats();
  void *small = _mlir_memref_to_llvm_aligned_alloc(64, kCachedBlockBytes - 64);
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(bufferCacheStats().liveBlocks, before.liveBlocks);
  _mlir_memref_to_llvm_free(small);
  EXPECT_EQ(bufferCacheStats().idleBlocks, 0u);
  _mlir_memref_to_llvm_free(nullptr);
  // No block for an alignment that is no power of two, or a size that
  // overflows when rounded up.
  EXPECT_EQ(_mlir_memref_to_llvm_aligned_alloc(48, kBig), nullptr);
  EXPECT_EQ(_mlir_memref_to_llvm_aligned_alloc(64, UINT64_MAX - 8), nullptr);
  // Sizes round up to the alignment; a zero-byte block is a real one.
  void *empty = _mlir_memref_to_llvm_alloc(0);
  EXPECT_NE(empty, nullptr);
  _mlir_memref_to_llvm_free(empty);
}
} // namespace
