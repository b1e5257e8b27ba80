// RUN: gs-opt %s --split-input-file --gs-train-step --gs-autodiff --gs-loss-scaling="mode=fixed scale=1024" | FileCheck %s --check-prefix=FIXED
// RUN: gs-opt %s --split-input-file --gs-train-step --gs-mixed-precision --gs-autodiff --gs-widen-weight-gradients --gs-loss-scaling="mode=dynamic init-scale=4096 growth-interval=10" | FileCheck %s --check-prefix=DYNAMIC
// RUN: gs-opt %s --split-input-file --gs-train-step --gs-autodiff --gs-loss-scaling="mode=fixed scale=1024 skip-non-finite=false" | FileCheck %s --check-prefix=UNGUARDED
// RUN: gs-opt %s --split-input-file --gs-train-step --gs-autodiff --gs-loss-scaling="mode=fixed scale=1000" | FileCheck %s --check-prefix=UNEVEN
// RUN: gs-opt %s --split-input-file --gs-train-step --gs-autodiff --gs-loss-scaling="mode=dynamic growth-factor=3" | FileCheck %s --check-prefix=UNEVEN
// RUN: gs-opt %s --split-input-file --gs-train-step --gs-autodiff --gs-loss-scaling="mode=none" | FileCheck %s --check-prefix=NONE
// RUN: gs-opt %s --split-input-file --gs-train-step --gs-autodiff --gs-loss-scaling="mode=none telemetry=false" | FileCheck %s --check-prefix=NONE
// RUN: gs-opt %s --split-input-file --gs-train-step --gs-mixed-precision --gs-autodiff --gs-widen-weight-gradients --gs-loss-scaling="mode=none" | FileCheck %s --check-prefix=TELEMETRY
// RUN: gs-opt %s --split-input-file --gs-train-step --gs-mixed-precision --gs-autodiff --gs-widen-weight-gradients --gs-loss-scaling="mode=fixed telemetry=false" | FileCheck %s --check-prefix=QUIET
// RUN: not gs-opt %s --split-input-file --gs-train-step --gs-autodiff --gs-loss-scaling="mode=bogus" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not gs-opt %s --split-input-file --gs-train-step --gs-autodiff --gs-loss-scaling="mode=fixed scale=0" 2>&1 | FileCheck %s --check-prefix=BAD-SCALE
// RUN: not gs-opt %s --split-input-file --gs-train-step --gs-autodiff --gs-loss-scaling="mode=dynamic init-scale=-2" 2>&1 | FileCheck %s --check-prefix=BAD-INIT
// RUN: not gs-opt %s --split-input-file --gs-train-step --gs-autodiff --gs-loss-scaling="mode=dynamic backoff-factor=0" 2>&1 | FileCheck %s --check-prefix=BAD-BACKOFF
// RUN: not gs-opt %s --split-input-file --gs-train-step --gs-autodiff --gs-loss-scaling="mode=dynamic growth-interval=0" 2>&1 | FileCheck %s --check-prefix=BAD-INTERVAL

// Fixed: the backward pass starts from the seed S = 1024 instead of 1 (the
// region autodiff built is kept); each parameter gradient is divided by S
// before its update; a step whose scaled gradients are not finite skips
// its updates and step count and is counted (skip-non-finite, default).
// FIXED-LABEL: func.func @train_step
// FIXED:   %[[S:.+]] = gs.constant dense<1.024000e+03> : tensor<f32>
// FIXED:   %[[G:.+]]:2 = gs.backward %{{.*}} wrt %{{.*}}, %{{.*}} seed %[[S]] : tensor<f32>, tensor<3x4xf32>, tensor<3xf32> {
// FIXED-NEXT: ^bb0(%[[SEED:.+]]: tensor<f32>):
// FIXED:     gs.mul %{{.*}}, %[[SEED]]
// FIXED:   %[[ALPHA:.+]] = tensor.extract %[[S]][] : tensor<f32>
// FIXED:   %[[U0:.+]] = gs.unscale %[[G]]#0, %[[ALPHA]] power_of_two : tensor<3x4xf32>
// FIXED:   %[[U1:.+]] = gs.unscale %[[G]]#1, %[[ALPHA]] power_of_two : tensor<3xf32>
// FIXED:   %[[OK:.+]] = gs.all_finite %[[G]]#0, %[[G]]#1
// FIXED:   scf.if %[[OK]] {
// FIXED-NEXT: gs.update @w, %[[U0]]
// FIXED-NEXT: gs.update @b, %[[U1]]
// FIXED-NEXT: gs.param.write %{{.*}}, @gs.step
// FIXED-NEXT: }
// FIXED:   gs.param.write %{{.*}}, @gs.skipped_steps

// A scale that is not a power of two (1000), or a dynamic scale growing by
// 3, divides: only a power of two has an exact reciprocal to multiply by.
// UNEVEN-LABEL: func.func @train_step
// UNEVEN: gs.unscale %{{[^ ]*}}, %{{[^ ]*}} : tensor<3x4xf32>
// UNEVEN-NOT: power_of_two
// UNEVEN: gs.update @w

// UNGUARDED-LABEL: func.func @train_step
// UNGUARDED-NOT: gs.all_finite
// UNGUARDED-NOT: scf.if
// UNGUARDED: gs.update @w

// Dynamic: S is the state @gs.loss_scale; the updates and the step count
// run only when the scaled gradients are finite; then S halves (skip) or
// doubles after growth-interval clean steps, and the counters are written.
// DYNAMIC: gs.param state @gs.loss_scale = dense<4.096000e+03> : tensor<f32>
// DYNAMIC: gs.param state @gs.loss_scale.good_steps = dense<0> : tensor<i64>
// DYNAMIC: gs.param state @gs.skipped_steps = dense<0> : tensor<i64>
// DYNAMIC-LABEL: func.func @train_step
// DYNAMIC:   %[[S:.+]] = gs.param.read @gs.loss_scale : tensor<f32>
// DYNAMIC:   %[[G:.+]]:2 = gs.backward %{{.*}} wrt %{{.*}}, %{{.*}} seed %[[S]] :
// DYNAMIC:     gs.param.write %{{.*}}, @gs.scaling.cast0
// DYNAMIC:     gs.yield
// DYNAMIC:   %[[ALPHA:.+]] = tensor.extract %[[S]][] : tensor<f32>
// DYNAMIC:   gs.unscale %[[G]]#0, %[[ALPHA]] power_of_two : tensor<3x4xf32>
// DYNAMIC:   %[[OK:.+]] = gs.all_finite %[[G]]#0, %[[G]]#1
// DYNAMIC:   scf.if %[[OK]] {
// DYNAMIC-NEXT:  gs.update @w
// DYNAMIC-NEXT:  gs.update @b
// DYNAMIC-NEXT:  gs.param.write %{{.*}}, @gs.step
// DYNAMIC-NEXT: }
// DYNAMIC:   %[[GOOD:.+]] = arith.addi
// DYNAMIC:   %[[GROW:.+]] = arith.cmpi sge, %[[GOOD]], %c10_i64
// DYNAMIC:   %[[TWICE:.+]] = arith.mulf %[[ALPHA]], %{{.*}} : f32
// DYNAMIC:   %[[GROWN:.+]] = arith.select %[[GROW]], %[[TWICE]], %[[ALPHA]] : f32
// DYNAMIC:   %[[HALF:.+]] = arith.mulf %[[ALPHA]], %{{.*}} : f32
// DYNAMIC:   %[[NEW:.+]] = arith.select %[[OK]], %[[GROWN]], %[[HALF]] : f32
// DYNAMIC:   %[[T:.+]] = tensor.from_elements %[[NEW]] : tensor<f32>
// DYNAMIC:   gs.param.write %[[T]], @gs.loss_scale
// DYNAMIC:   gs.param.write %{{.*}}, @gs.loss_scale.good_steps
// DYNAMIC:   gs.param.write %{{.*}}, @gs.skipped_steps

// None guards its updates too.
// NONE-LABEL: func.func @train_step
// NONE: %[[G:.+]]:2 = gs.backward %loss wrt %{{[0-9]+}}, %{{[0-9]+}} : tensor<f32>
// NONE-NOT: gs.unscale
// NONE: %[[OK:.+]] = gs.all_finite %[[G]]#0, %[[G]]#1
// NONE: scf.if %[[OK]] {
// NONE-NOT: gs.unscale

// Telemetry, also without scaling: the FP32->FP16 cast of the loss gradient
// (the only rounding of a gradient here) records its scale, no estimate
// (NaN: no model), and gs.cast_stats of the values it casts.
// TELEMETRY: gs.param state @gs.scaling.cast0 = dense<0x7FF8000000000000> : tensor<7xf64> {gs.site = "fT: FP32->FP16 cast of a gradient at {{.*}}loss-scaling.mlir:{{[0-9]+}}"}
// TELEMETRY-LABEL: func.func @train_step
// TELEMETRY:   %[[S:.+]] = gs.constant dense<1.000000e+00> : tensor<f32>
// TELEMETRY:   gs.backward
// TELEMETRY:     %[[ALPHA:.+]] = tensor.extract %[[S]][] : tensor<f32>
// TELEMETRY:     %[[G:.+]] = gs.mul {{.*}} : tensor<2x3xf32>, tensor<2x1xf32>
// TELEMETRY:     %[[NAN:.+]] = arith.constant 0x7FF8000000000000 : f64
// TELEMETRY:     %[[A64:.+]] = arith.extf %[[ALPHA]] : f32 to f64
// TELEMETRY:     %[[B64:.+]] = arith.extf %[[ALPHA]] : f32 to f64
// TELEMETRY:     %[[COUNTS:.+]] = gs.cast_stats %[[G]] : tensor<2x3xf32>
// TELEMETRY:     %[[R:.+]] = tensor.from_elements %[[A64]], %[[B64]], %[[NAN]], {{.*}} : tensor<7xf64>
// TELEMETRY:     gs.param.write %[[R]], @gs.scaling.cast0
// TELEMETRY:     gs.cast %[[G]] : tensor<2x3xf32> to tensor<2x3xf16>
// TELEMETRY-NOT: gs.unscale

// QUIET-NOT: gs.scaling.cast
// QUIET-NOT: gs.cast_stats

// BAD: for the --mode option: Cannot find option named 'bogus'!
// BAD-SCALE: error: gs-loss-scaling: scale must be positive, got 0.000000e+00
// BAD-INIT: error: gs-loss-scaling: init-scale must be positive, got -2.000000e+00
// BAD-BACKOFF: error: gs-loss-scaling: backoff-factor must be positive, got 0.000000e+00
// BAD-INTERVAL: error: gs-loss-scaling: growth-interval must be >= 1, got 0
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
