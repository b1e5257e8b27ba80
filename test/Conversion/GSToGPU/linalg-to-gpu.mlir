// RUN: gs-opt %s --split-input-file --gs-linalg-to-gpu | FileCheck %s
// RUN: gs-opt %s --split-input-file --gs-linalg-to-gpu --gs-emulate-gpu --gs-lower-to-llvm-cpu -o /dev/null

// An elementwise op with a broadcast operand and a constant from above: one
// thread per element (256 per block, the last block guarded), the
// broadcast read through its indexing map, the constant rebuilt on the
// device. The call stays on tensors, through the kernel's entry.
// CHECK-LABEL: func.func @broadcast_add
// CHECK-SAME: (%[[X:.+]]: tensor<30x10xf32>, %[[B:.+]]: tensor<10xf32>)
// CHECK: %[[R:.+]] = call @gs_map_30x10_entry(%[[X]], %[[B]]) : (tensor<30x10xf32>, tensor<10xf32>) -> tensor<30x10xf32>
// CHECK: return %[[R]]
// CHECK: func.func private @gs_map_30x10(%[[KX:.+]]: memref<30x10xf32>, %[[KB:.+]]: memref<10xf32>, %[[KOUT:.+]]: memref<30x10xf32>)
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG: %[[C256:.+]] = arith.constant 256 : index
// CHECK: gpu.launch blocks(%[[BX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[C2]], %{{.+}}, %{{.+}}) threads(%[[TX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[C256]],
// CHECK: %[[BASE:.+]] = arith.muli %[[BX]], %{{.+}} : index
// CHECK: %[[P:.+]] = arith.addi %[[BASE]], %[[TX]] : index
// CHECK: %[[IN:.+]] = arith.cmpi ult, %[[P]], %{{.+}} : index
// CHECK: scf.if %[[IN]] {
// CHECK: %[[J:.+]] = arith.remui %[[P]], %{{.+}} : index
// CHECK: %[[I:.+]] = arith.divui %[[P]], %{{.+}} : index
// CHECK: %[[TWO:.+]] = arith.constant 2.000000e+00 : f32
// CHECK: %[[XV:.+]] = memref.load %[[KX]][%[[I]], %[[J]]]
// CHECK: %[[BV:.+]] = memref.load %[[KB]][%[[J]]]
// CHECK: %[[S:.+]] = arith.addf %[[XV]], %[[BV]] : f32
// CHECK: %[[M:.+]] = arith.mulf %[[S]], %[[TWO]] : f32
// CHECK: memref.store %[[M]], %[[KOUT]][%[[I]], %[[J]]]
// Each thread stores only its own point's element (gs.per_thread_outputs,
// for gs-device-params-in-place).
// CHECK: gpu.terminator
// CHECK-NEXT: } {gs.per_thread_outputs}
// CHECK: func.func private @gs_map_30x10_entry(
// CHECK: memref.alloc() : memref<30x10xf32>
// CHECK: call @gs_map_30x10(
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @broadcast_add(%x: tensor<30x10xf32>, %b: tensor<10xf32>) -> tensor<30x10xf32> {
  %two = arith.constant 2.0 : f32
  %init = tensor.empty() : tensor<30x10xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<30x10xf32>, tensor<10xf32>) outs(%init : tensor<30x10xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %s = arith.addf %a, %c : f32
    %m = arith.mulf %s, %two : f32
    linalg.yield %m : f32
  } -> tensor<30x10xf32>
  return %r : tensor<30x10xf32>
}

// -----

// A reduction over rows into an initialized output: the reduction loop runs
// in order with the sum carried, from the initial value. A constant fill's
// value is a constant in the kernel (two equal ops share one kernel, a
// fill of ones makes another); any other initial value is an input. The
// fill of ones, returned too, stays: a named op, generalized into a
// kernel. Exactly 256 points: no guard.
// CHECK-LABEL: func.func @column_sums
// CHECK: %[[ONES:.+]] = call @gs_map_256_entry() : () -> tensor<256xf64>
// CHECK: %[[S1:.+]] = call @gs_reduce_8x256_entry(%{{.+}}) :
// CHECK: %[[S2:.+]] = call @gs_reduce_8x256_entry(%{{.+}}) :
// CHECK: %[[S3:.+]] = call @gs_reduce_8x256_1_entry(%{{.+}}) :
// CHECK: %[[S4:.+]] = call @gs_reduce_8x256_2_entry(%{{.+}}, %{{.+}}) :
// CHECK: return %[[S1]], %[[S2]], %[[S3]], %[[S4]], %[[ONES]]
// CHECK-NOT: linalg.
// CHECK: func.func private @gs_reduce_8x256(%[[KX:.+]]: memref<8x256xf32>, %[[KOUT:.+]]: memref<256xf64>)
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[C256:.+]] = arith.constant 256 : index
// CHECK: gpu.launch blocks({{.*}}) in (%{{.+}} = %[[C1]], {{.*}}) threads({{.*}}) in (%{{.+}} = %[[C256]],
// CHECK-NOT: scf.if
// CHECK: %[[J:.+]] = arith.addi
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f64
// CHECK: %[[SUM:.+]] = scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[ZERO]]) -> (f64) {
// CHECK: %[[V:.+]] = memref.load %[[KX]][%[[K]], %[[J]]]
// CHECK: %[[W:.+]] = arith.extf %[[V]] : f32 to f64
// CHECK: %[[NEW:.+]] = arith.addf %[[ACC]], %[[W]] : f64
// CHECK: scf.yield %[[NEW]] : f64
// CHECK: memref.store %[[SUM]], %[[KOUT]][%[[J]]]
// CHECK: func.func private @gs_reduce_8x256_1(
// CHECK: arith.constant 1.000000e+00 : f64
// CHECK: func.func private @gs_reduce_8x256_2(%{{.+}}: memref<8x256xf32>, %[[KINIT:.+]]: memref<256xf64>, %{{.+}}: memref<256xf64>)
// CHECK: %[[INIT:.+]] = memref.load %[[KINIT]]
// CHECK: scf.for %{{.+}} iter_args(%{{.+}} = %[[INIT]]) -> (f64) {
// CHECK: func.func private @gs_map_256(
// CHECK-NOT: func.func private @gs_reduce_8x256_3
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @column_sums(%x: tensor<8x256xf32>, %y: tensor<8x256xf32>, %init: tensor<256xf64>) -> (tensor<256xf64>, tensor<256xf64>, tensor<256xf64>, tensor<256xf64>, tensor<256xf64>) {
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %empty = tensor.empty() : tensor<256xf64>
  %zeros = linalg.fill ins(%zero : f64) outs(%empty : tensor<256xf64>) -> tensor<256xf64>
  %ones = linalg.fill ins(%one : f64) outs(%empty : tensor<256xf64>) -> tensor<256xf64>
  %s1 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<8x256xf32>) outs(%zeros : tensor<256xf64>) {
  ^bb0(%a: f32, %acc: f64):
    %w = arith.extf %a : f32 to f64
    %n = arith.addf %acc, %w : f64
    linalg.yield %n : f64
  } -> tensor<256xf64>
  %s2 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%y : tensor<8x256xf32>) outs(%zeros : tensor<256xf64>) {
  ^bb0(%a: f32, %acc: f64):
    %w = arith.extf %a : f32 to f64
    %n = arith.addf %acc, %w : f64
    linalg.yield %n : f64
  } -> tensor<256xf64>
  %s3 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<8x256xf32>) outs(%ones : tensor<256xf64>) {
  ^bb0(%a: f32, %acc: f64):
    %w = arith.extf %a : f32 to f64
    %n = arith.addf %acc, %w : f64
    linalg.yield %n : f64
  } -> tensor<256xf64>
  %s4 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<8x256xf32>) outs(%init : tensor<256xf64>) {
  ^bb0(%a: f32, %acc: f64):
    %w = arith.extf %a : f32 to f64
    %n = arith.addf %acc, %w : f64
    linalg.yield %n : f64
  } -> tensor<256xf64>
  return %s1, %s2, %s3, %s4, %ones : tensor<256xf64>, tensor<256xf64>, tensor<256xf64>, tensor<256xf64>, tensor<256xf64>
}

// -----

// A gather by class index (a loss's pick of the target's score): the
// tensor the body reads elements of is a kernel argument, read at the
// thread's index; a scalar taken from a tensor at constant indices is read
// on the device from that tensor; any other scalar comes in a
// one-element tensor.
// CHECK-LABEL: func.func @pick
// CHECK-SAME: (%[[SCORES:.+]]: tensor<4x10xf32>, %[[T:.+]]: tensor<4xi64>, %[[SCALE:.+]]: tensor<1xf32>, %[[F:.+]]: f32)
// CHECK: %[[FT:.+]] = tensor.from_elements %{{.+}} : tensor<1xf32>
// CHECK: call @gs_map_4_entry(%[[T]], %[[SCORES]], %[[SCALE]], %[[FT]]) : (tensor<4xi64>, tensor<4x10xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4xf32>
// CHECK: func.func private @gs_map_4(%[[KT:.+]]: memref<4xi64>, %[[KS:.+]]: memref<4x10xf32>, %[[KSC:.+]]: memref<1xf32>, %[[KF:.+]]: memref<1xf32>, %[[KOUT:.+]]: memref<4xf32>)
// CHECK: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[SC:.+]] = memref.load %[[KSC]][%[[C0]]]
// CHECK: %[[FV:.+]] = memref.load %[[KF]][%{{.+}}]
// CHECK: %[[TV:.+]] = memref.load %[[KT]][%[[I:.+]]]
// CHECK: %[[CLS:.+]] = arith.index_cast %[[TV]] : i64 to index
// CHECK: %[[PICK:.+]] = memref.load %[[KS]][%[[I]], %[[CLS]]]
// CHECK: arith.mulf %[[PICK]], %[[SC]]
// CHECK: memref.store %{{.+}}, %[[KOUT]][%[[I]]]
func.func @pick(%scores: tensor<4x10xf32>, %t: tensor<4xi64>, %scale: tensor<1xf32>, %f: f32) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %s = tensor.extract %scale[%c0] : tensor<1xf32>
  %g = arith.addf %f, %f : f32
  %init = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%t : tensor<4xi64>) outs(%init : tensor<4xf32>) {
  ^bb0(%class: i64, %out: f32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %class : i64 to index
    %v = tensor.extract %scores[%i, %c] : tensor<4x10xf32>
    %m = arith.mulf %v, %s : f32
    %a = arith.addf %m, %g : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A full reduction into a 0-d tensor: one thread, nested loops in the
// op's order.
// CHECK-LABEL: func.func @total
// CHECK: call @gs_reduce_3x5_entry
// CHECK: func.func private @gs_reduce_3x5(
// CHECK: gpu.launch blocks({{.*}}) in (%{{.+}} = %[[ONE:.+]], {{.*}}) threads({{.*}}) in (%{{.+}} = %[[ONE]],
// CHECK: scf.for %[[I:[^ ]+]] =
// CHECK: scf.for %[[J:[^ ]+]] =
// CHECK: memref.load %{{.+}}[%[[I]], %[[J]]]
// CHECK: memref.store %{{.+}}, %{{.+}}[] : memref<f32>
func.func @total(%x: tensor<3x5xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<3x5xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %n = arith.addf %acc, %a : f32
    linalg.yield %n : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Large reductions whose outputs all combine exactly in any order (here
// and, max and an integer count over 64 x 4096 points per row) are split
// across a block's 256 threads, a block per parallel point: each thread
// combines its strided share from the identities (true, -inf, 0), stores
// it in workgroup memory, and after the barrier thread 0 combines the
// initial values with the 256 partials in order, the sequential result
// bit for bit.
// CHECK-LABEL: func.func @split_reduction
// CHECK: call @gs_reduce_3x64x4096_entry
// CHECK: func.func private @gs_reduce_3x64x4096(%[[X:[^:]+]]: memref<3x64x4096xf32>, %[[I0:[^:]+]]: memref<3xi1>, %{{.+}}: memref<3xf32>, %{{.+}}: memref<3xi64>, %[[OUT0:[^:]+]]: memref<3xi1>,
// CHECK: gpu.launch blocks(%[[ROW:[^,]+]], {{.*}}) in (%{{.+}} = %c3, {{.*}}) threads(%[[T:[^,]+]], {{.*}}) in (%{{.+}} = %c256, {{.*}}) workgroup(%[[P0:.+]] : memref<256xi1, #gpu.address_space<workgroup>>, %[[P1:.+]] : memref<256xf32, #gpu.address_space<workgroup>>, %[[P2:.+]] : memref<256xi64, #gpu.address_space<workgroup>>)
// CHECK: %[[INIT0:.+]] = memref.load %[[I0]][%[[ROW]]]
// CHECK-DAG: %[[TRUE:.+]] = arith.constant true
// CHECK-DAG: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0 : i64
// CHECK-DAG: %[[POINTS:.+]] = arith.constant 262144 : index
// CHECK: %[[SHARE:.+]]:3 = scf.for %[[K:.+]] = %[[T]] to %[[POINTS]] step %[[STRIDE:[^ ]+]] iter_args(%{{.+}} = %[[TRUE]], %{{.+}} = %[[NEGINF]], %{{.+}} = %[[ZERO]])
// CHECK: memref.load %[[X]][%[[ROW]], %{{.+}}, %{{.+}}]
// CHECK: arith.andi
// CHECK: arith.maximumf
// CHECK: arith.addi
// CHECK: memref.store %[[SHARE]]#0, %[[P0]][%[[T]]]
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: %[[ALL:.+]]:3 = scf.for %[[J:[^ ]+]] = %{{.+}} to %[[STRIDE]] step %{{[^ ]+}} iter_args(%{{.+}} = %[[INIT0]],
// CHECK: memref.load %[[P0]][%[[J]]]
// CHECK: memref.store %[[ALL]]#0, %[[OUT0]][%[[ROW]]] : memref<3xi1>
// Thread 0 stores the outputs, which the other threads read parts of.
// CHECK: gpu.terminator
// CHECK-NEXT: }{{$}}
func.func @split_reduction(%x: tensor<3x64x4096xf32>, %all: tensor<3xi1>, %max: tensor<3xf32>, %count: tensor<3xi64>) -> (tensor<3xi1>, tensor<3xf32>, tensor<3xi64>) {
  %r:3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x : tensor<3x64x4096xf32>) outs(%all, %max, %count : tensor<3xi1>, tensor<3xf32>, tensor<3xi64>) {
  ^bb0(%a: f32, %ok: i1, %m: f32, %n: i64):
    %inf = arith.constant 0x7F800000 : f32
    %zero = arith.constant 0.0 : f32
    %abs = math.absf %a : f32
    %finite = arith.cmpf olt, %abs, %inf : f32
    %nonzero = arith.cmpf one, %a, %zero : f32
    %one = arith.extui %nonzero : i1 to i64
    %ok2 = arith.andi %ok, %finite : i1
    %m2 = arith.maximumf %m, %abs : f32
    %n2 = arith.addi %n, %one : i64
    linalg.yield %ok2, %m2, %n2 : i1, f32, i64
  } -> (tensor<3xi1>, tensor<3xf32>, tensor<3xi64>)
  return %r#0, %r#1, %r#2 : tensor<3xi1>, tensor<3xf32>, tensor<3xi64>
}

// -----

// A floating-point sum gives other bits in another order: as large, it
// stays in one thread per point (so do small reductions).
// CHECK-LABEL: func.func @sum_not_split
// CHECK: func.func private @gs_reduce_262144(
// CHECK-NOT: workgroup
// CHECK-NOT: gpu.barrier
// CHECK: return
func.func @sum_not_split(%x: tensor<262144xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%x : tensor<262144xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %n = arith.addf %acc, %a : f32
    linalg.yield %n : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Dynamic loop bounds: the op stays on the host.
// CHECK-LABEL: func.func @dynamic
// CHECK: linalg.generic
// CHECK-NOT: call @gs_
func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%x : tensor<?xf32>) {
  ^bb0(%a: f32, %out: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// More points than a grid holds (2^41 > 256 x (2^31 - 1)): the op stays
// on the host.
// CHECK-LABEL: func.func @too_many_points
// CHECK: linalg.generic
// CHECK-NOT: call @gs_
func.func @too_many_points(%x: tensor<2199023255552xi8>) -> tensor<2199023255552xi8> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<2199023255552xi8>) outs(%x : tensor<2199023255552xi8>) {
  ^bb0(%a: i8, %out: i8):
    %n = arith.addi %a, %a : i8
    linalg.yield %n : i8
  } -> tensor<2199023255552xi8>
  return %r : tensor<2199023255552xi8>
}
