//===- NcclApi.h - The part of NCCL's C API the runtime calls ---*- C++ -*-===//
//
// NCCL is opened at run time (NCCLCommunicator.cpp), so nothing of it is
// needed to build GradScale: these are its C declarations the runtime
// uses, as nccl.h (NCCL 2) has them. NcclAbiCheck.cpp compares them with
// nccl.h where one is installed.
//
//===----------------------------------------------------------------------===//

#ifndef GS_LIB_RUNTIME_DISTRIBUTED_NCCLAPI_H
#define GS_LIB_RUNTIME_DISTRIBUTED_NCCLAPI_H

#include <cstddef>

/// NCCL's communicator, opaque (nccl.h's ncclComm_t points to it).
struct ncclComm;

namespace mlir::gs::runtime::nccl {

using Comm = ::ncclComm *;
/// ncclResult_t, ncclDataType_t, ncclRedOp_t: C enums, passed as int.
using Result = int;
using DataType = int;
using RedOp = int;

constexpr int kUniqueIdBytes = 128;
struct UniqueId {
  char internal[kUniqueIdBytes];
};

constexpr Result kSuccess = 0;
constexpr DataType kInt64 = 4;
constexpr DataType kFloat32 = 7;
constexpr DataType kFloat64 = 8;
constexpr RedOp kSum = 0;
constexpr RedOp kMax = 2;

/// The entry points, by their exported names.
struct Api {
  Result (*getUniqueId)(UniqueId *id);
  Result (*commInitRank)(Comm *comm, int ranks, UniqueId id, int rank);
  Result (*allReduce)(const void *input, void *output, size_t count,
                      DataType type, RedOp op, Comm comm, void *stream);
  Result (*commDestroy)(Comm comm);
  Result (*commAbort)(Comm comm);
  const char *(*getErrorString)(Result result);
  /// NCCL 2.13 and later; null before.
  const char *(*getLastError)(Comm comm);
};

} // namespace mlir::gs::runtime::nccl

#endif // GS_LIB_RUNTIME_DISTRIBUTED_NCCLAPI_H
