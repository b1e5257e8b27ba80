// gs-train: one flag switches the gradient-precision method.
// RUN: gs-opt %s --gs-train=scaling=gs | FileCheck %s --check-prefix=GS
// RUN: gs-opt %s --gs-train="scaling=gs threshold=1e-4 interval=8 cast-model=exponent_histogram" | FileCheck %s --check-prefix=GS-OPTIONS
// RUN: gs-opt %s --gs-train="scaling=gs widen-weight-gradients=false telemetry=false" | FileCheck %s --check-prefix=NARROW
// RUN: gs-opt %s --gs-train=scaling=gs | FileCheck %s --check-prefix=WIDE
// RUN: gs-opt %s --gs-train="scaling=gs fp16-weight-copies=true" | FileCheck %s --check-prefix=COPIES
// RUN: gs-opt %s --gs-train="scaling=fixed loss-scale=1024" | FileCheck %s --check-prefix=FIXED
// RUN: gs-opt %s --gs-train=scaling=dynamic | FileCheck %s --check-prefix=DYNAMIC
// RUN: gs-opt %s --gs-train=scaling=none | FileCheck %s --check-prefix=NONE
// RUN: gs-opt %s --gs-train=scaling=fp32 | FileCheck %s --check-prefix=FP32
// RUN: gs-opt %s --gs-train="scaling=gs lower-to-llvm=true" | FileCheck %s --check-prefix=LLVM
// RUN: not gs-opt %s --gs-train=scaling=bf16 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not gs-opt %s --gs-train="relu-mask=sometimes" 2>&1 | FileCheck %s --check-prefix=BAD-CHOICE

// Every option of the passes gs-train runs reaches them.
// RUN: gs-opt %s --dump-pass-pipeline -o /dev/null --gs-train="scaling=gs fp32-ops=gs.sigmoid widen-weight-gradients=false threshold=1e-4 interval=8 underflow-rounding=down overflow-rounding=none min-scale=0.25 max-scale=1024 max-accum-scale=65536 gemm-model=log_normal cast-model=exponent_histogram relu-mask=never telemetry=false lower-to-llvm=true kernel-schedule=true vector-bits=256" 2>&1 | FileCheck %s --check-prefix=FORWARD-GS
// RUN: gs-opt %s --dump-pass-pipeline -o /dev/null --gs-train="scaling=dynamic init-scale=4096 growth-factor=4 backoff-factor=0.25 growth-interval=10 telemetry=false" 2>&1 | FileCheck %s --check-prefix=FORWARD-DYNAMIC
// RUN: gs-opt %s --dump-pass-pipeline -o /dev/null --gs-train="scaling=fixed loss-scale=1024 skip-non-finite=false lower-to-llvm=true kernel-schedule=false" 2>&1 | FileCheck %s --check-prefix=FORWARD-FIXED

// GS-NOT: gs.param copy
// GS: gs.param state @gs.scaling.cast0
// GS-LABEL: func.func @train_step
// GS: %[[W:.+]] = gs.param.read @w : tensor<3x4xf32>
// GS: gs.cast %[[W]] : tensor<3x4xf32> to tensor<3x4xf16>
// GS: gs.compute_scale %{{.*}} {model = #gs.scale_model<log_normal>}
// GS: gs.unscale
// GS: gs.all_finite

// With fp16-weight-copies (gs-compile's default for GPUs) the step reads
// the weight's FP16 copy, which the update writes.
// COPIES: gs.param copy @w.fp16 of @w
// COPIES-LABEL: func.func @train_step
// COPIES: gs.param.read @w.fp16 : tensor<3x4xf16>
// COPIES: gs.update @w
// COPIES: gs.cast %{{.*}} : tensor<3x4xf32> to tensor<3x4xf16>
// COPIES-NEXT: gs.param.write %{{.*}}, @w.fp16

// Widened (the default), the weight gradient is an FP32 GEMM: no FP16
// rounding to scale. Not widened, it rounds to FP16 and gets the
// half-normal scale of a contraction like a data gradient.
// WIDE-LABEL: func.func @train_step
// WIDE-NOT: half_normal
// NARROW-LABEL: func.func @train_step
// NARROW: gs.compute_scale %{{.*}}, %{{.*}} {accum_length = 2 : i64, model = #gs.scale_model<half_normal>}
// NARROW-NEXT: %[[DW:.+]] = gs.gemm %{{.*}}, %{{.*}} {transA} : tensor<2x3xf16>, tensor<2x4xf16> -> tensor<3x4xf32>
// NARROW-NEXT: %[[SCALED:.+]] = gs.rescale %[[DW]]
// NARROW: gs.cast %[[SCALED]] : tensor<3x4xf32> to tensor<3x4xf16>

// GS-OPTIONS: gs.param state @gs.scaling.recompute
// GS-OPTIONS: arith.constant 8 : i64
// GS-OPTIONS: gs.compute_scale %{{.*}} histogram(%{{.*}}) {model = #gs.scale_model<exponent_histogram>, threshold = 1.000000e-04 : f64}

// FIXED-LABEL: func.func @train_step
// FIXED: gs.cast %{{.*}} : tensor<3x4xf32> to tensor<3x4xf16>
// FIXED: gs.constant dense<1.024000e+03> : tensor<f32>
// FIXED: gs.unscale
// FIXED-NOT: gs.compute_scale

// DYNAMIC: gs.param state @gs.loss_scale = dense<6.553600e+04> : tensor<f32>
// DYNAMIC-LABEL: func.func @train_step
// DYNAMIC: gs.cast %{{.*}} : tensor<3x4xf32> to tensor<3x4xf16>

// NONE: gs.param state @gs.scaling.cast0
// NONE-LABEL: func.func @train_step
// NONE: gs.cast %{{.*}} : tensor<3x4xf32> to tensor<3x4xf16>
// NONE-NOT: gs.unscale
// NONE-NOT: gs.compute_scale

// FP32-NOT: gs.scaling
// FP32-NOT: gs.param copy
// FP32-LABEL: func.func @train_step
// FP32-NOT: f16
// FP32: gs.update

// The state is LLVM globals; no gs op is left.
// LLVM: llvm.mlir.global external @gs.scaling.cast0
// LLVM: llvm.func @train_step
// LLVM-NOT: {{= gs\.|^ *gs\.}}

// BAD: Cannot find option named 'bf16'!
// BAD-CHOICE: for the --relu-mask option: Cannot find option named 'sometimes'!

// The backward region is built once, from the mixed-precision forward ops;
// without widen-weight-gradients no gs-widen-weight-gradients follows.
// FORWARD-GS: gs-train-step{name=train_step}
// FORWARD-GS-NEXT: gs-mixed-precision{fp32-ops={gs.sigmoid}}
// FORWARD-GS-NEXT: gs-autodiff
// FORWARD-GS-NEXT: gs-gradient-scaling{cast-model=exponent_histogram gemm-model=log_normal interval=8 max-accum-scale=6.553600e+04 max-scale=1.024000e+03 min-scale=2.500000e-01 overflow-rounding=none relu-mask=never telemetry=false threshold=1.000000e-04 underflow-rounding=down}
// FORWARD-GS: gs-cpu-kernel-schedule{schedule-file= vector-bits=256}

// FORWARD-DYNAMIC: gs-train-step{name=train_step}
// FORWARD-DYNAMIC-NEXT: gs-mixed-precision{}
// FORWARD-DYNAMIC-NEXT: gs-autodiff
// FORWARD-DYNAMIC-NEXT: gs-widen-weight-gradients
// FORWARD-DYNAMIC-NEXT: gs-loss-scaling{backoff-factor=2.500000e-01 growth-factor=4.000000e+00 growth-interval=10 init-scale=4.096000e+03 mode=dynamic scale=1.280000e+02 skip-non-finite=true telemetry=false}

// FORWARD-FIXED: gs-loss-scaling{{{.*}} mode=fixed scale=1.024000e+03 skip-non-finite=false telemetry=true}
// FORWARD-FIXED-NOT: gs-cpu-kernel-schedule
// FORWARD-FIXED: finalize-memref-to-llvm
gs.param trainable @w = dense<0.5> : tensor<3x4xf32>
gs.param trainable @b = dense<0.0> : tensor<3xf32>
func.func @forward(%x: tensor<2x4xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w = gs.param.read @w : tensor<3x4xf32>
  %b = gs.param.read @b : tensor<3xf32>
  %y = gs.gemm %x, %w, %b {transB} : tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %l, %lp = gs.softmax_cross_entropy %y, %t <{reduction = #gs.reduction<mean>}> : tensor<2x3xf32>, tensor<2xi64>
  return %l : tensor<f32>
}
gs.training @forward {learning_rate = 0.1 : f32, optimizer = #gs.momentum<>}
