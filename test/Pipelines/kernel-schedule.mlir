// RUN: gs-opt %s --split-input-file --gs-cpu-kernel-schedule=vector-bits=256 --loop-invariant-subset-hoisting --canonicalize --cse | FileCheck %s --check-prefix=AVX2
// RUN: gs-opt %s --split-input-file --gs-cpu-kernel-schedule=vector-bits=512 --loop-invariant-subset-hoisting --canonicalize --cse | FileCheck %s --check-prefix=AVX512

// A 4x24 (AVX2) or 8x32 (AVX-512) register block: panels of nr columns,
// blocks of mr rows, and the reduction innermost with the accumulators
// hoisted into its iter_args, one FMA per accumulator register.

// AVX2-LABEL: func.func @matmul
// AVX2-NOT: linalg.matmul
// AVX2: scf.for %{{.*}} = %c0 to %c48 step %c24
// AVX2: scf.for %{{.*}} = %c0 to %c64 step %c4
// AVX2: scf.for %{{.*}} = %c0 to %c32 step %c1 iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// AVX2-COUNT-12: vector.fma %{{.*}} : vector<8xf32>
// AVX2-NEXT: scf.yield
// AVX2-COUNT-12: vector.transfer_write

// AVX512-LABEL: func.func @matmul
// The 48 columns are a 32-column panel and a 16-column edge, each of one
// iteration (so no loop).
// AVX512: scf.for %{{.*}} = %c0 to %c64 step %c8
// AVX512: scf.for %{{.*}} = %c0 to %c32 step %c1 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// AVX512-COUNT-16: vector.fma %{{.*}} : vector<16xf32>
// AVX512-NEXT: scf.yield
// AVX512: scf.for %{{.*}} = %c0 to %c64 step %c8
// AVX512: scf.for %{{.*}} = %c0 to %c32 step %c1 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// AVX512-COUNT-8: vector.fma %{{.*}} : vector<16xf32>
// AVX512-NEXT: scf.yield
func.func @matmul(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>) -> tensor<64x48xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x48xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x48xf32>) -> tensor<64x48xf32>
  %c = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x48xf32>) outs(%init : tensor<64x48xf32>) -> tensor<64x48xf32>
  return %c : tensor<64x48xf32>
}

// -----

// Sizes that are not multiples of the block: the full blocks and the edge
// rows get static shapes of their own (peeling), so no masks are needed.
// With AVX-512, 32-column panels would leave an edge of 30 columns, a
// register and 14 elements, which LLVM loads and stores in pieces: the
// panels are 16 columns instead (a 16 and a 14), each row one register.

// AVX512-LABEL: func.func @ragged
// AVX512-NOT: vector.mask
// AVX512: scf.for %{{.*}} = %c0 to %c7 step %c1 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// AVX512-COUNT-8: vector.fma %{{.*}} : vector<16xf32>
// AVX512: scf.for %{{.*}} = %c0 to %c7 step %c1 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>)
// AVX512-COUNT-2: vector.fma %{{.*}} : vector<16xf32>
// AVX512: scf.for %{{.*}} = %c0 to %c7 step %c1 iter_args({{.*}}) -> (vector<14xf32>, vector<14xf32>, vector<14xf32>, vector<14xf32>, vector<14xf32>, vector<14xf32>, vector<14xf32>, vector<14xf32>)
// AVX512-COUNT-8: vector.fma %{{.*}} : vector<14xf32>
// AVX512: scf.for %{{.*}} = %c0 to %c7 step %c1 iter_args({{.*}}) -> (vector<14xf32>, vector<14xf32>)
// AVX512-COUNT-2: vector.fma %{{.*}} : vector<14xf32>
// AVX512-NOT: linalg.matmul
func.func @ragged(%a: tensor<10x7xf32>, %b: tensor<7x30xf32>, %c: tensor<10x30xf32>) -> tensor<10x30xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<10x7xf32>, tensor<7x30xf32>) outs(%c : tensor<10x30xf32>) -> tensor<10x30xf32>
  return %r : tensor<10x30xf32>
}

// -----

// Batched: one batch at a time around the same blocks.

// AVX512-LABEL: func.func @batch_matmul
// AVX512: scf.for %{{.*}} = %c0 to %c3 step %c1
// AVX512: scf.for %{{.*}} = %c0 to %c4 step %c1 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// AVX512-COUNT-16: vector.fma %{{.*}} : vector<16xf32>
func.func @batch_matmul(%a: tensor<3x8x4xf32>, %b: tensor<3x4x32xf32>, %c: tensor<3x8x32xf32>) -> tensor<3x8x32xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<3x8x4xf32>, tensor<3x4x32xf32>) outs(%c : tensor<3x8x32xf32>) -> tensor<3x8x32xf32>
  return %r : tensor<3x8x32xf32>
}

// -----

// Convolutions: an im2col copy of the input's windows (per image:
// N x C*KH*KW x OH*OW), then the filter (F x C*KH*KW) times it in register
// blocks.

// AVX512-DAG: #[[$WINDOWS:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 + d4, d3 + d5)>
// AVX512-DAG: #[[$ID6:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>
// AVX512-LABEL: func.func @conv
// AVX512-NOT: linalg.conv_2d_nchw_fchw
// AVX512: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3]] : tensor<16x8x3x3xf32> into tensor<16x72xf32>
// AVX512: linalg.generic {indexing_maps = [#[[$WINDOWS]], #[[$ID6]]], {{.*}} ins(%{{.*}} : tensor<1x8x6x6xf32>) outs(%{{.*}} : tensor<1x8x3x3x4x4xf32>)
// AVX512: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3], [4, 5]] : tensor<1x8x3x3x4x4xf32> into tensor<1x72x16xf32>
// AVX512: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] : tensor<1x16x4x4xf32> into tensor<1x16x16xf32>
// AVX512: scf.for %{{.*}} = %c0 to %c16 step %c8
// AVX512: scf.for %{{.*}} = %c0 to %c72 step %c1 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// AVX512-COUNT-8: vector.fma %{{.*}} : vector<16xf32>
// AVX512: tensor.expand_shape
func.func @conv(%x: tensor<1x8x6x6xf32>, %w: tensor<16x8x3x3xf32>, %o: tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x6x6xf32>, tensor<16x8x3x3xf32>) outs(%o : tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  return %r : tensor<1x16x4x4xf32>
}

// -----

// A weight gradient, as autodiff writes it: input channels as images,
// the batch as channels, the output gradient as filters, dilated by the
// forward stride, 3x3 outputs. Dilations are the window copy's; it widens
// the FP16 input to f32. So few outputs per image batch the images into
// the GEMM's columns: 16 x 64 filters times 64 x (8 images * 9), between
// two transposes of the output.

// AVX512-DAG: #[[$WINDOWS:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d0, d4 + d1 * 2, d5 + d2 * 2)>
// AVX512-LABEL: func.func @weight_gradient
// AVX512-NOT: linalg.conv_2d_nchw_fchw
// AVX512: %[[W:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3]] : tensor<16x4x4x4xf16> into tensor<16x64xf16>
// AVX512: %[[COPY:.*]] = linalg.generic {indexing_maps = [#[[$WINDOWS]], #{{.*}}], {{.*}} ins(%{{.*}} : tensor<8x4x9x9xf16>) outs(%{{.*}} : tensor<4x4x4x8x3x3xf32>)
// AVX512:   arith.extf %{{.*}} : f16 to f32
// AVX512: tensor.collapse_shape %[[COPY]] {{\[\[}}0, 1, 2], [3, 4, 5]] : tensor<4x4x4x8x3x3xf32> into tensor<64x72xf32>
// AVX512: linalg.transpose ins(%{{.*}} : tensor<8x16x3x3xf32>) outs(%{{.*}} : tensor<16x8x3x3xf32>) permutation = [1, 0, 2, 3]
// AVX512: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3]] : tensor<16x8x3x3xf32> into tensor<16x72xf32>
// AVX512: scf.for %{{.*}} = %c0 to %c64 step %c32
// AVX512:   scf.for %{{.*}} = %c0 to %c16 step %c8
// AVX512:     scf.for %{{.*}} = %c0 to %c64 step %c1
// AVX512-COUNT-16: vector.fma %{{.*}} : vector<16xf32>
// AVX512: tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2, 3]] output_shape [16, 8, 3, 3] : tensor<16x72xf32> into tensor<16x8x3x3xf32>
// AVX512: %[[R:.*]] = linalg.transpose ins(%{{.*}} : tensor<16x8x3x3xf32>) outs(%{{.*}} : tensor<8x16x3x3xf32>) permutation = [1, 0, 2, 3]
// AVX512: return %[[R]]
func.func @weight_gradient(%x: tensor<8x4x9x9xf16>, %dy: tensor<16x4x4x4xf16>, %o: tensor<8x16x3x3xf32>) -> tensor<8x16x3x3xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %dy : tensor<8x4x9x9xf16>, tensor<16x4x4x4xf16>) outs(%o : tensor<8x16x3x3xf32>) -> tensor<8x16x3x3xf32>
  return %r : tensor<8x16x3x3xf32>
}

// -----

// The same from zeros (the output gradient's weights, as autodiff makes
// them): the GEMM accumulates into zeros of its own layout, where it would
// transpose the zeros; its result goes into the fill's destination. Its
// 64 reduction steps fit one panel, so that each register block zeroes its
// own 8 x 32 outputs just before its steps, and no pass zeroes the whole.

// AVX512-LABEL: func.func @weight_gradient_from_zeros
// AVX512: %[[EMPTY:.*]] = tensor.empty() : tensor<8x16x3x3xf32>
// AVX512-NOT: linalg.transpose ins(%{{.*}} : tensor<8x16x3x3xf32>)
// AVX512-NOT: linalg.fill
// AVX512: scf.for %{{.*}} = %c0 to %c64 step %c32 iter_args(%{{.*}} = %{{.*}}) -> (tensor<16x72xf32>)
// AVX512:   scf.for %{{.*}} = %c0 to %c16 step %c8
// AVX512:     %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8x32xf32>)
// AVX512:     vector.transfer_read %[[ZEROS]][%c0, %c0]
// AVX512:     scf.for %{{.*}} = %c0 to %c64 step %c1
// AVX512:       vector.fma
// AVX512: %[[R:.*]] = linalg.transpose ins(%{{.*}} : tensor<16x8x3x3xf32>) outs(%[[EMPTY]] : tensor<8x16x3x3xf32>) permutation = [1, 0, 2, 3]
// AVX512: return %[[R]]
func.func @weight_gradient_from_zeros(%x: tensor<8x4x9x9xf16>, %dy: tensor<16x4x4x4xf16>) -> tensor<8x16x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8x16x3x3xf32>
  %o = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x16x3x3xf32>) -> tensor<8x16x3x3xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %dy : tensor<8x4x9x9xf16>, tensor<16x4x4x4xf16>) outs(%o : tensor<8x16x3x3xf32>) -> tensor<8x16x3x3xf32>
  return %r : tensor<8x16x3x3xf32>
}

// -----

// One image's columns above 1 MiB (1152 x 784 floats: 3.6 MiB) are built
// and multiplied a block of output rows at a time, each block within the
// L2 cache: of the divisors of 28 rows within 1 MiB, 7 rows (196 columns)
// would end in an edge panel of 4 columns, 4 rows (112) in a whole vector.

// AVX512-DAG: #[[$ROWWINDOWS:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 + d4, d3 + d5)>
// AVX512-LABEL: func.func @output_row_blocks
// AVX512: scf.for %{{.*}} = %c0 to %c28 step %c4 iter_args(%{{.*}} = %{{.*}}) -> (tensor<1x128x28x28xf32>)
// AVX512:   tensor.empty() : tensor<1x1152x112xf32>
// AVX512:   linalg.generic {indexing_maps = [#[[$ROWWINDOWS]], #{{.*}}], {{.*}} ins(%{{.*}} : tensor<1x128x6x30xf32>) outs(%{{.*}} : tensor<1x128x3x3x4x28xf32>)
// AVX512:   vector.fma
func.func @output_row_blocks(%x: tensor<1x128x30x30xf32>, %w: tensor<128x128x3x3xf32>, %o: tensor<1x128x28x28xf32>) -> tensor<1x128x28x28xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x128x30x30xf32>, tensor<128x128x3x3xf32>) outs(%o : tensor<1x128x28x28xf32>) -> tensor<1x128x28x28xf32>
  return %r : tensor<1x128x28x28xf32>
}

// From zeros: each block fills its own rows, and the loop starts from the
// fill's destination, so that no block's output is zeroed twice.

// AVX512-LABEL: func.func @output_row_blocks_from_zeros
// AVX512: %[[EMPTY:.*]] = tensor.empty() : tensor<1x128x28x28xf32>
// AVX512: scf.for %{{.*}} = %c0 to %c28 step %c4 iter_args(%{{.*}} = %[[EMPTY]]) -> (tensor<1x128x28x28xf32>)
// AVX512:   linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x128x112xf32>)
// AVX512:   vector.fma
func.func @output_row_blocks_from_zeros(%x: tensor<1x128x30x30xf32>, %w: tensor<128x128x3x3xf32>) -> tensor<1x128x28x28xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x128x28x28xf32>
  %o = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x128x28x28xf32>) -> tensor<1x128x28x28xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x128x30x30xf32>, tensor<128x128x3x3xf32>) outs(%o : tensor<1x128x28x28xf32>) -> tensor<1x128x28x28xf32>
  return %r : tensor<1x128x28x28xf32>
}

// -----

// A weight gradient whose windows (64 wide) are wider than a vector and
// than its output (3x3): the columns are transposed, (image, output
// position) x (channel, window row, window column), so that the copy runs
// along the window's rows; the GEMM multiplies them by the transposed
// filters, and its result is transposed into the output. 4.5 MiB of
// columns go a channel (1 of 2) and then 16 window rows at a time
// (1 MiB), accumulating into the output.

// AVX512-DAG: #[[$TWINDOWS:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 + d4, d2 + d5)>
// AVX512-LABEL: func.func @weight_gradient_transposed
// AVX512: scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args(%{{.*}} = %{{.*}}) -> (tensor<16x32x3x3xf32>)
// AVX512:   scf.for %{{.*}} = %c0 to %c64 step %c16 iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<16x32x3x3xf32>)
// AVX512:     tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3]] : tensor<32x1x16x64xf32> into tensor<32x1024xf32>
// AVX512:     linalg.generic {indexing_maps = [#[[$TWINDOWS]], #{{.*}}], {{.*}} ins(%{{.*}} : tensor<16x1x18x66xf32>) outs(%{{.*}} : tensor<16x3x3x1x16x64xf32>)
// AVX512:     tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2], [3, 4, 5]] : tensor<16x3x3x1x16x64xf32> into tensor<144x1024xf32>
// The filters' transpose, in 16x16 register blocks.
// AVX512:     tensor.empty() : tensor<1024x32xf32>
// AVX512:     scf.for %{{.*}} = %c0 to %c1024 step %c16
// AVX512:       scf.for %{{.*}} = %c0 to %c32 step %c16
// AVX512:         vector.transfer_read %{{.*}} : tensor<16x16xf32>, vector<16x16xf32>
// AVX512:         vector.shuffle
// AVX512:     linalg.transpose ins(%[[ACC]] : tensor<16x32x3x3xf32>) outs(%{{.*}} : tensor<16x3x3x32xf32>) permutation = [0, 2, 3, 1]
// AVX512:     scf.for %{{.*}} = %c0 to %c1024 step %c256
// AVX512-COUNT-16: vector.fma %{{.*}} : vector<16xf32>
// AVX512:     tensor.expand_shape %{{.*}} {{\[\[}}0, 1, 2], [3]] output_shape [16, 3, 3, 32] : tensor<144x32xf32> into tensor<16x3x3x32xf32>
// AVX512:     linalg.transpose ins(%{{.*}} : tensor<16x3x3x32xf32>) outs(%[[ACC]] : tensor<16x32x3x3xf32>) permutation = [0, 3, 1, 2]
func.func @weight_gradient_transposed(%x: tensor<16x2x66x66xf32>, %dy: tensor<32x2x64x64xf32>, %o: tensor<16x32x3x3xf32>) -> tensor<16x32x3x3xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %dy : tensor<16x2x66x66xf32>, tensor<32x2x64x64xf32>) outs(%o : tensor<16x32x3x3xf32>) -> tensor<16x32x3x3xf32>
  return %r : tensor<16x32x3x3xf32>
}

// -----

// A 1x1 convolution at stride 2 copies every other pixel; at stride 1 its
// columns are the image itself (no copy).

// AVX2-DAG: #[[$STRIDED:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4 * 2 + d2, d5 * 2 + d3)>
// AVX2-LABEL: func.func @pointwise
// AVX2: linalg.generic {indexing_maps = [#[[$STRIDED]], #{{.*}}], {{.*}} ins(%{{.*}} : tensor<1x8x32x32xf32>) outs(%{{.*}} : tensor<1x8x1x1x16x16xf32>)
// AVX2: vector.fma
// AVX2-NOT: linalg.generic
// AVX2: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] : tensor<1x8x32x32xf32> into tensor<1x8x1024xf32>
// AVX2: vector.fma
func.func @pointwise(%x: tensor<1x8x32x32xf32>, %w: tensor<16x8x1x1xf32>, %o2: tensor<1x16x16x16xf32>, %o1: tensor<1x16x32x32xf32>) -> (tensor<1x16x16x16xf32>, tensor<1x16x32x32xf32>) {
  %r2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x8x32x32xf32>, tensor<16x8x1x1xf32>) outs(%o2 : tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  %r1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x32x32xf32>, tensor<16x8x1x1xf32>) outs(%o1 : tensor<1x16x32x32xf32>) -> tensor<1x16x32x32xf32>
  return %r2, %r1 : tensor<1x16x16x16xf32>, tensor<1x16x32x32xf32>
}

// -----

// Matrix-vector products are not GEMMs: left to the loops.

// AVX2-LABEL: func.func @matvec
// AVX2: linalg.matvec
func.func @matvec(%a: tensor<8x4xf32>, %x: tensor<4xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.matvec ins(%a, %x : tensor<8x4xf32>, tensor<4xf32>) outs(%y : tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// FP16 inputs with an f32 accumulator: each input is widened to f32 once,
// in an elementwise loop before the GEMM, whose register blocks then load
// f32 rows (no conversion inside the reduction loop).

// AVX2-LABEL: func.func @half_matmul
// AVX2: %[[A:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<64x32xf16>) outs(%{{.*}} : tensor<64x32xf32>)
// AVX2-NEXT: ^bb0(%[[AH:.*]]: f16, %{{.*}}: f32):
// AVX2-NEXT: arith.extf %[[AH]] : f16 to f32
// AVX2: %[[B:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<32x48xf16>) outs(%{{.*}} : tensor<32x48xf32>)
// AVX2: tensor.extract_slice %[[B]]
// AVX2: scf.for %{{.*}} = %c0 to %c32 step %c1 iter_args({{.*}}) -> (vector<8xf32>,
// AVX2: tensor.extract_slice %[[A]]
// AVX2-NOT: extf
// AVX2-COUNT-12: vector.fma %{{.*}} : vector<8xf32>
// AVX2-NEXT: scf.yield
func.func @half_matmul(%a: tensor<64x32xf16>, %b: tensor<32x48xf16>, %c: tensor<64x48xf32>) -> tensor<64x48xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x32xf16>, tensor<32x48xf16>) outs(%c : tensor<64x48xf32>) -> tensor<64x48xf32>
  return %r : tensor<64x48xf32>
}

// -----

// Transposes of the last two dimensions (a GEMM's transposed operand) in
// lanes x lanes blocks: the block's rows read, transposed in registers by
// one shuffle, written as rows; the edge blocks (static after peeling)
// likewise. A transpose that keeps the last dimension in place copies
// rows already and stays as it is.

// AVX2-LABEL: func.func @transposes
// AVX2: scf.for %{{.*}} = %c0 to %c32 step %c8
// AVX2: scf.for %{{.*}} = %c0 to %c16 step %c8
// AVX2: vector.transfer_read {{.*}} : tensor<8x8xf16>, vector<8x8xf16>
// AVX2: vector.shuffle %{{.*}}, %{{.*}} [0, 8, 16, 24, 32, 40, 48, 56, 1, 9,
// AVX2: vector.transfer_write {{.*}} : vector<8x8xf16>, tensor<8x8xf16>
// AVX2: vector.transfer_write {{.*}} : vector<8x4xf16>, tensor<8x4xf16>
// AVX2: vector.transfer_write {{.*}} : vector<5x8xf16>, tensor<5x8xf16>
// AVX2: vector.transfer_write {{.*}} : vector<5x4xf16>, tensor<5x4xf16>
// AVX2: scf.for %{{.*}} = %c0 to %c3 step %c1
// AVX2: vector.transfer_read {{.*}} : tensor<1x8x8xf32>, vector<8x8xf32>
// AVX2: vector.transfer_write {{.*}} : vector<8x8xf32>, tensor<1x8x8xf32>
// AVX2: linalg.transpose ins(%{{.*}} : tensor<16x16x4xf32>) {{.*}} permutation = [1, 0, 2]

// AVX512-LABEL: func.func @transposes
// AVX512: vector.transfer_read {{.*}} : tensor<16x16xf16>, vector<16x16xf16>
// AVX512: vector.transfer_read {{.*}} : tensor<1x16x16xf32>, vector<16x16xf32>
// AVX512: linalg.transpose ins(%{{.*}} : tensor<16x16x4xf32>) {{.*}} permutation = [1, 0, 2]
func.func @transposes(%x: tensor<20x37xf16>, %y: tensor<3x19x40xf32>, %z: tensor<16x16x4xf32>) -> (tensor<37x20xf16>, tensor<3x40x19xf32>, tensor<16x16x4xf32>) {
  %e = tensor.empty() : tensor<37x20xf16>
  %t = linalg.transpose ins(%x : tensor<20x37xf16>) outs(%e : tensor<37x20xf16>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<3x40x19xf32>
  %t2 = linalg.transpose ins(%y : tensor<3x19x40xf32>) outs(%e2 : tensor<3x40x19xf32>) permutation = [0, 2, 1]
  %e3 = tensor.empty() : tensor<16x16x4xf32>
  %t3 = linalg.transpose ins(%z : tensor<16x16x4xf32>) outs(%e3 : tensor<16x16x4xf32>) permutation = [1, 0, 2]
  return %t, %t2, %t3 : tensor<37x20xf16>, tensor<3x40x19xf32>, tensor<16x16x4xf32>
}

// -----

// A GEMM's FP16 operand that only a transpose made (a transposed FP16
// weight) is widened as it is transposed, and where B's panels are packed
// (here), as each panel is packed: blocks of the weight's rows read as
// FP16, transposed in registers, widened, written as f32 rows of the
// panel's buffer; neither an FP16 nor a widened transpose of the whole
// weight is made.

// AVX2-LABEL: func.func @widening_transpose
// AVX2-NOT: linalg.transpose
// AVX2-NOT: tensor<32x48xf32>
// AVX2: scf.for %{{.*}} = %c0 to %c48 step %c24
// AVX2: tensor.empty() : tensor<32x24xf32>
// AVX2: scf.for %{{.*}} = %c0 to %c32 step %c8
// AVX2: scf.for %{{.*}} = %c0 to %c24 step %c8
// AVX2: vector.transfer_read %{{.*}} : tensor<8x8xf16>, vector<8x8xf16>
// AVX2: vector.shuffle
// AVX2: arith.extf %{{.*}} : vector<8x8xf16> to vector<8x8xf32>
// AVX2: vector.transfer_write %{{.*}} : vector<8x8xf32>, tensor<8x8xf32>
// AVX2-NOT: linalg.transpose

// AVX512-LABEL: func.func @widening_transpose
// AVX512-NOT: linalg.transpose
// AVX512-NOT: tensor<32x48xf32>
// AVX512: vector.transfer_read %{{.*}} : tensor<16x16xf16>, vector<16x16xf16>
// AVX512: arith.extf %{{.*}} : vector<16x16xf16> to vector<16x16xf32>
// AVX512-NOT: linalg.transpose
func.func @widening_transpose(%a: tensor<64x32xf16>, %w: tensor<48x32xf16>, %c: tensor<64x48xf32>) -> tensor<64x48xf32> {
  %e = tensor.empty() : tensor<32x48xf16>
  %t = linalg.transpose ins(%w : tensor<48x32xf16>) outs(%e : tensor<32x48xf16>) permutation = [1, 0]
  %r = linalg.matmul ins(%a, %t : tensor<64x32xf16>, tensor<32x48xf16>) outs(%c : tensor<64x48xf32>) -> tensor<64x48xf32>
  return %r : tensor<64x48xf32>
}

// -----

// An FP16 operand that a rounding of f32 data made (FP16 activations cast
// from the f32 input, reshaped for the GEMM): rounded and widened in one
// pass reading the f32 data, reshaped alike; the FP16 tensor is not made.

// AVX512-LABEL: func.func @rounded_activations
// AVX512-NOT: tensor<4x16x8xf16>
// AVX512: %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2]] : tensor<4x16x8xf32> into tensor<4x128xf32>
// AVX512: linalg.generic {{.*}} ins(%[[FLAT]] : tensor<4x128xf32>) outs(%{{.*}} : tensor<4x128xf32>)
// AVX512:   %[[H:.*]] = arith.truncf %{{.*}} : f32 to f16
// AVX512:   arith.extf %[[H]] : f16 to f32
// The weight, FP16 already, is widened as it was.
// AVX512: linalg.generic {{.*}} ins(%{{.*}} : tensor<128x64xf16>) outs(%{{.*}} : tensor<128x64xf32>)
// AVX512:   arith.extf %{{.*}} : f16 to f32
// AVX512-NOT: f16
// AVX512: vector.fma
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @rounded_activations(%x: tensor<4x16x8xf32>, %w: tensor<128x64xf16>, %c: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %e = tensor.empty() : tensor<4x16x8xf16>
  %h = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<4x16x8xf32>) outs(%e : tensor<4x16x8xf16>) {
  ^bb0(%a: f32, %out: f16):
    %t = arith.truncf %a : f32 to f16
    linalg.yield %t : f16
  } -> tensor<4x16x8xf16>
  %flat = tensor.collapse_shape %h [[0], [1, 2]] : tensor<4x16x8xf16> into tensor<4x128xf16>
  %r = linalg.matmul ins(%flat, %w : tensor<4x128xf16>, tensor<128x64xf16>) outs(%c : tensor<4x64xf32>) -> tensor<4x64xf32>
  return %r : tensor<4x64xf32>
}

// -----

// The same for an f32 weight read transposed (a Linear layer's x * W^T):
// each panel's pack reads 16x16 blocks of W's rows and transposes them in
// registers; W^T is never made (it was a pass over the weights per step,
// a tenth of a 784-128-10 MLP's step).

// AVX512-LABEL: func.func @transposed_weight
// AVX512-NOT: tensor<256x128xf32>
// AVX512: scf.for %{{.*}} = %c0 to %c128 step %c32
// AVX512:     tensor.empty() : tensor<256x32xf32>
// AVX512:     tensor.extract_slice %{{.*}} [32, 256] [1, 1] : tensor<128x256xf32> to tensor<32x256xf32>
// AVX512:     scf.for %{{.*}} = %c0 to %c256 step %c16
// AVX512:       scf.for %{{.*}} = %c0 to %c32 step %c16
// AVX512:         vector.transfer_read %{{.*}} : tensor<16x16xf32>, vector<16x16xf32>
// AVX512:         vector.shuffle
// AVX512:     vector.fma
// AVX512-NOT: linalg.transpose
func.func @transposed_weight(%x: tensor<64x256xf32>, %w: tensor<128x256xf32>, %c: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %e = tensor.empty() : tensor<256x128xf32>
  %t = linalg.transpose ins(%w : tensor<128x256xf32>) outs(%e : tensor<256x128xf32>) permutation = [1, 0]
  %r = linalg.matmul ins(%x, %t : tensor<64x256xf32>, tensor<256x128xf32>) outs(%c : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}

// -----

// B wider than a panel and read by at least 8 register blocks: each panel
// of B is copied into a tensor of its own (a contiguous kc x nr buffer once
// bufferized) before the m loop reads it block after block. With fewer
// rows the copy would not pay: none. Nor where B's rows lie an odd number
// of cache lines apart (48 floats: 3 lines), within a page: a panel's rows
// then spread over all the sets of the L1 cache as they are. Rows 65 lines
// apart are each on a page of their own: copied.

// AVX2-LABEL: func.func @packed_panel
// AVX2: scf.for %[[N:.+]] = %c0 to %c96 step %c24
// AVX2: %[[PANEL:.+]] = tensor.extract_slice %arg1[0, %[[N]]] [32, 24] [1, 1] : tensor<32x96xf32> to tensor<32x24xf32>
// AVX2: %[[BUFFER:.+]] = tensor.empty() : tensor<32x24xf32>
// AVX2: %[[PACKED:.+]] = linalg.copy ins(%[[PANEL]] : tensor<32x24xf32>) outs(%[[BUFFER]] : tensor<32x24xf32>)
// AVX2: scf.for %{{.*}} = %c0 to %c64 step %c4
// AVX2: scf.for %[[K:.+]] = %c0 to %c32 step %c1
// AVX2: tensor.extract_slice %[[PACKED]][%[[K]], 0] [1, 24] [1, 1] : tensor<32x24xf32> to tensor<1x24xf32>
// AVX2-LABEL: func.func @few_rows
// AVX2-NOT: linalg.copy
// AVX2-LABEL: func.func @spread_rows
// AVX2-NOT: linalg.copy
// AVX2-LABEL: func.func @rows_a_page_apart
// AVX2: linalg.copy ins(%{{.*}} : tensor<32x24xf32>)
func.func @packed_panel(%a: tensor<64x32xf32>, %b: tensor<32x96xf32>, %c: tensor<64x96xf32>) -> tensor<64x96xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x96xf32>) outs(%c : tensor<64x96xf32>) -> tensor<64x96xf32>
  return %r : tensor<64x96xf32>
}
func.func @few_rows(%a: tensor<16x32xf32>, %b: tensor<32x48xf32>, %c: tensor<16x48xf32>) -> tensor<16x48xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<16x32xf32>, tensor<32x48xf32>) outs(%c : tensor<16x48xf32>) -> tensor<16x48xf32>
  return %r : tensor<16x48xf32>
}
func.func @spread_rows(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>, %c: tensor<64x48xf32>) -> tensor<64x48xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x48xf32>) outs(%c : tensor<64x48xf32>) -> tensor<64x48xf32>
  return %r : tensor<64x48xf32>
}
func.func @rows_a_page_apart(%a: tensor<64x32xf32>, %b: tensor<32x1040xf32>, %c: tensor<64x48xf32>) -> tensor<64x48xf32> {
  %panel = tensor.extract_slice %b[0, 0] [32, 48] [1, 1] : tensor<32x1040xf32> to tensor<32x48xf32>
  %r = linalg.matmul ins(%a, %panel : tensor<64x32xf32>, tensor<32x48xf32>) outs(%c : tensor<64x48xf32>) -> tensor<64x48xf32>
  return %r : tensor<64x48xf32>
}

// -----

// A GEMM large enough for slabs and chunks: each slab of 256 reduction
// steps packs its rows of B panel by panel (4 panels of 256 x 32, each
// contiguous) once, each chunk of 64 rows packs its slice of A, and the
// panels read the packed B. Then the edge chunk of 8 rows, and the last,
// shallower slab of 64 steps alike.
// AVX512-LABEL: func.func @large
// AVX512: %[[PACKED:.+]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<256x128xf32>) outs(%{{.*}} : tensor<4x256x32xf32>)
// AVX512: scf.for %{{.*}} = %c0 to %c128 step %c64
// AVX512: linalg.copy ins(%{{.*}} : tensor<64x256xf32>)
// AVX512: scf.for %[[COLUMN:.+]] = %c0 to %c128 step %c32
// AVX512: %[[PANEL:.+]] = affine.apply #{{.*}}(%[[COLUMN]])
// AVX512: tensor.extract_slice %[[PACKED]][%[[PANEL]], 0, 0] [1, 256, 32] [1, 1, 1] : tensor<4x256x32xf32> to tensor<256x32xf32>
// AVX512: scf.for %{{.*}} = %c0 to %c64 step %c8
// AVX512: scf.for %{{.*}} = %c0 to %c256 step %c1 iter_args(
// AVX512-COUNT-16: vector.fma %{{.*}} : vector<16xf32>
// AVX512: linalg.copy ins(%{{.*}} : tensor<8x256xf32>)
// AVX512: linalg.generic {{.*}} ins(%{{.*}} : tensor<64x128xf32>) outs(%{{.*}} : tensor<4x64x32xf32>)
func.func @large(%a: tensor<136x320xf32>, %b: tensor<320x128xf32>) -> tensor<136x128xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<136x128xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<136x128xf32>) -> tensor<136x128xf32>
  %c = linalg.matmul ins(%a, %b : tensor<136x320xf32>, tensor<320x128xf32>) outs(%init : tensor<136x128xf32>) -> tensor<136x128xf32>
  return %c : tensor<136x128xf32>
}

// -----

// Batched images whose columns exceed 1 MiB (4 images of 14x14: 2304 x 784
// floats, 7 MiB) are built and multiplied a block of input channels at a
// time into one transposed accumulator: 16 channels (144 rows, 441 KiB;
// the largest divisor of 256 within 1 MiB and a panel's 256 steps), the
// input and the filter read as slices at the block's channel, and the
// accumulator transposed back once after the loop.

// AVX512-DAG: #[[$BATCHWINDOWS:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d0, d1 + d4, d2 + d5)>
// AVX512-LABEL: func.func @channel_blocks
// AVX512-SAME:      %[[X:.*]]: tensor<4x256x16x16xf32>, %[[W:.*]]: tensor<256x256x3x3xf32>, %[[O:.*]]: tensor<4x256x14x14xf32>
// AVX512: %[[WM:.*]] = tensor.collapse_shape %[[W]] {{\[}}[0], [1, 2, 3]] : tensor<256x256x3x3xf32> into tensor<256x2304xf32>
// AVX512: %[[OT:.*]] = linalg.transpose ins(%[[O]] : tensor<4x256x14x14xf32>) {{.*}} permutation = [1, 0, 2, 3]
// AVX512: %[[ACC:.*]] = scf.for %[[CH:.*]] = %c0 to %c256 step %c16 iter_args(%{{.*}} = %{{.*}}) -> (tensor<256x784xf32>)
// AVX512:   %[[XB:.*]] = tensor.extract_slice %[[X]][0, %[[CH]], 0, 0] [4, 16, 16, 16] [1, 1, 1, 1]
// AVX512:   %[[ROW:.*]] = arith.muli %[[CH]], %c9
// AVX512:   %[[WB:.*]] = tensor.extract_slice %[[WM]][0, %[[ROW]]] [256, 144] [1, 1]
// AVX512:   linalg.generic {indexing_maps = [#[[$BATCHWINDOWS]], #{{.*}}], {{.*}} ins(%[[XB]] : tensor<4x16x16x16xf32>) outs(%{{.*}} : tensor<16x3x3x4x14x14xf32>)
// AVX512:   scf.for %{{.*}} = %c0 to %c144 step %c1
// AVX512:     vector.fma
// AVX512-NOT: linalg.transpose
// AVX512: scf.yield
// AVX512: %[[R:.*]] = linalg.transpose ins(%{{.*}} : tensor<256x4x14x14xf32>) outs(%[[O]] : tensor<4x256x14x14xf32>) permutation = [1, 0, 2, 3]
// AVX512: return %[[R]]
func.func @channel_blocks(%x: tensor<4x256x16x16xf32>, %w: tensor<256x256x3x3xf32>, %o: tensor<4x256x14x14xf32>) -> tensor<4x256x14x14xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<4x256x16x16xf32>, tensor<256x256x3x3xf32>) outs(%o : tensor<4x256x14x14xf32>) -> tensor<4x256x14x14xf32>
  return %r : tensor<4x256x14x14xf32>
}

// -----

// A grouped convolution from zeros (2 groups of 8 channels and 16 filters):
// a loop over the groups, whose slices, without their unit group
// dimension, make an ungrouped convolution each, an im2col copy and a GEMM
// (16 filters x 72 steps) filling each register block's outputs itself.

// AVX512-LABEL: func.func @grouped
// AVX512-NOT: linalg.conv_2d_ngchw_gfchw
// AVX512: %[[EMPTY:.*]] = tensor.empty() : tensor<1x2x16x4x4xf32>
// AVX512: scf.for %[[G:.*]] = %c0 to %c2 step %c1 iter_args(%{{.*}} = %[[EMPTY]]) -> (tensor<1x2x16x4x4xf32>)
// AVX512:   %[[IN:.*]] = tensor.extract_slice %{{.*}}[0, %[[G]], 0, 0, 0] [1, 1, 8, 6, 6] [1, 1, 1, 1, 1]
// AVX512:   %[[FILTER:.*]] = tensor.extract_slice %{{.*}}[%[[G]], 0, 0, 0, 0] [1, 16, 8, 3, 3] [1, 1, 1, 1, 1]
// AVX512:   tensor.collapse_shape %[[IN]] {{\[\[}}0, 1], [2], [3], [4]] : tensor<1x1x8x6x6xf32> into tensor<1x8x6x6xf32>
// AVX512:   tensor.collapse_shape %[[FILTER]] {{\[\[}}0, 1], [2, 3, 4]] : tensor<1x16x8x3x3xf32> into tensor<16x72xf32>
// AVX512:   linalg.generic {{.*}} outs(%{{.*}} : tensor<1x8x3x3x4x4xf32>)
// AVX512:   scf.for %{{.*}} = %c0 to %c16 step %c8
// AVX512:     linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x8x16xf32>)
// AVX512:     scf.for %{{.*}} = %c0 to %c72 step %c1
// AVX512-COUNT-8: vector.fma %{{.*}} : vector<16xf32>
// AVX512:   tensor.insert_slice %{{.*}} into %{{.*}}[0, %[[G]], 0, 0, 0] [1, 1, 16, 4, 4] [1, 1, 1, 1, 1]
func.func @grouped(%x: tensor<1x2x8x6x6xf32>, %w: tensor<2x16x8x3x3xf32>) -> tensor<1x2x16x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x2x16x4x4xf32>
  %o = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x2x16x4x4xf32>) -> tensor<1x2x16x4x4xf32>
  %r = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x8x6x6xf32>, tensor<2x16x8x3x3xf32>) outs(%o : tensor<1x2x16x4x4xf32>) -> tensor<1x2x16x4x4xf32>
  return %r : tensor<1x2x16x4x4xf32>
}

// -----

// Depthwise (a channel and a filter a group) and depth-multiplier (two
// filters) convolutions would make GEMMs of one or two rows: they stay one
// generic of the same computation. Where the windows move by 1 along the
// rows, the output positions move inside the reductions (each output adds
// its terms in the same order); at stride 2 the loops stay as they are.

// AVX512-DAG: #[[$DWIN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d3 * 2 + d6, d4 * 2 + d7)>
// AVX512-DAG: #[[$DWFILTER:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>
// AVX512-DAG: #[[$ROWIN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d3, d4 + d6, d5 + d7)>
// AVX512-DAG: #[[$ROWFILTER:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d3, d4, d5)>
// AVX512-DAG: #[[$ROWOUT:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d6, d7)>
// AVX512-LABEL: func.func @depthwise
// AVX512-NOT: linalg.conv_2d_ngchw_gfchw
// AVX512: linalg.generic {indexing_maps = [#[[$DWIN]], #[[$DWFILTER]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// AVX512-SAME: outs(%{{.*}} : tensor<2x4x1x3x3xf32>)
// AVX512: linalg.generic {indexing_maps = [#[[$ROWIN]], #[[$ROWFILTER]], #[[$ROWOUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
// AVX512-SAME: outs(%{{.*}} : tensor<2x4x2x5x5xf32>)
// AVX512-NOT: vector.fma
func.func @depthwise(%x: tensor<2x4x1x7x7xf32>, %w: tensor<4x1x1x3x3xf32>, %o: tensor<2x4x1x3x3xf32>,
                     %w2: tensor<4x2x1x3x3xf32>, %o2: tensor<2x4x2x5x5xf32>) -> (tensor<2x4x1x3x3xf32>, tensor<2x4x2x5x5xf32>) {
  %r = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<2x4x1x7x7xf32>, tensor<4x1x1x3x3xf32>) outs(%o : tensor<2x4x1x3x3xf32>) -> tensor<2x4x1x3x3xf32>
  %r2 = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w2 : tensor<2x4x1x7x7xf32>, tensor<4x2x1x3x3xf32>) outs(%o2 : tensor<2x4x2x5x5xf32>) -> tensor<2x4x2x5x5xf32>
  return %r, %r2 : tensor<2x4x1x3x3xf32>, tensor<2x4x2x5x5xf32>
}
