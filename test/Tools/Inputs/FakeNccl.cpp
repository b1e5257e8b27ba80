//===- FakeNccl.cpp - A libnccl stand-in for the NCCL transport's tests ---===//
//
// Loaded through GS_LIBNCCL beside the libcuda stand-in (whose "device
// memory" is host memory), it gives the "nccl" transport the NCCL calls it
// makes, reducing over the MPI job the transport bootstraps on. It checks
// what a real NCCL would rely on: every rank joins with the id rank 0 made
// (so the bootstrap broadcast it), with its MPI rank and the job's size,
// and every all-reduce comes on one non-null stream. With
// GS_FAKE_NCCL_LOG=1 each rank prints, at ncclCommDestroy, how many
// all-reduces it made and of how many bytes. Not NCCL: sums and maxima of
// float, double and int64 only.
//
//===----------------------------------------------------------------------===//

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

namespace {
using Result = int;
constexpr Result kSuccess = 0, kSystemError = 2, kInvalidArgument = 4,
                 kInvalidUsage = 5;
constexpr int kIdBytes = 128;
struct UniqueId {
  char internal[kIdBytes];
};

struct Comm {
  int rank = 0;
  int ranks = 0;
  void *stream = nullptr;
  long long allReduces = 0;
  long long bytes = 0;
};

std::string lastError;

Result failWith(Result result, const std::string &message) {
  lastError = message;
  return result;
}
} // namespace

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

FAKE_EXPORT const char *ncclGetErrorString(Result result) {
  switch (result) {
  case kSuccess:
    return "no error";
  case kSystemError:
    return "unhandled system error";
  case kInvalidArgument:
    return "invalid argument";
  case kInvalidUsage:
    return "invalid usage";
  default:
    return "unknown result code";
  }
}

FAKE_EXPORT const char *ncclGetLastError(Comm *) { return lastError.c_str(); }

FAKE_EXPORT Result ncclGetUniqueId(UniqueId *id) {
  std::memset(id, 0, sizeof *id);
  std::snprintf(id->internal, kIdBytes, "fake-nccl-id pid %ld rand %d",
                static_cast<long>(getpid()), std::rand());
  return kSuccess;
}

FAKE_EXPORT Result ncclCommInitRank(Comm **comm, int ranks, UniqueId id,
                                    int rank) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    return failWith(kSystemError, "fake NCCL reduces over MPI, which the "
                                  "process has not initialized");
  int mpiRank = 0, mpiRanks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &mpiRank);
  MPI_Comm_size(MPI_COMM_WORLD, &mpiRanks);
  if (ranks != mpiRanks || rank != mpiRank)
    return failWith(kInvalidArgument, "rank " + std::to_string(rank) + " of " +
                                          std::to_string(ranks) +
                                          " in an MPI job where it is " +
                                          std::to_string(mpiRank) + " of " +
                                          std::to_string(mpiRanks));
  UniqueId first = id;
  MPI_Bcast(&first, kIdBytes, MPI_BYTE, 0, MPI_COMM_WORLD);
  int differs = std::memcmp(&first, &id, kIdBytes) != 0 ||
                std::strncmp(id.internal, "fake-nccl-id", 12) != 0;
  MPI_Allreduce(MPI_IN_PLACE, &differs, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (differs)
    return failWith(kInvalidUsage, "the ranks joined with different ids, or "
                                   "one ncclGetUniqueId did not make");
  *comm = new Comm{rank, ranks};
  return kSuccess;
}

FAKE_EXPORT Result ncclAllReduce(const void *input, void *output, size_t count,
                                 int type, int op, Comm *comm, void *stream) {
  if (!comm)
    return failWith(kInvalidArgument, "no communicator");
  if (!stream || (comm->stream && comm->stream != stream))
    return failWith(kInvalidUsage, "an all-reduce on another stream");
  comm->stream = stream;
  MPI_Datatype element;
  size_t bytes = 0;
  switch (type) {
  case 4: // ncclInt64
    element = MPI_INT64_T;
    bytes = 8;
    break;
  case 7: // ncclFloat32
    element = MPI_FLOAT;
    bytes = 4;
    break;
  case 8: // ncclFloat64
    element = MPI_DOUBLE;
    bytes = 8;
    break;
  default:
    return failWith(kInvalidArgument, "type " + std::to_string(type));
  }
  if (op != 0 && op != 2) // ncclSum, ncclMax
    return failWith(kInvalidArgument, "reduction " + std::to_string(op));
  if (MPI_Allreduce(input == output ? MPI_IN_PLACE : input, output,
                    static_cast<int>(count), element,
                    op == 0 ? MPI_SUM : MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
    return failWith(kSystemError, "MPI_Allreduce failed");
  ++comm->allReduces;
  comm->bytes += static_cast<long long>(count * bytes);
  return kSuccess;
}

FAKE_EXPORT Result ncclCommDestroy(Comm *comm) {
  const char *log = std::getenv("GS_FAKE_NCCL_LOG");
  if (comm && log && std::strcmp(log, "1") == 0)
    std::printf("fake NCCL: rank %d of %d: %lld all-reduces, %lld bytes, "
                "on one stream\n",
                comm->rank, comm->ranks, comm->allReduces, comm->bytes);
  delete comm;
  return kSuccess;
}

FAKE_EXPORT Result ncclCommAbort(Comm *comm) {
  delete comm;
  return kSuccess;
}
