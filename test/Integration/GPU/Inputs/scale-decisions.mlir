// Every kind of scale decision on the statistics of three gradients: a data
// gradient %dy behind a ReLU and its weight %w (half_normal), an FP32
// gradient %g (log_normal, exponent_histogram, with the cumulative-scale
// bound on %alpha), and the branch rule over two of the scales. Returns the
// scales, the underflow estimates, and the statistics and histogram they
// were decided from (the GPU check feeds them to the decision kernels).
func.func @decide(%dy: tensor<64x10xf16>, %w: tensor<10x128xf16>, %g: tensor<64x10xf32>, %alpha: tensor<f32>) -> (tensor<7xf32>, tensor<6xf64>, tensor<7xf64>, tensor<7xf64>, tensor<7xf64>, tensor<256xi64>) {
  %sdy = gs.grad_stats %dy : tensor<64x10xf16>
  %sw = gs.grad_stats %w : tensor<10x128xf16>
  %sg = gs.grad_stats %g : tensor<64x10xf32>
  %hist = gs.exponent_histogram %g : tensor<64x10xf32>
  %a = tensor.extract %alpha[] : tensor<f32>
  %b0, %e0 = gs.compute_scale %sdy, %sw {model = #gs.scale_model<half_normal>, accum_length = 10 : i64, relu_mask}
  %b1, %e1 = gs.compute_scale %sg {model = #gs.scale_model<log_normal>}
  %b2, %e2 = gs.compute_scale %sg {model = #gs.scale_model<log_normal>, threshold = 1.0e-2 : f64, min_scale = 2.5e-01 : f64, max_scale = 6.5536e+04 : f64, underflow_rounding = #gs.rounding<down>}
  %b3, %e3 = gs.compute_scale %sg histogram(%hist) {model = #gs.scale_model<exponent_histogram>}
  %b4, %e4 = gs.compute_scale %sg alpha(%a) {model = #gs.scale_model<log_normal>, max_accum_scale = 1.048576e+06 : f64}
  %b5, %e5 = gs.compute_scale %sg {model = #gs.scale_model<log_normal>, underflow_rounding = #gs.rounding<none>, overflow_rounding = #gs.rounding<none>}
  %u = gs.unify_scales %b0, %b1 stats %sdy, %sg
  %scales = tensor.from_elements %b0, %b1, %b2, %b3, %b4, %b5, %u : tensor<7xf32>
  %estimates = tensor.from_elements %e0, %e1, %e2, %e3, %e4, %e5 : tensor<6xf64>
  %ldy = builtin.unrealized_conversion_cast %sdy : !gs.stats to tensor<7xf64>
  %lw = builtin.unrealized_conversion_cast %sw : !gs.stats to tensor<7xf64>
  %lg = builtin.unrealized_conversion_cast %sg : !gs.stats to tensor<7xf64>
  return %scales, %estimates, %ldy, %lw, %lg, %hist : tensor<7xf32>, tensor<6xf64>, tensor<7xf64>, tensor<7xf64>, tensor<7xf64>, tensor<256xi64>
}
