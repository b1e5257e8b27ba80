//===- InitAll.h - Register what GradScale's tools use ----------*- C++ -*-===//
//
// The gs dialect and passes plus the upstream dialects, interfaces and
// passes that GradScale's pipelines build on: not everything upstream.
//
//===----------------------------------------------------------------------===//

#ifndef GS_INITALL_H
#define GS_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::gs {

/// Adds the gs dialect, the upstream dialects the CPU and GPU pipelines
/// lower through, and their external interface models.
void registerAllDialects(DialectRegistry &registry);

/// Registers the gs passes and pipelines and the upstream passes that
/// gs-opt exposes.
void registerAllPasses();

} // namespace mlir::gs

#endif // GS_INITALL_H
