//===- SelfTestKernel.h - The kernel gs-gpu-info runs -----------*- C++ -*-===//
//
// gs_axpy(y, x, a, n): y[i] = fma(a, x[i], y[i]) for i < n, one element per
// thread; PTX for sm_52 (any GPU the driver supports compiles it). It is
// the runtime's own test, not a GradScale kernel: it exercises loading,
// launching, copies, the allocator and timing, and its result is exact.
//
//===----------------------------------------------------------------------===//

#ifndef GS_TOOLS_GS_GPU_INFO_SELFTESTKERNEL_H
#define GS_TOOLS_GS_GPU_INFO_SELFTESTKERNEL_H

extern const char kSelfTestPtx[];
extern const char kSelfTestKernelName[];

#endif // GS_TOOLS_GS_GPU_INFO_SELFTESTKERNEL_H
