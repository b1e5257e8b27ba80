//===- GradientCheckTest.cpp - VJPs against finite differences --*- C++ -*-===//
//
// For each differentiable op: L(x...) = sum(op(x...) * r) with a random r,
// its gradient built by gs-autodiff and JIT-compiled through the CPU
// pipeline, against central differences of L at every input element. In
// f64, so that the differences are accurate to ~1e-9.
//
//===----------------------------------------------------------------------===//

#include "gs/Dialect/GS/Transforms/Passes.h"
#include "gs/InitAll.h"
#include "gs/Runner/JitRunner.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/StringExtras.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace mlir;
using mlir::gs::runtime::DType;
using mlir::gs::runtime::Tensor;

namespace {
struct GradientCase {
  const char *name;
  /// Argument types; %a0, %a1, ... in `body`. f64 arguments are
  /// differentiated, integer ones are indices.
  std::vector<const char *> arguments;
  /// Defines %y of `resultType` from the arguments.
  const char *body;
  const char *resultType;
  /// f64 arguments are drawn uniformly from [low, high).
  double low = -1.0, high = 1.0;
  /// Integer arguments are drawn uniformly from [indexLow, indexHigh).
  int64_t indexLow = 0, indexHigh = 1;
};

void PrintTo(const GradientCase &c, std::ostream *os) { *os << c.name; }

int64_t rankOf(StringRef tensorType) {
  return StringRef(tensorType).count('x');
}

/// @loss(args, r) = sum(y * r) and @grad(args, r) = its gradients with
/// respect to the f64 arguments.
std::string buildModule(const GradientCase &c,
                        std::vector<size_t> &differentiated) {
  std::string args, wrtValues, wrtTypes;
  for (auto [i, type] : llvm::enumerate(c.arguments)) {
    args += "%a" + std::to_string(i) + ": " + type + ", ";
    if (!StringRef(type).ends_with("xf64>") && StringRef(type) != "tensor<f64>")
      continue;
    differentiated.push_back(i);
    wrtValues += (wrtValues.empty() ? "%a" : ", %a") + std::to_string(i);
    wrtTypes += std::string(", ") + type;
  }
  args += std::string("%gc_weights: ") + c.resultType;
  std::string axes;
  for (int64_t d = 0; d < rankOf(c.resultType); ++d)
    axes += (d ? ", " : ": ") + std::to_string(d);
  std::string loss =
      std::string(c.body) +
      "\n  %gc_product = gs.mul %y, %gc_weights : " + c.resultType + ", " +
      c.resultType +
      "\n  %gc_loss = gs.reduce_sum %gc_product <{axes = array<i64" + axes +
      ">}> : " + c.resultType + "\n";
  std::string gradTypes = wrtTypes.substr(2);
  std::string results;
  for (size_t i = 0; i < differentiated.size(); ++i)
    results += (i ? ", %gc_grads#" : "%gc_grads#") + std::to_string(i);
  return "func.func @loss(" + args + ") -> tensor<f64> {\n  " + loss +
         "  return %gc_loss : tensor<f64>\n}\n" + "func.func @grad(" + args +
         ") -> (" + gradTypes + ") {\n  " + loss +
         "  %gc_grads:" + std::to_string(differentiated.size()) +
         " = gs.backward %gc_loss wrt " + wrtValues + " : tensor<f64>" +
         wrtTypes + "\n  return " + results + " : " + gradTypes + "\n}\n";
}

class GradientCheck : public ::testing::TestWithParam<GradientCase> {
protected:
  GradientCheck() {
    DialectRegistry registry;
    gs::registerAllDialects(registry);
    context.appendDialectRegistry(registry);
  }

  /// Compiles `entry` of a fresh parse of `source`, differentiated.
  std::unique_ptr<gs::JitFunction> compile(const std::string &source,
                                           StringRef entry) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, &context);
    if (!module)
      return nullptr;
    PassManager pm(&context);
    pm.addPass(gs::createAutodiff());
    if (failed(pm.run(*module)))
      return nullptr;
    std::string error;
    auto function = gs::JitFunction::compile(*module, entry,
                                             gs::CPUPipelineOptions(), error);
    EXPECT_TRUE(function) << error;
    return function;
  }

  MLIRContext context;
};

TEST_P(GradientCheck, MatchesCentralDifferences) {
  const GradientCase &c = GetParam();
  std::vector<size_t> differentiated;
  std::string source = buildModule(c, differentiated);
  SCOPED_TRACE(source);
  std::unique_ptr<gs::JitFunction> loss = compile(source, "loss");
  std::unique_ptr<gs::JitFunction> grad = compile(source, "grad");
  ASSERT_TRUE(loss && grad);

  std::mt19937_64 random(42);
  std::uniform_real_distribution<double> uniform(c.low, c.high);
  std::uniform_real_distribution<double> weight(-1.0, 1.0);
  std::vector<Tensor> inputs;
  for (auto [i, signature] : llvm::enumerate(loss->inputs())) {
    Tensor &t = inputs.emplace_back(signature.type, signature.shape);
    bool isWeight = i + 1 == loss->inputs().size();
    for (int64_t e = 0; e < t.numElements(); ++e) {
      if (signature.type == DType::F64) {
        t.as<double>()[e] = isWeight ? weight(random) : uniform(random);
        continue;
      }
      ASSERT_EQ(signature.type, DType::I64) << "argument " << i;
      std::uniform_int_distribution<int64_t> index(c.indexLow, c.indexHigh - 1);
      t.as<int64_t>()[e] = index(random);
    }
  }
  std::vector<const Tensor *> pointers;
  for (Tensor &t : inputs)
    pointers.push_back(&t);

  std::vector<Tensor> gradients, outputs;
  ASSERT_EQ(grad->run(pointers, gradients), "");
  ASSERT_EQ(gradients.size(), differentiated.size());
  auto evaluate = [&]() {
    std::string error = loss->run(pointers, outputs);
    EXPECT_EQ(error, "");
    return error.empty() ? outputs[0].as<double>()[0] : NAN;
  };
  const double h = 1e-6;
  for (auto [k, argument] : llvm::enumerate(differentiated)) {
    Tensor &x = inputs[argument];
    const double *analytic = gradients[k].as<double>();
    int64_t mismatches = 0;
    for (int64_t e = 0; e < x.numElements(); ++e) {
      double saved = x.as<double>()[e];
      x.as<double>()[e] = saved + h;
      double plus = evaluate();
      x.as<double>()[e] = saved - h;
      double minus = evaluate();
      x.as<double>()[e] = saved;
      double numeric = (plus - minus) / (2 * h);
      double tolerance = 1e-6 * std::max(1.0, std::abs(numeric));
      if (std::abs(analytic[e] - numeric) <= tolerance)
        continue;
      if (++mismatches <= 3)
        ADD_FAILURE() << "argument %a" << argument << ", element " << e
                      << ": gradient " << analytic[e] << ", central difference "
                      << numeric;
    }
    EXPECT_EQ(mismatches, 0) << "mismatched elements of %a" << argument
                             << " (of " << x.numElements() << ")";
  }
}

// clang-format off
const GradientCase cases[] = {
  {"gemm_transposed_broadcast_bias",
   {"tensor<3x4xf64>", "tensor<5x3xf64>", "tensor<5xf64>"},
   "%y = gs.gemm %a0, %a1, %a2 {transA, transB, alpha = 0.5 : f32, beta = 2.0 : f32} : tensor<3x4xf64>, tensor<5x3xf64>, tensor<5xf64> -> tensor<4x5xf64>",
   "tensor<4x5xf64>"},
  {"matmul_batched_broadcast",
   {"tensor<2x1x3x4xf64>", "tensor<3x4x2xf64>"},
   "%y = gs.matmul %a0, %a1 : tensor<2x1x3x4xf64>, tensor<3x4x2xf64> -> tensor<2x3x3x2xf64>",
   "tensor<2x3x3x2xf64>"},
  {"matmul_vector",
   {"tensor<4xf64>", "tensor<2x4x3xf64>"},
   "%y = gs.matmul %a0, %a1 : tensor<4xf64>, tensor<2x4x3xf64> -> tensor<2x3xf64>",
   "tensor<2x3xf64>"},
  {"conv2d_strided_padded_dilated_grouped",
   {"tensor<2x4x7x6xf64>", "tensor<6x2x3x2xf64>", "tensor<6xf64>"},
   "%y = gs.conv %a0, %a1, %a2 {strides = array<i64: 2, 1>, pads = array<i64: 1, 0, 2, 1>, dilations = array<i64: 2, 1>, group = 2 : i64} : tensor<2x4x7x6xf64>, tensor<6x2x3x2xf64>, tensor<6xf64> -> tensor<2x6x3x6xf64>",
   "tensor<2x6x3x6xf64>"},
  // 16 images of 256 positions: the weight gradient split into 4 parts.
  {"conv2d_weight_gradient_split",
   {"tensor<16x1x16x16xf64>", "tensor<8x1x3x3xf64>", "tensor<8xf64>"},
   "%y = gs.conv %a0, %a1, %a2 {pads = array<i64: 1, 1, 1, 1>} : tensor<16x1x16x16xf64>, tensor<8x1x3x3xf64>, tensor<8xf64> -> tensor<16x8x16x16xf64>",
   "tensor<16x8x16x16xf64>"},
  {"conv1d_stride3_uncovered_tail",
   {"tensor<1x2x11xf64>", "tensor<3x2x3xf64>"},
   "%y = gs.conv %a0, %a1 {strides = array<i64: 3>, pads = array<i64: 1, 0>} : tensor<1x2x11xf64>, tensor<3x2x3xf64> -> tensor<1x3x4xf64>",
   "tensor<1x3x4xf64>"},
  {"conv3d",
   {"tensor<1x2x4x3x4xf64>", "tensor<2x2x2x2x3xf64>"},
   "%y = gs.conv %a0, %a1 {pads = array<i64: 0, 1, 1, 0, 0, 1>} : tensor<1x2x4x3x4xf64>, tensor<2x2x2x2x3xf64> -> tensor<1x2x3x3x4xf64>",
   "tensor<1x2x3x3x4xf64>"},
  {"conv_transpose_strided_grouped",
   {"tensor<2x4x3x3xf64>", "tensor<4x3x3x2xf64>", "tensor<6xf64>"},
   "%y = gs.conv_transpose %a0, %a1, %a2 {strides = array<i64: 2, 3>, pads = array<i64: 1, 0, 0, 1>, output_padding = array<i64: 1, 2>, group = 2 : i64} : tensor<2x4x3x3xf64>, tensor<4x3x3x2xf64>, tensor<6xf64> -> tensor<2x6x7x9xf64>",
   "tensor<2x6x7x9xf64>"},
  {"conv_transpose_dilated",
   {"tensor<1x2x4xf64>", "tensor<2x1x3xf64>"},
   "%y = gs.conv_transpose %a0, %a1 {dilations = array<i64: 3>, strides = array<i64: 2>, output_padding = array<i64: 2>} : tensor<1x2x4xf64>, tensor<2x1x3xf64> -> tensor<1x1x15xf64>",
   "tensor<1x1x15xf64>"},
  {"batch_norm_training",
   {"tensor<3x4x2x3xf64>", "tensor<4xf64>", "tensor<4xf64>"},
   "%y, %m, %v = gs.batch_norm %a0, %a1, %a2 {epsilon = 1.0e-3 : f32} : tensor<3x4x2x3xf64>, tensor<4xf64>",
   "tensor<3x4x2x3xf64>"},
  {"batch_norm_statistics",
   {"tensor<5x3xf64>", "tensor<3xf64>", "tensor<3xf64>"},
   "%n, %m, %v = gs.batch_norm %a0, %a1, %a2 : tensor<5x3xf64>, tensor<3xf64>\n"
   "  %y = gs.add %m, %v : tensor<3xf64>, tensor<3xf64>",
   "tensor<3xf64>"},
  {"batch_norm_inference",
   {"tensor<3x4x2xf64>", "tensor<4xf64>", "tensor<4xf64>", "tensor<4xf64>", "tensor<4xf64>"},
   "%y = gs.batch_norm_inference %a0, %a1, %a2, %a3, %a4 : tensor<3x4x2xf64>, tensor<4xf64>",
   "tensor<3x4x2xf64>", 0.5, 1.5},
  {"layer_norm_with_bias",
   {"tensor<3x4x5xf64>", "tensor<4x5xf64>", "tensor<4x5xf64>"},
   "%y, %m, %i = gs.layer_norm %a0, %a1, %a2 <{axis = 1 : i64}> : tensor<3x4x5xf64>, tensor<4x5xf64>, tensor<4x5xf64>",
   "tensor<3x4x5xf64>"},
  {"layer_norm_statistics",
   {"tensor<3x6xf64>", "tensor<6xf64>"},
   "%n, %m, %i = gs.layer_norm %a0, %a1 <{axis = 1 : i64}> : tensor<3x6xf64>, tensor<6xf64>\n"
   "  %y = gs.add %m, %i : tensor<3x1xf64>, tensor<3x1xf64>",
   "tensor<3x1xf64>"},
  {"max_pool_padded_overlapping",
   {"tensor<2x3x7x6xf64>"},
   "%y = gs.max_pool %a0 <{kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}> : tensor<2x3x7x6xf64>",
   "tensor<2x3x4x3xf64>"},
  {"max_pool_ceil_dilated",
   {"tensor<1x2x8x7xf64>"},
   "%y = gs.max_pool %a0 <{kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 2, 1>, ceil_mode}> : tensor<1x2x8x7xf64>",
   "tensor<1x2x4x4xf64>"},
  {"avg_pool_excluding_pad_ceil",
   {"tensor<2x2x7x6xf64>"},
   "%y = gs.avg_pool %a0 <{kernel_shape = array<i64: 3, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 0, 1>, ceil_mode}> : tensor<2x2x7x6xf64>",
   "tensor<2x2x4x4xf64>"},
  {"avg_pool_including_pad",
   {"tensor<1x2x5xf64>"},
   "%y = gs.avg_pool %a0 <{kernel_shape = array<i64: 3>, pads = array<i64: 1, 1>, count_include_pad}> : tensor<1x2x5xf64>",
   "tensor<1x2x5xf64>"},
  {"global_avg_pool",
   {"tensor<2x3x4x5xf64>"},
   "%y = gs.global_avg_pool %a0 : tensor<2x3x4x5xf64>",
   "tensor<2x3x1x1xf64>"},
  {"slice_steps",
   {"tensor<7x6x5xf64>"},
   "%y = gs.slice %a0 <{starts = array<i64: 1, 5, 0>, ends = array<i64: 7, 0, 5>, steps = array<i64: 2, -2, 1>}> : tensor<7x6x5xf64>",
   "tensor<3x3x5xf64>"},
  {"slice_reversed",
   {"tensor<6xf64>"},
   "%y = gs.slice %a0 <{starts = array<i64: 4>, ends = array<i64: -1>, steps = array<i64: -1>}> : tensor<6xf64>",
   "tensor<5xf64>"},
  {"gather_repeated_negative_indices",
   {"tensor<3x5x2xf64>", "tensor<2x4xi64>"},
   "%y = gs.gather %a0, %a1 <{axis = 1 : i64}> : tensor<3x5x2xf64>, tensor<2x4xi64>",
   "tensor<3x2x4x2xf64>", -1.0, 1.0, -5, 5},
  {"gather_elements_partial",
   {"tensor<4x5xf64>", "tensor<3x6xi64>"},
   "%y = gs.gather_elements %a0, %a1 <{axis = 1 : i64}> : tensor<4x5xf64>, tensor<3x6xi64>",
   "tensor<3x6xf64>", -1.0, 1.0, -5, 5},
  {"arithmetic_broadcasting",
   {"tensor<3x4xf64>", "tensor<4xf64>", "tensor<3x1xf64>"},
   "%s = gs.add %a0, %a1 : tensor<3x4xf64>, tensor<4xf64>\n"
   "  %d = gs.sub %a2, %s : tensor<3x1xf64>, tensor<3x4xf64>\n"
   "  %m = gs.mul %d, %a1 : tensor<3x4xf64>, tensor<4xf64>\n"
   "  %e = gs.exp %a2 : tensor<3x1xf64>\n"
   "  %y = gs.div %m, %e : tensor<3x4xf64>, tensor<3x1xf64>",
   "tensor<3x4xf64>"},
  {"max_min",
   {"tensor<3x4xf64>", "tensor<4xf64>"},
   "%m = gs.max %a0, %a1 : tensor<3x4xf64>, tensor<4xf64>\n"
   "  %y = gs.min %m, %a0 : tensor<3x4xf64>, tensor<3x4xf64>",
   "tensor<3x4xf64>"},
  {"pow_log_sqrt",
   {"tensor<2x3xf64>", "tensor<3xf64>"},
   "%p = gs.pow %a0, %a1 : tensor<2x3xf64>, tensor<3xf64>\n"
   "  %l = gs.log %p : tensor<2x3xf64>\n"
   "  %s = gs.sqrt %a0 : tensor<2x3xf64>\n"
   "  %y = gs.add %l, %s : tensor<2x3xf64>, tensor<2x3xf64>",
   "tensor<2x3xf64>", 0.5, 1.5},
  {"activations",
   {"tensor<4x5xf64>"},
   "%r = gs.relu %a0 : tensor<4x5xf64>\n"
   "  %l = gs.leaky_relu %a0 {alpha = 0.1 : f32} : tensor<4x5xf64>\n"
   "  %s = gs.sigmoid %r : tensor<4x5xf64>\n"
   "  %t = gs.tanh %l : tensor<4x5xf64>\n"
   "  %e = gs.erf %a0 : tensor<4x5xf64>\n"
   "  %a = gs.abs %a0 : tensor<4x5xf64>\n"
   "  %n = gs.neg %a : tensor<4x5xf64>\n"
   "  %y = gs.add_n %s, %t, %e, %n : tensor<4x5xf64>",
   "tensor<4x5xf64>"},
  {"where",
   {"tensor<3x4xf64>", "tensor<4xf64>"},
   "%c = gs.compare gt, %a0, %a1 : tensor<3x4xf64>, tensor<4xf64>\n"
   "  %y = gs.where %c, %a1, %a0 : tensor<3x4xi1>, tensor<4xf64>, tensor<3x4xf64>",
   "tensor<3x4xf64>"},
  {"reductions",
   {"tensor<3x4x5xf64>"},
   "%s = gs.reduce_sum %a0 <{axes = array<i64: 1>, keepdims}> : tensor<3x4x5xf64>\n"
   "  %m = gs.reduce_mean %a0 <{axes = array<i64: 1>, keepdims}> : tensor<3x4x5xf64>\n"
   "  %x = gs.reduce_max %a0 <{axes = array<i64: 1>, keepdims}> : tensor<3x4x5xf64>\n"
   "  %y = gs.add_n %s, %m, %x : tensor<3x1x5xf64>",
   "tensor<3x1x5xf64>"},
  {"softmax_log_softmax",
   {"tensor<3x5xf64>"},
   "%s = gs.softmax %a0 {axis = 1 : i64} : tensor<3x5xf64>\n"
   "  %l = gs.log_softmax %a0 {axis = 0 : i64} : tensor<3x5xf64>\n"
   "  %y = gs.add %s, %l : tensor<3x5xf64>, tensor<3x5xf64>",
   "tensor<3x5xf64>"},
  {"softmax_cross_entropy_weighted_ignore",
   {"tensor<6x4xf64>", "tensor<6xi64>", "tensor<4xf64>"},
   "%l, %lp = gs.softmax_cross_entropy %a0, %a1, %a2 <{reduction = #gs.reduction<mean>, ignore_index = 2 : i64}> : tensor<6x4xf64>, tensor<6xi64>, tensor<4xf64>\n"
   "  %y = gs.add %l, %l : tensor<f64>, tensor<f64>",
   "tensor<f64>", -1.0, 1.0, 0, 4},
  {"nll_loss_spatial_none",
   {"tensor<2x3x4xf64>", "tensor<2x4xi64>"},
   "%y = gs.nll_loss %a0, %a1 <{reduction = #gs.reduction<none>}> : tensor<2x3x4xf64>, tensor<2x4xi64>",
   "tensor<2x4xf64>", -1.0, 1.0, 0, 3},
  {"dropout_training",
   {"tensor<4x6xf64>"},
   "%d, %m = gs.dropout %a0 {ratio = 0.25 : f32, seed = 3 : i64, training} : tensor<4x6xf64>\n"
   "  %y = gs.mul %d, %a0 : tensor<4x6xf64>, tensor<4x6xf64>",
   "tensor<4x6xf64>"},
  {"nll_loss_weighted_mean",
   {"tensor<5x3xf64>", "tensor<5xi64>", "tensor<3xf64>"},
   "%y = gs.nll_loss %a0, %a1, %a2 <{reduction = #gs.reduction<mean>, ignore_index = 1 : i64}> : tensor<5x3xf64>, tensor<5xi64>, tensor<3xf64>",
   "tensor<f64>", 0.5, 1.5, 0, 3},
  {"shape_ops",
   {"tensor<2x3x4xf64>", "tensor<2x1x4xf64>"},
   "%t = gs.transpose %a0, [2, 0, 1] : tensor<2x3x4xf64>\n"
   "  %r = gs.reshape %t : tensor<4x2x3xf64> -> tensor<2x4x3xf64>\n"
   "  %e = gs.expand %a1 : tensor<2x1x4xf64> -> tensor<2x3x4xf64>\n"
   "  %f = gs.flatten %e <{axis = 2 : i64}> : tensor<2x3x4xf64>\n"
   "  %fr = gs.reshape %f : tensor<6x4xf64> -> tensor<2x4x3xf64>\n"
   "  %q = gs.squeeze %a1 <{axes = array<i64: 1>}> : tensor<2x1x4xf64>\n"
   "  %u = gs.unsqueeze %q <{axes = array<i64: 2>}> : tensor<2x4xf64>\n"
   "  %c = gs.concat %a0, %a1 <{axis = 1 : i64}> : tensor<2x3x4xf64>, tensor<2x1x4xf64>\n"
   "  %p:2 = gs.split %c {axis = 2 : i64} : tensor<2x4x4xf64> -> tensor<2x4x1xf64>, tensor<2x4x3xf64>\n"
   "  %s = gs.add_n %r, %fr, %p#1 : tensor<2x4x3xf64>\n"
   "  %m = gs.mul %s, %u : tensor<2x4x3xf64>, tensor<2x4x1xf64>\n"
   "  %y = gs.mul %m, %p#0 : tensor<2x4x3xf64>, tensor<2x4x1xf64>",
   "tensor<2x4x3xf64>"},
};
// clang-format on

INSTANTIATE_TEST_SUITE_P(
    Ops, GradientCheck, ::testing::ValuesIn(cases),
    [](const ::testing::TestParamInfo<GradientCase> &info) {
      return std::string(info.param.name);
    });
} // namespace
