//===- CompileCache.cpp - gs-compile's cache of compiled models -*- C++ -*-===//

#include "CompileCache.h"

#include "gs/Runtime/Tensor.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Chrono.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <algorithm>
#include <vector>

using namespace mlir::gs;

namespace {
constexpr llvm::StringLiteral kMagic = "GSCACHE2\n";
constexpr size_t kDigestBytes = 32;

void appendLength(std::string &out, uint64_t value) {
  char bytes[8];
  llvm::support::endian::write64le(bytes, value);
  out.append(bytes, sizeof(bytes));
}

std::string digestOf(llvm::StringRef bytes) {
  llvm::BLAKE3Result<> digest = llvm::BLAKE3::hash(
      llvm::ArrayRef<uint8_t>(bytes.bytes_begin(), bytes.size()));
  return std::string(digest.begin(), digest.end());
}

/// Reads the fields of an entry's bytes; none if they are not a whole,
/// intact entry.
std::optional<CachedModel> parseEntry(llvm::StringRef bytes) {
  if (!bytes.starts_with(kMagic) || bytes.size() < kMagic.size() + kDigestBytes)
    return std::nullopt;
  llvm::StringRef checked = bytes.drop_back(kDigestBytes);
  if (digestOf(checked) != bytes.take_back(kDigestBytes))
    return std::nullopt;
  llvm::StringRef payload = checked.drop_front(kMagic.size());
  auto readLength = [&](uint64_t &length) {
    if (payload.size() < 8)
      return false;
    length = llvm::support::endian::read64le(payload.data());
    payload = payload.drop_front(8);
    return true;
  };
  auto readField = [&](std::string &field) {
    uint64_t length;
    if (!readLength(length) || length > payload.size())
      return false;
    field = payload.take_front(length).str();
    payload = payload.drop_front(length);
    return true;
  };
  CachedModel model;
  uint64_t objects;
  // Each object takes at least its length's 8 bytes.
  if (!readLength(objects) || objects == 0 || objects > payload.size() / 8)
    return std::nullopt;
  model.objects.resize(objects);
  for (std::string &object : model.objects)
    if (!readField(object))
      return std::nullopt;
  if (!readField(model.header) || !readField(model.notes) || !payload.empty())
    return std::nullopt;
  return model;
}
} // namespace

CacheKey &CacheKey::add(llvm::StringRef field) {
  uint8_t length[8];
  llvm::support::endian::write64le(length, field.size());
  hasher.update(length);
  hasher.update(llvm::ArrayRef<uint8_t>(field.bytes_begin(), field.size()));
  return *this;
}

CacheKey &CacheKey::add(uint64_t field) { return add(std::to_string(field)); }

std::string CacheKey::hex() {
  llvm::BLAKE3Result<> digest = hasher.final();
  return llvm::toHex(digest, /*LowerCase=*/true);
}

void HashingStream::write_impl(const char *bytes, size_t size) {
  hasher.update(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(bytes), size));
  written += size;
}

std::string HashingStream::digest() {
  flush();
  llvm::BLAKE3Result<> digest = hasher.final();
  return std::string(digest.begin(), digest.end());
}

std::string CompileCache::entryPath(llvm::StringRef key) const {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, key + ".gsc");
  return path.str().str();
}

std::optional<CachedModel> CompileCache::lookup(llvm::StringRef key,
                                                std::string &warning) {
  std::string path = entryPath(key);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer)
    return std::nullopt;
  std::optional<CachedModel> model = parseEntry((*buffer)->getBuffer());
  if (!model) {
    warning = "the cache entry '" + path + "' is damaged; compiling anew";
    llvm::sys::fs::remove(path);
    return std::nullopt;
  }
  // Recently used: the eviction keeps it longest.
  int fd;
  if (!llvm::sys::fs::openFileForReadWrite(
          path, fd, llvm::sys::fs::CD_OpenExisting, llvm::sys::fs::OF_None)) {
    (void)llvm::sys::fs::setLastAccessAndModificationTime(
        fd, std::chrono::system_clock::now());
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  }
  return model;
}

void CompileCache::store(llvm::StringRef key, const CachedModel &model,
                         std::string &warning) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    warning =
        "cannot create the cache directory '" + dir + "': " + ec.message();
    return;
  }
  std::string bytes = kMagic.str();
  appendLength(bytes, model.objects.size());
  for (const std::string &object : model.objects) {
    appendLength(bytes, object.size());
    bytes += object;
  }
  for (const std::string *field : {&model.header, &model.notes}) {
    appendLength(bytes, field->size());
    bytes += *field;
  }
  bytes += digestOf(bytes);

  std::string path = entryPath(key);
  std::string error = runtime::writeFileAtomically(path, bytes);
  if (!error.empty()) {
    warning = "cannot add to the cache: " + error;
    return;
  }
  evict(path);
}

void CompileCache::evict(llvm::StringRef keep) {
  struct Entry {
    std::string path;
    uint64_t size;
    llvm::sys::TimePoint<> used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    // writeFileAtomically's temporaries are `<key>.gsc.tmp.<pid>`.
    bool temporary = llvm::StringRef(it->path()).contains(".gsc.tmp.");
    if (!temporary && llvm::sys::path::extension(it->path()) != ".gsc")
      continue;
    llvm::sys::fs::file_status status;
    if (llvm::sys::fs::status(it->path(), status))
      continue;
    // A temporary file an hour old was left by a compilation that died
    // (writeFileAtomically removes those of its own entry as it writes).
    if (temporary) {
      if (std::chrono::system_clock::now() - status.getLastModificationTime() >
          std::chrono::hours(1))
        llvm::sys::fs::remove(it->path());
      continue;
    }
    entries.push_back(
        {it->path(), status.getSize(), status.getLastModificationTime()});
    total += status.getSize();
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry &a, const Entry &b) { return a.used < b.used; });
  for (const Entry &entry : entries) {
    if (total <= maxBytes)
      break;
    if (entry.path == keep)
      continue;
    if (!llvm::sys::fs::remove(entry.path))
      total -= entry.size;
  }
}

std::string mlir::gs::defaultCacheDirectory() {
  if (std::optional<std::string> dir =
          llvm::sys::Process::GetEnv("GS_CACHE_DIR"))
    return *dir == "off" ? std::string() : *dir;
  llvm::SmallString<256> path;
  if (std::optional<std::string> xdg =
          llvm::sys::Process::GetEnv("XDG_CACHE_HOME");
      xdg && !xdg->empty())
    path = *xdg;
  else if (llvm::sys::path::home_directory(path))
    llvm::sys::path::append(path, ".cache");
  else
    return std::string();
  llvm::sys::path::append(path, "gradscale");
  return path.str().str();
}
