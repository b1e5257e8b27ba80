// RUN: gs-opt %s --split-input-file --convert-gs-to-linalg | FileCheck %s

// Reduction.cpp (softmax and losses): softmax is computed in f32 after
// subtracting the maximum along the axis; the classification losses gather
// the target class's log-probability per element, weigh it (0 for
// ignore_index) and reduce as `reduction` says.

// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROWS:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[$KEPT:.+]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @softmax(
// CHECK-SAME:      %[[X:.*]]: tensor<4x10xf32>)
// CHECK:         %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[MINIT:.*]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<4xf32>)
// CHECK:         %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$ROWS]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME:        ins(%[[X]] : tensor<4x10xf32>) outs(%[[MINIT]] : tensor<4xf32>)
// CHECK:           arith.maximumf
// CHECK:         %[[MAXK:.*]] = tensor.expand_shape %[[MAX]] {{\[}}[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
// CHECK:         %[[SHIFTED:.*]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$KEPT]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:        ins(%[[X]], %[[MAXK]] : tensor<4x10xf32>, tensor<4x1xf32>)
// CHECK:           arith.subf
// CHECK:         %[[EXPS:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[SHIFTED]] : tensor<4x10xf32>)
// CHECK:           math.exp
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[SINIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<4xf32>)
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$ROWS]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME:        ins(%[[EXPS]] : tensor<4x10xf32>) outs(%[[SINIT]] : tensor<4xf32>)
// CHECK:           arith.addf
// CHECK:         %[[SUMK:.*]] = tensor.expand_shape %[[SUM]] {{\[}}[0, 1]] output_shape [4, 1]
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$KEPT]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:        ins(%[[EXPS]], %[[SUMK]] : tensor<4x10xf32>, tensor<4x1xf32>)
// CHECK-NEXT:    ^bb0(%[[E:.*]]: f32, %[[S:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[P:.*]] = arith.divf %[[E]], %[[S]] : f32
// CHECK-NEXT:      linalg.yield %[[P]] : f32
// CHECK:         return %[[R]]
func.func @softmax(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %0 = gs.softmax %x {axis = 1 : i64} : tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}

// -----

// f16 log-softmax along axis 0: computed in f32 (the maximum and the
// shifted values read extended inputs), shifted - log(sum), rounded once.
// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$COLS:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$KEPT:.+]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @log_softmax_f16(
// CHECK:         %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$COLS]]], iterator_types = ["reduction", "parallel"]}
// CHECK-SAME:        ins(%{{.*}} : tensor<4x10xf16>) outs(%{{.*}} : tensor<10xf32>)
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f16, %[[A:.*]]: f32):
// CHECK-NEXT:      %[[W:.*]] = arith.extf %[[V]] : f16 to f32
// CHECK-NEXT:      arith.maximumf %[[W]], %[[A]] : f32
// CHECK:         %[[MAXK:.*]] = tensor.expand_shape %[[MAX]] {{\[}}[0, 1]] output_shape [1, 10] : tensor<10xf32> into tensor<1x10xf32>
// CHECK:         %[[SHIFTED:.*]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$KEPT]], #[[$ID2]]]
// CHECK-SAME:        ins(%{{.*}}, %[[MAXK]] : tensor<4x10xf16>, tensor<1x10xf32>) outs(%{{.*}} : tensor<4x10xf32>)
// CHECK:           arith.extf
// CHECK:           arith.subf
// CHECK:         %[[EXPS:.*]] = linalg.generic
// CHECK:           math.exp
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$COLS]]], iterator_types = ["reduction", "parallel"]}
// CHECK-SAME:        ins(%[[EXPS]] : tensor<4x10xf32>)
// CHECK:         %[[SUMK:.*]] = tensor.expand_shape %[[SUM]]
// CHECK:         %[[LOGP:.*]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$KEPT]], #[[$ID2]]]
// CHECK-SAME:        ins(%[[SHIFTED]], %[[SUMK]] : tensor<4x10xf32>, tensor<1x10xf32>)
// CHECK-NEXT:    ^bb0(%[[SH:.*]]: f32, %[[S:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[LOGS:.*]] = math.log %[[S]] : f32
// CHECK-NEXT:      %[[LP:.*]] = arith.subf %[[SH]], %[[LOGS]] : f32
// CHECK-NEXT:      linalg.yield %[[LP]] : f32
// CHECK:         %[[R:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[LOGP]] : tensor<4x10xf32>) outs(%{{.*}} : tensor<4x10xf16>)
// CHECK:           arith.truncf %{{.*}} : f32 to f16
// CHECK:         return %[[R]]
func.func @log_softmax_f16(%x: tensor<4x10xf16>) -> tensor<4x10xf16> {
  %0 = gs.log_softmax %x {axis = 0 : i64} : tensor<4x10xf16>
  return %0 : tensor<4x10xf16>
}

// -----

// Mean softmax cross-entropy with class weights and an ignore_index: per
// target, loss = -(w * logp[n, t]) and the weight itself (both 0 when ignored);
// the result is sum(loss) / sum(weight). Targets outside [0, C) read class
// 0. The log-probabilities are the second result.
// CHECK-DAG: #[[$ID1:.+]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[$ALL:.+]] = affine_map<(d0) -> ()>
// CHECK-DAG: #[[$SCALAR:.+]] = affine_map<() -> ()>
// CHECK-LABEL: func.func @softmax_cross_entropy_mean(
// CHECK-SAME:      %[[S:.*]]: tensor<4x10xf32>, %[[T:.*]]: tensor<4xi64>, %[[W:.*]]: tensor<10xf32>)
// CHECK:           math.exp
// CHECK:           arith.addf
// CHECK:         %[[LOGP:.*]] = linalg.generic
// CHECK-SAME:        outs(%{{.*}} : tensor<4x10xf32>)
// CHECK:           math.log
// CHECK:         %[[PER:.*]]:2 = linalg.generic {indexing_maps = [#[[$ID1]], #[[$ID1]], #[[$ID1]]], iterator_types = ["parallel"]}
// CHECK-SAME:        ins(%[[T]] : tensor<4xi64>) outs(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT:    ^bb0(%[[TV:.*]]: i64, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[TI:.*]] = arith.index_cast %[[TV]] : i64 to index
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:       %[[NCLS:.*]] = arith.constant 10 : index
// CHECK-DAG:       %[[LT:.*]] = arith.cmpi slt, %[[TI]], %[[NCLS]] : index
// CHECK-DAG:       %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:       %[[GE:.*]] = arith.cmpi sge, %[[TI]], %[[C0]] : index
// CHECK:           %[[INR:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK-NEXT:      %[[C0B:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[CLS:.*]] = arith.select %[[INR]], %[[TI]], %[[C0B]] : index
// CHECK-NEXT:      %[[N:.*]] = linalg.index 0 : index
// CHECK-NEXT:      %[[LP:.*]] = tensor.extract %[[LOGP]][%[[N]], %[[CLS]]] : tensor<4x10xf32>
// CHECK-NEXT:      %[[WV:.*]] = tensor.extract %[[W]][%[[CLS]]] : tensor<10xf32>
// CHECK-NEXT:      %[[WLP:.*]] = arith.mulf %[[WV]], %[[LP]] : f32
// CHECK-NEXT:      %[[NLOSS:.*]] = arith.negf %[[WLP]] : f32
// CHECK-NEXT:      %[[IGN:.*]] = arith.constant 3 : i64
// CHECK-NEXT:      %[[ISIGN:.*]] = arith.cmpi eq, %[[TV]], %[[IGN]] : i64
// CHECK-NEXT:      %[[WEFF:.*]] = arith.select %[[ISIGN]], %[[ZERO]], %[[WV]] : f32
// Ignored targets add 0, not 0 * logp (NaN where logp is -inf).
// CHECK-NEXT:      %[[LOSS:.*]] = arith.select %[[ISIGN]], %[[ZERO]], %[[NLOSS]] : f32
// CHECK-NEXT:      linalg.yield %[[LOSS]], %[[WEFF]] : f32, f32
// CHECK:         %[[TOTAL:.*]] = linalg.generic {indexing_maps = [#[[$ID1]], #[[$ALL]]], iterator_types = ["reduction"]}
// CHECK-SAME:        ins(%[[PER]]#0 : tensor<4xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK:         %[[WTOTAL:.*]] = linalg.generic {indexing_maps = [#[[$ID1]], #[[$ALL]]], iterator_types = ["reduction"]}
// CHECK-SAME:        ins(%[[PER]]#1 : tensor<4xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK:         %[[MEAN:.*]] = linalg.generic {indexing_maps = [#[[$SCALAR]], #[[$SCALAR]], #[[$SCALAR]]], iterator_types = []}
// CHECK-SAME:        ins(%[[TOTAL]], %[[WTOTAL]] : tensor<f32>, tensor<f32>)
// CHECK:           arith.divf
// CHECK:         return %[[MEAN]], %[[LOGP]] : tensor<f32>, tensor<4x10xf32>
func.func @softmax_cross_entropy_mean(%s: tensor<4x10xf32>, %t: tensor<4xi64>, %w: tensor<10xf32>)
    -> (tensor<f32>, tensor<4x10xf32>) {
  %0, %1 = gs.softmax_cross_entropy %s, %t, %w <{reduction = #gs.reduction<mean>, ignore_index = 3 : i64}>
      : tensor<4x10xf32>, tensor<4xi64>, tensor<10xf32>
  return %0, %1 : tensor<f32>, tensor<4x10xf32>
}

// -----

// Per-element f16 loss over N x C x d scores with i32 labels: the class
// index is dimension 1 of the gathered position; without weights each
// weighs 1; both results are rounded to f16.
// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @softmax_cross_entropy_none_f16(
// CHECK-SAME:      %[[S:.*]]: tensor<2x5x3xf16>, %[[T:.*]]: tensor<2x3xi32>)
// CHECK:           math.exp
// CHECK:           arith.addf
// CHECK:         %[[LOGP:.*]] = linalg.generic
// CHECK-SAME:        outs(%{{.*}} : tensor<2x5x3xf32>)
// CHECK:           math.log
// CHECK:         %[[PER:.*]]:2 = linalg.generic {indexing_maps = [#[[$ID2]], #[[$ID2]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:        ins(%[[T]] : tensor<2x3xi32>)
// CHECK-NEXT:    ^bb0(%[[TV:.*]]: i32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK:           %[[CLS:.*]] = arith.select
// CHECK-NEXT:      %[[N:.*]] = linalg.index 0 : index
// CHECK-NEXT:      %[[D:.*]] = linalg.index 1 : index
// CHECK-NEXT:      %[[LP:.*]] = tensor.extract %[[LOGP]][%[[N]], %[[CLS]], %[[D]]] : tensor<2x5x3xf32>
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[WLP:.*]] = arith.mulf %[[ONE]], %[[LP]] : f32
// CHECK-NEXT:      %[[LOSS:.*]] = arith.negf %[[WLP]] : f32
// CHECK-NEXT:      linalg.yield %[[LOSS]], %[[ONE]] : f32, f32
// CHECK-NOT:     iterator_types = ["reduction"
// CHECK:         %[[L16:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[PER]]#0 : tensor<2x3xf32>) outs(%{{.*}} : tensor<2x3xf16>)
// CHECK:           arith.truncf
// CHECK:         %[[LP16:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[LOGP]] : tensor<2x5x3xf32>) outs(%{{.*}} : tensor<2x5x3xf16>)
// CHECK:           arith.truncf
// CHECK:         return %[[L16]], %[[LP16]] : tensor<2x3xf16>, tensor<2x5x3xf16>
func.func @softmax_cross_entropy_none_f16(%s: tensor<2x5x3xf16>, %t: tensor<2x3xi32>)
    -> (tensor<2x3xf16>, tensor<2x5x3xf16>) {
  %0, %1 = gs.softmax_cross_entropy %s, %t <{reduction = #gs.reduction<none>}> : tensor<2x5x3xf16>, tensor<2x3xi32>
  return %0, %1 : tensor<2x3xf16>, tensor<2x5x3xf16>
}

// -----

// nll_loss reads the given log-probabilities directly; `sum` reduces the
// per-element losses only.
// CHECK-DAG: #[[$ID1:.+]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[$ALL:.+]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @nll_loss_sum(
// CHECK-SAME:      %[[LOGP:.*]]: tensor<4x10xf32>, %[[T:.*]]: tensor<4xi64>)
// CHECK-NOT:     math.exp
// CHECK:         %[[PER:.*]]:2 = linalg.generic {indexing_maps = [#[[$ID1]], #[[$ID1]], #[[$ID1]]], iterator_types = ["parallel"]}
// CHECK-SAME:        ins(%[[T]] : tensor<4xi64>)
// CHECK:           tensor.extract %[[LOGP]][%{{.*}}, %{{.*}}] : tensor<4x10xf32>
// CHECK:           arith.negf
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<f32>)
// CHECK:         %[[TOTAL:.*]] = linalg.generic {indexing_maps = [#[[$ID1]], #[[$ALL]]], iterator_types = ["reduction"]}
// CHECK-SAME:        ins(%[[PER]]#0 : tensor<4xf32>) outs(%[[INIT]] : tensor<f32>)
// CHECK:           arith.addf
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[TOTAL]] : tensor<f32>
func.func @nll_loss_sum(%lp: tensor<4x10xf32>, %t: tensor<4xi64>) -> tensor<f32> {
  %0 = gs.nll_loss %lp, %t <{reduction = #gs.reduction<sum>}> : tensor<4x10xf32>, tensor<4xi64>
  return %0 : tensor<f32>
}

// -----

// f16 nll_loss: the input is extended to f32 first, f16 weights are
// extended per read, a negative ignore_index compares the raw target, and
// the mean is rounded once.
// CHECK-LABEL: func.func @nll_loss_mean_f16(
// CHECK-SAME:      %[[X:.*]]: tensor<4x10xf16>, %[[T:.*]]: tensor<4xi64>, %[[W:.*]]: tensor<10xf16>)
// CHECK:         %[[LOGP:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[X]] : tensor<4x10xf16>) outs(%{{.*}} : tensor<4x10xf32>)
// CHECK:           arith.extf
// CHECK:         %[[PER:.*]]:2 = linalg.generic
// CHECK-SAME:        ins(%[[T]] : tensor<4xi64>)
// CHECK-NEXT:    ^bb0(%[[TV:.*]]: i64, %{{.*}}: f32, %{{.*}}: f32):
// CHECK:           %[[CLS:.*]] = arith.select
// CHECK:           tensor.extract %[[LOGP]][%{{.*}}, %[[CLS]]] : tensor<4x10xf32>
// CHECK:           %[[WV:.*]] = tensor.extract %[[W]][%[[CLS]]] : tensor<10xf16>
// CHECK-NEXT:      %[[WW:.*]] = arith.extf %[[WV]] : f16 to f32
// CHECK-NEXT:      %[[WLP:.*]] = arith.mulf %[[WW]], %{{.*}} : f32
// CHECK-NEXT:      %[[NLOSS:.*]] = arith.negf %[[WLP]] : f32
// CHECK-NEXT:      %[[IGN:.*]] = arith.constant -100 : i64
// CHECK-NEXT:      %[[ISIGN:.*]] = arith.cmpi eq, %[[TV]], %[[IGN]] : i64
// CHECK-NEXT:      arith.select %[[ISIGN]], %{{.*}}, %[[WW]] : f32
// CHECK-NEXT:      arith.select %[[ISIGN]], %{{.*}}, %[[NLOSS]] : f32
// CHECK:         %[[TOTAL:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[PER]]#0 : tensor<4xf32>)
// CHECK:         %[[WTOTAL:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[PER]]#1 : tensor<4xf32>)
// CHECK:         %[[MEAN:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[TOTAL]], %[[WTOTAL]] : tensor<f32>, tensor<f32>) outs(%{{.*}} : tensor<f16>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f16):
// CHECK-NEXT:      %[[Q:.*]] = arith.divf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[H:.*]] = arith.truncf %[[Q]] : f32 to f16
// CHECK-NEXT:      linalg.yield %[[H]] : f16
// CHECK:         return %[[MEAN]] : tensor<f16>
func.func @nll_loss_mean_f16(%lp: tensor<4x10xf16>, %t: tensor<4xi64>, %w: tensor<10xf16>) -> tensor<f16> {
  %0 = gs.nll_loss %lp, %t, %w <{reduction = #gs.reduction<mean>, ignore_index = -100 : i64}>
      : tensor<4x10xf16>, tensor<4xi64>, tensor<10xf16>
  return %0 : tensor<f16>
}
