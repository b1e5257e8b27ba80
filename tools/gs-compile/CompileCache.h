//===- CompileCache.h - gs-compile's cache of compiled models ---*- C++ -*-===//
//
// Compiled models kept by everything they are compiled from, so that
// compiling an unchanged model again skips the train pipeline, the lowering
// and code generation.
//
//===----------------------------------------------------------------------===//

#ifndef GS_TOOLS_GSCOMPILE_COMPILECACHE_H
#define GS_TOOLS_GSCOMPILE_COMPILECACHE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::gs {

/// What one compilation wrote: the object files (one, or one per part of
/// the code compiled on a thread of its own), for --emit=lib its header,
/// and the notes it printed.
struct CachedModel {
  std::vector<std::string> objects;
  std::string header;
  std::string notes;
};

/// A key from fields fed in order, each length-prefixed (so that "ab", "c"
/// and "a", "bc" differ).
class CacheKey {
public:
  CacheKey &add(llvm::StringRef field);
  CacheKey &add(uint64_t field);
  /// The key as 64 hex digits.
  std::string hex();

private:
  llvm::BLAKE3 hasher;
};

/// A stream that keeps only the BLAKE3 digest of what is written to it
/// (a module's bytecode, say, without holding it in memory).
class HashingStream : public llvm::raw_ostream {
public:
  HashingStream() = default;
  /// The digest of everything written, as 32 raw bytes.
  std::string digest();

private:
  void write_impl(const char *bytes, size_t size) override;
  uint64_t current_pos() const override { return written; }

  llvm::BLAKE3 hasher;
  uint64_t written = 0;
};

/// Entries `<dir>/<key>.gsc`: a magic line, the number of objects, the
/// objects, header and notes each length-prefixed, and their BLAKE3
/// checksum. Stored by runtime::writeFileAtomically, so
/// that a reader sees a whole entry or none; the least recently used are
/// removed once the directory holds more than `maxBytes`, and temporary
/// files an hour old (from compilations that died) as each entry is added.
class CompileCache {
public:
  CompileCache(std::string dir, uint64_t maxBytes)
      : dir(std::move(dir)), maxBytes(maxBytes) {}

  /// The entry for `key`, or none. A damaged entry is removed and reported
  /// in `warning`; a hit marks the entry as recently used.
  std::optional<CachedModel> lookup(llvm::StringRef key, std::string &warning);
  /// Adds the entry for `key`; on failure (the cache is best-effort) says
  /// why in `warning`.
  void store(llvm::StringRef key, const CachedModel &model,
             std::string &warning);

  const std::string &directory() const { return dir; }

private:
  std::string entryPath(llvm::StringRef key) const;
  void evict(llvm::StringRef keep);

  std::string dir;
  uint64_t maxBytes;
};

/// The default cache directory: $GS_CACHE_DIR, else
/// $XDG_CACHE_HOME/gradscale, else $HOME/.cache/gradscale; empty when
/// GS_CACHE_DIR is "off" or no home is known.
std::string defaultCacheDirectory();

} // namespace mlir::gs

#endif // GS_TOOLS_GSCOMPILE_COMPILECACHE_H
