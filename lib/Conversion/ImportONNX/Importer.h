//===- Importer.h - ONNX graph importer internals ---------------*- C++ -*-===//
//
// The pieces of the ONNX importer shared by its files: the module-wide
// state, the graph importer that maps ONNX values to SSA values, the context
// a node importer sees, and the table of node importers.
//
//===----------------------------------------------------------------------===//

#ifndef GS_LIB_CONVERSION_IMPORTONNX_IMPORTER_H
#define GS_LIB_CONVERSION_IMPORTONNX_IMPORTER_H

#include "gs/Conversion/ImportONNX/ImportONNX.h"
#include "gs/Dialect/GS/IR/GSOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include "onnx/onnx_pb.h"

#include <functional>

namespace mlir::gs::onnx_import {

constexpr llvm::StringLiteral kTrainingDomain = "ai.onnx.preview.training";

/// The default ONNX domain has two spellings.
inline StringRef canonicalDomain(StringRef domain) {
  return domain == "ai.onnx" ? StringRef() : domain;
}

/// Static tensor type of an ONNX type, or a reason why there is none.
FailureOr<RankedTensorType> convertType(MLIRContext *context,
                                        const onnx::TypeProto &type,
                                        std::string &why);

/// "node 'conv1' (Conv)" for diagnostics.
std::string describeNode(const onnx::NodeProto &node);

/// Checks what libonnx's shape inference trusts unchecked (window
/// attributes, block sizes, the ranks of convolutions and normalization
/// axes) and names that must not hold NUL bytes, in the model and its
/// subgraphs. Returns an error naming the node or value, empty when the
/// model may go to (another round of) inference.
std::string checkBeforeInference(const onnx::ModelProto &model);

/// libonnx 1.12 checks and infers ai.onnx up to opset 17.
constexpr int kLibOnnxOpset = 17;
/// The newest ai.onnx opset and IR version the importer reads.
constexpr int kNewestOnnxOpset = 22;
constexpr int kNewestIrVersion = 10;

/// Rewrites a model that declares ai.onnx opset 18 to 22 into the same
/// model at opset 17 and sets `declaredOpset` to the version it declared
/// (-1 when it declared 17 or older, and nothing changes). Returns an error
/// listing every node that cannot be rewritten, or naming an opset newer
/// than 22.
std::string adaptToOpset17(onnx::ModelProto &model, int &declaredOpset);

/// The values of an integer tensor held in the model (raw or typed data);
/// none when it is not an integer tensor or its data does not fit its shape.
std::optional<SmallVector<int64_t>>
integerValues(const onnx::TensorProto &tensor);

class ModelImporter;
class GraphImporter;

//===----------------------------------------------------------------------===//
// Node importers
//===----------------------------------------------------------------------===//

/// What a node importer sees: one ONNX node, its operands, its attributes
/// and the inferred types of its results.
class NodeContext {
public:
  NodeContext(GraphImporter &graph, const onnx::NodeProto &node, int opset,
              Location loc);

  const onnx::NodeProto &node;
  const int opset;
  const Location loc;

  OpBuilder &builder();
  MLIRContext *getContext();
  GraphImporter &graph() { return importer; }

  /// Reports a problem with this node; the message is prefixed with it.
  InFlightDiagnostic emitError();

  //===--- Operands -------------------------------------------------------===//

  unsigned numInputs() const { return node.input_size(); }
  /// True if input `i` is given (ONNX marks skipped optional inputs "").
  bool hasInput(unsigned i) const;
  StringRef inputName(unsigned i) const { return node.input(i); }
  /// Input `i` as a value; reports a missing or unknown input.
  FailureOr<Value> input(unsigned i);
  /// Inputs `[from, numInputs)` as values.
  FailureOr<SmallVector<Value>> inputs(unsigned from = 0);
  /// The value of input `i` if it is a known constant.
  DenseElementsAttr constantInput(unsigned i);
  /// Input `i` as a constant list of integers; reports when it is not one.
  FailureOr<SmallVector<int64_t>> intsInput(unsigned i, StringRef what);
  /// Input `i` as a constant scalar.
  FailureOr<double> scalarInput(unsigned i, StringRef what);

  //===--- Attributes -----------------------------------------------------===//

  const onnx::AttributeProto *attribute(StringRef name) const;
  bool hasAttr(StringRef name) const { return attribute(name) != nullptr; }
  int64_t intAttr(StringRef name, int64_t fallback) const;
  float floatAttr(StringRef name, float fallback) const;
  std::string stringAttr(StringRef name, StringRef fallback) const;
  SmallVector<int64_t> intsAttr(StringRef name) const;
  std::optional<SmallVector<int64_t>> optionalIntsAttr(StringRef name) const;
  /// Rejects attributes the importer does not implement.
  LogicalResult rejectAttr(StringRef name, StringRef why);

  //===--- Results --------------------------------------------------------===//

  unsigned numOutputs() const { return node.output_size(); }
  bool hasOutput(unsigned i) const;
  /// The inferred static type of output `i`.
  FailureOr<RankedTensorType> outputType(unsigned i);
  void setOutput(unsigned i, Value value);
  void setOutputs(ValueRange values);
  void setConstantOutput(unsigned i, ElementsAttr value);

  //===--- Helpers --------------------------------------------------------===//

  /// Normalizes an ONNX axis (negative counts from the end) for `rank`;
  /// `inclusive` also admits `rank` itself (Flatten).
  FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                   bool inclusive = false);
  /// Creates a gs op, verifies it, and reports a broken rule as an error of
  /// this node (the op is erased then).
  template <typename OpTy, typename... Args>
  FailureOr<OpTy> create(Args &&...args) {
    auto op = OpTy::create(builder(), loc, std::forward<Args>(args)...);
    if (failed(verifyCreated(op)))
      return failure();
    return op;
  }
  /// Creates `OpTy` with the inferred type of output 0 as its result type
  /// (the builder's first argument) and makes it that output.
  template <typename OpTy, typename... Args>
  LogicalResult createAsOutput(Args &&...args) {
    FailureOr<RankedTensorType> type = outputType(0);
    if (failed(type))
      return failure();
    FailureOr<OpTy> op = create<OpTy>(*type, std::forward<Args>(args)...);
    if (failed(op))
      return failure();
    setOutput(0, op->getOperation()->getResult(0));
    return success();
  }
  /// A constant tensor; a splat of `value` of `type`.
  Value constant(DenseElementsAttr value);
  Value splatConstant(RankedTensorType type, double value);

private:
  LogicalResult verifyCreated(Operation *op);
  GraphImporter &importer;
};

using NodeImportFn = LogicalResult (*)(NodeContext &);

/// One row of the dispatch table: the importer of an ONNX operator from
/// opset `sinceVersion` on (until the next row of the same operator).
struct OpImporter {
  StringRef domain;
  StringRef opType;
  int sinceVersion;
  NodeImportFn import;
};

/// The rows of each operator family.
ArrayRef<OpImporter> getElementwiseImporters();
ArrayRef<OpImporter> getNNImporters();
ArrayRef<OpImporter> getShapeImporters();
ArrayRef<OpImporter> getResamplingImporters();
ArrayRef<OpImporter> getTrainingImporters();

/// The importer of `opType` at `opset`, or null when unsupported.
const OpImporter *findOpImporter(StringRef domain, StringRef opType, int opset);

/// Evaluates the model's shape computations (Shape, Gather, Concat, ...)
/// whose inputs are now known, replacing each such node by a Constant.
/// Returns whether anything changed; shape inference should then run again.
bool foldShapeComputations(onnx::ModelProto &model);

//===----------------------------------------------------------------------===//
// Graphs and models
//===----------------------------------------------------------------------===//

/// Imports the nodes of one ONNX graph into one function.
class GraphImporter {
public:
  GraphImporter(ModelImporter &model, func::FuncOp function);

  ModelImporter &model;
  func::FuncOp function;
  OpBuilder builder;

  /// Records the types the graph declares (inputs, outputs, value_info).
  void addTypes(const onnx::GraphProto &graph);
  void addValue(StringRef name, Value value) { values[name] = value; }
  void addConstant(StringRef name, ElementsAttr value) {
    constants[name] = value;
  }

  /// The SSA value of an ONNX name: a computed value, a constant or an
  /// initializer (read from its gs.param, or a constant).
  FailureOr<Value> lookup(StringRef name, Location loc);
  /// The value of `name` if it is a known constant (Constant nodes, folded
  /// shape computations, non-trainable initializers).
  DenseElementsAttr lookupConstant(StringRef name);
  /// The static type of `name`; `why` says what is missing otherwise.
  FailureOr<RankedTensorType> typeOf(StringRef name, std::string &why);
  bool isKnown(StringRef name);

  /// Imports the nodes in order; stops at the first failure.
  LogicalResult importNodes(ArrayRef<const onnx::NodeProto *> nodes);
  LogicalResult importNode(const onnx::NodeProto &node);

  /// Location of a node: its name (or op type) inside the model file.
  Location nodeLocation(const onnx::NodeProto &node);

private:
  llvm::StringMap<Value> values;
  llvm::StringMap<ElementsAttr> constants;
  llvm::StringMap<const onnx::TypeProto *> declaredTypes;
};

/// Module-wide state of an import.
class ModelImporter {
public:
  ModelImporter(MLIRContext *context, onnx::ModelProto &model,
                StringRef modelDir, StringRef sourceName,
                const OnnxImportOptions &options);

  /// Imports the model; null after reporting an error.
  OwningOpRef<ModuleOp> run();

  MLIRContext *context;
  onnx::ModelProto &proto;
  std::string modelDir;
  const OnnxImportOptions &options;
  Location fileLoc;
  OwningOpRef<ModuleOp> module;

  InFlightDiagnostic emitError() { return mlir::emitError(fileLoc); }

  /// The opset the model imports for `domain`; -1 when none.
  int opsetFor(StringRef domain) const;
  /// The opset `domain` is read at, for diagnostics: "ai.onnx opset 20"
  /// for a model declaring 20 and adapted to 17.
  std::string describeOpset(StringRef domain) const;

  /// The ai.onnx opset the model declared when it was adapted to 17.
  int declaredOnnxOpset = -1;

  /// Main-graph initializers by name.
  const onnx::TensorProto *findInitializer(StringRef name) const;
  bool isInitializer(StringRef name) const {
    return findInitializer(name) != nullptr;
  }
  /// The gs.param of a float initializer, created on first use.
  FailureOr<ParamOp> getParam(StringRef name, Location loc);
  /// The value of an initializer as an attribute, converted once.
  FailureOr<ElementsAttr> initializerValue(StringRef name, Location loc);
  /// Whether initializer `name` becomes a parameter (float) and of which
  /// kind (options, training info, batch-norm statistics).
  std::optional<ParamKind> paramKindOf(StringRef name) const;

  /// Initializers the training information trains (Gradient xs).
  llvm::StringSet<> trainedByTrainingInfo;

  /// The module's symbol table; symbols added later go through it.
  SymbolTable &symbolTable();

private:
  LogicalResult collectUnsupportedNodes();
  LogicalResult checkStaticInputs();
  LogicalResult importMainGraph();
  LogicalResult addTrainingConfig(func::FuncOp forward);
  func::FuncOp createFunction(StringRef name, const onnx::GraphProto &graph,
                              GraphImporter *&importer);

  llvm::StringMap<int> opsets;
  llvm::StringMap<onnx::TensorProto *> initializers;
  llvm::StringMap<ElementsAttr> initializerValues;
  llvm::StringMap<ParamOp> params;
  llvm::StringSet<> batchNormStatistics;
  OpBuilder moduleBuilder;
  std::unique_ptr<GraphImporter> mainGraph;
  std::unique_ptr<SymbolTable> symbols;
};

/// Imports the model's TrainingInfoProto (if any) into the training
/// configuration and an initialization function; validates what the ONNX
/// checker does not.
LogicalResult importTrainingInfo(ModelImporter &model, func::FuncOp forward,
                                 GraphImporter &mainGraph, bool &imported);

/// Names the main-graph values the training information trains, so that
/// initializer kinds are known before the graph is imported.
void collectTrainedInitializers(ModelImporter &model);

/// The optimizer attribute of an ONNX Momentum, Adagrad or Adam node.
FailureOr<OptimizerAttrInterface> optimizerFromNode(MLIRContext *context,
                                                    const onnx::NodeProto &node,
                                                    std::string &error);

/// The optimizer attribute of the training options.
FailureOr<OptimizerAttrInterface>
buildOptimizer(MLIRContext *context, const OnnxTrainingOptions &options,
               std::string &error);

} // namespace mlir::gs::onnx_import

#endif // GS_LIB_CONVERSION_IMPORTONNX_IMPORTER_H
