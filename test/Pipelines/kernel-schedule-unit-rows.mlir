// RUN: gs-opt %s --gs-cpu-kernel-schedule | FileCheck %s
// Vectors of one row finish the kernel schedule: lowered together with
// the removal of leading unit dimensions, a broadcast of a row into one
// (an insert into a vector of one row) became that broadcast again, and
// again, and the pass never finished. The emulated ldmatrix of one 8 x 8
// matrix builds such a vector<1x2xf16>.

// CHECK-LABEL: func.func @broadcast_row(
// CHECK-SAME: %[[ROW:.*]]: vector<2xf16>
// CHECK: %[[ONE:.*]] = vector.broadcast %[[ROW]] : vector<2xf16> to vector<1x2xf16>
// CHECK: return %[[ONE]]
func.func @broadcast_row(%row: vector<2xf16>) -> vector<1x2xf16> {
  %v = vector.broadcast %row : vector<2xf16> to vector<1x2xf16>
  return %v : vector<1x2xf16>
}

// CHECK-LABEL: func.func @elements_row(
// CHECK: %[[ELEMENTS:.*]] = vector.from_elements %{{.*}}, %{{.*}} : vector<2xf16>
// CHECK: %[[ONE:.*]] = vector.broadcast %[[ELEMENTS]] : vector<2xf16> to vector<1x2xf16>
// CHECK: return %[[ONE]]
func.func @elements_row(%a: f16, %b: f16) -> vector<1x2xf16> {
  %v = vector.from_elements %a, %b : vector<1x2xf16>
  return %v : vector<1x2xf16>
}
