//===- MPICommunicator.cpp - Collectives over MPI --------------*- C++ -*-===//
//
// The "mpi" transport: the ranks of MPI_COMM_WORLD (mpirun -np N). Errors
// are fatal (MPI's default on MPI_COMM_WORLD): a collective that fails, or
// a rank that dies, ends the whole job through mpirun rather than leaving
// the other ranks waiting.
//
//===----------------------------------------------------------------------===//

#include "gs/Runtime/Collectives.h"
#include "gs/Support/Telemetry.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

using namespace mlir::gs;
using namespace mlir::gs::runtime;

namespace {
/// The larger, or NaN if either is (as arith.maximumf).
template <typename T> T maxPropagatingNaN(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(a) || std::isnan(b))
      return std::isnan(a) ? a : b;
  return a > b ? a : b;
}

/// MPI_Op of Reduction::Stats on records of NumStatsFields doubles.
void combineStats(void *in, void *inout, int *records, MPI_Datatype *) {
  const double *from = static_cast<const double *>(in);
  double *to = static_cast<double *>(inout);
  for (int r = 0; r < *records; ++r) {
    const double *a = from + r * telemetry::NumStatsFields;
    double *b = to + r * telemetry::NumStatsFields;
    for (int f = 0; f < telemetry::NumStatsFields; ++f)
      b[f] =
          f == telemetry::MaxAbs ? maxPropagatingNaN(a[f], b[f]) : a[f] + b[f];
  }
}

class MPICommunicator final : public Communicator {
public:
  MPICommunicator() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rankIndex);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    MPI_Comm machine;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rankIndex,
                        MPI_INFO_NULL, &machine);
    MPI_Comm_rank(machine, &machineRank);
    MPI_Comm_free(&machine);
    MPI_Type_contiguous(telemetry::NumStatsFields, MPI_DOUBLE, &statsType);
    MPI_Type_commit(&statsType);
    MPI_Op_create(&combineStats, /*commute=*/1, &statsOp);
  }
  ~MPICommunicator() override {
    MPI_Op_free(&statsOp);
    MPI_Type_free(&statsType);
    MPI_Finalize();
  }

  const char *transport() const override { return "mpi"; }
  int rank() const override { return rankIndex; }
  int size() const override { return ranks; }
  int localRank() const override { return machineRank; }

  void allReduce(const void *input, void *output, int64_t count, DType type,
                 Reduction reduction) override {
    finishAllReduce(startAllReduce(input, output, count, type, reduction));
  }

  /// MPI_Iallreduce: the reduction goes on inside the MPI calls this rank
  /// makes until it is finished (other collectives, MPI_Waitall).
  int64_t startAllReduce(const void *input, void *output, int64_t count,
                         DType type, Reduction reduction) override {
    MPI_Datatype element = MPI_DOUBLE;
    MPI_Op op = reduction == Reduction::Max ? MPI_MAX : MPI_SUM;
    if (reduction == Reduction::Stats) {
      if (type != DType::F64 || count % telemetry::NumStatsFields != 0)
        fail("statistics records of " +
             std::to_string(telemetry::NumStatsFields) + " doubles");
      element = statsType;
      op = statsOp;
      count /= telemetry::NumStatsFields;
    } else if (type == DType::F32) {
      element = MPI_FLOAT;
    } else if (type == DType::I64) {
      element = MPI_INT64_T;
    } else if (type != DType::F64) {
      fail(std::string("an all-reduce of ") + nameOf(type));
    }
    int bytes = 0;
    MPI_Type_size(element, &bytes);
    // MPI counts are ints: a larger buffer goes in parts.
    std::vector<MPI_Request> requests;
    const char *from = static_cast<const char *>(input);
    char *to = static_cast<char *>(output);
    for (int64_t done = 0; done < count;) {
      int part = static_cast<int>(std::min<int64_t>(count - done, INT_MAX));
      MPI_Request &request = requests.emplace_back();
      MPI_Iallreduce(from == to ? MPI_IN_PLACE : from + done * bytes,
                     to + done * bytes, part, element, op, MPI_COMM_WORLD,
                     &request);
      done += part;
    }
    return pending.add(std::move(requests));
  }

  void finishAllReduce(int64_t request) override {
    std::optional<std::vector<MPI_Request>> requests = pending.take(request);
    if (!requests)
      fail("finishing an all-reduce not started: request " +
           std::to_string(request));
    MPI_Waitall(static_cast<int>(requests->size()), requests->data(),
                MPI_STATUSES_IGNORE);
  }

  void broadcast(void *data, int64_t bytes, int root) override {
    char *bytePointer = static_cast<char *>(data);
    for (int64_t done = 0; done < bytes;) {
      int part = static_cast<int>(std::min<int64_t>(bytes - done, INT_MAX));
      MPI_Bcast(bytePointer + done, part, MPI_BYTE, root, MPI_COMM_WORLD);
      done += part;
    }
  }

  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }

  [[noreturn]] void abort(int status) override {
    MPI_Abort(MPI_COMM_WORLD, status);
    std::_Exit(status);
  }

private:
  [[noreturn]] void fail(const std::string &what) {
    std::fprintf(stderr, "gs mpi: rank %d: unsupported collective: %s\n",
                 rankIndex, what.c_str());
    abort(1);
  }

  int rankIndex = 0;
  int ranks = 1;
  int machineRank = 0;
  /// The MPI requests of each all-reduce started and not yet finished.
  RequestTable<std::vector<MPI_Request>> pending;
  MPI_Datatype statsType;
  MPI_Op statsOp;
};

std::unique_ptr<Communicator> createMPICommunicator(int &argc, char **&argv,
                                                    std::string &error) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized && MPI_Init(&argc, &argv) != MPI_SUCCESS) {
    error = "MPI_Init failed";
    return nullptr;
  }
  return std::make_unique<MPICommunicator>();
}

const TransportRegistration registration("mpi", &createMPICommunicator);
} // namespace
