//===- NcclAbiCheck.cpp - NcclApi.h against an installed nccl.h -----------===//
//
// Compiled (nothing else) where CMake finds nccl.h: the build fails if the
// declarations the runtime calls NCCL with differ from NCCL's own.
//
//===----------------------------------------------------------------------===//

#include "NcclApi.h"

#include <nccl.h>

#include <type_traits>

namespace api = mlir::gs::runtime::nccl;

static_assert(std::is_same_v<api::Comm, ncclComm_t>);
static_assert(sizeof(api::UniqueId) == sizeof(ncclUniqueId) &&
              api::kUniqueIdBytes == NCCL_UNIQUE_ID_BYTES);
static_assert(sizeof(ncclResult_t) == sizeof(api::Result) &&
              sizeof(ncclDataType_t) == sizeof(api::DataType) &&
              sizeof(ncclRedOp_t) == sizeof(api::RedOp));
static_assert(api::kSuccess == ncclSuccess);
static_assert(api::kInt64 == ncclInt64 && api::kFloat32 == ncclFloat32 &&
              api::kFloat64 == ncclFloat64);
static_assert(api::kSum == ncclSum && api::kMax == ncclMax);
static_assert(NCCL_MAJOR == 2, "NcclApi.h declares NCCL 2's API");

// The signatures, parameter by parameter (enums as their int values).
static_assert(std::is_same_v<decltype(&ncclGetUniqueId),
                             ncclResult_t (*)(ncclUniqueId *)>);
static_assert(
    std::is_same_v<decltype(&ncclCommInitRank),
                   ncclResult_t (*)(ncclComm_t *, int, ncclUniqueId, int)>);
static_assert(std::is_same_v<decltype(&ncclAllReduce),
                             ncclResult_t (*)(const void *, void *, size_t,
                                              ncclDataType_t, ncclRedOp_t,
                                              ncclComm_t, cudaStream_t)>);
static_assert(std::is_same_v<cudaStream_t, CUstream_st *>);
static_assert(
    std::is_same_v<decltype(&ncclCommDestroy), ncclResult_t (*)(ncclComm_t)>);
static_assert(
    std::is_same_v<decltype(&ncclCommAbort), ncclResult_t (*)(ncclComm_t)>);
static_assert(std::is_same_v<decltype(&ncclGetErrorString),
                             const char *(*)(ncclResult_t)>);
static_assert(
    std::is_same_v<decltype(&ncclGetLastError), const char *(*)(ncclComm_t)>);
