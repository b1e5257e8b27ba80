//===- DataFilesTest.cpp - IDX and .npz readers -----------------*- C++ -*-===//
//
// The runtime's readers against files NumPy wrote (Inputs/, made by
// Inputs/make_data_files.py) and Debian's Fashion-MNIST test set, whose
// reference values Python's gzip and NumPy read; and their errors on
// truncated, corrupt and foreign files.
//
//===----------------------------------------------------------------------===//

#include "gs/Runtime/DataFiles.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>

using namespace mlir::gs::runtime;

namespace {
const std::string inputs = GS_UNIT_TEST_INPUTS;
const std::string fashion = "/usr/share/datasets/fashion-mnist/";

std::vector<std::pair<std::string, Tensor>> readAll(const std::string &path) {
  std::vector<std::pair<std::string, Tensor>> arrays;
  EXPECT_EQ(readNpz(path, arrays), "");
  return arrays;
}

/// `path`'s bytes.
std::string bytesOf(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

/// A file holding `bytes` in the test's temporary directory.
std::string scratch(const std::string &name, const std::string &bytes) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(DataFiles, ReadsNpzStoredAndDeflated) {
  for (const char *file : {"arrays.npz", "arrays_compressed.npz"}) {
    auto arrays = readAll(inputs + "/" + file);
    ASSERT_EQ(arrays.size(), 2u) << file;
    EXPECT_EQ(arrays[0].first, "weights");
    EXPECT_EQ(arrays[0].second.describe(), "float32[3x4]");
    for (int i = 0; i < 12; ++i)
      EXPECT_EQ(arrays[0].second.as<float>()[i], i / 8.0f) << file;
    EXPECT_EQ(arrays[1].first, "labels");
    EXPECT_EQ(arrays[1].second.describe(), "int64[3]");
    EXPECT_EQ(arrays[1].second.as<int64_t>()[1], -2) << file;
  }
}

TEST(DataFiles, ReadsGzipIdxAsNumpyDoes) {
  auto reference = readAll(inputs + "/fashion_reference.npz");
  ASSERT_EQ(reference.size(), 3u);
  Tensor labels, images;
  ASSERT_EQ(readIdx(fashion + "t10k-labels-idx1-ubyte.gz", labels), "");
  ASSERT_EQ(readIdx(fashion + "t10k-images-idx3-ubyte.gz", images), "");
  EXPECT_EQ(labels.describe(), "uint8[10000]");
  EXPECT_EQ(images.describe(), "uint8[10000x28x28]");
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(labels.as<uint8_t>()[i], reference[0].second.as<int64_t>()[i]);
  int64_t labelSum = 0;
  for (int i = 0; i < 10000; ++i)
    labelSum += labels.as<uint8_t>()[i];
  EXPECT_EQ(labelSum, reference[1].second.as<int64_t>()[0]);
  int index = 0;
  for (int image : {0, 1, 9999}) {
    int64_t sum = 0;
    for (int p = 0; p < 784; ++p)
      sum += images.as<uint8_t>()[image * 784 + p];
    EXPECT_EQ(sum, reference[2].second.as<int64_t>()[index++]) << image;
  }
}

TEST(DataFiles, ReadsPlainBigEndianIdx) {
  Tensor values;
  ASSERT_EQ(readIdx(inputs + "/int16.idx", values), "");
  EXPECT_EQ(values.describe(), "int32[2x3]");
  const int32_t expected[] = {-1, 2, -300, 4, 5, 32767};
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(values.as<int32_t>()[i], expected[i]);
}

TEST(DataFiles, ErrorsNameTheFileAndTheProblem) {
  Tensor t;
  std::vector<std::pair<std::string, Tensor>> arrays;
  EXPECT_EQ(readIdx("/no/such.idx", t),
            "cannot open '/no/such.idx': No such file or directory");
  std::string idx = bytesOf(inputs + "/int16.idx");
  std::string cut = scratch("cut.idx", idx.substr(0, idx.size() - 3));
  EXPECT_EQ(readIdx(cut, t), "'" + cut +
                                 "' is truncated: its header declares 12 "
                                 "bytes of data, it holds 9");
  std::string longer = scratch("long.idx", idx + "x");
  EXPECT_EQ(readIdx(longer, t), "'" + longer +
                                    "' has data after the elements its header "
                                    "declares");
  std::string npz = inputs + "/arrays.npz";
  EXPECT_EQ(readIdx(npz, t),
            "'" + npz + "' is not an IDX file (no IDX magic number)");
  std::string gz = bytesOf(fashion + "t10k-labels-idx1-ubyte.gz");
  std::string cutGz = scratch("cut.gz", gz.substr(0, gz.size() / 2));
  EXPECT_NE(readIdx(cutGz, t).find("'" + cutGz + "'"), std::string::npos);

  std::string archive = bytesOf(inputs + "/arrays_compressed.npz");
  std::string truncated =
      scratch("cut.npz", archive.substr(0, archive.size() - 40));
  EXPECT_EQ(readNpz(truncated, arrays),
            "'" + truncated +
                "' is not a valid .npz archive: no end of central directory "
                "(truncated?)");
  std::string flipped = archive;
  flipped[100] ^= 0x55; // inside the first member's deflate data
  std::string corrupt = scratch("corrupt.npz", flipped);
  std::string error = readNpz(corrupt, arrays);
  EXPECT_EQ(error.rfind("'" + corrupt +
                            "' is not a valid .npz archive: "
                            "member 'weights.npy'",
                        0),
            0u)
      << error;
  EXPECT_EQ(readNpz(inputs + "/int16.idx", arrays),
            "'" + inputs +
                "/int16.idx' is not a valid .npz archive: no end "
                "of central directory (truncated?)");
}
} // namespace
