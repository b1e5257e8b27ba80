//===- DeviceAllocator.h - Caching GPU memory allocator ---------*- C++ -*-===//
//
// A training step allocates the same buffers every step; cuMemAlloc and
// cuMemFree synchronize the device. The allocator keeps freed blocks by
// size class and hands them out again, so that after the first step no
// allocation reaches the driver. Sizes round up to a class (512 bytes at
// least, then four classes per power of two: at most 25% over); when the
// driver is out of memory the cached blocks are returned and the
// allocation tried once more (after the holders of other blocks give them
// back: setReclaim). A freed block is reused in stream order:
// work queued before it was freed finishes before work queued after its
// reuse, which holds with the one stream a Device queues everything on.
//
//===----------------------------------------------------------------------===//

#ifndef GS_RUNTIME_CUDA_DEVICEALLOCATOR_H
#define GS_RUNTIME_CUDA_DEVICEALLOCATOR_H

#include "gs/Runtime/Cuda/Driver.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace mlir::gs::runtime::cuda {

class DeviceAllocator {
public:
  /// Where blocks come from and go back to: cuMemAlloc and cuMemFree on a
  /// device, or anything with their contract (the tests' host memory).
  struct Backend {
    std::function<CUresult(CUdeviceptr *, size_t)> allocate;
    std::function<CUresult(CUdeviceptr)> release;
    /// The error text of a result.
    std::function<std::string(CUresult, const std::string &)> describe;
  };

  struct Stats {
    /// Bytes of the blocks handed out and not deallocated (by size class).
    size_t inUse = 0;
    /// The most `inUse` has been.
    size_t peakInUse = 0;
    /// Bytes of the freed blocks kept for reuse.
    size_t cached = 0;
    /// Allocations that reached the backend, and those a cached block
    /// served.
    int64_t backendAllocations = 0;
    int64_t cacheHits = 0;
  };

  explicit DeviceAllocator(Backend backend);
  /// Returns every block, cached or still handed out, to the backend.
  ~DeviceAllocator();
  DeviceAllocator(const DeviceAllocator &) = delete;
  DeviceAllocator &operator=(const DeviceAllocator &) = delete;

  /// The size class `bytes` rounds up to; 0 for 0.
  static size_t sizeClass(size_t bytes);

  /// Sets `pointer` to a block of at least `bytes` (0 for 0 bytes).
  /// Returns an error message, empty on success.
  std::string allocate(size_t bytes, CUdeviceptr &pointer);
  /// Keeps the block for reuse. Returns an error for a pointer this
  /// allocator did not hand out (or already took back).
  std::string deallocate(CUdeviceptr pointer);
  /// Returns the cached blocks to the backend.
  std::string releaseCached();

  /// Claims: every block allocated between beginClaim and endClaim goes to
  /// the caller, those deallocated in between too (until endClaim, later
  /// allocations reuse them as any): endClaim takes them out of the cache
  /// and sets `blocks` to them all, handed out, for the caller to
  /// deallocate. A CUDA graph captured in between addresses them whenever
  /// it runs. Out of memory during a claim, the cache is not returned:
  /// the allocation fails.
  void beginClaim();
  std::string endClaim(std::vector<CUdeviceptr> &blocks);

  /// Out of memory with the cache returned (and not claiming), `reclaim`
  /// may deallocate blocks held elsewhere (CUDA graphs' buffers), whatever
  /// the stream has queued on them done, and return true: the cache is
  /// returned and the allocation tried again.
  void setReclaim(std::function<bool()> reclaim) {
    reclaimer = std::move(reclaim);
  }

  const Stats &stats() const { return statistics; }

private:
  /// Takes `pointer`, a block of class `size`, out of the cache and hands
  /// it out; false where the cache does not hold it.
  bool takeCached(CUdeviceptr pointer, size_t size);
  /// Counts `pointer`, a block of class `size`, as handed out.
  void handOut(CUdeviceptr pointer, size_t size);

  Backend backend;
  Stats statistics;
  /// Size class -> the freed blocks of that class.
  std::map<size_t, std::vector<CUdeviceptr>> freeBlocks;
  /// Block handed out -> its size class.
  std::unordered_map<CUdeviceptr, size_t> liveBlocks;
  /// The blocks allocated since beginClaim, while claiming: their size
  /// classes.
  bool claiming = false;
  std::map<CUdeviceptr, size_t> claimed;
  std::function<bool()> reclaimer;
};

} // namespace mlir::gs::runtime::cuda

#endif // GS_RUNTIME_CUDA_DEVICEALLOCATOR_H
