//===- GemmKernel.h - Fused FP16 Tensor Core GEMM kernels -------*- C++ -*-===//
//
// A GEMM C = epilogue(scale * op(A) op(B)) on mma.sync.m16n8k16 (f16 x f16
// -> f32; or, for sm_90a, wgmma.mma_async.m64nNk16) whose epilogue also
// gathers the statistics gs.grad_stats computes of C and gs.cast_stats of
// the f32 values C is rounded from. It is built
// as a func.func around gpu.launch ops: gs-outline-gpu-kernels and the NVVM
// pipeline make it a CUDA kernel; gs-emulate-gpu runs the same IR on the
// CPU.
//
//===----------------------------------------------------------------------===//

#ifndef GS_CONVERSION_GSTOGPU_GEMMKERNEL_H
#define GS_CONVERSION_GSTOGPU_GEMMKERNEL_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::gs::tensorcore {

/// The per-thread-block partial statistics, f32 each, in this order.
enum PartialStat : int64_t {
  PartialSum,
  PartialSumOfSquares,
  PartialMaxAbs,
  PartialNonzero,
  PartialSumOfLogs,
  PartialSumOfSquaredLogs,
  PartialCastNonzero,
  PartialFlushed,
  PartialSubnormal,
  PartialOverflow,
  NumPartialStats
};

/// The element types of C and of the bias.
enum class ElementType { F16, F32 };

/// The Tensor Core instruction of the main loop: warp-level mma.sync.m16n8k16
/// fed by ldmatrix (sm_80 and later), or warpgroup-level
/// wgmma.mma_async.m64nNk16 reading both operands from shared memory
/// through matrix descriptors (sm_90a only).
enum class MmaInstruction { MmaSync, Wgmma };

/// The command-line spellings of ElementType (f16, f32).
llvm::cl::ValuesClass elementTypeValues();

/// A convolution, computed as a GEMM over its output channels (m), its
/// images and output positions (n) and its input channels and kernel
/// offsets (k), in that k order: an implicit GEMM, the operands gathered
/// from the input and weight as the tiles are filled, the result scattered
/// into the output. A grouped convolution is one such GEMM per group, over
/// the group's channels.
struct ConvolutionGeometry {
  /// A transposed convolution (gs.conv_transpose: a convolution's data
  /// gradient), whose k order runs over the kernel's offsets backwards, as
  /// the CPU lowering's flipped kernel does.
  bool transposed = false;
  int64_t batch = 0, inChannels = 0, outChannels = 0;
  /// The groups (ONNX's group): group g maps input channels [g, g + 1) *
  /// inChannels / groups to output channels [g, g + 1) * outChannels /
  /// groups; the weight is outChannels x inChannels / groups x kernel
  /// (transposed: inChannels x outChannels / groups x kernel).
  int64_t groups = 1;
  /// A forward convolution's groups read one weight, M/G x C x K..., each
  /// group its own input channels [g, g + 1) * C/G of every filter (the
  /// weight M x C/G x K... group g's filters would be): a weight gradient
  /// split over its images, whose filters are one output gradient.
  bool groupsSplitWeight = false;
  /// The input lies channels first, inChannels x batch x inSpatial...: a
  /// weight gradient's correlation, whose images are the forward input's
  /// channels and whose channels its images, reads that input as it lies
  /// instead of a transposed copy.
  bool inputChannelsFirst = false;
  /// With inputChannelsFirst and groups, the input lies as the forward
  /// input of the grouped convolution whose weight gradient this
  /// correlation is: inChannels / groups x (groups * batch) x inSpatial...,
  /// group g's channels all of the first dimension and its images
  /// [g, g + 1) * batch of the second (instead of a copy reshaped and
  /// transposed into inChannels x batch x inSpatial...).
  bool inputGroupsInImages = false;
  /// A forward convolution's weight lies with its first two dimensions
  /// swapped (C/G x M x K..., or with groupsSplitWeight C x M/G x K...):
  /// a weight gradient's correlation, whose filters are the output
  /// gradient N x Cout x O..., reads it as it lies.
  bool weightChannelsFirst = false;
  /// Per spatial dimension (1 to 3 of them).
  llvm::SmallVector<int64_t, 3> inSpatial, kernel, outSpatial, strides,
      dilations, padsBegin;

  /// The sizes k and n flatten, in order: (input channel of the group,
  /// kernel offsets) and (image, output position).
  llvm::SmallVector<int64_t> kSizes() const;
  llvm::SmallVector<int64_t> nSizes() const;
};

struct GemmKernelConfig {
  std::string name = "gemm";
  /// C is m x n, A m x k (k x m with transA), B k x n (n x k with transB),
  /// all row-major; for a grouped convolution, each group's.
  int64_t m = 0, n = 0, k = 0;
  bool transA = false, transB = false;
  /// C's element type: f16 (the f32 epilogue value rounded once) or f32.
  ElementType output = ElementType::F16;
  /// Adds a bias: memref<n x biasType>, one per column.
  bool bias = false;
  ElementType biasType = ElementType::F32;
  /// Zeroes C where a memref<m x n x f16> (the forward ReLU output) is <= 0
  /// (a ReLU's backward); the statistics are of the values before.
  bool reluMask = false;
  /// Gathers the statistics (off: the same GEMM without them, the baseline
  /// of their cost; the kernel then takes no statistics buffers).
  bool statistics = true;
  /// The main loop's Tensor Core instruction. With wgmma, each warpgroup
  /// (4 warps) computes 64 rows of the block's tile, all blockN columns:
  /// warpsM = blockM / 16 and warpsN = 1.
  MmaInstruction instruction = MmaInstruction::MmaSync;
  /// Set: the kernel is this convolution's implicit GEMM (see
  /// setConvolution); A is its weight, B its input, C its output, the bias
  /// one value per output channel (row).
  std::optional<ConvolutionGeometry> conv;
  /// The thread-block tile, the warps that share it, and the k tiles in
  /// shared memory at once (the cp.async pipeline's depth); 0: chosen by
  /// chooseTiles.
  int64_t blockM = 0, blockN = 0, blockK = 0;
  int64_t warpsM = 0, warpsN = 0;
  int64_t stages = 0;
  /// With wgmma: the groups of a k tile's wgmmas still running when the
  /// next tile's are issued: 0 (each tile's finish before the next
  /// barrier) or 1 (each waits only for the tile before; the copies then
  /// run stages - 2 tiles ahead, not stages - 1, so 3 stages at least).
  int64_t wgmmaGroupsInFlight = 0;
  /// Thread blocks a multiprocessor should hold at once (nvvm.minctasm on
  /// the main launch, which caps ptxas's registers per thread at 64 Ki /
  /// (threads x blocks)); 1: no such hint; 0: chosen by chooseTiles.
  int64_t minBlocksPerSM = 0;

  int64_t gridM() const { return (m + blockM - 1) / blockM; }
  int64_t gridN() const { return (n + blockN - 1) / blockN; }
  /// The GEMMs the kernel computes: a grouped convolution's groups (the
  /// grid's z), or 1.
  int64_t numGroups() const { return conv ? conv->groups : 1; }
  int64_t numBlocks() const { return gridM() * gridN() * numGroups(); }
  int64_t numThreads() const { return 32 * warpsM * warpsN; }
};

/// Makes `config` the implicit GEMM of `conv`: its m, n and k (a group's).
void setConvolution(GemmKernelConfig &config, ConvolutionGeometry conv);

/// Fills in the tile sizes left 0 for the shape: 128 x 128 blocks of 8 warps
/// for large matrices, 64 x 64 (or 32 where m or n is at most 32) blocks of
/// 32 x 32 warp tiles otherwise; with wgmma, 128 x 128 blocks of two
/// warpgroups, or 64 x 64 (32 wide where n is at most 32) of one.
void chooseTiles(GemmKernelConfig &config);

/// Builds, at `builder`'s insertion point, the kernel function
///   @name(%A: memref<m x k x f16>, %B: memref<k x n x f16>,
///         %scale: memref<1xf32>, [%bias], [%mask],
///         %C: memref<m x n x f16|f32>,
///         [%partials: memref<numBlocks x NumPartialStats x f32>,
///          %grad_stats: memref<7xf64>, %cast_stats: memref<4xi64>])
/// (A and B transposed where asked) computing
///   C = mask(round(scale * op(A) op(B) + bias))
/// in f32, rounded once to C's type. %grad_stats are the statistics of C as
/// stored but before the mask, %cast_stats the counts of the f32 values'
/// rounding to f16 (what it did to an f16 C, what it would do to an f32
/// one), laid out as the CPU lowering of !gs.stats and gs.cast_stats. The
/// mask zeroes C where it is not positive. A convolution's kernel takes
/// its weight (M x C/G x K... forward, C x M/G x K... transposed), input
/// (N x C x D...) and output (N x M x O..., the mask's shape too) instead
/// of A, B and C, and its bias has M values. Fails (with a diagnostic at `loc`)
/// on a configuration the kernel cannot run.
FailureOr<func::FuncOp> buildGemmKernel(OpBuilder &builder, Location loc,
                                        const GemmKernelConfig &config);

/// A tensor-level entry `@<name>_entry(A, B, scale, [bias], [mask]) -> (C,
/// grad_stats, cast_stats)` that calls the kernel function: what gs-run
/// executes in the tests.
func::FuncOp buildGemmKernelEntry(OpBuilder &builder, Location loc,
                                  const GemmKernelConfig &config,
                                  func::FuncOp kernel);

} // namespace mlir::gs::tensorcore

#endif // GS_CONVERSION_GSTOGPU_GEMMKERNEL_H
