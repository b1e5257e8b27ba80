//===- Pooling.cpp - Max, average and global average pooling ---*- C++ -*-===//
//
// Pooling windows become reduction loops of a linalg.generic over the padded
// input. Average pooling divides by per-position window sizes that are
// known at compile time (a constant), whether or not padding counts.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "gs/Dialect/GS/IR/ShapeUtils.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::to_linalg;

/// Pads `x` for the windows of an `outputShape` pooling: the explicit pads,
/// plus what a ceil-mode last window reaches beyond them.
static Value padForWindows(OpBuilder &b, Location loc, Value x,
                           RankedTensorType outputType,
                           ArrayRef<int64_t> kernel, const WindowGeometry &g,
                           Value padValue) {
  RankedTensorType type = tensorTypeOf(x);
  SmallVector<int64_t> low = {0, 0}, high = {0, 0};
  for (size_t i = 0; i < kernel.size(); ++i) {
    int64_t needed = (outputType.getDimSize(i + 2) - 1) * g.strides[i] +
                     dilatedKernelSize(kernel[i], g.dilations[i]);
    int64_t have = type.getDimSize(i + 2) + g.padsBegin[i] + g.padsEnd[i];
    low.push_back(g.padsBegin[i]);
    high.push_back(g.padsEnd[i] + std::max<int64_t>(0, needed - have));
  }
  return pad(b, loc, x, low, high, padValue);
}

namespace {
/// The indexing of a reduction over pooling windows: loops n, c, the
/// output's leading spatial dimensions o..., the kernel's k... and the
/// output's last dimension innermost (so that the loops run along output
/// rows, which vectorize, rather than along a few kernel columns); the
/// padded input read at o * stride + k * dilation, a window operand of the
/// kernel's shape (never read: it carries the loop bounds), and the output
/// at (n, c, o...).
struct WindowIndexing {
  AffineMap input, window, output;
  SmallVector<utils::IteratorType> iterators;
  Value windowOperand;
  /// The loop of the first kernel dimension.
  int64_t firstKernelLoop;
};
} // namespace

static WindowIndexing windowIndexing(OpBuilder &b, Location loc,
                                     ArrayRef<int64_t> kernel,
                                     const WindowGeometry &g) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = kernel.size();
  int64_t numLoops = 2 + 2 * rank;
  int64_t firstKernelLoop = 1 + rank;
  auto outputLoop = [&](int64_t i) {
    return getAffineDimExpr(i == rank - 1 ? numLoops - 1 : 2 + i, ctx);
  };
  auto kernelLoop = [&](int64_t i) {
    return getAffineDimExpr(firstKernelLoop + i, ctx);
  };
  SmallVector<AffineExpr> inExprs = {getAffineDimExpr(0, ctx),
                                     getAffineDimExpr(1, ctx)},
                          windowExprs, outExprs(inExprs);
  for (int64_t i = 0; i < rank; ++i) {
    inExprs.push_back(outputLoop(i) * g.strides[i] +
                      kernelLoop(i) * g.dilations[i]);
    windowExprs.push_back(kernelLoop(i));
    outExprs.push_back(outputLoop(i));
  }
  SmallVector<utils::IteratorType> iterators = parallelIterators(1 + rank);
  iterators.append(rank, utils::IteratorType::reduction);
  iterators.push_back(utils::IteratorType::parallel);
  return {AffineMap::get(numLoops, 0, inExprs, ctx),
          AffineMap::get(numLoops, 0, windowExprs, ctx),
          AffineMap::get(numLoops, 0, outExprs, ctx),
          iterators,
          tensor::EmptyOp::create(b, loc, kernel, b.getF32Type()),
          firstKernelLoop};
}

/// Reduces each window of `padded` with `combine` into `init`.
static Value
poolWindows(OpBuilder &b, Location loc, Value padded, Value init,
            ArrayRef<int64_t> kernel, const WindowGeometry &g,
            function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  WindowIndexing w = windowIndexing(b, loc, kernel, g);
  Type accType = tensorTypeOf(init).getElementType();
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{padded, w.windowOperand}, init,
             SmallVector<AffineMap>{w.input, w.window, w.output}, w.iterators,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value x = convertScalar(nb, l, args[0], accType);
               linalg::YieldOp::create(nb, l, combine(nb, l, x, args[2]));
             })
      .getResult(0);
}

/// The divisor of each average-pooling window (spatial output shape, f32):
/// how many of its elements lie inside the input, or inside input and
/// explicit padding with `countIncludePad`. Known at compile time.
static Value windowDivisors(OpBuilder &b, Location loc, RankedTensorType inType,
                            RankedTensorType outType, ArrayRef<int64_t> kernel,
                            const WindowGeometry &g, bool countIncludePad) {
  int64_t rank = kernel.size();
  SmallVector<SmallVector<int64_t>> counts(rank);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t size = inType.getDimSize(i + 2);
    int64_t lo = countIncludePad ? -g.padsBegin[i] : 0;
    int64_t hi = countIncludePad ? size + g.padsEnd[i] : size;
    for (int64_t o = 0; o < outType.getDimSize(i + 2); ++o) {
      int64_t start = o * g.strides[i] - g.padsBegin[i];
      int64_t n = 0;
      for (int64_t k = 0; k < kernel[i]; ++k)
        n += start + k >= lo && start + k < hi;
      counts[i].push_back(n);
    }
  }
  SmallVector<int64_t> divisorShape(outType.getShape().drop_front(2));
  SmallVector<float> divisors(numElements(divisorShape));
  for (size_t flat = 0; flat < divisors.size(); ++flat) {
    int64_t rest = flat, n = 1;
    for (int64_t i = rank - 1; i >= 0; --i) {
      n *= counts[i][rest % divisorShape[i]];
      rest /= divisorShape[i];
    }
    divisors[flat] = static_cast<float>(std::max<int64_t>(n, 1));
  }
  auto divisorType = RankedTensorType::get(divisorShape, b.getF32Type());
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(divisorType, ArrayRef(divisors)));
}

/// The row-major position in the kernel of the element whose offset along
/// kernel dimension i is `offsetAlong(i)`.
static Value windowPosition(OpBuilder &b, Location loc,
                            ArrayRef<int64_t> kernel,
                            function_ref<Value(int64_t)> offsetAlong) {
  Value flat = scalarConstant(b, loc, b.getIndexType(), 0);
  for (auto [i, k] : llvm::enumerate(kernel)) {
    Value scaled = arith::MulIOp::create(
        b, loc, flat, scalarConstant(b, loc, b.getIndexType(), k));
    flat = arith::AddIOp::create(b, loc, scaled, offsetAlong(i));
  }
  return flat;
}

/// The row-major position of the kernel element that reduction loops
/// `first..first+rank-1` of a linalg.generic are at.
static Value windowPosition(OpBuilder &b, Location loc,
                            ArrayRef<int64_t> kernel, int64_t first) {
  return windowPosition(b, loc, kernel, [&](int64_t i) -> Value {
    return linalg::IndexOp::create(b, loc, first + i);
  });
}

/// The gradient of a pooling in gather form: each input position sums,
/// over its kernel offsets k, `contribution(window, k)` of the window whose
/// element k it is (window = (i + pad - k * dilation) / stride where that
/// divides and is in range). `contribution` gets the window's indices
/// (n, c, o...) and the window position of k; its value is accumulated in
/// the accumulation type of `inType`'s elements.
static Value
scatterToWindows(OpBuilder &b, Location loc, RankedTensorType inType,
                 RankedTensorType outType, ArrayRef<int64_t> kernel,
                 const WindowGeometry &g,
                 function_ref<Value(OpBuilder &, Location, ValueRange, Value)>
                     contribution) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = kernel.size(), numLoops = 2 + 2 * rank;
  Type element = inType.getElementType(), acc = accumulationType(element);
  RankedTensorType accType = inType.clone(acc);
  SmallVector<AffineExpr> windowExprs, outExprs;
  for (int64_t d = 0; d < 2 + rank; ++d)
    outExprs.push_back(getAffineDimExpr(d, ctx));
  for (int64_t i = 0; i < rank; ++i)
    windowExprs.push_back(getAffineDimExpr(2 + rank + i, ctx));
  SmallVector<utils::IteratorType> iterators = parallelIterators(2 + rank);
  iterators.append(rank, utils::IteratorType::reduction);
  Value window = tensor::EmptyOp::create(b, loc, kernel, b.getF32Type());
  Value sums =
      linalg::GenericOp::create(
          b, loc, accType, window, filledTensor(b, loc, accType, 0.0),
          SmallVector<AffineMap>{AffineMap::get(numLoops, 0, windowExprs, ctx),
                                 AffineMap::get(numLoops, 0, outExprs, ctx)},
          iterators,
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Type idx = nb.getIndexType();
            auto constant = [&](int64_t v) {
              return scalarConstant(nb, l, idx, v);
            };
            auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
              return arith::CmpIOp::create(nb, l, p, x, y);
            };
            Value inside = arith::ConstantIntOp::create(nb, l, 1, 1);
            SmallVector<Value> indices = {linalg::IndexOp::create(nb, l, 0),
                                          linalg::IndexOp::create(nb, l, 1)};
            for (int64_t i = 0; i < rank; ++i) {
              Value k = linalg::IndexOp::create(nb, l, 2 + rank + i);
              // Named one by one: argument evaluation order is unspecified.
              Value position = linalg::IndexOp::create(nb, l, 2 + i);
              Value inPadded = arith::AddIOp::create(nb, l, position,
                                                     constant(g.padsBegin[i]));
              Value offset =
                  arith::MulIOp::create(nb, l, k, constant(g.dilations[i]));
              Value shifted = arith::SubIOp::create(nb, l, inPadded, offset);
              Value stride = constant(g.strides[i]);
              Value o = arith::DivSIOp::create(nb, l, shifted, stride);
              Value notBefore =
                  cmp(arith::CmpIPredicate::sge, shifted, constant(0));
              Value remainder = arith::RemSIOp::create(nb, l, shifted, stride);
              Value onStride =
                  cmp(arith::CmpIPredicate::eq, remainder, constant(0));
              Value notAfter = cmp(arith::CmpIPredicate::slt, o,
                                   constant(outType.getDimSize(2 + i)));
              Value ok = arith::AndIOp::create(
                  nb, l, notBefore,
                  arith::AndIOp::create(nb, l, onStride, notAfter));
              inside = arith::AndIOp::create(nb, l, inside, ok);
              // Clamped so that reads stay in bounds where unused.
              indices.push_back(
                  arith::SelectOp::create(nb, l, ok, o, constant(0)));
            }
            Value position = windowPosition(nb, l, kernel, 2 + rank);
            Value value = contribution(nb, l, indices, position);
            Value zero = scalarConstant(nb, l, acc, 0.0);
            Value term = arith::SelectOp::create(
                nb, l, inside, convertScalar(nb, l, value, acc), zero);
            linalg::YieldOp::create(
                nb, l, ValueRange{arith::AddFOp::create(nb, l, args[1], term)});
          })
          .getResult(0);
  return acc == element ? sums : castTensor(b, loc, sums, element);
}

/// Whether the windows tile the input exactly: no padding or dilation, a
/// stride equal to the kernel, and as many windows as fit the input. Each
/// input element then lies in exactly one window.
static bool windowsTileInput(RankedTensorType inType, RankedTensorType outType,
                             ArrayRef<int64_t> kernel,
                             const WindowGeometry &g) {
  if (!inType.hasStaticShape() || !outType.hasStaticShape())
    return false;
  for (auto [i, k] : llvm::enumerate(kernel))
    if (g.padsBegin[i] || g.padsEnd[i] || g.dilations[i] != 1 ||
        g.strides[i] != k ||
        inType.getDimSize(2 + i) != outType.getDimSize(2 + i) * k)
      return false;
  return true;
}

/// The max pooling gradient where the windows tile the input: one
/// elementwise pass, each input element taking its window's gradient where
/// its position in the window (i mod k) is the winning one, and +0
/// elsewhere; no search over the windows that might hold it. The values of
/// scatterToWindows, whose sum has one term here, added to +0.
static Value routeToTilingWindows(OpBuilder &b, Location loc,
                                  RankedTensorType inType,
                                  ArrayRef<int64_t> kernel, Value positions,
                                  Value grad) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = kernel.size();
  Type element = inType.getElementType(), acc = accumulationType(element);
  SmallVector<AffineExpr> windowExprs = {getAffineDimExpr(0, ctx),
                                         getAffineDimExpr(1, ctx)};
  for (auto [i, k] : llvm::enumerate(kernel))
    windowExprs.push_back(getAffineDimExpr(2 + i, ctx).floorDiv(k));
  AffineMap window = AffineMap::get(2 + rank, 0, windowExprs, ctx);
  AffineMap identity = AffineMap::getMultiDimIdentityMap(2 + rank, ctx);
  return linalg::GenericOp::create(
             b, loc, inType, ValueRange{positions, grad},
             emptyTensor(b, loc, inType),
             SmallVector<AffineMap>{window, window, identity},
             parallelIterators(2 + rank),
             [&](OpBuilder &nb, Location l, ValueRange args) {
               // The element's offset in its window along i: i mod k.
               Value at = windowPosition(nb, l, kernel, [&](int64_t i) {
                 // Named one by one: argument evaluation order is
                 // unspecified.
                 Value index = linalg::IndexOp::create(nb, l, 2 + i);
                 Value size =
                     scalarConstant(nb, l, nb.getIndexType(), kernel[i]);
                 return arith::RemUIOp::create(nb, l, index, size).getResult();
               });
               Value atPosition =
                   arith::IndexCastOp::create(nb, l, args[0].getType(), at);
               Value wins = arith::CmpIOp::create(
                   nb, l, arith::CmpIPredicate::eq, args[0], atPosition);
               Value zero = scalarConstant(nb, l, acc, 0.0);
               Value term = arith::SelectOp::create(
                   nb, l, wins, convertScalar(nb, l, args[1], acc), zero);
               Value sum = arith::AddFOp::create(nb, l, zero, term);
               linalg::YieldOp::create(nb, l,
                                       convertScalar(nb, l, sum, element));
             })
      .getResult(0);
}

namespace {
/// Where the elements of one residue class of a max pooling's input (index
/// i = r + t * stride along a dimension) find their windows: element i is
/// element rho + j * stride of window first + t - j, for each j < numTerms,
/// with rho and first the remainder and quotient of (r + padding) by the
/// stride.
struct ResidueWindows {
  int64_t count = 0; // elements t of the class
  int64_t first = 0;
  int64_t rho = 0;
  int64_t numTerms = 0;
};
} // namespace

static ResidueWindows residueWindows(int64_t residue, int64_t size,
                                     int64_t kernel, int64_t stride,
                                     int64_t padding) {
  ResidueWindows w;
  w.count = residue < size ? (size - residue + stride - 1) / stride : 0;
  w.first = (residue + padding) / stride;
  w.rho = (residue + padding) % stride;
  w.numTerms = w.rho < kernel ? (kernel - w.rho + stride - 1) / stride : 0;
  return w;
}

/// Calls `f` with each index of a row-major walk over `shape`.
static void forEachIndex(ArrayRef<int64_t> shape,
                         function_ref<void(ArrayRef<int64_t>)> f) {
  if (llvm::is_contained(shape, 0))
    return;
  SmallVector<int64_t> index(shape.size(), 0);
  while (true) {
    f(index);
    int64_t d = static_cast<int64_t>(shape.size()) - 1;
    for (; d >= 0 && ++index[d] == shape[d]; --d)
      index[d] = 0;
    if (d < 0)
      return;
  }
}

namespace {
/// How routeToOverlappingWindows walks the residue classes: the last
/// spatial dimension's classes interleaved in one pass where the stride
/// divides its size (the result viewed as (..., size / stride, stride),
/// each row then written whole), every other class a strided slice; and
/// how far the winners and gradients are padded, before and after each
/// dimension, for every class to find its windows in range.
struct RoutingPlan {
  bool interleaveLast = false;
  /// The windows an interleaved class reads: as many as any class reads.
  int64_t interleavedTerms = 0;
  SmallVector<int64_t> low, high;
};
} // namespace

static RoutingPlan planRouting(RankedTensorType inType,
                               RankedTensorType outType,
                               ArrayRef<int64_t> kernel,
                               const WindowGeometry &g) {
  RoutingPlan plan;
  int64_t rank = kernel.size();
  plan.interleaveLast = inType.getDimSize(1 + rank) % g.strides[rank - 1] == 0;
  plan.low = {0, 0};
  plan.high = {0, 0};
  for (int64_t i = 0; i < rank; ++i) {
    SmallVector<ResidueWindows> classes;
    int64_t maxTerms = 0;
    for (int64_t r = 0; r < g.strides[i]; ++r) {
      classes.push_back(residueWindows(r, inType.getDimSize(2 + i), kernel[i],
                                       g.strides[i], g.padsBegin[i]));
      maxTerms = std::max(maxTerms, classes.back().numTerms);
    }
    bool interleaved = plan.interleaveLast && i == rank - 1;
    if (interleaved)
      plan.interleavedTerms = maxTerms;
    int64_t before = 0, after = 0;
    for (const ResidueWindows &w : classes) {
      int64_t terms = interleaved ? maxTerms : w.numTerms;
      if (!w.count || !terms)
        continue;
      before = std::max(before, terms - 1 - w.first);
      after = std::max(after, w.first + w.count - outType.getDimSize(2 + i));
    }
    plan.low.push_back(before);
    plan.high.push_back(after);
  }
  return plan;
}

/// The max pooling gradient where windows overlap (undilated): the input
/// split by its index modulo the stride along each dimension. The elements
/// of a residue class are the same element of the same few windows at
/// constant offsets (ResidueWindows), so a class reads slices of those
/// windows' winners and gradients: the terms of scatterToWindows in the
/// same order, without searching all kernel offsets for the windows that
/// hold an element. `paddedPositions` are the winners padded as `plan`
/// says, with -1 (no element wins a padding window).
static Value
routeToOverlappingWindows(OpBuilder &b, Location loc, RankedTensorType inType,
                          RankedTensorType outType, ArrayRef<int64_t> kernel,
                          const WindowGeometry &g, const RoutingPlan &plan,
                          Value paddedPositions, Value grad) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = kernel.size();
  int64_t split = plan.interleaveLast ? rank - 1 : rank;
  int64_t numLoops = 2 + rank + (plan.interleaveLast ? 1 : 0);
  Type element = inType.getElementType(), acc = accumulationType(element);
  Type positionElement = tensorTypeOf(paddedPositions).getElementType();
  Value paddedGrad = pad(b, loc, grad, plan.low, plan.high,
                         scalarConstant(b, loc, element, 0.0));
  RankedTensorType paddedType = tensorTypeOf(paddedGrad);

  // A new tensor that each class is written into in place (a tensor.empty
  // would fold into each slice and CSE with other empties, each slice then
  // computed apart and copied in).
  Value result =
      bufferization::AllocTensorOp::create(b, loc, inType, ValueRange());
  SmallVector<int64_t> resultShape(inType.getShape());
  SmallVector<ReassociationIndices> interleaving;
  int64_t lastStride = g.strides[rank - 1];
  if (plan.interleaveLast) {
    resultShape.back() /= lastStride;
    resultShape.push_back(lastStride);
    for (int64_t d = 0; d < 1 + rank; ++d)
      interleaving.push_back({d});
    interleaving.push_back({1 + rank, 2 + rank});
    result = tensor::ExpandShapeOp::create(b, loc, inType.clone(resultShape),
                                           result, interleaving);
  }
  AffineMap identity = AffineMap::getMultiDimIdentityMap(numLoops, ctx);

  // One pass per class of the split dimensions, into its strided slice.
  auto routeClass = [&](ArrayRef<int64_t> residue) {
    SmallVector<ResidueWindows> windows;
    SmallVector<int64_t> offsets = {0, 0}, strides = {1, 1};
    SmallVector<int64_t> sizes(inType.getShape().take_front(2));
    SmallVector<int64_t> numTerms;
    for (int64_t i = 0; i < split; ++i) {
      windows.push_back(residueWindows(residue[i], inType.getDimSize(2 + i),
                                       kernel[i], g.strides[i],
                                       g.padsBegin[i]));
      offsets.push_back(residue[i]);
      sizes.push_back(windows.back().count);
      strides.push_back(g.strides[i]);
      numTerms.push_back(windows.back().numTerms);
    }
    if (plan.interleaveLast) {
      offsets.append({0, 0});
      sizes.append({resultShape[1 + rank], lastStride});
      strides.append({1, 1});
      numTerms.push_back(plan.interleavedTerms);
    }
    if (llvm::is_contained(sizes, 0))
      return;
    auto sliceType = inType.clone(sizes);
    Value target = tensor::ExtractSliceOp::create(
        b, loc, sliceType, result, ValueRange(), ValueRange(), ValueRange(),
        offsets, sizes, strides);

    // Each window holding the class: its winners' and gradients' slices
    // and, for the body, the split dimensions' part of its kernel
    // position and the interleaved dimension's term.
    struct Term {
      int64_t splitPosition, interleavedTerm;
    };
    SmallVector<Value> operands;
    SmallVector<AffineMap> maps;
    SmallVector<Term> terms;
    forEachIndex(numTerms, [&](ArrayRef<int64_t> term) {
      SmallVector<int64_t> windowOffsets = {0, 0},
                           windowSizes(sizes.begin(),
                                       sizes.begin() + 2 + split);
      SmallVector<AffineExpr> exprs;
      for (int64_t d = 0; d < 2 + split; ++d)
        exprs.push_back(getAffineDimExpr(d, ctx));
      Term t = {0, 0};
      for (int64_t i = 0; i < split; ++i) {
        windowOffsets.push_back(windows[i].first - term[i] + plan.low[2 + i]);
        t.splitPosition = t.splitPosition * kernel[i] + windows[i].rho +
                          term[i] * g.strides[i];
      }
      // Along the interleaved dimension, term j of class r is window column
      // q + (r + padding) floordiv stride - j, at kernel column
      // (r + padding) mod stride + j * stride where that is in the kernel.
      if (plan.interleaveLast) {
        t.interleavedTerm = term.back();
        windowOffsets.push_back(0);
        windowSizes.push_back(paddedType.getShape().back());
        AffineExpr q = getAffineDimExpr(1 + rank, ctx);
        AffineExpr r = getAffineDimExpr(2 + rank, ctx);
        exprs.push_back(q + (r + g.padsBegin[rank - 1]).floorDiv(lastStride) -
                        t.interleavedTerm + plan.low.back());
      }
      AffineMap map = AffineMap::get(numLoops, 0, exprs, ctx);
      for (Value source : {paddedPositions, paddedGrad}) {
        operands.push_back(tensor::ExtractSliceOp::create(
            b, loc,
            RankedTensorType::get(windowSizes,
                                  tensorTypeOf(source).getElementType()),
            source, ValueRange(), ValueRange(), ValueRange(), windowOffsets,
            windowSizes, SmallVector<int64_t>(windowSizes.size(), 1)));
        maps.push_back(map);
      }
      terms.push_back(t);
    });
    maps.push_back(identity);
    Value routed =
        linalg::GenericOp::create(
            b, loc, sliceType, operands, target, maps,
            parallelIterators(numLoops),
            [&](OpBuilder &nb, Location l, ValueRange args) {
              auto index = [&](int64_t v) {
                return arith::ConstantIndexOp::create(nb, l, v).getResult();
              };
              Value zero = scalarConstant(nb, l, acc, 0.0);
              // The interleaved class's first kernel column.
              Value column;
              if (plan.interleaveLast) {
                Value r = linalg::IndexOp::create(nb, l, 2 + rank);
                Value padded = arith::AddIOp::create(
                    nb, l, r, index(g.padsBegin[rank - 1]));
                column =
                    arith::RemUIOp::create(nb, l, padded, index(lastStride));
              }
              Value sum = zero;
              for (auto [i, t] : llvm::enumerate(terms)) {
                Value winner = args[2 * i], value = args[2 * i + 1];
                Value wins;
                if (plan.interleaveLast) {
                  Value offset = arith::AddIOp::create(
                      nb, l, column, index(t.interleavedTerm * lastStride));
                  Value inKernel =
                      arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ult,
                                            offset, index(kernel.back()));
                  Value position = arith::AddIOp::create(
                      nb, l, index(t.splitPosition * kernel.back()), offset);
                  Value at = arith::IndexCastOp::create(nb, l, positionElement,
                                                        position);
                  Value equal = arith::CmpIOp::create(
                      nb, l, arith::CmpIPredicate::eq, winner, at);
                  wins = arith::AndIOp::create(nb, l, inKernel, equal);
                } else {
                  Value at =
                      scalarConstant(nb, l, positionElement, t.splitPosition);
                  wins = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq,
                                               winner, at);
                }
                Value term = arith::SelectOp::create(
                    nb, l, wins, convertScalar(nb, l, value, acc), zero);
                sum = arith::AddFOp::create(nb, l, sum, term);
              }
              linalg::YieldOp::create(nb, l,
                                      convertScalar(nb, l, sum, element));
            })
            .getResult(0);
    result = tensor::InsertSliceOp::create(b, loc, routed, result, ValueRange(),
                                           ValueRange(), ValueRange(), offsets,
                                           sizes, strides);
  };
  forEachIndex(ArrayRef(g.strides).take_front(split), routeClass);
  if (plan.interleaveLast)
    result =
        tensor::CollapseShapeOp::create(b, loc, inType, result, interleaving);
  return result;
}

namespace {
struct MaxPoolLowering : OpConversionPattern<MaxPoolOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaxPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = signlessType(op.getType());
    WindowGeometry g = op.getGeometry();
    Type element = op.getType().getElementType();
    Value lowest = lowestValue(rewriter, loc, element);
    Value padded = padForWindows(rewriter, loc, adaptor.getInput(), type,
                                 op.getKernelShape(), g, lowest);
    Value init = linalg::FillOp::create(rewriter, loc, lowest,
                                        emptyTensor(rewriter, loc, type))
                     .getResult(0);
    bool isUnsigned = isUnsignedElement(element);
    rewriter.replaceOp(
        op, poolWindows(rewriter, loc, padded, init, op.getKernelShape(), g,
                        [&](OpBuilder &b, Location l, Value x, Value acc) {
                          if (isa<FloatType>(x.getType()))
                            return arith::MaximumFOp::create(b, l, x, acc)
                                .getResult();
                          if (isUnsigned)
                            return arith::MaxUIOp::create(b, l, x, acc)
                                .getResult();
                          return arith::MaxSIOp::create(b, l, x, acc)
                              .getResult();
                        }));
    return success();
  }
};

struct AvgPoolLowering : OpConversionPattern<AvgPoolOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AvgPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    WindowGeometry g = op.getGeometry();
    ArrayRef<int64_t> kernel = op.getKernelShape();
    Type acc = accumulationType(type.getElementType());
    Value padded =
        padForWindows(rewriter, loc, adaptor.getInput(), type, kernel, g,
                      scalarConstant(rewriter, loc, type.getElementType(), 0));
    Value sums = poolWindows(
        rewriter, loc, padded, filledTensor(rewriter, loc, type.clone(acc), 0),
        kernel, g, [](OpBuilder &b, Location l, Value x, Value a) {
          return arith::AddFOp::create(b, l, x, a).getResult();
        });

    Value divisor =
        windowDivisors(rewriter, loc, tensorTypeOf(adaptor.getInput()), type,
                       kernel, g, op.getCountIncludePad());
    rewriter.replaceOp(
        op, elementwise(rewriter, loc, type, ValueRange{sums, divisor},
                        [&](OpBuilder &b, Location l, ValueRange a) {
                          Value d = convertScalar(b, l, a[1], acc);
                          return convertScalar(
                              b, l, arith::DivFOp::create(b, l, a[0], d),
                              type.getElementType());
                        }));
    return success();
  }
};

struct GlobalAvgPoolLowering : OpConversionPattern<GlobalAvgPoolOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GlobalAvgPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    RankedTensorType inType = tensorTypeOf(adaptor.getInput());
    Type acc = sumType(type.getElementType());
    SmallVector<int64_t> axes;
    int64_t count = 1;
    for (int64_t d = 2; d < inType.getRank(); ++d) {
      axes.push_back(d);
      count *= inType.getDimSize(d);
    }
    Value sums = reduce(rewriter, loc, adaptor.getInput(), axes,
                        scalarConstant(rewriter, loc, acc, 0.0),
                        [](OpBuilder &b, Location l, Value x, Value a) {
                          return arith::AddFOp::create(b, l, x, a).getResult();
                        });
    Value divisor = scalarConstant(rewriter, loc, acc, count);
    Value means = elementwise(
        rewriter, loc, tensorTypeOf(sums).clone(type.getElementType()), sums,
        [&](OpBuilder &b, Location l, ValueRange a) {
          return convertScalar(b, l, arith::DivFOp::create(b, l, a[0], divisor),
                               type.getElementType());
        });
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, means, type));
    return success();
  }
};

/// The narrowest integer type that numbers the positions of `kernel` and
/// -1: the winners of a max pooling gradient are read once per window
/// holding an element.
static IntegerType windowPositionType(MLIRContext *ctx,
                                      ArrayRef<int64_t> kernel) {
  int64_t positions = numElements(kernel);
  unsigned width = positions <= INT8_MAX ? 8 : positions <= INT16_MAX ? 16 : 32;
  return IntegerType::get(ctx, width);
}

/// The window position of each window's first maximum, then the gradient
/// routed from it. Padding holds the lowest value, so it wins only windows
/// without a larger element, and then no input element receives that
/// window's gradient.
struct MaxPoolGradLowering : OpConversionPattern<MaxPoolGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaxPoolGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType inType = op.getType();
    RankedTensorType outType = tensorTypeOf(adaptor.getGrad());
    WindowGeometry g = op.getGeometry();
    ArrayRef<int64_t> kernel = op.getKernelShape();
    Type element = inType.getElementType();
    int64_t rank = kernel.size();
    Value padded =
        padForWindows(rewriter, loc, adaptor.getInput(), outType, kernel, g,
                      lowestValue(rewriter, loc, element));
    bool tiling = windowsTileInput(inType, outType, kernel, g);
    bool routing = !tiling && inType.hasStaticShape() &&
                   outType.hasStaticShape() && inType.getNumElements() > 0 &&
                   outType.getNumElements() > 0 &&
                   llvm::all_of(g.dilations, [](int64_t d) { return d == 1; });

    WindowIndexing w = windowIndexing(rewriter, loc, kernel, g);
    IntegerType positionElement =
        windowPositionType(rewriter.getContext(), kernel);
    RankedTensorType positionType = outType.clone(positionElement);
    Value lowest = lowestValue(rewriter, loc, element);
    Value maxInit = linalg::FillOp::create(rewriter, loc, lowest,
                                           emptyTensor(rewriter, loc, outType))
                        .getResult(0);
    // Routing reads the winners padded: the search writes them in place
    // into the padded tensor.
    RoutingPlan plan;
    SmallVector<int64_t> paddedShape;
    Value paddedInit;
    Value positionInit;
    if (routing) {
      plan = planRouting(inType, outType, kernel, g);
      for (auto [size, before, after] :
           llvm::zip_equal(outType.getShape(), plan.low, plan.high))
        paddedShape.push_back(size + before + after);
      paddedInit =
          filledTensor(rewriter, loc, positionType.clone(paddedShape), -1);
      positionInit = tensor::ExtractSliceOp::create(
          rewriter, loc, positionType, paddedInit, ValueRange(), ValueRange(),
          ValueRange(), plan.low, outType.getShape(),
          SmallVector<int64_t>(2 + rank, 1));
    } else {
      positionInit = filledTensor(rewriter, loc, positionType, -1);
    }
    // Ties go to the lower position, whatever order the loops run in.
    auto argmax = linalg::GenericOp::create(
        rewriter, loc, TypeRange{outType, positionType},
        ValueRange{padded, w.windowOperand}, ValueRange{maxInit, positionInit},
        SmallVector<AffineMap>{w.input, w.window, w.output, w.output},
        w.iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Value x = args[0], best = args[2], bestAt = args[3];
          Value at = arith::IndexCastOp::create(
              b, l, positionElement,
              windowPosition(b, l, kernel, w.firstKernelLoop));
          Value greater =
              arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x, best);
          Value tie =
              arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, x, best);
          Value before = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult,
                                               at, bestAt);
          Value tieBefore = arith::AndIOp::create(b, l, tie, before);
          Value wins = arith::OrIOp::create(b, l, greater, tieBefore);
          linalg::YieldOp::create(
              b, l,
              ValueRange{arith::SelectOp::create(b, l, wins, x, best),
                         arith::SelectOp::create(b, l, wins, at, bestAt)});
        });
    Value positions = argmax.getResult(1);
    Value grad = adaptor.getGrad();
    if (tiling) {
      rewriter.replaceOp(op, routeToTilingWindows(rewriter, loc, inType, kernel,
                                                  positions, grad));
      return success();
    }
    if (routing) {
      Value paddedPositions = tensor::InsertSliceOp::create(
          rewriter, loc, positions, paddedInit, ValueRange(), ValueRange(),
          ValueRange(), plan.low, outType.getShape(),
          SmallVector<int64_t>(2 + rank, 1));
      rewriter.replaceOp(op, routeToOverlappingWindows(rewriter, loc, inType,
                                                       outType, kernel, g, plan,
                                                       paddedPositions, grad));
      return success();
    }
    rewriter.replaceOp(
        op, scatterToWindows(
                rewriter, loc, inType, outType, kernel, g,
                [&](OpBuilder &b, Location l, ValueRange window, Value at) {
                  Value winner =
                      tensor::ExtractOp::create(b, l, positions, window);
                  Value value = tensor::ExtractOp::create(b, l, grad, window);
                  Value zero = scalarConstant(b, l, element, 0.0);
                  Value atPosition =
                      arith::IndexCastOp::create(b, l, positionElement, at);
                  return arith::SelectOp::create(
                             b, l,
                             arith::CmpIOp::create(b, l,
                                                   arith::CmpIPredicate::eq,
                                                   winner, atPosition),
                             value, zero)
                      .getResult();
                }));
    return success();
  }
};

/// Each window's gradient divided by its divisor, to each of its elements.
struct AvgPoolGradLowering : OpConversionPattern<AvgPoolGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AvgPoolGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType inType = op.getType();
    RankedTensorType outType = tensorTypeOf(adaptor.getGrad());
    WindowGeometry g = op.getGeometry();
    ArrayRef<int64_t> kernel = op.getKernelShape();
    Type acc = accumulationType(inType.getElementType());
    Value divisors = windowDivisors(rewriter, loc, inType, outType, kernel, g,
                                    op.getCountIncludePad());
    Value grad = adaptor.getGrad();
    rewriter.replaceOp(
        op,
        scatterToWindows(
            rewriter, loc, inType, outType, kernel, g,
            [&](OpBuilder &b, Location l, ValueRange window, Value) {
              Value value = convertScalar(
                  b, l, tensor::ExtractOp::create(b, l, grad, window), acc);
              Value divisor =
                  convertScalar(b, l,
                                tensor::ExtractOp::create(b, l, divisors,
                                                          window.drop_front(2)),
                                acc);
              return arith::DivFOp::create(b, l, value, divisor).getResult();
            }));
    return success();
  }
};
} // namespace

void to_linalg::populatePoolingPatterns(TypeConverter &converter,
                                        RewritePatternSet &patterns) {
  patterns.add<MaxPoolLowering, AvgPoolLowering, GlobalAvgPoolLowering,
               MaxPoolGradLowering, AvgPoolGradLowering>(converter,
                                                         patterns.getContext());
}
