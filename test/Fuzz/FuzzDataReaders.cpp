//===- FuzzDataReaders.cpp - libFuzzer target: data files ----------*- C++
//-*-===//
//
// Reads the input as a .npy, an .npz and an IDX file (plain or gzip), as
// training executables and gs-run do: each reader must return a tensor that
// matches its header or an error, never crash or allocate beyond the limit.
//
//===----------------------------------------------------------------------===//

#include "FuzzFile.h"

#include "gs/Runtime/DataFiles.h"
#include "gs/Runtime/Tensor.h"

#include <cstdlib>

using namespace mlir::gs::runtime;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Small enough that no input can make the readers exhaust memory.
  setTensorByteLimit(uint64_t(64) << 20);
  FuzzFile file(data, size);
  Tensor tensor;
  if (readNpy(file.path(), tensor).empty() &&
      checkedByteSize(tensor.type(), tensor.shape()) == std::nullopt)
    std::abort();
  std::vector<std::pair<std::string, Tensor>> arrays;
  (void)readNpz(file.path(), arrays);
  (void)readIdx(file.path(), tensor);
  return 0;
}
