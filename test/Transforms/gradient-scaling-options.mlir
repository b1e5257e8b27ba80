// Each option of gs-gradient-scaling changes the output as documented
// (docs/GradientScaling.md); bad values are errors naming the option.
// RUN: gs-opt %s --gs-train-step --gs-mixed-precision --gs-autodiff --gs-widen-weight-gradients --gs-gradient-scaling="threshold=1e-4 underflow-rounding=down overflow-rounding=none min-scale=0.25 max-scale=1024 max-accum-scale=65536" | FileCheck %s --check-prefix=RULES
// RUN: gs-opt %s --gs-train-step --gs-mixed-precision --gs-autodiff --gs-widen-weight-gradients --gs-gradient-scaling="interval=4" | FileCheck %s --check-prefix=INTERVAL
// RUN: gs-opt %s --gs-train-step --gs-mixed-precision --gs-autodiff --gs-widen-weight-gradients --gs-gradient-scaling="gemm-model=log_normal cast-model=exponent_histogram" | FileCheck %s --check-prefix=MODELS
// RUN: gs-opt %s --gs-train-step --gs-mixed-precision --gs-autodiff --gs-widen-weight-gradients --gs-gradient-scaling="relu-mask=always" | FileCheck %s --check-prefix=ALWAYS
// RUN: gs-opt %s --gs-train-step --gs-mixed-precision --gs-autodiff --gs-widen-weight-gradients --gs-gradient-scaling="relu-mask=never" | FileCheck %s --check-prefix=NEVER
// RUN: gs-opt %s --gs-train-step --gs-mixed-precision --gs-autodiff --gs-widen-weight-gradients --gs-gradient-scaling="telemetry=false" | FileCheck %s --check-prefix=QUIET
// RUN: not gs-opt %s --gs-train-step --gs-mixed-precision --gs-autodiff --gs-widen-weight-gradients --gs-gradient-scaling="threshold=1.5" 2>&1 | FileCheck %s --check-prefix=BAD-THRESHOLD
// RUN: not gs-opt %s --gs-train-step --gs-mixed-precision --gs-autodiff --gs-widen-weight-gradients --gs-gradient-scaling="interval=0" 2>&1 | FileCheck %s --check-prefix=BAD-INTERVAL
// RUN: not gs-opt %s --gs-train-step --gs-mixed-precision --gs-autodiff --gs-widen-weight-gradients --gs-gradient-scaling="underflow-rounding=sideways" 2>&1 | FileCheck %s --check-prefix=BAD-ROUNDING
// RUN: not gs-opt %s --gs-train-step --gs-mixed-precision --gs-autodiff --gs-widen-weight-gradients --gs-gradient-scaling="min-scale=0" 2>&1 | FileCheck %s --check-prefix=BAD-MIN
// RUN: not gs-opt %s --gs-train-step --gs-mixed-precision --gs-autodiff --gs-widen-weight-gradients --gs-gradient-scaling="max-scale=0.5" 2>&1 | FileCheck %s --check-prefix=BAD-MAX
// RUN: not gs-opt %s --gs-train-step --gs-mixed-precision --gs-autodiff --gs-widen-weight-gradients --gs-gradient-scaling="max-accum-scale=-1" 2>&1 | FileCheck %s --check-prefix=BAD-ACCUM
// RUN: not gs-opt %s --gs-train-step --gs-mixed-precision --gs-autodiff --gs-widen-weight-gradients --gs-gradient-scaling="gemm-model=gaussian" 2>&1 | FileCheck %s --check-prefix=BAD-GEMM
// RUN: not gs-opt %s --gs-train-step --gs-mixed-precision --gs-autodiff --gs-widen-weight-gradients --gs-gradient-scaling="cast-model=half_normal" 2>&1 | FileCheck %s --check-prefix=BAD-CAST
// RUN: not gs-opt %s --gs-train-step --gs-mixed-precision --gs-autodiff --gs-widen-weight-gradients --gs-gradient-scaling="relu-mask=sometimes" 2>&1 | FileCheck %s --check-prefix=BAD-RELU
// RUN: not gs-opt %s --gs-train-step --gs-mixed-precision --gs-autodiff --gs-widen-weight-gradients --gs-gradient-scaling --gs-gradient-scaling 2>&1 | FileCheck %s --check-prefix=TWICE

// The scale rules go to every gs.compute_scale; max-accum-scale bounds
// alpha * beta, so the incoming alpha becomes an operand.
// RULES-LABEL: func.func @train_step
// RULES: gs.compute_scale %{{.*}} alpha(%{{.*}}) {max_accum_scale = 6.553600e+04 : f64, max_scale = 1.024000e+03 : f64, min_scale = 2.500000e-01 : f64, model = #gs.scale_model<log_normal>, overflow_rounding = #gs.rounding<none>, threshold = 1.000000e-04 : f64, underflow_rounding = #gs.rounding<down>}
// RULES: gs.compute_scale %{{.*}}, %{{.*}} alpha(%{{.*}}) {accum_length = 3 : i64, max_accum_scale = 6.553600e+04 : f64, max_scale = 1.024000e+03 : f64, min_scale = 2.500000e-01 : f64, model = #gs.scale_model<half_normal>, overflow_rounding = #gs.rounding<none>, threshold = 1.000000e-04 : f64, underflow_rounding = #gs.rounding<down>}

// interval=4: the scales are recomputed when the step is a multiple of 4
// or the last step was skipped, else read from each site's record.
// INTERVAL: gs.param state @gs.scaling.recompute = dense<0> : tensor<i64>
// INTERVAL-LABEL: func.func @train_step
// INTERVAL: gs.backward
// INTERVAL:   %[[STEP:.+]] = gs.param.read @gs.step
// INTERVAL:   %[[T:.+]] = tensor.extract %[[STEP]][]
// INTERVAL:   %[[REM:.+]] = arith.remsi %[[T]], %c4_i64
// INTERVAL:   %[[DUE:.+]] = arith.cmpi eq, %[[REM]], %c0_i64
// INTERVAL:   %[[FLAG:.+]] = gs.param.read @gs.scaling.recompute
// INTERVAL:   %[[NOW:.+]] = arith.ori %[[DUE]], %{{.*}} : i1
// INTERVAL:   %[[REC:.+]] = gs.param.read @gs.scaling.cast0 : tensor<7xf64>
// INTERVAL:   %[[CACHED:.+]] = tensor.extract %[[REC]][%c1]
// INTERVAL:   %[[NONE:.+]] = arith.cmpf uge, %{{.*}}, %[[CACHED]] : f64
// INTERVAL:   %[[FRESH:.+]] = arith.ori %[[NOW]], %[[NONE]] : i1
// INTERVAL:   %[[BETA:.+]]:2 = scf.if %[[FRESH]] -> (f32, f64) {
// INTERVAL:     gs.grad_stats
// INTERVAL:     gs.compute_scale
// INTERVAL:   } else {
// INTERVAL:     arith.truncf %[[CACHED]] : f64 to f32
// INTERVAL:   }
// INTERVAL:   gs.rescale %{{.*}}, %[[BETA]]#0
// INTERVAL:   gs.param.write %{{.*}}, @gs.scaling.cast0
// INTERVAL: %[[OK:.+]] = gs.all_finite
// INTERVAL: %[[BAD:.+]] = arith.xori %[[OK]], %true
// INTERVAL: %[[SET:.+]] = arith.extui %[[BAD]] : i1 to i64
// INTERVAL: gs.param.write %{{.*}}, @gs.scaling.recompute

// Other models: the exponent histogram at the cast, the log-normal model
// on the GEMM's FP32 result (statistics after the contraction).
// MODELS-LABEL: func.func @train_step
// MODELS: %[[S:.+]] = gs.grad_stats %[[DL:.+]] : tensor<2x3xf32>
// MODELS: %[[H:.+]] = gs.exponent_histogram %[[DL]] : tensor<2x3xf32>
// MODELS: gs.compute_scale %[[S]] histogram(%[[H]]) {model = #gs.scale_model<exponent_histogram>}
// MODELS: %[[ACC:.+]] = gs.gemm %{{.*}}, %{{.*}} : tensor<2x3xf16>, tensor<3x8xf16> -> tensor<2x8xf32>
// MODELS: %[[SA:.+]] = gs.grad_stats %[[ACC]] : tensor<2x8xf32>
// MODELS: gs.compute_scale %[[SA]] {model = #gs.scale_model<log_normal>}
// MODELS-NOT: half_normal

// relu-mask=always halves the variance at every GEMM (the authors' code);
// never at none, and takes the statistics after the mask.
// ALWAYS: {accum_length = 3 : i64, model = #gs.scale_model<half_normal>, relu_mask}
// ALWAYS: {accum_length = 8 : i64, model = #gs.scale_model<half_normal>, relu_mask}
// NEVER: %[[M:.+]] = gs.where
// NEVER: gs.grad_stats %[[M]] : tensor<2x8xf16>
// NEVER-NOT: relu_mask

// telemetry=false: no records, no counts.
// QUIET-NOT: gs.scaling.cast
// QUIET-NOT: gs.cast_stats
// QUIET: gs.compute_scale

// BAD-THRESHOLD: error: gs-gradient-scaling: threshold must be in (0, 1), got 1.500000e+00
// BAD-INTERVAL: error: gs-gradient-scaling: interval must be >= 1, got 0
// BAD-ROUNDING: for the --underflow-rounding option: Cannot find option named 'sideways'!
// BAD-MIN: error: gs-gradient-scaling: min-scale must be positive, got 0.000000e+00
// BAD-MAX: error: gs-gradient-scaling: max-scale must be >= min-scale (or 0: none), got 5.000000e-01
// BAD-ACCUM: error: gs-gradient-scaling: max-accum-scale must be positive (or 0: none), got -1.000000e+00
// BAD-GEMM: for the --gemm-model option: Cannot find option named 'gaussian'!
// BAD-CAST: for the --cast-model option: Cannot find option named 'half_normal'!
// BAD-RELU: for the --relu-mask option: Cannot find option named 'sometimes'!
// TWICE: error: 'func.func' op needs the symbol @gs.scaling.cast0 for scaling telemetry, but it is taken (was the scaling pass run already?)
gs.param trainable @w1 = dense<0.1> : tensor<8x4xf32>
gs.param trainable @w2 = dense<0.1> : tensor<8x8xf32>
gs.param trainable @w3 = dense<0.1> : tensor<3x8xf32>
func.func @forward(%x: tensor<2x4xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w1 = gs.param.read @w1 : tensor<8x4xf32>
  %w2 = gs.param.read @w2 : tensor<8x8xf32>
  %w3 = gs.param.read @w3 : tensor<3x8xf32>
  %h1 = gs.gemm %x, %w1 {transB} : tensor<2x4xf32>, tensor<8x4xf32> -> tensor<2x8xf32>
  %r1 = gs.relu %h1 : tensor<2x8xf32>
  %h2 = gs.gemm %r1, %w2 {transB} : tensor<2x8xf32>, tensor<8x8xf32> -> tensor<2x8xf32>
  %r2 = gs.relu %h2 : tensor<2x8xf32>
  %y = gs.gemm %r2, %w3 {transB} : tensor<2x8xf32>, tensor<3x8xf32> -> tensor<2x3xf32>
  %l, %lp = gs.softmax_cross_entropy %y, %t <{reduction = #gs.reduction<mean>}> : tensor<2x3xf32>, tensor<2xi64>
  return %l : tensor<f32>
}
gs.training @forward {learning_rate = 0.1 : f32, optimizer = #gs.momentum<>}
