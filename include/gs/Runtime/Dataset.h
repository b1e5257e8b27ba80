//===- Dataset.h - Training and evaluation data -----------------*- C++ -*-===//
//
// The data a compiled model trains on: one array per entry input (.npy, a
// .npz member or an IDX file), converted to the input's element type and
// normalized, one row per example. Batches are drawn in a seeded order that
// depends only on (seed, epoch), so a resumed run sees the same batches as
// an uninterrupted one.
//
//===----------------------------------------------------------------------===//

#ifndef GS_RUNTIME_DATASET_H
#define GS_RUNTIME_DATASET_H

#include "gs/Runtime/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::gs::runtime {

/// Reads `spec`: `file.npy`, `file.npz:array` (or `file.npz` with one
/// array), or an IDX file, plain or gzip. Returns an error message naming the
/// file, empty on success.
std::string readArray(const std::string &spec, Tensor &array);

/// How inputs are scaled before training.
struct Normalization {
  enum Kind { None, Unit, Standard } kind = None;
  /// Standard: (x - mean) / std.
  double mean = 0, std = 1;
};

/// Parses `auto|none|unit|standard` for data of type `type`: auto is unit
/// for 8-bit unsigned data (images), none otherwise. False if unknown.
bool parseNormalization(const std::string &text, DType type,
                        Normalization &normalization);

/// Converts `array`, read from `file`, into the rows of an entry input of
/// element type `type` whose examples have `exampleShape`: one row per
/// example along the first axis, the same number of elements per example.
/// Floats are normalized by `normalization` and must be finite; integers
/// must fit `type`. Returns an error message naming the file, empty on
/// success.
std::string makeColumn(const Tensor &array, const std::string &file,
                       DType type, const std::vector<int64_t> &exampleShape,
                       const Normalization &normalization, Tensor &rows);

/// The mean and standard deviation of float data.
void meanAndStd(const Tensor &inputs, double &mean, double &std);

/// The order of the examples in `epoch`: a permutation of [0, count) drawn
/// from (seed, epoch), or the identity without shuffling.
std::vector<int64_t> epochOrder(int64_t count, uint64_t seed, int64_t epoch,
                                bool shuffle);

/// Copies the rows order[first, first + n) of `rows` into `batch`, whose
/// first axis holds n, repeating row order[0] past the end (padding).
void gatherRows(const Tensor &rows, const std::vector<int64_t> &order,
                int64_t first, Tensor &batch);

} // namespace mlir::gs::runtime

#endif // GS_RUNTIME_DATASET_H
