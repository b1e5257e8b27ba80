//===- gs-gpu-info.cpp - The GPUs GradScale sees, and a self-test ---------===//
//
// Lists the GPUs the NVIDIA driver shows GradScale's runtime (name,
// architecture, memory) and, with --self-test, runs the runtime end to
// end on one: load a module from PTX, allocate through the caching
// allocator, copy, launch, time with events, and check the result exactly.
// Where there is no GPU it says why and exits 1.
//
//===----------------------------------------------------------------------===//

#include "SelfTestKernel.h"

#include "gs/Runtime/Cuda/Device.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace mlir::gs::runtime::cuda;

static const char kUsage[] =
    "usage: gs-gpu-info [--self-test] [--device=N] [--print-self-test-ptx]\n"
    "\n"
    "Lists the GPUs the NVIDIA driver shows (name, architecture, memory).\n"
    "  --self-test            run the GPU runtime end to end on one GPU:\n"
    "                         module loading, the caching allocator, copies,\n"
    "                         a kernel launch checked exactly, event timing\n"
    "  --device=N             the GPU of --self-test (default 0)\n"
    "  --print-self-test-ptx  print the self-test's kernel (PTX) and exit\n"
    "GS_LIBCUDA names the driver library to open (default libcuda.so.1).\n";

static int fail(const std::string &message) {
  std::fprintf(stderr, "gs-gpu-info: error: %s\n", message.c_str());
  return 1;
}

static std::string gib(size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f GiB",
                static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
  return text;
}

static int listDevices() {
  const DriverApi *api = nullptr;
  if (std::string error = openDriver(api); !error.empty())
    return fail(error);
  int version = 0, count = 0;
  if (CUresult result = api->driverGetVersion(&version); result != kSuccess)
    return fail(describeResult(*api, result, "cuDriverGetVersion"));
  if (CUresult result = api->deviceGetCount(&count); result != kSuccess)
    return fail(describeResult(*api, result, "cuDeviceGetCount"));
  std::printf("NVIDIA driver for CUDA %d.%d, %d GPU%s\n", version / 1000,
              version % 1000 / 10, count, count == 1 ? "" : "s");
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    std::unique_ptr<Device> device;
    if (std::string error = Device::open(ordinal, device); !error.empty())
      return fail(error);
    std::printf("GPU %d: %s, sm_%d, %s\n", ordinal, device->name().c_str(),
                device->capability(), gib(device->totalMemory()).c_str());
  }
  return 0;
}

/// The elements of the self-test: not a multiple of the block size.
static constexpr unsigned kElements = (1u << 22) + 3;
static constexpr unsigned kBlock = 256;
static constexpr int kTimedLaunches = 20;

/// CUDA graphs, as the runtime runs a step from its second run on: two
/// launches captured (not run), the graph replayed three times, y checked
/// bit for bit against six fmas from its value before.
static int graphSelfTest(Device &device, Module &module, void **arguments,
                         const unsigned grid[3], const unsigned block[3],
                         float a, const std::vector<float> &hostX,
                         CUdeviceptr y) {
  if (!device.hasGraphs()) {
    std::printf("SKIP runtime self-test: this driver has no CUDA graphs\n");
    return 0;
  }
  std::vector<float> before(hostX.size());
  size_t bytes = before.size() * sizeof(float);
  if (std::string error = device.copyToHost(before.data(), y, bytes);
      !error.empty())
    return fail(error);
  if (std::string error = device.beginCapture(); !error.empty())
    return fail(error);
  for (int i = 0; i < 2; ++i)
    if (std::string error =
            module.launch(kSelfTestKernelName, grid, block, 0, arguments);
        !error.empty())
      return fail(error);
  CUgraphExec graph = nullptr;
  if (std::string error = device.endCapture(graph); !error.empty())
    return fail(error);
  for (int i = 0; i < 3; ++i)
    if (std::string error = device.launchGraph(graph); !error.empty())
      return fail(error);
  std::vector<float> result(before.size());
  if (std::string error = device.copyToHost(result.data(), y, bytes);
      !error.empty())
    return fail(error);
  if (std::string error = device.synchronize(); !error.empty())
    return fail(error);
  for (size_t i = 0; i < before.size(); ++i) {
    float expected = before[i];
    for (int step = 0; step < 6; ++step)
      expected = std::fmaf(a, hostX[i], expected);
    if (std::memcmp(&expected, &result[i], sizeof(float)) != 0) {
      std::printf("FAIL runtime self-test: CUDA graph: element %zu is %.9g, "
                  "six fma(a, x, y) give %.9g\n",
                  i, result[i], expected);
      return 1;
    }
  }
  if (std::string error = device.destroyGraph(graph); !error.empty())
    return fail(error);
  std::printf("PASS runtime self-test: a CUDA graph of 2 launches replayed "
              "3 times, %zu elements bit-exact\n",
              before.size());
  return 0;
}

static int selfTest(int ordinal) {
  std::unique_ptr<Device> device;
  if (std::string error = Device::open(ordinal, device); !error.empty())
    return fail(error);
  std::vector<KernelImage> images = {
      {KernelImage::Kind::Ptx, "sm_52", kSelfTestPtx}};
  std::unique_ptr<Module> module;
  if (std::string error = device->loadModule(images, module); !error.empty())
    return fail(error);

  // Allocate, give back and allocate again: the second round is served
  // from the cache.
  DeviceAllocator &memory = device->allocator();
  size_t bytes = size_t(kElements) * sizeof(float);
  CUdeviceptr x = 0, y = 0;
  for (int round = 0; round < 2; ++round) {
    if (round == 1)
      for (CUdeviceptr block : {x, y})
        if (std::string error = memory.deallocate(block); !error.empty())
          return fail(error);
    if (std::string error = memory.allocate(bytes, x); !error.empty())
      return fail(error);
    if (std::string error = memory.allocate(bytes, y); !error.empty())
      return fail(error);
  }
  const DeviceAllocator::Stats &stats = memory.stats();
  if (stats.backendAllocations != 2 || stats.cacheHits != 2)
    return fail("the allocator reached the driver " +
                std::to_string(stats.backendAllocations) +
                " times and its cache " + std::to_string(stats.cacheHits) +
                " times for 2 blocks allocated twice");

  std::vector<float> hostX(kElements), hostY(kElements), result(kElements);
  for (unsigned i = 0; i < kElements; ++i) {
    hostX[i] = std::ldexp(static_cast<float>(i % 4093) - 2046.5f,
                          static_cast<int>(i % 37) - 18);
    hostY[i] = std::ldexp(static_cast<float>(i % 1021) + 0.25f,
                          static_cast<int>(i % 23) - 11);
  }
  float a = 1.0f / 3.0f;
  unsigned n = kElements;
  void *arguments[] = {&y, &x, &a, &n};
  unsigned grid[3] = {(kElements + kBlock - 1) / kBlock, 1, 1};
  unsigned block[3] = {kBlock, 1, 1};
  std::string kernel = kSelfTestKernelName;
  if (std::string error = device->copyToDevice(x, hostX.data(), bytes);
      !error.empty())
    return fail(error);
  if (std::string error = device->copyToDevice(y, hostY.data(), bytes);
      !error.empty())
    return fail(error);
  if (std::string error = module->launch(kernel, grid, block, 0, arguments);
      !error.empty())
    return fail(error);
  if (std::string error = device->copyToHost(result.data(), y, bytes);
      !error.empty())
    return fail(error);
  if (std::string error = device->synchronize(); !error.empty())
    return fail(error);
  for (unsigned i = 0; i < kElements; ++i) {
    float expected = std::fmaf(a, hostX[i], hostY[i]);
    if (std::memcmp(&expected, &result[i], sizeof(float)) != 0) {
      std::printf("FAIL runtime self-test on GPU %d: element %u is %.9g, "
                  "fma(a, x, y) is %.9g\n",
                  ordinal, i, result[i], expected);
      return 1;
    }
  }
  std::printf("PASS runtime self-test on GPU %d (%s, sm_%d): PTX %s loaded, "
              "%u elements of fma(a, x, y) bit-exact, the second round of "
              "allocations served from the cache\n",
              ordinal, device->name().c_str(), device->capability(),
              module->image().arch.c_str(), kElements);

  CUevent start = nullptr, end = nullptr;
  for (CUevent *event : {&start, &end})
    if (std::string error = device->createEvent(*event); !error.empty())
      return fail(error);
  CallCounts before = device->callCounts();
  if (std::string error = device->recordEvent(start); !error.empty())
    return fail(error);
  for (int i = 0; i < kTimedLaunches; ++i)
    if (std::string error = module->launch(kernel, grid, block, 0, arguments);
        !error.empty())
      return fail(error);
  if (std::string error = device->recordEvent(end); !error.empty())
    return fail(error);
  CallCounts after = device->callCounts();
  int64_t launches = after.launches - before.launches;
  int64_t waits = after.hostSynchronizations - before.hostSynchronizations;
  if (launches != kTimedLaunches || waits != 0) {
    std::printf("FAIL runtime self-test: %lld launches queued with %lld host "
                "synchronizations, expected %d with none\n",
                static_cast<long long>(launches), static_cast<long long>(waits),
                kTimedLaunches);
    return 1;
  }
  std::printf("PASS runtime self-test: %d launches queued with no host "
              "synchronization\n",
              kTimedLaunches);
  float milliseconds = 0;
  if (std::string error = device->elapsedMs(start, end, milliseconds);
      !error.empty())
    return fail(error);
  double moved = 3.0 * bytes * kTimedLaunches;
  std::printf("PERF gs_axpy: %.0f GB/s over %d launches of %u elements "
              "(CUDA events, %.3f ms)\n",
              moved / (milliseconds * 1e-3) / 1e9, kTimedLaunches, kElements,
              milliseconds);
  return graphSelfTest(*device, *module, arguments, grid, block, a, hostX, y);
}

int main(int argc, char **argv) {
  bool runSelfTest = false;
  int ordinal = 0;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (flag == "--self-test") {
      runSelfTest = true;
    } else if (flag == "--print-self-test-ptx") {
      std::fputs(kSelfTestPtx, stdout);
      return 0;
    } else if (flag.rfind("--device=", 0) == 0) {
      std::string value = flag.substr(9);
      char *end = nullptr;
      long parsed = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end || parsed < 0 || parsed > 1023)
        return fail("--device: '" + value + "' is not a GPU number (0-1023)");
      ordinal = static_cast<int>(parsed);
    } else {
      return fail("unknown flag '" + flag + "' (see --help)");
    }
  }
  return runSelfTest ? selfTest(ordinal) : listDevices();
}
