//===- Dataset.h - Training and evaluation data -----------------*- C++ -*-===//
//
// A labelled data set for a compiled classifier: inputs from .npy, a .npz
// member or an IDX file, converted to float32 and normalized; integer class
// labels; checked against the model's input and class count. Batches are
// drawn in a seeded order that depends only on (seed, epoch), so a resumed
// run sees the same batches as an uninterrupted one.
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

struct Dataset {
  /// float32 inputs, one row of `sampleSize` elements per example.
  std::vector<float> inputs;
  std::vector<int64_t> labels;
  int64_t count = 0;
  int64_t sampleSize = 0;
};

/// Builds a data set from `inputs` and `labels` (read from `inputsName` and
/// `labelsName`): `sampleSize` elements per example, labels in
/// [0, classes) when classes > 0, every input finite after normalization.
std::string makeDataset(const Tensor &inputs, const std::string &inputsName,
                        const Tensor &labels, const std::string &labelsName,
                        int64_t sampleSize, int64_t classes,
                        const Normalization &normalization, Dataset &dataset);

/// The mean and standard deviation of float data.
void meanAndStd(const Tensor &inputs, double &mean, double &std);

/// The order of the examples in `epoch`: a permutation of [0, count) drawn
/// from (seed, epoch), or the identity without shuffling.
std::vector<int64_t> epochOrder(int64_t count, uint64_t seed, int64_t epoch,
                                bool shuffle);

/// Copies the examples order[first, first + batch) of `dataset` into the
/// batch buffers, repeating example order[0] past the end (padding).
void gatherBatch(const Dataset &dataset, const std::vector<int64_t> &order,
                 int64_t first, int64_t batch, float *inputs, int64_t *labels);

} // namespace mlir::gs::runtime

#endif // GS_RUNTIME_DATASET_H
