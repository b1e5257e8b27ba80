//===- Checkpoint.h - Training checkpoints ----------------------*- C++ -*-===//
//
// A training executable's checkpoint: an .npz holding every parameter of
// the model by name and the trainer's state (step, data order, batch size,
// scaling method, loss history) under gs.trainer.*. Loading checks that the
// file is a checkpoint of this model trained on the same data order, and
// that its values are sound, before it changes any parameter.
//
//===----------------------------------------------------------------------===//

#ifndef GS_RUNTIME_CHECKPOINT_H
#define GS_RUNTIME_CHECKPOINT_H

#include "gs/Runtime/Dataset.h"
#include "gs/Runtime/ModelABI.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::gs::runtime {

/// What a resumed run must share with the checkpointed one to see the same
/// batches: the seed, shuffling, the training set's size, the batch size
/// and the normalization.
struct DataIdentity {
  uint64_t seed = 0;
  bool shuffle = true;
  int64_t examples = 0;
  int64_t batch = 0;
  /// The ranks of a data-parallel run, each with `batch` examples of a
  /// step. A run may resume on another number (with a warning): its steps
  /// then take other global batches.
  int64_t ranks = 1;
  Normalization normalization;
};

/// DataIdentity::examples of a run whose caller fed the batches (the Python
/// package): no data order to resume; a resumed run continues in its own.
constexpr int64_t kUnknownDataOrder = -1;

/// Writes the model's parameters and the trainer's state to `path`
/// (atomically). Returns an error message, empty on success.
std::string saveCheckpoint(const std::string &path, const gs_model_info &model,
                           int64_t step, const DataIdentity &data,
                           const std::vector<double> &losses);

/// Loads `path` into the model after checking it (see the file comment);
/// sets `data.seed` from it unless `seedGiven`, and `losses` and `step`;
/// `warnings` gets what is suspect but not wrong (non-finite weights of a
/// model without a skip guard). Without `checkData` the data order and
/// inputs are not compared with `data` (a caller that feeds its own
/// batches); `data` then becomes the checkpoint's. Returns an error
/// message naming the file, empty on success; on an error no parameter has
/// changed.
std::string loadCheckpoint(const std::string &path, const gs_model_info &model,
                           DataIdentity &data, bool seedGiven,
                           std::vector<double> &losses, int64_t &step,
                           std::vector<std::string> &warnings,
                           bool checkData = true);

} // namespace mlir::gs::runtime

#endif // GS_RUNTIME_CHECKPOINT_H
