// RUN: gs-opt %s --convert-scf-to-cf --convert-cf-to-llvm --gs-loop-annotations-to-llvm | FileCheck %s
// RUN: gs-opt %s --convert-scf-to-cf --convert-cf-to-llvm --gs-loop-annotations-to-llvm --convert-func-to-llvm --convert-arith-to-llvm --finalize-memref-to-llvm --reconcile-unrealized-casts | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=IR

// An scf.for's llvm.loop_annotation ends up on its lowered loop's closing
// branch as the branch's loop_annotation (not an attribute translation
// ignores), and so in the LLVM IR as !llvm.loop metadata.

#unroll = #llvm.loop_unroll<count = 4 : i32>
#annotation = #llvm.loop_annotation<unroll = #unroll>

// CHECK: #[[$UNROLL:.*]] = #llvm.loop_annotation<unroll = #{{.*}}>
// CHECK-LABEL: func.func @annotated(
// CHECK:         llvm.cond_br
// CHECK:         llvm.br ^{{.*}} {loop_annotation = #[[$UNROLL]]}
// CHECK-NOT:     llvm.loop_annotation

// IR-LABEL: define void @annotated(
// IR:         br label %{{.*}}, !llvm.loop ![[LOOP:[0-9]+]]
// IR:       ![[LOOP]] = distinct !{![[LOOP]], ![[COUNT:[0-9]+]]}
// IR:       ![[COUNT]] = !{!"llvm.loop.unroll.count", i32 4}
func.func @annotated(%buffer: memref<256xf32>, %value: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  scf.for %i = %c0 to %c256 step %c1 {
    memref.store %value, %buffer[%i] : memref<256xf32>
  } {llvm.loop_annotation = #annotation}
  return
}
