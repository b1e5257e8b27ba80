//===- NCCLCommunicator.cpp - Collectives on GPUs over NCCL ----*- C++ -*-===//
//
// The "nccl" transport: the ranks of an MPI job (mpirun -np N), a GPU each
// (the rank's index among its machine's ranks, modulo their GPUs), whose
// steps' device buffers NCCL reduces on a side stream of the GPU: each
// after the kernels queued before it on the step's stream, beside those
// queued after, until the step's stream waits for it (an event; the host
// never waits). MPI bootstraps it
// (rank 0's NCCL id broadcast to every rank) and carries the host-memory
// collectives of the trainer: the "mpi" transport must be linked in too
// (gs-compile --distributed=nccl links both). NCCL itself, libnccl.so.2
// (or $GS_LIBNCCL), is opened at run time like the CUDA driver, so that an
// executable starts and says what is missing where it is not installed.
//
//===----------------------------------------------------------------------===//

#include "NcclApi.h"

#include "gs/Runtime/Collectives.h"
#include "gs/Runtime/Cuda/Device.h"
#include "gs/Runtime/Cuda/Driver.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace mlir::gs::runtime;
namespace api = mlir::gs::runtime::nccl;

namespace {
/// NCCL's entry points, from the library opened once per process; empty
/// with the reason in `error`.
struct OpenedNccl {
  api::Api entries{};
  std::string library;
  std::string error;
};

const OpenedNccl &openNccl() {
  static const OpenedNccl opened = [] {
    OpenedNccl nccl;
    const char *override = std::getenv("GS_LIBNCCL");
    nccl.library = override && *override ? override : "libnccl.so.2";
    void *handle = dlopen(nccl.library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *reason = dlerror();
      nccl.error = "cannot load NCCL, " + nccl.library +
                   (reason ? std::string(" (") + reason + ")" : "") +
                   ": install NCCL 2 where the loader finds it, or name the "
                   "library in GS_LIBNCCL";
      return nccl;
    }
    struct Entry {
      void **slot;
      const char *name;
    };
    api::Api &e = nccl.entries;
    const Entry required[] = {
        {reinterpret_cast<void **>(&e.getUniqueId), "ncclGetUniqueId"},
        {reinterpret_cast<void **>(&e.commInitRank), "ncclCommInitRank"},
        {reinterpret_cast<void **>(&e.allReduce), "ncclAllReduce"},
        {reinterpret_cast<void **>(&e.commDestroy), "ncclCommDestroy"},
        {reinterpret_cast<void **>(&e.commAbort), "ncclCommAbort"},
        {reinterpret_cast<void **>(&e.getErrorString), "ncclGetErrorString"},
    };
    for (const Entry &entry : required)
      if (!(*entry.slot = dlsym(handle, entry.name))) {
        nccl.error =
            nccl.library + " has no " + entry.name + ": it is not NCCL 2";
        return nccl;
      }
    e.getLastError = reinterpret_cast<decltype(e.getLastError)>(
        dlsym(handle, "ncclGetLastError"));
    return nccl;
  }();
  return opened;
}

class NCCLCommunicator final : public Communicator {
public:
  NCCLCommunicator(std::unique_ptr<Communicator> bootstrap,
                   const api::Api &nccl)
      : bootstrap(std::move(bootstrap)), nccl(nccl) {}
  ~NCCLCommunicator() override {
    if (comm)
      nccl.commDestroy(comm);
  }

  /// Opens this rank's GPU and its side stream, and joins the ranks' NCCL
  /// communicator.
  std::string start() {
    if (std::string error = openRankDevice(device); !error.empty())
      return error;
    if (std::string error = device->createSideStream(side); !error.empty())
      return error;
    if (std::string error = device->createOrderingEvent(inputsReady);
        !error.empty())
      return error;
    api::UniqueId id{};
    if (rank() == 0)
      if (std::string error =
              describe(nccl.getUniqueId(&id), "ncclGetUniqueId");
          !error.empty())
        return error;
    bootstrap->broadcast(&id, sizeof id, 0);
    return describe(nccl.commInitRank(&comm, size(), id, rank()),
                    "ncclCommInitRank");
  }

  const char *transport() const override { return "nccl"; }
  int rank() const override { return bootstrap->rank(); }
  int size() const override { return bootstrap->size(); }
  int localRank() const override { return bootstrap->localRank(); }

  void allReduce(const void *input, void *output, int64_t count, DType type,
                 Reduction reduction) override {
    bootstrap->allReduce(input, output, count, type, reduction);
  }

  /// On the side stream, after the work queued on `stream` so far; the
  /// request is the event recorded after it there.
  bool startAllReduceOnDevice(const void *input, void *output, int64_t count,
                              DType type, Reduction reduction, void *stream,
                              int64_t &request) override {
    api::DataType element = type == DType::F32   ? api::kFloat32
                            : type == DType::F64 ? api::kFloat64
                            : type == DType::I64 ? api::kInt64
                                                 : -1;
    if (element < 0 || reduction == Reduction::Stats)
      fail(std::string("an all-reduce of ") + nameOf(type) +
           (reduction == Reduction::Stats ? " statistics records" : ""));
    api::RedOp op = reduction == Reduction::Max ? api::kMax : api::kSum;
    if (spareEvents.empty()) {
      cuda::CUevent event = nullptr;
      check(device->createOrderingEvent(event));
      spareEvents.push_back(event);
    }
    cuda::CUevent finished = spareEvents.back();
    spareEvents.pop_back();
    check(
        device->recordEvent(inputsReady, static_cast<cuda::CUstream>(stream)));
    check(device->streamWaitEvent(side, inputsReady));
    if (std::string error =
            describe(nccl.allReduce(input, output, static_cast<size_t>(count),
                                    element, op, comm, side),
                     "ncclAllReduce");
        !error.empty())
      fail(error);
    check(device->recordEvent(finished, side));
    request = done.add(finished);
    return true;
  }

  void finishAllReduceOnDevice(int64_t request, void *stream) override {
    std::optional<cuda::CUevent> finished = done.take(request);
    if (!finished)
      fail("finishing an all-reduce not started: request " +
           std::to_string(request));
    check(device->streamWaitEvent(static_cast<cuda::CUstream>(stream),
                                  *finished));
    // Recorded again by a later start, the event leaves this wait as it is.
    spareEvents.push_back(*finished);
  }

  void broadcast(void *data, int64_t bytes, int root) override {
    bootstrap->broadcast(data, bytes, root);
  }

  void barrier() override { bootstrap->barrier(); }

  [[noreturn]] void abort(int status) override {
    if (comm)
      nccl.commAbort(comm);
    comm = nullptr;
    bootstrap->abort(status);
    // Not reached: GCC does not see that the virtual call does not return.
    std::abort();
  }

private:
  /// The GPU of this rank, opened as the process's: GS_CUDA_DEVICE where
  /// set, else the rank's index on its machine modulo the machine's GPUs.
  std::string openRankDevice(cuda::Device *&device) {
    const char *chosen = std::getenv("GS_CUDA_DEVICE");
    if (!chosen || !*chosen) {
      const cuda::DriverApi *driver = nullptr;
      if (std::string error = cuda::openDriver(driver); !error.empty())
        return error;
      int gpus = 0;
      if (cuda::CUresult result = driver->deviceGetCount(&gpus);
          result != cuda::kSuccess)
        return cuda::describeResult(*driver, result, "cuDeviceGetCount");
      if (gpus < 1)
        return "the NVIDIA driver sees no GPU";
      cuda::setProcessDeviceOrdinal(localRank() % gpus);
    }
    return cuda::processDevice(device);
  }

  std::string describe(api::Result result, const char *call) const {
    if (result == api::kSuccess)
      return {};
    std::string message = std::string(call) +
                          " failed: " + nccl.getErrorString(result) + " [" +
                          std::to_string(result) + "]";
    if (comm && nccl.getLastError)
      if (const char *last = nccl.getLastError(comm); last && *last)
        message += std::string(" (") + last + ")";
    return message;
  }

  [[noreturn]] void fail(const std::string &what) {
    std::fprintf(stderr, "gs nccl: rank %d: %s\n", rank(), what.c_str());
    abort(1);
  }

  /// Fails on a driver call's error.
  void check(const std::string &error) {
    if (!error.empty())
      fail(error);
  }

  std::unique_ptr<Communicator> bootstrap;
  const api::Api &nccl;
  api::Comm comm = nullptr;
  cuda::Device *device = nullptr;
  /// The stream NCCL's reductions run on, beside the step's kernels.
  cuda::CUstream side = nullptr;
  /// Recorded on the step's stream before each reduction, which the side
  /// stream waits for.
  cuda::CUevent inputsReady = nullptr;
  /// The event recorded after each reduction started and not finished;
  /// events free for the next.
  RequestTable<cuda::CUevent> done;
  std::vector<cuda::CUevent> spareEvents;
};

std::unique_ptr<Communicator> createNCCLCommunicator(int &argc, char **&argv,
                                                     std::string &error) {
  const OpenedNccl &nccl = openNccl();
  if (!nccl.error.empty()) {
    error = nccl.error;
    return nullptr;
  }
  TransportFactory startMPI = findTransport("mpi");
  if (!startMPI) {
    error = "NCCL is bootstrapped over MPI, and this program has no MPI "
            "transport (link libGSRuntimeMPI.a whole)";
    return nullptr;
  }
  std::unique_ptr<Communicator> bootstrap = startMPI(argc, argv, error);
  if (!bootstrap)
    return nullptr;
  auto communicator =
      std::make_unique<NCCLCommunicator>(std::move(bootstrap), nccl.entries);
  if (std::string failure = communicator->start(); !failure.empty()) {
    // The other ranks may be waiting for this one in the bootstrap: the
    // error ends them too.
    std::fprintf(stderr, "%s: error: nccl: rank %d: %s\n",
                 argc > 0 ? argv[0] : "gs", communicator->rank(),
                 failure.c_str());
    communicator->abort(1);
  }
  return communicator;
}

const TransportRegistration registration("nccl", &createNCCLCommunicator);
} // namespace
