//===- BufferCache.h - The compiled code's heap buffers ---------*- C++ -*-===//
//
// Compiled code allocates its buffers (memref.alloc) through MLIR's generic
// allocation functions, which the runtime defines here: blocks of at least
// kCachedBlockBytes stay in a cache when freed and are handed out again
// for the same size and alignment. A train step frees and allocates the
// same buffers at every call; glibc returns blocks above its mmap
// threshold (128 KiB by default, 32 MiB at most) to the system, and the
// next step faulted every page of them in again. Smaller blocks are
// aligned_alloc's and free's.
//
// At most kMaxIdleBytes wait in the cache; a block freed beyond that goes
// back to the system. The functions are thread-safe.
//
//===----------------------------------------------------------------------===//

#ifndef GS_RUNTIME_BUFFERCACHE_H
#define GS_RUNTIME_BUFFERCACHE_H

#include "gs/Runtime/RuntimeFunction.h"

#include <cstddef>
#include <cstdint>
#include <vector>

extern "C" {
void *_mlir_memref_to_llvm_alloc(uint64_t bytes);
void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment, uint64_t bytes);
void _mlir_memref_to_llvm_free(void *block);
}

namespace mlir::gs::runtime {

constexpr size_t kCachedBlockBytes = 128 << 10;
constexpr size_t kMaxIdleBytes = size_t(2) << 30;

/// What the cache holds: blocks handed out and idle ones, with their bytes.
struct BufferCacheStats {
  size_t liveBlocks = 0, liveBytes = 0;
  size_t idleBlocks = 0, idleBytes = 0;
};
BufferCacheStats bufferCacheStats();

/// Returns the idle blocks to the system.
void releaseIdleBuffers();

/// The allocation functions above by name.
const std::vector<RuntimeFunction> &bufferCacheFunctions();

} // namespace mlir::gs::runtime

#endif // GS_RUNTIME_BUFFERCACHE_H
