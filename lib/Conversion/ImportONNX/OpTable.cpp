//===- OpTable.cpp - Dispatch of ONNX operators to importers ---*- C++ -*-===//
//
// Each operator family lists rows (domain, operator, first opset, importer);
// a node uses the row of its operator with the newest opset not above the
// model's.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::onnx_import;

const OpImporter *onnx_import::findOpImporter(StringRef domain,
                                              StringRef opType, int opset) {
  const OpImporter *best = nullptr;
  for (ArrayRef<OpImporter> family :
       {getElementwiseImporters(), getNNImporters(), getShapeImporters(),
        getResamplingImporters(), getTrainingImporters()})
    for (const OpImporter &row : family)
      if (row.domain == domain && row.opType == opType &&
          row.sinceVersion <= opset &&
          (!best || row.sinceVersion > best->sinceVersion))
        best = &row;
  return best;
}
