//===- DeviceAllocator.cpp - Caching GPU memory allocator -----------------===//

#include "gs/Runtime/Cuda/DeviceAllocator.h"

#include <algorithm>
#include <cstdio>

using namespace mlir::gs::runtime::cuda;

/// The smallest size class.
static constexpr size_t kMinClass = 512;
/// Sizes above this are not rounded (rounding could overflow).
static constexpr size_t kLargestRounded = size_t(1) << 62;

static std::string hexAddress(CUdeviceptr pointer) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%llx", pointer);
  return text;
}

DeviceAllocator::DeviceAllocator(Backend backend)
    : backend(std::move(backend)) {}

DeviceAllocator::~DeviceAllocator() {
  // Errors cannot be reported from here; the process's context goes with
  // the device anyway.
  (void)releaseCached();
  for (const auto &[pointer, size] : liveBlocks)
    (void)backend.release(pointer);
}

size_t DeviceAllocator::sizeClass(size_t bytes) {
  if (bytes == 0)
    return 0;
  if (bytes <= kMinClass)
    return kMinClass;
  if (bytes > kLargestRounded)
    return bytes;
  size_t power = size_t(1) << (63 - __builtin_clzll(bytes));
  size_t step = power / 4;
  return (bytes + step - 1) / step * step;
}

std::string DeviceAllocator::allocate(size_t bytes, CUdeviceptr &pointer) {
  pointer = 0;
  size_t size = sizeClass(bytes);
  if (size == 0)
    return {};
  auto cached = freeBlocks.find(size);
  if (cached != freeBlocks.end() && !cached->second.empty()) {
    pointer = cached->second.back();
    cached->second.pop_back();
    statistics.cached -= size;
    ++statistics.cacheHits;
  } else {
    CUresult result = backend.allocate(&pointer, size);
    // A claim's blocks in the cache stay there (a capture addresses them).
    if (result == kErrorOutOfMemory && !claiming && statistics.cached > 0) {
      if (std::string error = releaseCached(); !error.empty())
        return error;
      result = backend.allocate(&pointer, size);
    }
    if (result == kErrorOutOfMemory && !claiming && reclaimer && reclaimer()) {
      if (std::string error = releaseCached(); !error.empty())
        return error;
      result = backend.allocate(&pointer, size);
    }
    if (result != kSuccess) {
      pointer = 0;
      return backend.describe(result, "allocating " + std::to_string(size) +
                                          " bytes of GPU memory (" +
                                          std::to_string(statistics.inUse) +
                                          " in use)");
    }
    ++statistics.backendAllocations;
  }
  handOut(pointer, size);
  if (claiming)
    claimed[pointer] = size;
  return {};
}

void DeviceAllocator::handOut(CUdeviceptr pointer, size_t size) {
  liveBlocks.emplace(pointer, size);
  statistics.inUse += size;
  statistics.peakInUse = std::max(statistics.peakInUse, statistics.inUse);
}

std::string DeviceAllocator::deallocate(CUdeviceptr pointer) {
  if (pointer == 0)
    return {};
  auto live = liveBlocks.find(pointer);
  if (live == liveBlocks.end())
    return "deallocating GPU memory at " + hexAddress(pointer) +
           " that the allocator did not hand out";
  size_t size = live->second;
  liveBlocks.erase(live);
  freeBlocks[size].push_back(pointer);
  statistics.inUse -= size;
  statistics.cached += size;
  return {};
}

std::string DeviceAllocator::releaseCached() {
  std::string firstError;
  for (auto &[size, blocks] : freeBlocks) {
    for (CUdeviceptr pointer : blocks) {
      CUresult result = backend.release(pointer);
      if (result != kSuccess && firstError.empty())
        firstError = backend.describe(result, "freeing GPU memory");
      statistics.cached -= size;
    }
    blocks.clear();
  }
  freeBlocks.clear();
  return firstError;
}

void DeviceAllocator::beginClaim() {
  claiming = true;
  claimed.clear();
}

bool DeviceAllocator::takeCached(CUdeviceptr pointer, size_t size) {
  auto cached = freeBlocks.find(size);
  if (cached == freeBlocks.end())
    return false;
  auto found = std::find(cached->second.begin(), cached->second.end(), pointer);
  if (found == cached->second.end())
    return false;
  cached->second.erase(found);
  statistics.cached -= size;
  handOut(pointer, size);
  return true;
}

std::string DeviceAllocator::endClaim(std::vector<CUdeviceptr> &blocks) {
  claiming = false;
  blocks.clear();
  size_t released = 0;
  // Those deallocated since come out of the cache, handed out again.
  for (auto [pointer, size] : claimed)
    if (liveBlocks.count(pointer) || takeCached(pointer, size))
      blocks.push_back(pointer);
    else
      ++released;
  claimed.clear();
  if (released)
    return std::to_string(released) +
           " GPU memory blocks the claim held went back to the driver";
  return {};
}
