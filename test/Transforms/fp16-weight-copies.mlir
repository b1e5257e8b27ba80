// RUN: gs-opt %s --split-input-file --gs-fp16-weight-copies | FileCheck %s

// A trainable FP32 weight cast to FP16 before its update gets an FP16
// copy, rounded from its initial value to nearest even (0.1 is 0x2E66 in
// FP16, 65520 overflows to infinity). The cast reads the copy; the update
// writes the copy with the new weight's rounding.

// CHECK:      gs.param trainable @w = dense<[1.000000e-01, 6.552000e+04]> : tensor<2xf32>
// CHECK-NEXT: gs.param copy @w.fp16 of @w = dense<[9.997550e-02, 0x7C00]> : tensor<2xf16>
// CHECK:      gs.param buffer @mean
// CHECK-NOT:  gs.param copy
gs.param trainable @w = dense<[0.1, 65520.0]> : tensor<2xf32>
gs.param buffer @mean = dense<0.0> : tensor<2xf32>
gs.param state @w.velocity = dense<0.0> : tensor<2xf32>

// CHECK-LABEL: func.func @train_step
// CHECK-NEXT:    %[[M:.+]] = gs.param.read @mean : tensor<2xf32>
// CHECK-NEXT:    gs.cast %[[M]] : tensor<2xf32> to tensor<2xf16>
// CHECK-NEXT:    %[[WH:.+]] = gs.param.read @w.fp16 : tensor<2xf16>
// CHECK-NEXT:    gs.mul %[[WH]], %{{.*}} : tensor<2xf16>
// CHECK:         gs.update @w, %{{.*}} : tensor<2xf32>
// CHECK-NEXT:    %[[NEW:.+]] = gs.param.read @w : tensor<2xf32>
// CHECK-NEXT:    %[[NEWH:.+]] = gs.cast %[[NEW]] : tensor<2xf32> to tensor<2xf16>
// CHECK-NEXT:    gs.param.write %[[NEWH]], @w.fp16 : tensor<2xf16>
// A cast after the update reads the new weight: it stays a cast.
// CHECK-NEXT:    %[[AFTER:.+]] = gs.param.read @w : tensor<2xf32>
// CHECK-NEXT:    gs.cast %[[AFTER]] : tensor<2xf32> to tensor<2xf16>
func.func @train_step(%g: tensor<2xf32>) -> tensor<2xf16> {
  %w = gs.param.read @w : tensor<2xf32>
  %m = gs.param.read @mean : tensor<2xf32>
  %mh = gs.cast %m : tensor<2xf32> to tensor<2xf16>
  %wh = gs.cast %w : tensor<2xf32> to tensor<2xf16>
  %y = gs.mul %wh, %mh : tensor<2xf16>, tensor<2xf16>
  %lr = arith.constant 0.1 : f32
  %step = arith.constant 0 : i64
  gs.update @w, %g, lr %lr, step %step state [@w.velocity] {optimizer = #gs.momentum<>} : tensor<2xf32>
  %after = gs.param.read @w : tensor<2xf32>
  %afterh = gs.cast %after : tensor<2xf32> to tensor<2xf16>
  %z = gs.add %y, %afterh : tensor<2xf16>, tensor<2xf16>
  return %z : tensor<2xf16>
}

// -----

// A weight from an ONNX file (a dense_resource blob: 1.0 and 65520.0) gets
// a blob of its own; a write of the weight writes the copy too; the name
// @w.fp16 taken, the copy gets another.

// CHECK:      gs.param trainable @w = dense_resource<w_data> : tensor<2xf32>
// CHECK-NEXT: gs.param copy @[[COPY:.+]] of @w = dense_resource<w.fp16> : tensor<2xf16>
// CHECK:      gs.param state @w.fp16 = dense<0> : tensor<i64>
gs.param trainable @w = dense_resource<w_data> : tensor<2xf32>
gs.param state @w.fp16 = dense<0> : tensor<i64>

// CHECK-LABEL: func.func @set
// CHECK-SAME:    (%[[V:.+]]: tensor<2xf32>)
// CHECK-NEXT:    %[[WH:.+]] = gs.param.read @[[COPY]] : tensor<2xf16>
// CHECK-NEXT:    gs.param.write %[[V]], @w : tensor<2xf32>
// CHECK-NEXT:    %[[VH:.+]] = gs.cast %[[V]] : tensor<2xf32> to tensor<2xf16>
// CHECK-NEXT:    gs.param.write %[[VH]], @[[COPY]] : tensor<2xf16>
// CHECK-NEXT:    return %[[WH]]
func.func @set(%v: tensor<2xf32>) -> tensor<2xf16> {
  %w = gs.param.read @w : tensor<2xf32>
  %wh = gs.cast %w : tensor<2xf32> to tensor<2xf16>
  gs.param.write %v, @w : tensor<2xf32>
  return %wh : tensor<2xf16>
}

// CHECK:      w_data: "0x040000000000803F00F07F47",
// CHECK-NEXT: w.fp16: "0x02000000003C007C"
{-#
  dialect_resources: {
    builtin: {
      w_data: "0x040000000000803F00F07F47"
    }
  }
#-}
