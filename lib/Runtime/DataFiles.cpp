//===- DataFiles.cpp - IDX and .npz files -----------------------*- C++ -*-===//

#include "gs/Runtime/DataFiles.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

using namespace mlir::gs::runtime;

namespace {
/// An open gzip (or plain: zlib reads it through) file, closed on exit.
struct GzFile {
  explicit GzFile(const std::string &path) : file(gzopen(path.c_str(), "rb")) {}
  ~GzFile() {
    if (file)
      gzclose(file);
  }
  /// Reads up to `size` bytes; the count, or -1 on corrupt data.
  int64_t read(void *data, size_t size) {
    size_t done = 0;
    while (done < size) {
      unsigned chunk =
          static_cast<unsigned>(std::min<size_t>(size - done, 1u << 30));
      int got = gzread(file, static_cast<char *>(data) + done, chunk);
      if (got < 0)
        return -1;
      if (got == 0)
        break;
      done += static_cast<size_t>(got);
    }
    return static_cast<int64_t>(done);
  }
  std::string error() {
    int code = 0;
    const char *message = gzerror(file, &code);
    return message ? message : "read error";
  }
  gzFile file;
};

uint32_t bigEndian32(const unsigned char *p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 |
         uint32_t(p[3]);
}

/// Little-endian integers of a zip archive.
uint64_t little(const std::string &data, size_t at, int bytes) {
  uint64_t value = 0;
  for (int i = bytes - 1; i >= 0; --i)
    value = value << 8 | static_cast<unsigned char>(data[at + i]);
  return value;
}
} // namespace

std::string mlir::gs::runtime::readIdx(const std::string &path,
                                       Tensor &tensor) {
  GzFile in(path);
  if (!in.file)
    return "cannot open '" + path + "': " + std::strerror(errno);
  unsigned char magic[4];
  int64_t got = in.read(magic, 4);
  if (got < 0)
    return "'" + path + "' has corrupt gzip data: " + in.error();
  if (got < 4 || magic[0] != 0 || magic[1] != 0)
    return "'" + path + "' is not an IDX file (no IDX magic number)";
  DType type;
  size_t fileElementSize;
  switch (magic[2]) {
  case 0x08:
    type = DType::U8, fileElementSize = 1;
    break;
  case 0x09:
    type = DType::I8, fileElementSize = 1;
    break;
  case 0x0B:
    type = DType::I32, fileElementSize = 2;
    break;
  case 0x0C:
    type = DType::I32, fileElementSize = 4;
    break;
  case 0x0D:
    type = DType::F32, fileElementSize = 4;
    break;
  case 0x0E:
    type = DType::F64, fileElementSize = 8;
    break;
  default:
    return "'" + path + "' has an unknown IDX element type code " +
           std::to_string(magic[2]);
  }
  int rank = magic[3];
  if (rank < 1 || rank > 8)
    return "'" + path + "' has " + std::to_string(rank) +
           " dimensions; IDX files have 1 to 8";
  std::vector<unsigned char> dimBytes(4 * rank);
  got = in.read(dimBytes.data(), dimBytes.size());
  if (got < 0)
    return "'" + path + "' has corrupt gzip data: " + in.error();
  if (got != static_cast<int64_t>(dimBytes.size()))
    return "'" + path + "' is truncated in its IDX header";
  std::vector<int64_t> shape;
  uint64_t count = 1;
  for (int d = 0; d < rank; ++d) {
    shape.push_back(bigEndian32(&dimBytes[4 * d]));
    count *= static_cast<uint64_t>(shape.back());
    if (count > (uint64_t(1) << 36))
      return "'" + path + "' declares more than 2^36 elements";
  }
  std::vector<unsigned char> raw(count * fileElementSize);
  got = in.read(raw.data(), raw.size());
  if (got < 0)
    return "'" + path + "' has corrupt gzip data: " + in.error();
  if (got != static_cast<int64_t>(raw.size()))
    return "'" + path + "' is truncated: its header declares " +
           std::to_string(raw.size()) + " bytes of data, it holds " +
           std::to_string(got);
  unsigned char extra;
  got = in.read(&extra, 1);
  if (got < 0)
    return "'" + path + "' has corrupt gzip data: " + in.error();
  if (got != 0)
    return "'" + path + "' has data after the elements its header declares";

  tensor = Tensor(type, shape);
  for (uint64_t i = 0; i < count; ++i) {
    const unsigned char *p = &raw[i * fileElementSize];
    switch (magic[2]) {
    case 0x08:
    case 0x09:
      tensor.data()[i] = static_cast<char>(p[0]);
      break;
    case 0x0B:
      tensor.as<int32_t>()[i] = static_cast<int16_t>(p[0] << 8 | p[1]);
      break;
    case 0x0C:
      tensor.as<int32_t>()[i] = static_cast<int32_t>(bigEndian32(p));
      break;
    case 0x0D: {
      uint32_t bits = bigEndian32(p);
      std::memcpy(&tensor.as<float>()[i], &bits, 4);
      break;
    }
    case 0x0E: {
      uint64_t bits = uint64_t(bigEndian32(p)) << 32 | bigEndian32(p + 4);
      std::memcpy(&tensor.as<double>()[i], &bits, 8);
      break;
    }
    }
  }
  return {};
}

std::string mlir::gs::runtime::readNpz(
    const std::string &path,
    std::vector<std::pair<std::string, Tensor>> &arrays) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return "cannot open '" + path + "': " + std::strerror(errno);
  std::string data((std::istreambuf_iterator<char>(file)),
                   std::istreambuf_iterator<char>());
  auto bad = [&](const std::string &problem) {
    return "'" + path + "' is not a valid .npz archive: " + problem;
  };
  // The end-of-central-directory record, within the last 64 KiB + 22.
  const size_t eocdSize = 22;
  if (data.size() < eocdSize)
    return bad("too short");
  size_t eocd = std::string::npos;
  for (size_t at = data.size() - eocdSize + 1;
       at-- > 0 && data.size() - at <= 65535 + eocdSize;)
    if (little(data, at, 4) == 0x06054b50) {
      eocd = at;
      break;
    }
  if (eocd == std::string::npos)
    return bad("no end of central directory (truncated?)");
  uint64_t entries = little(data, eocd + 10, 2);
  uint64_t directory = little(data, eocd + 16, 4);
  if (directory == 0xFFFFFFFF || entries == 0xFFFF) {
    // Zip64: the locator just before points at the zip64 record.
    if (eocd < 20 || little(data, eocd - 20, 4) != 0x07064b50)
      return bad("zip64 locator missing");
    uint64_t record = little(data, eocd - 20 + 8, 8);
    if (record + 56 > data.size() || little(data, record, 4) != 0x06064b50)
      return bad("zip64 end record missing");
    entries = little(data, record + 32, 8);
    directory = little(data, record + 48, 8);
  }
  arrays.clear();
  size_t at = directory;
  for (uint64_t e = 0; e < entries; ++e) {
    if (at + 46 > data.size() || little(data, at, 4) != 0x02014b50)
      return bad("corrupt central directory");
    uint64_t method = little(data, at + 10, 2);
    uint64_t crc = little(data, at + 16, 4);
    uint64_t packed = little(data, at + 20, 4);
    uint64_t size = little(data, at + 24, 4);
    size_t nameLength = little(data, at + 28, 2);
    size_t extraLength = little(data, at + 30, 2);
    size_t commentLength = little(data, at + 32, 2);
    uint64_t local = little(data, at + 42, 4);
    if (at + 46 + nameLength + extraLength > data.size())
      return bad("corrupt central directory");
    std::string name = data.substr(at + 46, nameLength);
    // Zip64 sizes and offset, in this order, for the fields that overflow.
    for (size_t x = at + 46 + nameLength;
         x + 4 <= at + 46 + nameLength + extraLength;) {
      uint64_t id = little(data, x, 2), length = little(data, x + 2, 2);
      if (id == 0x0001) {
        size_t field = x + 4;
        for (uint64_t *value : {&size, &packed, &local})
          if (*value == 0xFFFFFFFF && field + 8 <= x + 4 + length) {
            *value = little(data, field, 8);
            field += 8;
          }
      }
      x += 4 + length;
    }
    at += 46 + nameLength + extraLength + commentLength;

    if (local + 30 > data.size() || little(data, local, 4) != 0x04034b50)
      return bad("member '" + name + "' has no local header");
    size_t start =
        local + 30 + little(data, local + 26, 2) + little(data, local + 28, 2);
    if (start + packed > data.size())
      return bad("member '" + name + "' is truncated");
    std::string member;
    if (method == 0) {
      member = data.substr(start, packed);
    } else if (method == 8) {
      member.resize(size);
      z_stream stream{};
      if (inflateInit2(&stream, -MAX_WBITS) != Z_OK)
        return bad("cannot initialize zlib");
      stream.next_in = reinterpret_cast<Bytef *>(&data[start]);
      stream.avail_in = static_cast<uInt>(packed);
      stream.next_out = reinterpret_cast<Bytef *>(member.data());
      stream.avail_out = static_cast<uInt>(size);
      int status = inflate(&stream, Z_FINISH);
      inflateEnd(&stream);
      if (status != Z_STREAM_END || stream.total_out != size)
        return bad("member '" + name + "' has corrupt deflate data");
    } else {
      return bad("member '" + name + "' uses compression method " +
                 std::to_string(method) + " (stored and deflate only)");
    }
    if (member.size() != size ||
        crc32(0, reinterpret_cast<const Bytef *>(member.data()),
              static_cast<uInt>(member.size())) != crc)
      return bad("member '" + name + "' fails its CRC check");
    Tensor tensor;
    std::istringstream in(member);
    if (std::string error = readNpy(in, path + ":" + name, tensor);
        !error.empty())
      return error;
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0)
      name.resize(name.size() - 4);
    arrays.emplace_back(name, std::move(tensor));
  }
  return {};
}

namespace {
/// Appends a little-endian integer of `bytes` bytes.
void putLittle(std::string &out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(static_cast<char>(value >> (8 * i) & 0xff));
}
} // namespace

std::string mlir::gs::runtime::writeNpz(
    const std::string &path,
    const std::vector<std::pair<std::string, const Tensor *>> &arrays) {
  std::string archive, directory;
  for (const auto &[name, tensor] : arrays) {
    std::ostringstream npy;
    writeNpy(npy, *tensor);
    std::string member = npy.str();
    std::string memberName = name + ".npy";
    if (archive.size() + member.size() + memberName.size() + 30 >=
            0xFFFFFFFFull ||
        memberName.size() > 0xFFFF)
      return "cannot write '" + path +
             "': archives over 4 GiB are not "
             "supported";
    uint32_t crc = crc32(0, reinterpret_cast<const Bytef *>(member.data()),
                         static_cast<uInt>(member.size()));
    // What the local and the central header share: version, flags, method,
    // time, date, CRC, sizes, name length.
    std::string common;
    putLittle(common, 20, 2);
    putLittle(common, 0, 2);
    putLittle(common, 0, 2); // stored
    putLittle(common, 0, 2);
    putLittle(common, 0x21, 2); // 1980-01-01
    putLittle(common, crc, 4);
    putLittle(common, member.size(), 4);
    putLittle(common, member.size(), 4);
    putLittle(common, memberName.size(), 2);

    putLittle(directory, 0x02014b50, 4);
    putLittle(directory, 20, 2); // made by
    directory += common;
    putLittle(directory, 0, 2); // extra
    putLittle(directory, 0, 2); // comment
    putLittle(directory, 0, 2); // disk
    putLittle(directory, 0, 2); // internal attributes
    putLittle(directory, 0, 4); // external attributes
    putLittle(directory, archive.size(), 4);
    directory += memberName;

    putLittle(archive, 0x04034b50, 4);
    archive += common;
    putLittle(archive, 0, 2); // extra
    archive += memberName;
    archive += member;
  }
  if (arrays.size() >= 0xFFFF ||
      archive.size() + directory.size() >= 0xFFFFFFFFull)
    return "cannot write '" + path +
           "': archives over 4 GiB or 65535 "
           "arrays are not supported";
  std::string end;
  putLittle(end, 0x06054b50, 4);
  putLittle(end, 0, 4); // disks
  putLittle(end, arrays.size(), 2);
  putLittle(end, arrays.size(), 2);
  putLittle(end, directory.size(), 4);
  putLittle(end, archive.size(), 4);
  putLittle(end, 0, 2); // comment
  return writeFileAtomically(path, [&](std::ostream &out) {
    out.write(archive.data(), static_cast<std::streamsize>(archive.size()));
    out.write(directory.data(), static_cast<std::streamsize>(directory.size()));
    out.write(end.data(), static_cast<std::streamsize>(end.size()));
    return static_cast<bool>(out);
  });
}
