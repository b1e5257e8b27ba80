//===- CompilerTest.cpp - The compiler library's C++ API --------*- C++ -*-===//
//
// What gs-compile does, through the library a C API and the Python
// bindings use: a gs module to object code with its table, linked into
// this process and trained by the runtime.
//
//===----------------------------------------------------------------------===//

#include "gs/Compiler/Compiler.h"
#include "gs/InitAll.h"
#include "gs/Runtime/Collectives.h"
#include "gs/Runtime/Model.h"
#include "gs/Support/Telemetry.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace mlir;
namespace runtime = mlir::gs::runtime;

namespace {
/// A linear classifier whose weights start equal: every class gets the same
/// logit, so the first loss is ln 3 whatever the input.
constexpr const char *kClassifier = R"mlir(
gs.param trainable @w = dense<0.5> : tensor<3x4xf32>
func.func @forward(%x: tensor<2x4xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w = gs.param.read @w : tensor<3x4xf32>
  %y = gs.gemm %x, %w {transB} : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l, %lp = gs.softmax_cross_entropy %y, %t <{reduction = #gs.reduction<mean>}> : tensor<2x3xf32>, tensor<2xi64>
  return %l : tensor<f32>
}
gs.training @forward {learning_rate = 0.5 : f32, optimizer = #gs.sgd<>}
)mlir";

/// A batch of two examples for the classifier's train step `step`.
std::pair<runtime::Tensor, runtime::Tensor>
classifierBatch(const gs_entry_info &step) {
  runtime::Tensor x = runtime::tensorFor(step.inputs[0]);
  runtime::Tensor t = runtime::tensorFor(step.inputs[1]);
  float xs[8] = {1.0f, -2.0f, 0.5f, 3.0f, -1.0f, 0.25f, 2.0f, -0.5f};
  std::memcpy(x.data(), xs, sizeof(xs));
  int64_t labels[2] = {0, 2};
  std::memcpy(t.data(), labels, sizeof(labels));
  return {std::move(x), std::move(t)};
}

class CompilerTest : public ::testing::Test {
protected:
  CompilerTest() {
    DialectRegistry registry;
    gs::registerAllDialects(registry);
    context.appendDialectRegistry(registry);
  }

  gs::CompileOptions options() {
    gs::CompileOptions compile;
    std::string error;
    compile.target = gs::CPUTarget::resolve("generic", error);
    EXPECT_FALSE(compile.target.cpu.empty()) << error;
    compile.prefix = "unit";
    compile.modelName = "classifier";
    compile.threads = 1;
    return compile;
  }

  /// Three train steps of the classifier `compiled` holds, linked into
  /// this process: their losses.
  std::vector<float> trainThreeSteps(const gs::CompiledModel &compiled) {
    std::string error;
    std::unique_ptr<gs::LoadedModel> loaded =
        gs::LoadedModel::load(compiled, error);
    EXPECT_TRUE(loaded) << error;
    if (!loaded)
      return {};
    const gs_model_info &table = loaded->table();
    EXPECT_EQ(runtime::validate(table), "");
    const gs_entry_info *step = runtime::findEntry(table, "train_step");
    EXPECT_TRUE(step);
    if (!step)
      return {};
    auto [x, t] = classifierBatch(*step);
    std::vector<float> losses;
    for (int i = 0; i < 3; ++i) {
      std::vector<runtime::Tensor> results;
      EXPECT_EQ(runtime::run(table, *step, {&x, &t}, results), "");
      if (results.size() != 1)
        return {};
      losses.push_back(*results[0].as<float>());
    }
    const gs_param_info *counter = runtime::findParam(table, "gs.step");
    EXPECT_TRUE(counter);
    if (counter) {
      EXPECT_EQ(*runtime::readParam(*counter).as<int64_t>(), 3);
    }
    return losses;
  }

  MLIRContext context;
};

bool isELF(const std::string &object) {
  return llvm::StringRef(object).starts_with("\x7f"
                                             "ELF");
}

TEST_F(CompilerTest, CompilesLoadsAndTrains) {
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(kClassifier, &context);
  ASSERT_TRUE(module);
  gs::TrainPipelineOptions train; // scaling=gs
  gs::CompileOptions compile = options();
  std::vector<std::string> phases;
  compile.onPhase = [&](StringRef phase) { phases.push_back(phase.str()); };
  std::string error;
  FailureOr<gs::CompiledModel> compiled =
      gs::compileModel(*module, train, compile, error);
  ASSERT_TRUE(succeeded(compiled)) << error;

  // The table: both steps, the weight, and the state gs-train added.
  EXPECT_EQ(compiled->spec.scaling, "gs");
  EXPECT_EQ(compiled->prefix, "unit");
  EXPECT_EQ(compiled->whyNoEvalStep, "");
  ASSERT_EQ(compiled->spec.entries.size(), 2u);
  EXPECT_EQ(compiled->spec.entries[0].name, "train_step");
  EXPECT_EQ(compiled->spec.entries[1].name, "eval_step");
  auto hasParam = [&](StringRef name) {
    return llvm::any_of(compiled->spec.params, [&](const gs::ParamSpec &p) {
      return p.tensor.name == name;
    });
  };
  EXPECT_TRUE(hasParam("w"));
  EXPECT_TRUE(hasParam("gs.step"));
  EXPECT_TRUE(hasParam("gs.skipped_steps"));
  EXPECT_EQ(phases.front(), "train step (gs passes)");
  EXPECT_EQ(phases[phases.size() - 2], "LLVM optimization");
  EXPECT_EQ(phases.back(), "code generation");
  ASSERT_EQ(compiled->objects.size(), 1u);
  EXPECT_TRUE(isELF(compiled->objects[0]));

  std::vector<float> losses = trainThreeSteps(*compiled);
  ASSERT_EQ(losses.size(), 3u);
  // Equal logits: ln 3, up to the rounding of one f32 log-sum-exp.
  EXPECT_NEAR(losses[0], std::log(3.0), 1e-6);
  // Gradient descent on a convex loss with a small enough step.
  EXPECT_LT(losses[1], losses[0]);
  EXPECT_LT(losses[2], losses[1]);
}

TEST_F(CompilerTest, CompilesInPartsOnThreads) {
  // The module split in three, each part optimized and compiled by a
  // thread of its own: three objects that link together (the kernels and
  // weights one part uses from another) and train as one does.
  auto compile = [&](unsigned threads, std::vector<std::string> &phases) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(kClassifier, &context);
    EXPECT_TRUE(module);
    gs::CompileOptions compile = options();
    compile.threads = threads;
    compile.onPhase = [&](StringRef phase) { phases.push_back(phase.str()); };
    std::string error;
    FailureOr<gs::CompiledModel> compiled =
        gs::compileModel(*module, gs::TrainPipelineOptions(), compile, error);
    EXPECT_TRUE(succeeded(compiled)) << error;
    return compiled;
  };
  std::vector<std::string> wholePhases, splitPhases;
  FailureOr<gs::CompiledModel> whole = compile(1, wholePhases);
  FailureOr<gs::CompiledModel> split = compile(3, splitPhases);
  ASSERT_TRUE(succeeded(whole) && succeeded(split));
  EXPECT_EQ(splitPhases.back(), "O3 and code generation (3 threads)");
  ASSERT_EQ(split->objects.size(), 3u);
  for (const std::string &object : split->objects)
    EXPECT_TRUE(isELF(object));
  std::vector<float> wholeLosses = trainThreeSteps(*whole);
  std::vector<float> splitLosses = trainThreeSteps(*split);
  ASSERT_EQ(wholeLosses.size(), 3u);
  EXPECT_EQ(splitLosses, wholeLosses);
}

TEST_F(CompilerTest, RecordsTheMethodOfTheTrainPipeline) {
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(kClassifier, &context);
  ASSERT_TRUE(module);
  gs::TrainPipelineOptions train;
  train.scaling = gs::ScalingMethod::Fixed;
  train.lossScale = 1024;
  std::string error;
  FailureOr<gs::CompiledModel> compiled =
      gs::compileModel(*module, train, options(), error);
  ASSERT_TRUE(succeeded(compiled)) << error;
  EXPECT_EQ(compiled->spec.scaling, "fixed=1024");
}

TEST_F(CompilerTest, FP16WeightCopyFollowsItsWeight) {
  // gs-fp16-weight-copies gives the mixed-precision step an FP16 copy of
  // `w`: the compiled update writes it, the runtime derives it after host
  // writes, and it is read only.
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(kClassifier, &context);
  ASSERT_TRUE(module);
  gs::TrainPipelineOptions train;
  train.fp16WeightCopies = true;
  std::string error;
  FailureOr<gs::CompiledModel> compiled =
      gs::compileModel(*module, train, options(), error);
  ASSERT_TRUE(succeeded(compiled)) << error;
  std::unique_ptr<gs::LoadedModel> loaded =
      gs::LoadedModel::load(*compiled, error);
  ASSERT_TRUE(loaded) << error;
  const gs_model_info &table = loaded->table();
  ASSERT_EQ(runtime::validate(table), "");
  const gs_param_info *weight = runtime::findParam(table, "w");
  const gs_param_info *copy = runtime::findParam(table, "w.fp16");
  ASSERT_TRUE(weight && copy);
  EXPECT_EQ(copy->kind, GS_PARAM_COPY);
  ASSERT_EQ(&table.params[copy->copy_of], weight);
  auto expectCopyOfWeight = [&](const char *when) {
    runtime::Tensor w = runtime::readParam(*weight);
    runtime::Tensor h = runtime::readParam(*copy);
    for (int64_t e = 0; e < w.numElements(); ++e)
      EXPECT_EQ(h.as<uint16_t>()[e], runtime::floatToHalf(w.as<float>()[e]))
          << when << ", element " << e;
  };
  expectCopyOfWeight("initially");
  ASSERT_EQ(gs_init(&table), 0) << gs_last_error();

  // Two steps: the weights move off 0.5 (exact in FP16) and the update
  // writes their rounding.
  const gs_entry_info *step = runtime::findEntry(table, "train_step");
  ASSERT_TRUE(step);
  auto [x, t] = classifierBatch(*step);
  for (int i = 0; i < 2; ++i) {
    std::vector<runtime::Tensor> results;
    ASSERT_EQ(runtime::run(table, *step, {&x, &t}, results), "");
  }
  EXPECT_NE(runtime::readParam(*weight).as<float>()[0], 0.5f);
  expectCopyOfWeight("after two steps");

  // A host write of the weight derives the copy (0.1 is 0x2E66 in FP16,
  // 65520 overflows to infinity, 2^-26 underflows to zero).
  float values[12] = {0.1f, 65520.0f, 0x1p-26f, -3.0f};
  ASSERT_EQ(gs_set_param(&table, "w", values, sizeof(values)), 0)
      << gs_last_error();
  expectCopyOfWeight("after gs_set_param");
  EXPECT_EQ(runtime::readParam(*copy).as<uint16_t>()[0], 0x2E66);
  EXPECT_EQ(runtime::readParam(*copy).as<uint16_t>()[1], 0x7C00);

  // The copy itself is read only.
  uint16_t halves[12] = {};
  EXPECT_EQ(gs_set_param(&table, "w.fp16", halves, sizeof(halves)), -1);
  EXPECT_NE(std::string(gs_last_error())
                .find("'w.fp16' is the FP16 copy of 'w', which the runtime "
                      "derives"),
            std::string::npos)
      << gs_last_error();
  EXPECT_NE(runtime::writeParam(table, *copy, runtime::readParam(*copy)), "");

  // gs_init restores the weight, and with it the copy.
  ASSERT_EQ(gs_init(&table), 0) << gs_last_error();
  EXPECT_EQ(runtime::readParam(*weight).as<float>()[0], 0.5f);
  expectCopyOfWeight("after gs_init");

  // A table whose copy names no FP32 weight of its shape is refused.
  std::vector<gs_param_info> params(table.params,
                                    table.params + table.num_params);
  gs_model_info broken = table;
  broken.params = params.data();
  params[copy - table.params].copy_of =
      runtime::findParam(table, "gs.step") - table.params;
  EXPECT_NE(runtime::validate(broken).find(
                "'w.fp16' is no FP16 copy of an FP32 weight of its shape"),
            std::string::npos)
      << runtime::validate(broken);
}

/// Two ranks that hold the same batch: each all-reduce sums the rank's
/// values with a copy of themselves (statistics: every count and sum
/// doubled, the maximum kept).
class MirroredRanks final : public runtime::Communicator {
public:
  const char *transport() const override { return "mirror"; }
  int rank() const override { return 0; }
  int size() const override { return 2; }
  void allReduce(const void *input, void *data, int64_t count,
                 runtime::DType type, runtime::Reduction reduction) override {
    ++calls[static_cast<int>(reduction)];
    std::memcpy(data, input, count * runtime::sizeOf(type));
    for (int64_t i = 0; i < count; ++i) {
      if (reduction == runtime::Reduction::Max ||
          (reduction == runtime::Reduction::Stats &&
           i % gs::telemetry::NumStatsFields == gs::telemetry::MaxAbs))
        continue;
      if (type == runtime::DType::F32)
        static_cast<float *>(data)[i] *= 2;
      else if (type == runtime::DType::F64)
        static_cast<double *>(data)[i] *= 2;
      else
        static_cast<int64_t *>(data)[i] *= 2;
    }
  }
  void broadcast(void *, int64_t, int) override {}
  void barrier() override {}
  [[noreturn]] void abort(int status) override { std::exit(status); }
  int calls[3] = {0, 0, 0};
};

TEST_F(CompilerTest, DataParallelReplicasTrainAsOne) {
  // A hidden ReLU layer: a half-normal scale site besides the softmax
  // cast's log-normal one.
  constexpr const char *kTwoLayers = R"mlir(
gs.param trainable @w1 = dense<[[0.5, -0.25, 0.125, 1.0], [-0.5, 0.75, 0.25, -1.0], [0.25, 0.5, -0.75, 0.5], [1.0, -0.5, 0.5, 0.25], [-0.25, 0.25, 1.0, -0.5]]> : tensor<5x4xf32>
gs.param trainable @w2 = dense<0.25> : tensor<3x5xf32>
func.func @forward(%x: tensor<2x4xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w1 = gs.param.read @w1 : tensor<5x4xf32>
  %w2 = gs.param.read @w2 : tensor<3x5xf32>
  %h = gs.gemm %x, %w1 {transB} : tensor<2x4xf32>, tensor<5x4xf32> -> tensor<2x5xf32>
  %r = gs.relu %h : tensor<2x5xf32>
  %y = gs.gemm %r, %w2 {transB} : tensor<2x5xf32>, tensor<3x5xf32> -> tensor<2x3xf32>
  %l, %lp = gs.softmax_cross_entropy %y, %t <{reduction = #gs.reduction<mean>}> : tensor<2x3xf32>, tensor<2xi64>
  return %l : tensor<f32>
}
gs.training @forward {learning_rate = 0.5 : f32, optimizer = #gs.momentum<>}
)mlir";
  auto compile = [&](bool dataParallel) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(kTwoLayers, &context);
    EXPECT_TRUE(module);
    gs::TrainPipelineOptions train;
    train.dataParallel = dataParallel;
    gs::CompileOptions compile = options();
    compile.distributed = dataParallel ? "mpi" : "";
    std::string error;
    FailureOr<gs::CompiledModel> compiled =
        gs::compileModel(*module, train, compile, error);
    EXPECT_TRUE(succeeded(compiled)) << error;
    return compiled;
  };
  FailureOr<gs::CompiledModel> alone = compile(false);
  FailureOr<gs::CompiledModel> replica = compile(true);
  ASSERT_TRUE(succeeded(alone) && succeeded(replica));
  EXPECT_EQ(replica->spec.distributed, "mpi");
  std::vector<float> expected = trainThreeSteps(*alone);
  ASSERT_EQ(expected.size(), 3u);
  // No communicator: the replica is the only rank.
  EXPECT_EQ(trainThreeSteps(*replica), expected);
  // Two ranks with the same batch are one process with that batch twice:
  // the same mean loss, gradients, statistics and scales, bit for bit
  // (every factor is 2 or 1/2).
  MirroredRanks ranks;
  runtime::setCommunicator(&ranks);
  std::vector<float> mirrored = trainThreeSteps(*replica);
  runtime::setCommunicator(nullptr);
  EXPECT_EQ(mirrored, expected);
  // Per step: the sites' statistics (the softmax cast's gradient, the
  // half-normal site's gradient and weight), the 2 small gradients in one
  // bucket and the loss, and the cast counts of the two roundings.
  EXPECT_EQ(ranks.calls[static_cast<int>(runtime::Reduction::Stats)], 3 * 3);
  EXPECT_EQ(ranks.calls[static_cast<int>(runtime::Reduction::Sum)],
            3 * (1 + 1 + 2));
  EXPECT_EQ(ranks.calls[static_cast<int>(runtime::Reduction::Max)], 0);
}

TEST_F(CompilerTest, ReportsAnObjectItCannotLoad) {
  gs::CompiledModel garbage;
  garbage.objects = {"not an object file"};
  garbage.prefix = "unit";
  std::string error;
  EXPECT_FALSE(gs::LoadedModel::load(garbage, error));
  EXPECT_TRUE(StringRef(error).starts_with("loading the compiled model: "))
      << error;
}

TEST_F(CompilerTest, ReportsAModelThatDoesNotTrain) {
  // No gs.training: there is no train step to describe.
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      "func.func @forward(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  return %x : tensor<2xf32>\n}\n",
      &context);
  ASSERT_TRUE(module);
  std::string error;
  FailureOr<gs::CompiledModel> compiled =
      gs::compileModel(*module, gs::TrainPipelineOptions(), options(), error);
  EXPECT_TRUE(failed(compiled));
  EXPECT_EQ(error, "'classifier': the module has no function 'train_step'");
}
} // namespace
