// RUN: gs-opt %s --split-input-file --gs-device-scalars | FileCheck %s
// RUN: gs-opt %s --split-input-file --gs-device-scalars --gs-linalg-to-gpu --canonicalize \
// RUN:   | FileCheck %s --check-prefix=KERNELS

// The skip guard runs unconditionally: each parameter it writes gets
// select(finite, new, old), old the guard's own read of the parameter
// before it writes it (else a read before the guard's code). The flag,
// computed from two 0-d reductions' results, becomes a 0-d generic whose
// inputs are those tensors; the select reads it back.
// CHECK-LABEL: func.func @guarded_update
// CHECK-SAME: (%[[G:.+]]: tensor<8xf32>, %[[FA:.+]]: tensor<i1>, %[[FB:.+]]: tensor<i1>)
// CHECK: %[[FLAG:.+]] = linalg.generic {{{.*}}iterator_types = []} ins(%[[FA]], %[[FB]] : tensor<i1>, tensor<i1>)
// CHECK: arith.andi
// CHECK: %[[OK:.+]] = tensor.extract %[[FLAG]][] : tensor<i1>
// CHECK-NOT: scf.if
// CHECK: %[[W:.+]] = gs.param.read @w : tensor<8xf32>
// CHECK-NOT: gs.param.read
// CHECK: %[[NEW:.+]] = linalg.generic {{.*}} ins(%[[W]], %[[G]] : tensor<8xf32>, tensor<8xf32>)
// CHECK: %[[KEPT:.+]] = linalg.generic {{.*}} ins(%[[NEW]], %[[W]] : tensor<8xf32>, tensor<8xf32>)
// CHECK: arith.select %[[OK]], %{{.+}}, %{{.+}} : f32
// CHECK: gs.param.write %[[KEPT]], @w : tensor<8xf32>

// With the kernels, the host code left reads nothing from a tensor: the
// flag, the update and the select are all in kernels.
// KERNELS-LABEL: func.func @guarded_update
// KERNELS-NOT: tensor.extract
// KERNELS-NOT: arith.
// KERNELS: gs.param.write
// KERNELS-LABEL: func.func private @gs_map_8_1(
// KERNELS: %[[FLAG:.+]] = memref.load %{{.+}}[] : memref<i1>
// KERNELS: arith.select %[[FLAG]]
gs.param trainable @w = dense<1.0> : tensor<8xf32>

#id = affine_map<(d0) -> (d0)>
func.func @guarded_update(%g: tensor<8xf32>, %fa: tensor<i1>, %fb: tensor<i1>) {
  %a = tensor.extract %fa[] : tensor<i1>
  %b = tensor.extract %fb[] : tensor<i1>
  %ok = arith.andi %a, %b : i1
  %lr = arith.constant 0.5 : f32
  scf.if %ok {
    %w = gs.param.read @w : tensor<8xf32>
    %e = tensor.empty() : tensor<8xf32>
    %new = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%w, %g : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
    ^bb0(%x: f32, %d: f32, %out: f32):
      %s = arith.mulf %d, %lr : f32
      %n = arith.subf %x, %s : f32
      linalg.yield %n : f32
    } -> tensor<8xf32>
    gs.param.write %new, @w : tensor<8xf32>
  }
  return
}

// -----

// A parameter the guard writes before it reads it: old is read before the
// guard's code, not the guard's later read (which sees the first write).
// CHECK-LABEL: func.func @write_then_read
// CHECK-SAME: (%[[G:.+]]: tensor<8xf32>, %[[F:.+]]: tensor<i1>)
// CHECK: %[[OLD:.+]] = gs.param.read @w : tensor<8xf32>
// CHECK: %[[FIRST:.+]] = linalg.generic {{.*}} ins(%[[G]], %[[OLD]] : tensor<8xf32>, tensor<8xf32>)
// CHECK: gs.param.write %[[FIRST]], @w
// CHECK: %[[AGAIN:.+]] = gs.param.read @w : tensor<8xf32>
// CHECK: %[[SECOND:.+]] = linalg.generic {{.*}} ins(%[[AGAIN]], %[[OLD]] : tensor<8xf32>, tensor<8xf32>)
// CHECK: gs.param.write %[[SECOND]], @w
gs.param trainable @w = dense<1.0> : tensor<8xf32>

func.func @write_then_read(%g: tensor<8xf32>, %f: tensor<i1>) {
  %ok = tensor.extract %f[] : tensor<i1>
  scf.if %ok {
    gs.param.write %g, @w : tensor<8xf32>
    %w = gs.param.read @w : tensor<8xf32>
    gs.param.write %w, @w : tensor<8xf32>
  }
  return
}

// -----

// An FP16 weight copy written as the rounding of the weight's new value
// (gs-fp16-weight-copies) is the rounding of the weight's select, from the
// select's own two inputs: the old copy is not read. A copy written with
// anything else gets a select of its own.
// CHECK-LABEL: func.func @guarded_copy
// CHECK-SAME: (%[[G:.+]]: tensor<8xf32>, %[[F:.+]]: tensor<i1>, %[[H:.+]]: tensor<8xf16>)
// CHECK: %[[OLDH2:.+]] = gs.param.read @v.fp16 : tensor<8xf16>
// CHECK-NOT: gs.param.read @w.fp16
// CHECK: %[[W:.+]] = gs.param.read @w : tensor<8xf32>
// CHECK: %[[KEPT:.+]] = linalg.generic {{.*}} ins(%[[G]], %[[W]] : tensor<8xf32>, tensor<8xf32>)
// CHECK: gs.param.write %[[KEPT]], @w : tensor<8xf32>
// CHECK: %[[ROUNDED:.+]] = linalg.generic {{.*}} ins(%[[G]], %[[W]] : tensor<8xf32>, tensor<8xf32>) outs(%{{.+}} : tensor<8xf16>)
// CHECK-NEXT: ^bb0(%[[A:.+]]: f32, %[[B:.+]]: f32, %{{.+}}: f16):
// CHECK-NEXT:   %[[SEL:.+]] = arith.select %{{.+}}, %[[A]], %[[B]] : f32
// CHECK-NEXT:   %[[R:.+]] = arith.truncf %[[SEL]] : f32 to f16
// CHECK-NEXT:   linalg.yield %[[R]] : f16
// CHECK: gs.param.write %[[ROUNDED]], @w.fp16 : tensor<8xf16>
// CHECK: %[[OTHER:.+]] = linalg.generic {{.*}} ins(%[[H]], %[[OLDH2]] : tensor<8xf16>, tensor<8xf16>)
// CHECK: gs.param.write %[[OTHER]], @v.fp16 : tensor<8xf16>
gs.param trainable @w = dense<1.0> : tensor<8xf32>
gs.param copy @w.fp16 of @w = dense<1.0> : tensor<8xf16>
gs.param trainable @v = dense<1.0> : tensor<8xf32>
gs.param copy @v.fp16 of @v = dense<1.0> : tensor<8xf16>

#id = affine_map<(d0) -> (d0)>
func.func @guarded_copy(%g: tensor<8xf32>, %f: tensor<i1>, %h: tensor<8xf16>) {
  %ok = tensor.extract %f[] : tensor<i1>
  scf.if %ok {
    %w = gs.param.read @w : tensor<8xf32>
    gs.param.write %g, @w : tensor<8xf32>
    %e = tensor.empty() : tensor<8xf16>
    %rounded = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%g : tensor<8xf32>) outs(%e : tensor<8xf16>) {
    ^bb0(%x: f32, %out: f16):
      %r = arith.truncf %x : f32 to f16
      linalg.yield %r : f16
    } -> tensor<8xf16>
    gs.param.write %rounded, @w.fp16 : tensor<8xf16>
    gs.param.write %h, @v.fp16 : tensor<8xf16>
  }
  return
}

// -----

// A statistics record: scalars read from a kernel's counts and a scale,
// converted and assembled on the host, become generics; from_elements
// picks each element by index, constants and host scalars used from
// above.
// CHECK-LABEL: func.func @record
// CHECK-SAME: (%[[COUNTS:.+]]: tensor<2xi64>, %[[SCALE:.+]]: tensor<f32>, %[[HOST:.+]]: f64)
// CHECK: %[[N0:.+]] = tensor.extract %[[COUNTS]][%{{.+}}] : tensor<2xi64>
// CHECK: %[[F0:.+]] = linalg.generic {{{.*}}iterator_types = []} outs(
// CHECK: arith.sitofp %[[N0]] : i64 to f64
// CHECK: %[[S:.+]] = linalg.generic {{{.*}}iterator_types = []} ins(%[[SCALE]] : tensor<f32>)
// CHECK: arith.extf
// CHECK: %[[REC:.+]] = linalg.generic {{{.*}}iterator_types = ["parallel"]} ins(%[[F0]], %[[S]] : tensor<f64>, tensor<f64>) outs(%{{.+}} : tensor<3xf64>)
// CHECK: linalg.index 0
// CHECK: arith.select
// CHECK: arith.select
// CHECK: gs.param.write %[[REC]], @stats : tensor<3xf64>
// CHECK-NOT: tensor.from_elements
gs.param state @stats = dense<0.0> : tensor<3xf64>

func.func @record(%counts: tensor<2xi64>, %scale: tensor<f32>, %host: f64) {
  %c0 = arith.constant 0 : index
  %n0 = tensor.extract %counts[%c0] : tensor<2xi64>
  %f0 = arith.sitofp %n0 : i64 to f64
  %s = tensor.extract %scale[] : tensor<f32>
  %sd = arith.extf %s : f32 to f64
  %r = tensor.from_elements %f0, %sd, %host : tensor<3xf64>
  gs.param.write %r, @stats : tensor<3xf64>
  return
}

// -----

// Left alone: host arithmetic on host scalars, and a guard with other
// effects.
// CHECK-LABEL: func.func @host_only
// CHECK: arith.addf %{{.+}}, %{{.+}} : f32
// CHECK: scf.if
// CHECK: func.call @print
func.func private @print(f32)
func.func @host_only(%x: f32, %c: i1) -> f32 {
  %y = arith.addf %x, %x : f32
  scf.if %c {
    func.call @print(%y) : (f32) -> ()
  }
  return %y : f32
}
