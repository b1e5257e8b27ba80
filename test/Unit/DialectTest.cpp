//===- DialectTest.cpp - Building gs IR from C++ ---------------*- C++ -*-===//

#include "gs/Dialect/GS/IR/GSOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::gs;

namespace {
class GSDialectTest : public ::testing::Test {
protected:
  GSDialectTest() : builder(&context) {
    context.loadDialect<GSDialect, func::FuncDialect>();
    module = ModuleOp::create(builder.getUnknownLoc());
    builder.setInsertionPointToEnd(module->getBody());
  }

  /// A function whose arguments have `types`; the builder is placed inside.
  ValueRange makeFunction(TypeRange types) {
    auto function = func::FuncOp::create(builder, builder.getUnknownLoc(), "f",
                                         builder.getFunctionType(types, {}));
    Block *entry = function.addEntryBlock();
    builder.setInsertionPointToStart(entry);
    return entry->getArguments();
  }

  RankedTensorType f32(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, builder.getF32Type());
  }

  MLIRContext context;
  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
};
} // namespace

TEST_F(GSDialectTest, BuildersInferGemmAndConvResultTypes) {
  ValueRange args = makeFunction({f32({32, 784}), f32({256, 784}),
                                  f32({8, 3, 32, 32}), f32({16, 3, 3, 3})});
  Location loc = builder.getUnknownLoc();
  auto gemm = GemmOp::create(builder, loc, args[0], args[1], Value(),
                             /*transA=*/false, /*transB=*/true, APFloat(1.0f),
                             APFloat(1.0f));
  EXPECT_EQ(gemm.getType(), f32({32, 256}));

  auto conv = ConvOp::create(builder, loc, args[2], args[3], Value(),
                             builder.getDenseI64ArrayAttr({2, 2}),
                             builder.getDenseI64ArrayAttr({1, 1, 1, 1}),
                             builder.getDenseI64ArrayAttr({}),
                             builder.getI64IntegerAttr(1));
  EXPECT_EQ(conv.getType(), f32({8, 16, 16, 16}));
  WindowGeometry geometry = conv.getGeometry();
  EXPECT_EQ(geometry.dilations, (SmallVector<int64_t>{1, 1}));
  EXPECT_EQ(geometry.padsEnd, (SmallVector<int64_t>{1, 1}));

  func::ReturnOp::create(builder, loc);
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(GSDialectTest, InferenceReportsIncompatibleBroadcast) {
  ValueRange args = makeFunction({f32({32, 256}), f32({32, 784})});
  SmallVector<Type> inferred;
  AddOp::Adaptor adaptor(args);
  EXPECT_TRUE(failed(
      AddOp::inferReturnTypes(&context, std::nullopt, adaptor, inferred)));
  EXPECT_TRUE(succeeded(AddOp::inferReturnTypes(
      &context, std::nullopt, AddOp::Adaptor(ValueRange{args[0], args[0]}),
      inferred)));
  EXPECT_EQ(inferred.front(), f32({32, 256}));
}

TEST_F(GSDialectTest, OptimizerAttributesReportTheirState) {
  auto f = [](double value) { return APFloat(value); };
  auto momentum = MomentumAttr::get(&context, f(0.9), f(1.0), f(0.0),
                                    MomentumMode::nesterov);
  auto adam = AdamAttr::get(&context, f(0.9), f(0.999), f(1e-8), f(0), f(0));
  auto sgd = SGDAttr::get(&context, f(0.0));
  EXPECT_EQ(cast<OptimizerAttrInterface>(momentum).getNumStateTensors(), 1u);
  EXPECT_EQ(cast<OptimizerAttrInterface>(adam).getStateNames()[1], "moment2");
  EXPECT_EQ(cast<OptimizerAttrInterface>(sgd).getNumStateTensors(), 0u);
}
