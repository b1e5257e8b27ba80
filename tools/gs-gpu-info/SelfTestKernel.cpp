//===- SelfTestKernel.cpp - The kernel gs-gpu-info runs -------------------===//

#include "SelfTestKernel.h"

const char kSelfTestKernelName[] = "gs_axpy";

const char kSelfTestPtx[] = R"(.version 7.0
.target sm_52
.address_size 64

.visible .entry gs_axpy(.param .u64 y_param, .param .u64 x_param,
                        .param .f32 a_param, .param .u32 n_param)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .f32 %f<5>;
  .reg .b64 %rd<8>;

  ld.param.u64 %rd1, [y_param];
  ld.param.u64 %rd2, [x_param];
  ld.param.f32 %f1, [a_param];
  ld.param.u32 %r1, [n_param];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mul.wide.u32 %rd5, %r5, 4;
  add.s64 %rd6, %rd3, %rd5;
  add.s64 %rd7, %rd4, %rd5;
  ld.global.f32 %f2, [%rd7];
  ld.global.f32 %f3, [%rd6];
  fma.rn.f32 %f4, %f1, %f2, %f3;
  st.global.f32 [%rd6], %f4;
DONE:
  ret;
}
)";
