//===- CudaRuntimeTest.cpp - The GPU runtime's host-side logic ------------===//
//
// The caching allocator on a host-memory backend that counts its calls and
// can run out (its claims too), the choice of kernel image per GPU
// architecture, and on the stand-in driver the mgpu* calls, the host waits
// a device counts, events asked about without waiting, and CUDA graphs.
//
//===----------------------------------------------------------------------===//

#include "gs/Runtime/Cuda/Device.h"
#include "gs/Runtime/DeviceModel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

using namespace mlir::gs::runtime::cuda;

namespace {
/// Host memory standing in for the device's, with a capacity.
struct FakeDeviceMemory {
  size_t capacity = size_t(1) << 30;
  size_t used = 0;
  int allocations = 0;
  int releases = 0;
  std::map<CUdeviceptr, size_t> blocks;

  DeviceAllocator::Backend backend() {
    return {[this](CUdeviceptr *pointer, size_t bytes) -> CUresult {
              if (used + bytes > capacity)
                return kErrorOutOfMemory;
              void *block = std::malloc(bytes);
              *pointer = reinterpret_cast<CUdeviceptr>(block);
              blocks[*pointer] = bytes;
              used += bytes;
              ++allocations;
              return kSuccess;
            },
            [this](CUdeviceptr pointer) -> CUresult {
              auto it = blocks.find(pointer);
              if (it == blocks.end())
                return 1; // CUDA_ERROR_INVALID_VALUE
              used -= it->second;
              blocks.erase(it);
              std::free(reinterpret_cast<void *>(pointer));
              ++releases;
              return kSuccess;
            },
            [](CUresult result, const std::string &what) {
              return what + ": error " + std::to_string(result);
            }};
  }
};
} // namespace

TEST(DeviceAllocator, SizeClassesRoundUpByAtMostAQuarter) {
  EXPECT_EQ(DeviceAllocator::sizeClass(0), 0u);
  EXPECT_EQ(DeviceAllocator::sizeClass(1), 512u);
  EXPECT_EQ(DeviceAllocator::sizeClass(512), 512u);
  EXPECT_EQ(DeviceAllocator::sizeClass(513), 640u);
  EXPECT_EQ(DeviceAllocator::sizeClass(1000), 1024u);
  EXPECT_EQ(DeviceAllocator::sizeClass(1025), 1280u);
  EXPECT_EQ(DeviceAllocator::sizeClass(3000), 3072u);
  EXPECT_EQ(DeviceAllocator::sizeClass(size_t(1) << 40), size_t(1) << 40);
  for (size_t bytes = 513; bytes < 200000; bytes += 97) {
    size_t size = DeviceAllocator::sizeClass(bytes);
    ASSERT_GE(size, bytes);
    ASSERT_LE(size, bytes + bytes / 4) << bytes;
    // The class is its own class: blocks of it are reused for it.
    ASSERT_EQ(DeviceAllocator::sizeClass(size), size) << bytes;
  }
}

TEST(DeviceAllocator, ReusesFreedBlocksOfTheSameClass) {
  FakeDeviceMemory device;
  DeviceAllocator allocator(device.backend());
  CUdeviceptr first = 0, second = 0, other = 0;
  ASSERT_EQ(allocator.allocate(1000, first), "");
  ASSERT_EQ(allocator.deallocate(first), "");
  EXPECT_EQ(allocator.stats().cached, 1024u);
  ASSERT_EQ(allocator.allocate(900, second), "");
  EXPECT_EQ(second, first);
  ASSERT_EQ(allocator.allocate(5000, other), "");
  EXPECT_NE(other, first);
  EXPECT_EQ(device.allocations, 2);
  EXPECT_EQ(allocator.stats().backendAllocations, 2);
  EXPECT_EQ(allocator.stats().cacheHits, 1);
  EXPECT_EQ(allocator.stats().inUse, 1024u + 5120u);
  EXPECT_EQ(allocator.stats().peakInUse, 1024u + 5120u);
  EXPECT_EQ(allocator.stats().cached, 0u);
}

TEST(DeviceAllocator, ZeroBytesNeedNoBlock) {
  FakeDeviceMemory device;
  DeviceAllocator allocator(device.backend());
  CUdeviceptr pointer = 1;
  ASSERT_EQ(allocator.allocate(0, pointer), "");
  EXPECT_EQ(pointer, 0u);
  EXPECT_EQ(allocator.deallocate(0), "");
  EXPECT_EQ(device.allocations, 0);
}

TEST(DeviceAllocator, RefusesPointersItDidNotHandOut) {
  FakeDeviceMemory device;
  DeviceAllocator allocator(device.backend());
  CUdeviceptr pointer = 0;
  ASSERT_EQ(allocator.allocate(64, pointer), "");
  ASSERT_EQ(allocator.deallocate(pointer), "");
  EXPECT_NE(allocator.deallocate(pointer).find("did not hand out"),
            std::string::npos);
  EXPECT_NE(allocator.deallocate(0x1234).find("0x1234"), std::string::npos);
}

TEST(DeviceAllocator, ReleasesTheCacheWhenTheDeviceIsFull) {
  FakeDeviceMemory device;
  device.capacity = 3000;
  DeviceAllocator allocator(device.backend());
  CUdeviceptr small = 0, large = 0;
  ASSERT_EQ(allocator.allocate(1024, small), "");
  ASSERT_EQ(allocator.deallocate(small), "");
  // 1024 cached + 2048 exceed the capacity: the cache goes back first.
  ASSERT_EQ(allocator.allocate(2048, large), "");
  EXPECT_EQ(device.releases, 1);
  EXPECT_EQ(allocator.stats().cached, 0u);
  EXPECT_EQ(device.used, 2048u);
  // Nothing left to release: the error names the request.
  CUdeviceptr tooLarge = 0;
  std::string error = allocator.allocate(4096, tooLarge);
  EXPECT_NE(error.find("allocating 4096 bytes of GPU memory (2048 in use)"),
            std::string::npos)
      << error;
  EXPECT_EQ(tooLarge, 0u);
}

TEST(DeviceAllocator, GivesEveryBlockBackWhenDestroyed) {
  FakeDeviceMemory device;
  {
    DeviceAllocator allocator(device.backend());
    CUdeviceptr kept = 0, freed = 0;
    ASSERT_EQ(allocator.allocate(100, kept), "");
    ASSERT_EQ(allocator.allocate(100000, freed), "");
    ASSERT_EQ(allocator.deallocate(freed), "");
  }
  EXPECT_EQ(device.used, 0u);
  EXPECT_TRUE(device.blocks.empty());
}

TEST(DeviceAllocator, ClaimsEveryBlockAllocatedDuringAClaim) {
  FakeDeviceMemory device;
  DeviceAllocator allocator(device.backend());
  CUdeviceptr before = 0, temporary = 0, reused = 0, kept = 0, last = 0;
  ASSERT_EQ(allocator.allocate(1000, before), "");
  ASSERT_EQ(allocator.deallocate(before), "");
  allocator.beginClaim();
  // Blocks cached before the claim and blocks freed during it are reused.
  ASSERT_EQ(allocator.allocate(1000, temporary), "");
  EXPECT_EQ(temporary, before);
  ASSERT_EQ(allocator.deallocate(temporary), "");
  ASSERT_EQ(allocator.allocate(1000, reused), "");
  EXPECT_EQ(reused, temporary);
  ASSERT_EQ(allocator.allocate(5000, kept), "");
  ASSERT_EQ(allocator.deallocate(kept), "");
  ASSERT_EQ(allocator.deallocate(reused), "");
  std::vector<CUdeviceptr> claimed;
  ASSERT_EQ(allocator.endClaim(claimed), "");
  EXPECT_EQ(claimed.size(), 2u);
  EXPECT_EQ(allocator.stats().cached, 0u);
  EXPECT_EQ(allocator.stats().inUse, 1024u + 5120u);
  // Claimed blocks are handed out: nothing else gets them...
  ASSERT_EQ(allocator.allocate(5000, last), "");
  EXPECT_NE(last, kept);
  // ...until the claimant gives them back.
  for (CUdeviceptr pointer : claimed)
    ASSERT_EQ(allocator.deallocate(pointer), "");
  EXPECT_EQ(allocator.stats().cached, 1024u + 5120u);
  ASSERT_EQ(allocator.deallocate(last), "");
}

TEST(DeviceAllocator, OutOfMemoryDuringAClaimKeepsTheClaimedBlocks) {
  FakeDeviceMemory device;
  device.capacity = 3000;
  DeviceAllocator allocator(device.backend());
  allocator.beginClaim();
  CUdeviceptr small = 0, large = 0;
  ASSERT_EQ(allocator.allocate(1024, small), "");
  ASSERT_EQ(allocator.deallocate(small), "");
  // The cached block is the claim's: it stays, the allocation fails.
  EXPECT_NE(allocator.allocate(2048, large).find("allocating 2048 bytes"),
            std::string::npos);
  EXPECT_EQ(device.releases, 0);
  std::vector<CUdeviceptr> claimed;
  ASSERT_EQ(allocator.endClaim(claimed), "");
  EXPECT_EQ(claimed, std::vector<CUdeviceptr>{small});
  // A claimed block returned to the device anyway fails the claim.
  allocator.beginClaim();
  ASSERT_EQ(allocator.allocate(1024, large), "");
  ASSERT_EQ(allocator.deallocate(large), "");
  ASSERT_EQ(allocator.releaseCached(), "");
  std::string error = allocator.endClaim(claimed);
  EXPECT_NE(error.find("1 GPU memory blocks the claim held went back"),
            std::string::npos)
      << error;
  EXPECT_TRUE(claimed.empty());
}

TEST(DeviceAllocator, OutOfMemoryAsksTheHoldersOfBlocksForThem) {
  FakeDeviceMemory device;
  device.capacity = 3000;
  DeviceAllocator allocator(device.backend());
  CUdeviceptr held = 0, large = 0;
  ASSERT_EQ(allocator.allocate(2048, held), "");
  int asked = 0;
  allocator.setReclaim([&] {
    ++asked;
    return held && allocator.deallocate(std::exchange(held, 0)).empty();
  });
  ASSERT_EQ(allocator.allocate(2048, large), "");
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(device.used, 2048u);
  // Nothing more to give back: the allocation fails.
  CUdeviceptr more = 0;
  EXPECT_NE(allocator.allocate(2048, more).find("allocating 2048 bytes"),
            std::string::npos);
  EXPECT_EQ(asked, 2);
  ASSERT_EQ(allocator.deallocate(large), "");
}

TEST(KernelImages, ParsesArchitectures) {
  std::optional<ArchInfo> arch = parseArch("sm_90a");
  ASSERT_TRUE(arch);
  EXPECT_EQ(arch->capability, 90);
  EXPECT_TRUE(arch->specific);
  arch = parseArch("sm_120");
  ASSERT_TRUE(arch);
  EXPECT_EQ(arch->capability, 120);
  EXPECT_FALSE(arch->specific);
  for (const char *bad : {"sm_", "sm_8", "sm_90b", "compute_90", "sm_x0", ""})
    EXPECT_FALSE(parseArch(bad)) << bad;
}

TEST(KernelImages, PicksTheBestImageEachGpuRuns) {
  using Kind = KernelImage::Kind;
  std::vector<KernelImage> images = {{Kind::Cubin, "sm_80", "a"},
                                     {Kind::Cubin, "sm_90", "b"},
                                     {Kind::Cubin, "sm_90a", "c"},
                                     {Kind::Ptx, "sm_80", "d"}};
  auto pick = [&](int capability) {
    const KernelImage *image = selectImage(images, capability);
    return image ? std::string(image->bytes) : std::string("none");
  };
  EXPECT_EQ(pick(90), "c"); // the arch-specific cubin on its own GPU
  EXPECT_EQ(pick(86), "a"); // an sm_80 cubin runs on 8.6
  EXPECT_EQ(pick(89), "a");
  EXPECT_EQ(pick(100), "d");   // a newer major: the driver compiles the PTX
  EXPECT_EQ(pick(75), "none"); // older than everything
  // Arch-specific PTX compiles for its own GPU only.
  std::vector<KernelImage> specific = {{Kind::Ptx, "sm_90a", "e"}};
  EXPECT_EQ(selectImage(specific, 90), &specific[0]);
  EXPECT_EQ(selectImage(specific, 100), nullptr);
}

// MLIR's GPU runtime API (MgpuWrappers.cpp) as lowered host code calls it,
// on the stand-in driver (test/Tools/Inputs/FakeCudaDriver.cpp), which runs
// gs_axpy(y, x, a, n) on the host. The only test in this process that opens
// a driver.
extern "C" {
void *mgpuModuleLoadJIT(void *data, int32_t optLevel);
void mgpuModuleUnload(void *module);
CUfunction mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(CUfunction function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedBytes, CUstream stream,
                      void **parameters, void **extra, size_t count);
CUstream mgpuStreamCreate();
void mgpuStreamDestroy(CUstream stream);
void mgpuStreamSynchronize(CUstream stream);
void *mgpuMemAlloc(uint64_t bytes, CUstream stream, bool hostShared);
void mgpuMemFree(void *pointer, CUstream stream);
void mgpuMemcpy(void *to, void *from, size_t bytes, CUstream stream);
}

namespace {
/// Loads, as compiled host code does, a PTX module declaring the one
/// kernel the stand-in driver computes (gs_axpy); returns that kernel.
CUfunction loadAxpy(void *&module) {
  static char ptx[] = ".version 7.0\n.target sm_80\n.address_size 64\n"
                      ".visible .entry gs_axpy()\n{\n  ret;\n}\n";
  module = mgpuModuleLoadJIT(ptx, 2);
  return mgpuModuleGetFunction(module, "gs_axpy");
}
} // namespace

TEST(MgpuWrappers, RunAKernelAsLoweredHostCodeDoes) {
  ASSERT_EQ(setenv("GS_LIBCUDA", GS_FAKE_LIBCUDA, /*overwrite=*/1), 0);
  void *module = nullptr;
  CUfunction axpy = loadAxpy(module);
  CUstream stream = mgpuStreamCreate();
  constexpr unsigned kCount = 1000;
  std::vector<float> x(kCount), y(kCount), result(kCount);
  for (unsigned i = 0; i < kCount; ++i) {
    x[i] = 0.5f * i;
    y[i] = 1.0f / (i + 1);
  }
  size_t bytes = kCount * sizeof(float);
  void *deviceX = mgpuMemAlloc(bytes, stream, false);
  void *deviceY = mgpuMemAlloc(bytes, stream, false);
  mgpuMemcpy(deviceX, x.data(), bytes, stream);
  mgpuMemcpy(deviceY, y.data(), bytes, stream);
  float a = 3.0f;
  unsigned n = kCount;
  void *arguments[] = {&deviceY, &deviceX, &a, &n};
  mgpuLaunchKernel(axpy, (kCount + 127) / 128, 1, 1, 128, 1, 1, 0, stream,
                   arguments, nullptr, 4);
  mgpuMemcpy(result.data(), deviceY, bytes, stream);
  mgpuStreamSynchronize(stream);
  for (unsigned i = 0; i < kCount; ++i)
    ASSERT_EQ(result[i], std::fmaf(a, x[i], y[i])) << i;
  // Freed blocks come back from the cache.
  mgpuMemFree(deviceX, stream);
  void *again = mgpuMemAlloc(bytes, stream, false);
  EXPECT_EQ(again, deviceX);
  mgpuMemFree(again, stream);
  mgpuMemFree(deviceY, stream);
  mgpuStreamDestroy(stream);
  mgpuModuleUnload(module);
}

TEST(MgpuWrappersDeathTest, RefusesHostSharedMemoryByName) {
  ASSERT_EQ(setenv("GS_LIBCUDA", GS_FAKE_LIBCUDA, /*overwrite=*/1), 0);
  EXPECT_EXIT(mgpuMemAlloc(64, nullptr, true), testing::ExitedWithCode(1),
              "GradScale GPU runtime: error: host-shared GPU memory");
}

TEST(Device, OnlyCopiesToAndFromPageableMemoryMakeTheHostWait) {
  ASSERT_EQ(setenv("GS_LIBCUDA", GS_FAKE_LIBCUDA, /*overwrite=*/1), 0);
  Device *gpu = nullptr;
  ASSERT_EQ(processDevice(gpu), "");
  constexpr size_t kBytes = 4096;
  CUdeviceptr block = 0;
  ASSERT_EQ(gpu->allocator().allocate(kBytes, block), "");
  void *locked = nullptr;
  ASSERT_EQ(gpu->allocateHost(kBytes, locked), "");
  std::vector<char> pageable(kBytes, 7);

  CallCounts before = gpu->callCounts();
  ASSERT_EQ(gpu->copyToDevice(block, locked, kBytes), "");
  ASSERT_EQ(gpu->copyToHost(locked, block, kBytes), "");
  // Part of a page-locked block is page-locked too.
  ASSERT_EQ(gpu->copyToHost(static_cast<char *>(locked) + 64, block, 128), "");
  EXPECT_EQ(gpu->callCounts().copies, before.copies + 3);
  EXPECT_EQ(gpu->callCounts().hostSynchronizations,
            before.hostSynchronizations);
  // Pageable memory, and a range running past a page-locked block.
  ASSERT_EQ(gpu->copyToDevice(block, pageable.data(), kBytes), "");
  ASSERT_EQ(gpu->copyToHost(pageable.data(), block, kBytes), "");
  ASSERT_EQ(gpu->copyToHost(static_cast<char *>(locked) + 1, block, kBytes),
            "");
  EXPECT_EQ(gpu->callCounts().hostSynchronizations,
            before.hostSynchronizations + 3);
  EXPECT_EQ(pageable[0], 7);

  EXPECT_EQ(gpu->freeHost(locked), "");
  EXPECT_EQ(gpu->freeHost(locked),
            "freeing host memory this device did not allocate");
  EXPECT_EQ(gpu->allocator().deallocate(block), "");
}

TEST(Device, AsksWhetherAnEventIsReachedWithoutWaiting) {
  ASSERT_EQ(setenv("GS_LIBCUDA", GS_FAKE_LIBCUDA, /*overwrite=*/1), 0);
  Device *gpu = nullptr;
  ASSERT_EQ(processDevice(gpu), "");
  CUevent first = nullptr, second = nullptr;
  ASSERT_EQ(gpu->createOrderingEvent(first), "");
  ASSERT_EQ(gpu->createOrderingEvent(second), "");
  // A stand-in device that is done only once the host has waited.
  ASSERT_EQ(setenv("GS_FAKE_CUDA_PENDING_EVENTS", "1", 1), 0);
  ASSERT_EQ(gpu->recordEvent(first), "");
  ASSERT_EQ(gpu->recordEvent(second), "");
  CallCounts before = gpu->callCounts();
  bool done = true;
  ASSERT_EQ(gpu->eventDone(first, done), "");
  EXPECT_FALSE(done);
  EXPECT_EQ(gpu->callCounts().hostSynchronizations,
            before.hostSynchronizations);
  // Waiting for the later event is waiting for the earlier one too.
  ASSERT_EQ(gpu->waitForEvent(second), "");
  ASSERT_EQ(gpu->eventDone(first, done), "");
  EXPECT_TRUE(done);
  EXPECT_EQ(gpu->callCounts().hostSynchronizations,
            before.hostSynchronizations + 1);
  ASSERT_EQ(unsetenv("GS_FAKE_CUDA_PENDING_EVENTS"), 0);
  EXPECT_EQ(gpu->destroyEvent(first), "");
  EXPECT_EQ(gpu->destroyEvent(second), "");
}

TEST(Device, CapturesKernelsIntoAGraphThatReplaysThem) {
  ASSERT_EQ(setenv("GS_LIBCUDA", GS_FAKE_LIBCUDA, /*overwrite=*/1), 0);
  Device *gpu = nullptr;
  ASSERT_EQ(processDevice(gpu), "");
  ASSERT_TRUE(gpu->hasGraphs());
  void *module = nullptr;
  CUfunction axpy = loadAxpy(module);
  constexpr unsigned kCount = 300;
  std::vector<float> x(kCount), y(kCount), result(kCount);
  for (unsigned i = 0; i < kCount; ++i) {
    x[i] = 0.25f * i;
    y[i] = 1.0f / (i + 3);
  }
  size_t bytes = kCount * sizeof(float);
  CUdeviceptr deviceX = 0, deviceY = 0;
  ASSERT_EQ(gpu->allocator().allocate(bytes, deviceX), "");
  ASSERT_EQ(gpu->allocator().allocate(bytes, deviceY), "");
  ASSERT_EQ(gpu->copyToDevice(deviceX, x.data(), bytes), "");
  ASSERT_EQ(gpu->copyToDevice(deviceY, y.data(), bytes), "");
  float a = 1.5f;
  unsigned n = kCount;
  void *arguments[] = {&deviceY, &deviceX, &a, &n};
  unsigned grid[3] = {3, 1, 1}, block[3] = {128, 1, 1};

  CallCounts before = gpu->callCounts();
  ASSERT_EQ(gpu->beginCapture(), "");
  EXPECT_TRUE(gpu->capturing());
  ASSERT_EQ(gpu->launch(axpy, "gs_axpy", grid, block, 0, arguments), "");
  ASSERT_EQ(gpu->launch(axpy, "gs_axpy", grid, block, 0, arguments), "");
  CUgraphExec graph = nullptr;
  ASSERT_EQ(gpu->endCapture(graph), "");
  // The graph holds the arguments' values at the capture.
  a = 100.0f;
  ASSERT_NE(graph, nullptr);
  EXPECT_FALSE(gpu->capturing());
  // Captured, not run.
  ASSERT_EQ(gpu->copyToHost(result.data(), deviceY, bytes), "");
  ASSERT_EQ(gpu->synchronize(), "");
  EXPECT_EQ(result, y);

  for (int launch = 0; launch < 3; ++launch)
    ASSERT_EQ(gpu->launchGraph(graph), "");
  ASSERT_EQ(gpu->copyToHost(result.data(), deviceY, bytes), "");
  ASSERT_EQ(gpu->synchronize(), "");
  for (unsigned i = 0; i < kCount; ++i) {
    float expected = y[i];
    for (int step = 0; step < 6; ++step)
      expected = std::fmaf(1.5f, x[i], expected);
    ASSERT_EQ(result[i], expected) << i;
  }
  CallCounts after = gpu->callCounts();
  EXPECT_EQ(after.launches, before.launches);
  EXPECT_EQ(after.graphLaunches, before.graphLaunches + 3);
  EXPECT_EQ(after.graphKernels, before.graphKernels + 6);
  EXPECT_EQ(gpu->destroyGraph(graph), "");
  EXPECT_EQ(gpu->launchGraph(graph),
            "launching a CUDA graph this device did not instantiate");
  EXPECT_EQ(gpu->allocator().deallocate(deviceX), "");
  EXPECT_EQ(gpu->allocator().deallocate(deviceY), "");
  mgpuModuleUnload(module);
}

TEST(Device, AWaitDuringACaptureSpoilsItAndNothingElse) {
  ASSERT_EQ(setenv("GS_LIBCUDA", GS_FAKE_LIBCUDA, /*overwrite=*/1), 0);
  Device *gpu = nullptr;
  ASSERT_EQ(processDevice(gpu), "");
  ASSERT_EQ(gpu->beginCapture(), "");
  EXPECT_EQ(gpu->beginCapture(),
            "a CUDA graph capture began while another is under way");
  EXPECT_NE(gpu->synchronize().find("CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"),
            std::string::npos);
  CUgraphExec graph = nullptr;
  std::string error = gpu->endCapture(graph);
  EXPECT_NE(error.find("capturing a CUDA graph: "
                       "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"),
            std::string::npos)
      << error;
  EXPECT_EQ(graph, nullptr);
  EXPECT_FALSE(gpu->capturing());
  EXPECT_EQ(gpu->synchronize(), "");
  EXPECT_EQ(gpu->endCapture(graph),
            "a CUDA graph capture ended that never began");
}

// What the train steps' graph tests rely on: the stand-in driver fails a
// replayed launch whose argument addresses memory freed since the capture.
TEST(Device, AGraphAddressingFreedMemoryFailsOnTheStandIn) {
  ASSERT_EQ(setenv("GS_LIBCUDA", GS_FAKE_LIBCUDA, /*overwrite=*/1), 0);
  ASSERT_EQ(setenv("GS_FAKE_CUDA_ANY_KERNEL", "1", 1), 0);
  Device *gpu = nullptr;
  ASSERT_EQ(processDevice(gpu), "");
  char ptx[] = ".version 7.0\n.target sm_80\n.address_size 64\n"
               ".visible .entry gs_reader(.param .u64 gs_reader_param_0)\n"
               "{\n  ret;\n}\n";
  void *module = mgpuModuleLoadJIT(ptx, 2);
  CUfunction reader = mgpuModuleGetFunction(module, "gs_reader");
  CUdeviceptr buffer = 0;
  ASSERT_EQ(gpu->allocator().allocate(4096, buffer), "");
  void *arguments[] = {&buffer};
  unsigned grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};
  ASSERT_EQ(gpu->beginCapture(), "");
  ASSERT_EQ(gpu->launch(reader, "gs_reader", grid, block, 0, arguments), "");
  CUgraphExec graph = nullptr;
  ASSERT_EQ(gpu->endCapture(graph), "");
  ASSERT_EQ(gpu->launchGraph(graph), "");
  ASSERT_EQ(gpu->allocator().deallocate(buffer), "");
  ASSERT_EQ(gpu->allocator().releaseCached(), "");
  EXPECT_NE(gpu->launchGraph(graph).find("CUDA_ERROR_ILLEGAL_ADDRESS"),
            std::string::npos);
  EXPECT_EQ(gpu->destroyGraph(graph), "");
  ASSERT_EQ(unsetenv("GS_FAKE_CUDA_ANY_KERNEL"), 0);
  mgpuModuleUnload(module);
}

namespace {
/// A GPU model's entry as compiled host code is, on the stand-in driver's
/// one kernel: w += 0.5 * x through a temporary copy of x, then out = w.
/// Arguments: w's descriptor (the parameter), x's, out's.
constexpr int64_t kModelElements = 1000;
CUfunction modelAxpy = nullptr;

void axpyStep(void **arguments) {
  auto pointer = [&](int i) {
    return reinterpret_cast<void *>(static_cast<int64_t *>(arguments[i])[1]);
  };
  void *w = pointer(0), *x = pointer(1), *out = pointer(2);
  CUstream stream = mgpuStreamCreate();
  size_t bytes = kModelElements * sizeof(float);
  void *temporary = mgpuMemAlloc(bytes, stream, false);
  mgpuMemcpy(temporary, x, bytes, stream);
  float a = 0.5f;
  unsigned n = kModelElements;
  void *kernelArguments[] = {&w, &temporary, &a, &n};
  mgpuLaunchKernel(modelAxpy, 8, 1, 1, 128, 1, 1, 0, stream, kernelArguments,
                   nullptr, 4);
  mgpuMemcpy(out, w, bytes, stream);
  mgpuMemFree(temporary, stream);
}
} // namespace

TEST(DeviceModel, RunsAnEntryAsACudaGraphFromItsSecondRun) {
  ASSERT_EQ(setenv("GS_LIBCUDA", GS_FAKE_LIBCUDA, /*overwrite=*/1), 0);
  void *module = nullptr;
  modelAxpy = loadAxpy(module);
  static const int64_t shape[] = {kModelElements};
  std::vector<float> weights(kModelElements, 1.0f);
  gs_tensor_info tensor = {"w", GS_DTYPE_F32, 1, shape};
  gs_param_info param = {
      tensor, GS_PARAM_TRAINABLE, weights.data(), nullptr, "w", 0};
  gs_tensor_info input = {"x", GS_DTYPE_F32, 1, shape};
  gs_tensor_info result = {"out", GS_DTYPE_F32, 1, shape};
  gs_entry_info entry = {
      "step", reinterpret_cast<void *>(&axpyStep), 1, 1, &input, &result, -1};
  gs_model_info model = {GS_MODEL_ABI_VERSION,
                         1,
                         1,
                         "axpy",
                         "none",
                         &param,
                         &entry,
                         nullptr,
                         0,
                         GS_DEVICE_CUDA,
                         nullptr};
  Device *gpu = nullptr;
  ASSERT_EQ(processDevice(gpu), "");

  // Five runs on inputs 1 to 5; the reference in the host's FP32 fma.
  std::vector<float> expected(weights), out(kModelElements);
  auto run = [&](float value) {
    std::vector<float> x(kModelElements);
    for (int64_t i = 0; i < kModelElements; ++i) {
      x[i] = value + 0.001f * i;
      expected[i] = std::fmaf(0.5f, x[i], expected[i]);
    }
    const void *inputs[] = {x.data()};
    void *results[] = {out.data()};
    ASSERT_EQ(mlir::gs::runtime::runOnDevice(model, entry, inputs, results),
              "");
    ASSERT_EQ(out, expected) << "run with x = " << value;
  };
  CallCounts before = gpu->callCounts();
  run(1.0f);
  EXPECT_EQ(gpu->callCounts().launches, before.launches + 1);
  EXPECT_EQ(gpu->callCounts().graphLaunches, before.graphLaunches);
  for (float value : {2.0f, 3.0f, 4.0f, 5.0f})
    run(value);
  CallCounts after = gpu->callCounts();
  EXPECT_EQ(after.launches, before.launches + 1);
  EXPECT_EQ(after.graphLaunches, before.graphLaunches + 4);
  EXPECT_EQ(after.graphKernels, before.graphKernels + 4);
  // Each run: the input and the result, the parameter's first upload,
  // and in the step (each graph launch too) two copies.
  EXPECT_EQ(after.copies, before.copies + 1 + 5 * 4);
  const void *host = mlir::gs::runtime::hostCopy(param);
  EXPECT_EQ(std::memcmp(host, expected.data(), sizeof(float) * kModelElements),
            0);

  // Forgotten, the model's next run is a first run again.
  mlir::gs::runtime::forgetDeviceModel(model);
  run(6.0f);
  EXPECT_EQ(gpu->callCounts().launches, after.launches + 1);
  // Without graphs, the same numbers.
  ASSERT_EQ(setenv("GS_CUDA_GRAPHS", "0", 1), 0);
  run(7.0f);
  run(8.0f);
  EXPECT_EQ(gpu->callCounts().launches, after.launches + 3);
  ASSERT_EQ(unsetenv("GS_CUDA_GRAPHS"), 0);
  mlir::gs::runtime::forgetDeviceModel(model);
  mgpuModuleUnload(module);
}
