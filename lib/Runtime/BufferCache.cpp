//===- BufferCache.cpp - The compiled code's heap buffers ----------------===//

#include "gs/Runtime/BufferCache.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>

using namespace mlir::gs::runtime;

namespace {
/// A cached block's size and alignment.
using BlockShape = std::pair<uint64_t, uint64_t>;

struct Cache {
  std::mutex mutex;
  /// Blocks handed out, by address.
  std::unordered_map<void *, BlockShape> live;
  /// Idle blocks, by shape.
  std::multimap<BlockShape, void *> idle;
  size_t liveBytes = 0, idleBytes = 0;
};

Cache &cache() {
  // Never destroyed: compiled code may free buffers from static
  // destructors that run after this one would have.
  static Cache *instance = new Cache;
  return *instance;
}

/// A block of `bytes` rounded up to a multiple of `alignment` (a power of
/// two); null where there is none.
void *allocate(uint64_t alignment, uint64_t bytes) {
  if (!alignment || (alignment & (alignment - 1)) ||
      bytes > UINT64_MAX - alignment)
    return nullptr;
  bytes = bytes ? (bytes + alignment - 1) & ~(alignment - 1) : alignment;
  if (bytes < kCachedBlockBytes)
    return std::aligned_alloc(alignment, bytes);
  Cache &c = cache();
  BlockShape shape{bytes, alignment};
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (auto it = c.idle.find(shape); it != c.idle.end()) {
      void *block = it->second;
      c.idle.erase(it);
      c.idleBytes -= bytes;
      c.live.emplace(block, shape);
      c.liveBytes += bytes;
      return block;
    }
  }
  void *block = std::aligned_alloc(alignment, bytes);
  if (!block)
    return nullptr;
  std::lock_guard<std::mutex> lock(c.mutex);
  c.live.emplace(block, shape);
  c.liveBytes += bytes;
  return block;
}
} // namespace

extern "C" void *_mlir_memref_to_llvm_alloc(uint64_t bytes) {
  return allocate(alignof(std::max_align_t), bytes);
}

extern "C" void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment,
                                                    uint64_t bytes) {
  return allocate(alignment, bytes);
}

extern "C" void _mlir_memref_to_llvm_free(void *block) {
  if (!block)
    return;
  Cache &c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.live.find(block);
    if (it != c.live.end()) {
      BlockShape shape = it->second;
      c.live.erase(it);
      c.liveBytes -= shape.first;
      if (c.idleBytes + shape.first <= kMaxIdleBytes) {
        c.idle.emplace(shape, block);
        c.idleBytes += shape.first;
        return;
      }
    }
  }
  std::free(block);
}

BufferCacheStats mlir::gs::runtime::bufferCacheStats() {
  Cache &c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return {c.live.size(), c.liveBytes, c.idle.size(), c.idleBytes};
}

void mlir::gs::runtime::releaseIdleBuffers() {
  Cache &c = cache();
  std::multimap<BlockShape, void *> idle;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    idle.swap(c.idle);
    c.idleBytes = 0;
  }
  for (auto &[shape, block] : idle)
    std::free(block);
}

const std::vector<RuntimeFunction> &mlir::gs::runtime::bufferCacheFunctions() {
  static const std::vector<RuntimeFunction> functions = {
      {"_mlir_memref_to_llvm_alloc",
       reinterpret_cast<void *>(&_mlir_memref_to_llvm_alloc)},
      {"_mlir_memref_to_llvm_aligned_alloc",
       reinterpret_cast<void *>(&_mlir_memref_to_llvm_aligned_alloc)},
      {"_mlir_memref_to_llvm_free",
       reinterpret_cast<void *>(&_mlir_memref_to_llvm_free)},
  };
  return functions;
}
