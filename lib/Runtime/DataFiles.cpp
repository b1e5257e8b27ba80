//===- DataFiles.cpp - IDX and .npz files -----------------------*- C++ -*-===//

#include "gs/Runtime/DataFiles.h"

#include <zlib.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string_view>

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
uint64_t little(std::string_view data, size_t at, int bytes) {
  uint64_t value = 0;
  for (int i = bytes - 1; i >= 0; --i)
    value = value << 8 | static_cast<unsigned char>(data[at + i]);
  return value;
}
/// A read-only mapping of a whole file, unmapped on exit.
struct MappedFile {
  ~MappedFile() {
    if (address != MAP_FAILED)
      ::munmap(address, size);
  }
  /// Maps `path`; an error message naming it, empty on success.
  std::string map(const std::string &path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return "cannot open '" + path + "': " + std::strerror(errno);
    struct stat status;
    if (::fstat(fd, &status) != 0) {
      ::close(fd);
      return "cannot read '" + path + "': " + std::strerror(errno);
    }
    size = static_cast<size_t>(status.st_size);
    if (size)
      address = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    int error = errno;
    ::close(fd);
    if (size && address == MAP_FAILED)
      return "cannot read '" + path + "': " + std::strerror(error);
    return {};
  }
  std::string_view bytes() const {
    return size ? std::string_view(static_cast<const char *>(address), size)
                : std::string_view();
  }
  void *address = MAP_FAILED;
  size_t size = 0;
};

/// A malloc'd buffer whose allocation failure is an error, not an abort.
struct Buffer {
  ~Buffer() { std::free(data); }
  bool allocate(size_t bytes) {
    data = static_cast<char *>(std::malloc(std::max<size_t>(bytes, 1)));
    return data != nullptr;
  }
  char *data = nullptr;
};

/// An input stream buffer over bytes in memory, without a copy; seekable,
/// for readNpy's size check.
class MemoryStreamBuf : public std::streambuf {
public:
  MemoryStreamBuf(char *data, size_t size) { setg(data, data, data + size); }

protected:
  pos_type seekoff(off_type offset, std::ios_base::seekdir direction,
                   std::ios_base::openmode) override {
    char *base = direction == std::ios_base::beg   ? eback()
                 : direction == std::ios_base::cur ? gptr()
                                                   : egptr();
    if (offset < eback() - base || offset > egptr() - base)
      return pos_type(off_type(-1));
    setg(eback(), base + offset, egptr());
    return pos_type(gptr() - eback());
  }
  pos_type seekpos(pos_type position, std::ios_base::openmode mode) override {
    return seekoff(off_type(position), std::ios_base::beg, mode);
  }
};
} // namespace

/// Deflate expands data at most about 1032-fold: a bound on what a
/// compressed file of `bytes` can hold.
static uint64_t inflatedBound(uint64_t bytes) { return bytes * 1032 + 1024; }

/// Converts `count` big-endian IDX elements of type code `code` at `raw`
/// into `out`.
static void convertIdx(unsigned char code, const unsigned char *raw,
                       uint64_t count, char *out) {
  for (uint64_t i = 0; i < count; ++i) {
    switch (code) {
    case 0x08:
    case 0x09:
      out[i] = static_cast<char>(raw[i]);
      break;
    case 0x0B: {
      int32_t value = static_cast<int16_t>(raw[2 * i] << 8 | raw[2 * i + 1]);
      std::memcpy(out + 4 * i, &value, 4);
      break;
    }
    case 0x0C:
    case 0x0D: {
      uint32_t bits = bigEndian32(raw + 4 * i);
      std::memcpy(out + 4 * i, &bits, 4);
      break;
    }
    case 0x0E: {
      uint64_t bits = uint64_t(bigEndian32(raw + 8 * i)) << 32 |
                      bigEndian32(raw + 8 * i + 4);
      std::memcpy(out + 8 * i, &bits, 8);
      break;
    }
    }
  }
}

std::string mlir::gs::runtime::readIdx(const std::string &path,
                                       Tensor &tensor) {
  if (std::string error = checkRegularFile(path); !error.empty())
    return error;
  struct stat status;
  if (::stat(path.c_str(), &status) != 0)
    return "cannot open '" + path + "': " + std::strerror(errno);
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
  // The declared data must fit in the file (compressed: what it can
  // inflate to) before anything is allocated for it.
  uint64_t declared = count * fileElementSize;
  uint64_t fileBytes = static_cast<uint64_t>(status.st_size);
  bool plain = gzdirect(in.file);
  uint64_t holdable =
      plain ? fileBytes - std::min<uint64_t>(fileBytes, 4 + 4 * rank)
            : inflatedBound(fileBytes);
  if (declared > holdable)
    return "'" + path + "' is truncated: its header declares " +
           std::to_string(declared) + " bytes of data, " +
           (plain ? "it holds " + std::to_string(holdable)
                  : "more than its " + std::to_string(fileBytes) +
                        " compressed bytes can hold");
  if (std::string error = Tensor::allocate(type, shape, tensor); !error.empty())
    return "'" + path + "': " + error;
  // Read and convert a chunk at a time.
  const uint64_t chunkElements = (1u << 20) / fileElementSize;
  std::vector<unsigned char> raw(std::min<uint64_t>(count, chunkElements) *
                                 fileElementSize);
  uint64_t done = 0;
  while (done < count) {
    uint64_t elements = std::min<uint64_t>(count - done, chunkElements);
    got = in.read(raw.data(), elements * fileElementSize);
    if (got < 0)
      return "'" + path + "' has corrupt gzip data: " + in.error();
    if (got != static_cast<int64_t>(elements * fileElementSize))
      return "'" + path + "' is truncated: its header declares " +
             std::to_string(declared) + " bytes of data, it holds " +
             std::to_string(done * fileElementSize + got);
    convertIdx(magic[2], raw.data(), elements,
               tensor.data() + done * sizeOf(type));
    done += elements;
  }
  unsigned char extra;
  got = in.read(&extra, 1);
  if (got < 0)
    return "'" + path + "' has corrupt gzip data: " + in.error();
  if (got != 0) {
    tensor = Tensor();
    return "'" + path + "' has data after the elements its header declares";
  }
  return {};
}

std::string mlir::gs::runtime::readNpz(
    const std::string &path,
    std::vector<std::pair<std::string, Tensor>> &arrays) {
  if (std::string error = checkRegularFile(path); !error.empty())
    return error;
  // The archive is mapped, not read: its members are inflated from it.
  MappedFile file;
  if (std::string error = file.map(path); !error.empty())
    return error;
  std::string_view data = file.bytes();
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
    if (record > data.size() || data.size() - record < 56 ||
        little(data, record, 4) != 0x06064b50)
      return bad("zip64 end record missing");
    entries = little(data, record + 32, 8);
    directory = little(data, record + 48, 8);
  }
  arrays.clear();
  size_t at = directory;
  for (uint64_t e = 0; e < entries; ++e) {
    if (at > data.size() || data.size() - at < 46 ||
        little(data, at, 4) != 0x02014b50)
      return bad("corrupt central directory");
    uint64_t method = little(data, at + 10, 2);
    uint64_t crc = little(data, at + 16, 4);
    uint64_t packed = little(data, at + 20, 4);
    uint64_t size = little(data, at + 24, 4);
    size_t nameLength = little(data, at + 28, 2);
    size_t extraLength = little(data, at + 30, 2);
    size_t commentLength = little(data, at + 32, 2);
    uint64_t local = little(data, at + 42, 4);
    if (data.size() - at - 46 < nameLength + extraLength + commentLength)
      return bad("corrupt central directory");
    std::string name(data.substr(at + 46, nameLength));
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

    if (local > data.size() || data.size() - local < 30 ||
        little(data, local, 4) != 0x04034b50)
      return bad("member '" + name + "' has no local header");
    size_t start =
        local + 30 + little(data, local + 26, 2) + little(data, local + 28, 2);
    if (start > data.size() || data.size() - start < packed)
      return bad("member '" + name + "' is truncated");
    // A member's declared size is checked against what its bytes can hold
    // and against the tensor limit before anything is inflated.
    if ((method == 0 && size != packed) ||
        (method == 8 && size > inflatedBound(packed)))
      return bad("member '" + name + "' declares " + std::to_string(size) +
                 " bytes, more than its " + std::to_string(packed) +
                 " stored bytes can hold");
    if (size > tensorByteLimit() + (1u << 20))
      return bad("member '" + name + "' declares " + std::to_string(size) +
                 " bytes, more than the limit of " +
                 std::to_string(tensorByteLimit()) +
                 " bytes (raise it with --max-tensor-bytes)");
    Buffer member;
    if (!member.allocate(size))
      return "cannot allocate " + std::to_string(size) + " bytes for '" + path +
             ":" + name + "'";
    if (method == 0) {
      std::memcpy(member.data, data.data() + start, size);
    } else if (method == 8) {
      z_stream stream{};
      if (inflateInit2(&stream, -MAX_WBITS) != Z_OK)
        return bad("cannot initialize zlib");
      // zlib counts in 32 bits: feed and drain at most 1 GiB at a time.
      const uint64_t chunk = uint64_t(1) << 30;
      uint64_t in = 0, out = 0;
      int status = Z_OK;
      while (status == Z_OK) {
        if (stream.avail_in == 0 && in < packed) {
          stream.next_in = reinterpret_cast<Bytef *>(
              const_cast<char *>(data.data() + start + in));
          stream.avail_in = static_cast<uInt>(std::min(packed - in, chunk));
          in += stream.avail_in;
        }
        if (stream.avail_out == 0) {
          if (out == size)
            break;
          stream.next_out = reinterpret_cast<Bytef *>(member.data + out);
          stream.avail_out = static_cast<uInt>(std::min(size - out, chunk));
          out += stream.avail_out;
        }
        status = inflate(&stream, Z_NO_FLUSH);
        if (status == Z_BUF_ERROR && stream.avail_in == 0 && in == packed)
          break;
      }
      uint64_t produced = out - stream.avail_out;
      inflateEnd(&stream);
      if (status != Z_STREAM_END || produced != size)
        return bad("member '" + name + "' has corrupt deflate data");
    } else {
      return bad("member '" + name + "' uses compression method " +
                 std::to_string(method) + " (stored and deflate only)");
    }
    if (crc32_z(0, reinterpret_cast<const Bytef *>(member.data), size) != crc)
      return bad("member '" + name + "' fails its CRC check");
    Tensor tensor;
    MemoryStreamBuf memory(member.data, size);
    std::istream in(&memory);
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
