//===- GSOps.td - GradScale operations ---------------------*- tablegen -*-===//

#ifndef GS_DIALECT_GS_IR_GSOPS_TD
#define GS_DIALECT_GS_IR_GSOPS_TD

include "gs/Dialect/GS/IR/GSBase.td"
include "gs/Dialect/GS/IR/GSAttrs.td"
include "gs/Dialect/GS/IR/GSTypes.td"

include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/OpAsmInterface.td"

include "gs/Dialect/GS/IR/GSTensorOps.td"
include "gs/Dialect/GS/IR/GSTrainingOps.td"
include "gs/Dialect/GS/IR/GSScalingOps.td"
include "gs/Dialect/GS/IR/GSDistributedOps.td"

#endif // GS_DIALECT_GS_IR_GSOPS_TD
