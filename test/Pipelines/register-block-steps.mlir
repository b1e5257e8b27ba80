// RUN: gs-opt %s --split-input-file --gs-prefetch-block-outputs --canonicalize | FileCheck %s --check-prefix=PREFETCH
// RUN: gs-opt %s --split-input-file --gs-unroll-register-block-steps | FileCheck %s --check-prefix=UNROLL

// Register blocks as the kernel schedule, loop-invariant-subset-hoisting
// and bufferization leave them: accumulator rows read from the block's
// slice of the output, a loop of FMA steps carrying them, the rows written
// back.

// A block of 4 rows of 32 outputs (AVX-512: 8 accumulators of 16 lanes)
// in the panel of columns [%j, %j + 32) of a 64x64 output. Before its
// steps, each row of the block 32 columns further along (the next panel's
// block at the same rows), prefetched into L2 in the output itself: a
// prefetch per line, the column at most 48 (the last line of the row). The
// steps are marked for LLVM to unroll 4 times.

// PREFETCH-DAG: #[[$NEXT0:.*]] = affine_map<()[s0] -> (48, s0 + 32)>
// PREFETCH-DAG: #[[$NEXT16:.*]] = affine_map<()[s0] -> (48, s0 + 48)>
// PREFETCH-DAG: #[[$ROW1:.*]] = affine_map<()[s0] -> (s0 + 1)>
// PREFETCH-DAG: #[[$ROW3:.*]] = affine_map<()[s0] -> (s0 + 3)>
// PREFETCH-LABEL: func.func @full_block(
// PREFETCH-SAME:      %[[C:[^:]*]]: memref<64x64xf32>, %{{[^:]*}}: memref<64x8xf32>, %{{[^:]*}}: memref<8x64xf32>, %[[I:[^:]*]]: index, %[[J:[^:]*]]: index)
// PREFETCH:         %[[COL0:.*]] = affine.min #[[$NEXT0]]()[%[[J]]]
// PREFETCH:         memref.prefetch %[[C]][%[[I]], %[[COL0]]], read, locality<2>, data : memref<64x64xf32>
// PREFETCH-NEXT:    vector.transfer_read
// PREFETCH-NEXT:    %[[COL16:.*]] = affine.min #[[$NEXT16]]()[%[[J]]]
// PREFETCH-NEXT:    memref.prefetch %[[C]][%[[I]], %[[COL16]]], read, locality<2>, data : memref<64x64xf32>
// PREFETCH-NEXT:    vector.transfer_read
// PREFETCH-NEXT:    %[[R1:.*]] = affine.apply #[[$ROW1]]()[%[[I]]]
// PREFETCH-NEXT:    %[[R1COL0:.*]] = affine.min #[[$NEXT0]]()[%[[J]]]
// PREFETCH-NEXT:    memref.prefetch %[[C]][%[[R1]], %[[R1COL0]]]
// PREFETCH-COUNT-4: memref.prefetch %[[C]]
// PREFETCH:         %[[R3:.*]] = affine.apply #[[$ROW3]]()[%[[I]]]
// PREFETCH-NEXT:    %[[R3COL16:.*]] = affine.min #[[$NEXT16]]()[%[[J]]]
// PREFETCH-NEXT:    memref.prefetch %[[C]][%[[R3]], %[[R3COL16]]]
// PREFETCH-NEXT:    vector.transfer_read
// PREFETCH-NEXT:    scf.for
// PREFETCH-NOT:     memref.prefetch
// PREFETCH:         return

// UNROLL-DAG: #[[$COUNT4:.*]] = #llvm.loop_unroll<count = 4 : i32>
// UNROLL-DAG: #[[$UNROLL:.*]] = #llvm.loop_annotation<unroll = #[[$COUNT4]]>
// UNROLL-LABEL: func.func @full_block(
// UNROLL:         scf.for
// UNROLL-COUNT-8:   vector.fma
// UNROLL-NEXT:      scf.yield
// UNROLL-NEXT:    } {llvm.loop_annotation = #[[$UNROLL]]}

func.func @full_block(%c: memref<64x64xf32>, %a: memref<64x8xf32>, %b: memref<8x64xf32>, %i: index, %j: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f0 = arith.constant 0.0 : f32
  %panel = memref.subview %c[0, %j] [64, 32] [1, 1] : memref<64x64xf32> to memref<64x32xf32, strided<[64, 1], offset: ?>>
  %block = memref.subview %panel[%i, 0] [4, 32] [1, 1] : memref<64x32xf32, strided<[64, 1], offset: ?>> to memref<4x32xf32, strided<[64, 1], offset: ?>>
  %row0 = arith.constant 0 : index
  %row1 = arith.constant 1 : index
  %row2 = arith.constant 2 : index
  %row3 = arith.constant 3 : index
  %col0 = arith.constant 0 : index
  %col1 = arith.constant 16 : index
  %r0 = vector.transfer_read %block[%row0, %col0], %f0 {in_bounds = [true]} : memref<4x32xf32, strided<[64, 1], offset: ?>>, vector<16xf32>
  %r1 = vector.transfer_read %block[%row0, %col1], %f0 {in_bounds = [true]} : memref<4x32xf32, strided<[64, 1], offset: ?>>, vector<16xf32>
  %r2 = vector.transfer_read %block[%row1, %col0], %f0 {in_bounds = [true]} : memref<4x32xf32, strided<[64, 1], offset: ?>>, vector<16xf32>
  %r3 = vector.transfer_read %block[%row1, %col1], %f0 {in_bounds = [true]} : memref<4x32xf32, strided<[64, 1], offset: ?>>, vector<16xf32>
  %r4 = vector.transfer_read %block[%row2, %col0], %f0 {in_bounds = [true]} : memref<4x32xf32, strided<[64, 1], offset: ?>>, vector<16xf32>
  %r5 = vector.transfer_read %block[%row2, %col1], %f0 {in_bounds = [true]} : memref<4x32xf32, strided<[64, 1], offset: ?>>, vector<16xf32>
  %r6 = vector.transfer_read %block[%row3, %col0], %f0 {in_bounds = [true]} : memref<4x32xf32, strided<[64, 1], offset: ?>>, vector<16xf32>
  %r7 = vector.transfer_read %block[%row3, %col1], %f0 {in_bounds = [true]} : memref<4x32xf32, strided<[64, 1], offset: ?>>, vector<16xf32>
  %acc:8 = scf.for %k = %c0 to %c8 step %c1 iter_args(%a0 = %r0, %a1 = %r1, %a2 = %r2, %a3 = %r3, %a4 = %r4, %a5 = %r5, %a6 = %r6, %a7 = %r7) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
    %x = memref.load %a[%i, %k] : memref<64x8xf32>
    %s = vector.broadcast %x : f32 to vector<16xf32>
    %jv0 = arith.addi %j, %col0 : index
    %b0 = vector.transfer_read %b[%k, %jv0], %f0 {in_bounds = [true]} : memref<8x64xf32>, vector<16xf32>
    %jv1 = arith.addi %j, %col1 : index
    %b1 = vector.transfer_read %b[%k, %jv1], %f0 {in_bounds = [true]} : memref<8x64xf32>, vector<16xf32>
    %n0 = vector.fma %b0, %s, %a0 : vector<16xf32>
    %n1 = vector.fma %b1, %s, %a1 : vector<16xf32>
    %n2 = vector.fma %b0, %s, %a2 : vector<16xf32>
    %n3 = vector.fma %b1, %s, %a3 : vector<16xf32>
    %n4 = vector.fma %b0, %s, %a4 : vector<16xf32>
    %n5 = vector.fma %b1, %s, %a5 : vector<16xf32>
    %n6 = vector.fma %b0, %s, %a6 : vector<16xf32>
    %n7 = vector.fma %b1, %s, %a7 : vector<16xf32>
    scf.yield %n0, %n1, %n2, %n3, %n4, %n5, %n6, %n7 : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
  }
  vector.transfer_write %acc#0, %block[%row0, %col0] {in_bounds = [true]} : vector<16xf32>, memref<4x32xf32, strided<[64, 1], offset: ?>>
  vector.transfer_write %acc#1, %block[%row0, %col1] {in_bounds = [true]} : vector<16xf32>, memref<4x32xf32, strided<[64, 1], offset: ?>>
  vector.transfer_write %acc#2, %block[%row1, %col0] {in_bounds = [true]} : vector<16xf32>, memref<4x32xf32, strided<[64, 1], offset: ?>>
  vector.transfer_write %acc#3, %block[%row1, %col1] {in_bounds = [true]} : vector<16xf32>, memref<4x32xf32, strided<[64, 1], offset: ?>>
  vector.transfer_write %acc#4, %block[%row2, %col0] {in_bounds = [true]} : vector<16xf32>, memref<4x32xf32, strided<[64, 1], offset: ?>>
  vector.transfer_write %acc#5, %block[%row2, %col1] {in_bounds = [true]} : vector<16xf32>, memref<4x32xf32, strided<[64, 1], offset: ?>>
  vector.transfer_write %acc#6, %block[%row3, %col0] {in_bounds = [true]} : vector<16xf32>, memref<4x32xf32, strided<[64, 1], offset: ?>>
  vector.transfer_write %acc#7, %block[%row3, %col1] {in_bounds = [true]} : vector<16xf32>, memref<4x32xf32, strided<[64, 1], offset: ?>>
  return
}

// -----

// AVX2: 4 rows of 24 outputs, 3 accumulators of 8 lanes a row. One
// prefetch per line: for the reads at columns 0 and 16, not 8 (in the line
// of column 0); the column at most 56.

// PREFETCH-DAG: #[[$NEXT0:.*]] = affine_map<()[s0] -> (56, s0 + 24)>
// PREFETCH-DAG: #[[$NEXT16:.*]] = affine_map<()[s0] -> (56, s0 + 40)>
// PREFETCH-LABEL: func.func @avx2_block(
// PREFETCH-SAME:      %[[C:[^:]*]]: memref<64x64xf32>, %{{[^:]*}}: memref<64x8xf32>, %{{[^:]*}}: memref<8x64xf32>, %[[I:[^:]*]]: index, %[[J:[^:]*]]: index)
// PREFETCH:         %[[COL0:.*]] = affine.min #[[$NEXT0]]()[%[[J]]]
// PREFETCH-NEXT:    memref.prefetch %[[C]][%[[I]], %[[COL0]]]
// PREFETCH-NEXT:    vector.transfer_read
// PREFETCH-NEXT:    vector.transfer_read
// PREFETCH-NEXT:    %[[COL16:.*]] = affine.min #[[$NEXT16]]()[%[[J]]]
// PREFETCH-NEXT:    memref.prefetch %[[C]][%[[I]], %[[COL16]]]
// PREFETCH-NEXT:    vector.transfer_read
// PREFETCH-COUNT-6: memref.prefetch %[[C]]
// PREFETCH-NOT:     memref.prefetch
// PREFETCH:         scf.for
// PREFETCH-NOT:     memref.prefetch
// PREFETCH:         return

// UNROLL-LABEL: func.func @avx2_block(
// UNROLL:         scf.for
// UNROLL:         } {llvm.loop_annotation = #{{.*}}}

func.func @avx2_block(%c: memref<64x64xf32>, %a: memref<64x8xf32>, %b: memref<8x64xf32>, %i: index, %j: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f0 = arith.constant 0.0 : f32
  %panel = memref.subview %c[0, %j] [64, 24] [1, 1] : memref<64x64xf32> to memref<64x24xf32, strided<[64, 1], offset: ?>>
  %block = memref.subview %panel[%i, 0] [4, 24] [1, 1] : memref<64x24xf32, strided<[64, 1], offset: ?>> to memref<4x24xf32, strided<[64, 1], offset: ?>>
  %row0 = arith.constant 0 : index
  %row1 = arith.constant 1 : index
  %row2 = arith.constant 2 : index
  %row3 = arith.constant 3 : index
  %col0 = arith.constant 0 : index
  %col1 = arith.constant 8 : index
  %col2 = arith.constant 16 : index
  %r0 = vector.transfer_read %block[%row0, %col0], %f0 {in_bounds = [true]} : memref<4x24xf32, strided<[64, 1], offset: ?>>, vector<8xf32>
  %r1 = vector.transfer_read %block[%row0, %col1], %f0 {in_bounds = [true]} : memref<4x24xf32, strided<[64, 1], offset: ?>>, vector<8xf32>
  %r2 = vector.transfer_read %block[%row0, %col2], %f0 {in_bounds = [true]} : memref<4x24xf32, strided<[64, 1], offset: ?>>, vector<8xf32>
  %r3 = vector.transfer_read %block[%row1, %col0], %f0 {in_bounds = [true]} : memref<4x24xf32, strided<[64, 1], offset: ?>>, vector<8xf32>
  %r4 = vector.transfer_read %block[%row1, %col1], %f0 {in_bounds = [true]} : memref<4x24xf32, strided<[64, 1], offset: ?>>, vector<8xf32>
  %r5 = vector.transfer_read %block[%row1, %col2], %f0 {in_bounds = [true]} : memref<4x24xf32, strided<[64, 1], offset: ?>>, vector<8xf32>
  %r6 = vector.transfer_read %block[%row2, %col0], %f0 {in_bounds = [true]} : memref<4x24xf32, strided<[64, 1], offset: ?>>, vector<8xf32>
  %r7 = vector.transfer_read %block[%row2, %col1], %f0 {in_bounds = [true]} : memref<4x24xf32, strided<[64, 1], offset: ?>>, vector<8xf32>
  %r8 = vector.transfer_read %block[%row2, %col2], %f0 {in_bounds = [true]} : memref<4x24xf32, strided<[64, 1], offset: ?>>, vector<8xf32>
  %r9 = vector.transfer_read %block[%row3, %col0], %f0 {in_bounds = [true]} : memref<4x24xf32, strided<[64, 1], offset: ?>>, vector<8xf32>
  %r10 = vector.transfer_read %block[%row3, %col1], %f0 {in_bounds = [true]} : memref<4x24xf32, strided<[64, 1], offset: ?>>, vector<8xf32>
  %r11 = vector.transfer_read %block[%row3, %col2], %f0 {in_bounds = [true]} : memref<4x24xf32, strided<[64, 1], offset: ?>>, vector<8xf32>
  %acc:12 = scf.for %k = %c0 to %c8 step %c1 iter_args(%a0 = %r0, %a1 = %r1, %a2 = %r2, %a3 = %r3, %a4 = %r4, %a5 = %r5, %a6 = %r6, %a7 = %r7, %a8 = %r8, %a9 = %r9, %a10 = %r10, %a11 = %r11) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
    %x = memref.load %a[%i, %k] : memref<64x8xf32>
    %s = vector.broadcast %x : f32 to vector<8xf32>
    %jv0 = arith.addi %j, %col0 : index
    %b0 = vector.transfer_read %b[%k, %jv0], %f0 {in_bounds = [true]} : memref<8x64xf32>, vector<8xf32>
    %jv1 = arith.addi %j, %col1 : index
    %b1 = vector.transfer_read %b[%k, %jv1], %f0 {in_bounds = [true]} : memref<8x64xf32>, vector<8xf32>
    %jv2 = arith.addi %j, %col2 : index
    %b2 = vector.transfer_read %b[%k, %jv2], %f0 {in_bounds = [true]} : memref<8x64xf32>, vector<8xf32>
    %n0 = vector.fma %b0, %s, %a0 : vector<8xf32>
    %n1 = vector.fma %b1, %s, %a1 : vector<8xf32>
    %n2 = vector.fma %b2, %s, %a2 : vector<8xf32>
    %n3 = vector.fma %b0, %s, %a3 : vector<8xf32>
    %n4 = vector.fma %b1, %s, %a4 : vector<8xf32>
    %n5 = vector.fma %b2, %s, %a5 : vector<8xf32>
    %n6 = vector.fma %b0, %s, %a6 : vector<8xf32>
    %n7 = vector.fma %b1, %s, %a7 : vector<8xf32>
    %n8 = vector.fma %b2, %s, %a8 : vector<8xf32>
    %n9 = vector.fma %b0, %s, %a9 : vector<8xf32>
    %n10 = vector.fma %b1, %s, %a10 : vector<8xf32>
    %n11 = vector.fma %b2, %s, %a11 : vector<8xf32>
    scf.yield %n0, %n1, %n2, %n3, %n4, %n5, %n6, %n7, %n8, %n9, %n10, %n11 : vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>
  }
  vector.transfer_write %acc#0, %block[%row0, %col0] {in_bounds = [true]} : vector<8xf32>, memref<4x24xf32, strided<[64, 1], offset: ?>>
  vector.transfer_write %acc#1, %block[%row0, %col1] {in_bounds = [true]} : vector<8xf32>, memref<4x24xf32, strided<[64, 1], offset: ?>>
  vector.transfer_write %acc#2, %block[%row0, %col2] {in_bounds = [true]} : vector<8xf32>, memref<4x24xf32, strided<[64, 1], offset: ?>>
  vector.transfer_write %acc#3, %block[%row1, %col0] {in_bounds = [true]} : vector<8xf32>, memref<4x24xf32, strided<[64, 1], offset: ?>>
  vector.transfer_write %acc#4, %block[%row1, %col1] {in_bounds = [true]} : vector<8xf32>, memref<4x24xf32, strided<[64, 1], offset: ?>>
  vector.transfer_write %acc#5, %block[%row1, %col2] {in_bounds = [true]} : vector<8xf32>, memref<4x24xf32, strided<[64, 1], offset: ?>>
  vector.transfer_write %acc#6, %block[%row2, %col0] {in_bounds = [true]} : vector<8xf32>, memref<4x24xf32, strided<[64, 1], offset: ?>>
  vector.transfer_write %acc#7, %block[%row2, %col1] {in_bounds = [true]} : vector<8xf32>, memref<4x24xf32, strided<[64, 1], offset: ?>>
  vector.transfer_write %acc#8, %block[%row2, %col2] {in_bounds = [true]} : vector<8xf32>, memref<4x24xf32, strided<[64, 1], offset: ?>>
  vector.transfer_write %acc#9, %block[%row3, %col0] {in_bounds = [true]} : vector<8xf32>, memref<4x24xf32, strided<[64, 1], offset: ?>>
  vector.transfer_write %acc#10, %block[%row3, %col1] {in_bounds = [true]} : vector<8xf32>, memref<4x24xf32, strided<[64, 1], offset: ?>>
  vector.transfer_write %acc#11, %block[%row3, %col2] {in_bounds = [true]} : vector<8xf32>, memref<4x24xf32, strided<[64, 1], offset: ?>>
  return
}

// -----

// An edge block (2 rows of 32, 4 accumulators): neither prefetched nor
// unrolled.

// PREFETCH-LABEL: func.func @edge_block(
// PREFETCH-NOT:     memref.prefetch
// PREFETCH:         return

// UNROLL-LABEL: func.func @edge_block(
// UNROLL-NOT:     llvm.loop_annotation
// UNROLL:         return

func.func @edge_block(%c: memref<64x64xf32>, %a: memref<64x8xf32>, %b: memref<8x64xf32>, %i: index, %j: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f0 = arith.constant 0.0 : f32
  %panel = memref.subview %c[0, %j] [64, 32] [1, 1] : memref<64x64xf32> to memref<64x32xf32, strided<[64, 1], offset: ?>>
  %block = memref.subview %panel[%i, 0] [2, 32] [1, 1] : memref<64x32xf32, strided<[64, 1], offset: ?>> to memref<2x32xf32, strided<[64, 1], offset: ?>>
  %row0 = arith.constant 0 : index
  %row1 = arith.constant 1 : index
  %col0 = arith.constant 0 : index
  %col1 = arith.constant 16 : index
  %r0 = vector.transfer_read %block[%row0, %col0], %f0 {in_bounds = [true]} : memref<2x32xf32, strided<[64, 1], offset: ?>>, vector<16xf32>
  %r1 = vector.transfer_read %block[%row0, %col1], %f0 {in_bounds = [true]} : memref<2x32xf32, strided<[64, 1], offset: ?>>, vector<16xf32>
  %r2 = vector.transfer_read %block[%row1, %col0], %f0 {in_bounds = [true]} : memref<2x32xf32, strided<[64, 1], offset: ?>>, vector<16xf32>
  %r3 = vector.transfer_read %block[%row1, %col1], %f0 {in_bounds = [true]} : memref<2x32xf32, strided<[64, 1], offset: ?>>, vector<16xf32>
  %acc:4 = scf.for %k = %c0 to %c8 step %c1 iter_args(%a0 = %r0, %a1 = %r1, %a2 = %r2, %a3 = %r3) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
    %x = memref.load %a[%i, %k] : memref<64x8xf32>
    %s = vector.broadcast %x : f32 to vector<16xf32>
    %jv0 = arith.addi %j, %col0 : index
    %b0 = vector.transfer_read %b[%k, %jv0], %f0 {in_bounds = [true]} : memref<8x64xf32>, vector<16xf32>
    %jv1 = arith.addi %j, %col1 : index
    %b1 = vector.transfer_read %b[%k, %jv1], %f0 {in_bounds = [true]} : memref<8x64xf32>, vector<16xf32>
    %n0 = vector.fma %b0, %s, %a0 : vector<16xf32>
    %n1 = vector.fma %b1, %s, %a1 : vector<16xf32>
    %n2 = vector.fma %b0, %s, %a2 : vector<16xf32>
    %n3 = vector.fma %b1, %s, %a3 : vector<16xf32>
    scf.yield %n0, %n1, %n2, %n3 : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
  }
  vector.transfer_write %acc#0, %block[%row0, %col0] {in_bounds = [true]} : vector<16xf32>, memref<2x32xf32, strided<[64, 1], offset: ?>>
  vector.transfer_write %acc#1, %block[%row0, %col1] {in_bounds = [true]} : vector<16xf32>, memref<2x32xf32, strided<[64, 1], offset: ?>>
  vector.transfer_write %acc#2, %block[%row1, %col0] {in_bounds = [true]} : vector<16xf32>, memref<2x32xf32, strided<[64, 1], offset: ?>>
  vector.transfer_write %acc#3, %block[%row1, %col1] {in_bounds = [true]} : vector<16xf32>, memref<2x32xf32, strided<[64, 1], offset: ?>>
  return
}
