//===- DataFiles.h - Training data file formats -----------------*- C++ -*-===//
//
// The data sets training executables read, besides .npy (Tensor.h): the
// IDX format of MNIST-style data sets, plain or gzip-compressed, and NumPy
// .npz archives (stored or deflated members, zip64 as NumPy writes them).
// Errors are messages that name the file and the problem.
//
//===----------------------------------------------------------------------===//

#ifndef GS_RUNTIME_DATAFILES_H
#define GS_RUNTIME_DATAFILES_H

#include "gs/Runtime/Tensor.h"

#include <string>
#include <utility>
#include <vector>

namespace mlir::gs::runtime {

/// Reads an IDX file: element types u8, i8, i16 (as int32), i32, f32 and
/// f64 in big-endian order, up to 8 dimensions. Returns an error message,
/// empty on success.
std::string readIdx(const std::string &path, Tensor &tensor);

/// Reads every array of a .npz archive, in archive order, named without
/// the `.npy` suffix. Returns an error message, empty on success.
std::string readNpz(const std::string &path,
                    std::vector<std::pair<std::string, Tensor>> &arrays);

/// Writes a .npz archive of stored (uncompressed) .npy members, named
/// `<name>.npy`, through writeFileAtomically. Returns an error message,
/// empty on success.
std::string
writeNpz(const std::string &path,
         const std::vector<std::pair<std::string, const Tensor *>> &arrays);

} // namespace mlir::gs::runtime

#endif // GS_RUNTIME_DATAFILES_H
