#pragma once
// Cache: one kind of content-addressed entries ("build", "pch", "refs", ...) in the
// shared cache folder. Generic: a key (util/sha256.h KeyHasher over every input
// that changes the output) in, a folder of artefacts out. Layout and formats:
// docs/cache.md.
//
//   Cache cache(DefaultCacheDir(), "build", *CacheLimits::FromEnv());
//   if (auto hit = cache.Lookup(key)) return hit->Path("kv_1234.so");  // verified
//   auto lock = cache.Lock(key, timeout);          // optional: build once, not twice
//   if (auto hit = cache.Lookup(key)) ...          // someone else built it meanwhile
//   auto staged = cache.Stage();                   // write artefacts into staged->path()
//   auto entry = cache.Commit(key, std::move(*staged), meta);
//
// An entry appears whole or not at all: it is written in a staging folder on the
// same file system, its manifest (sizes, SHA-256) written, then renamed into place.
// Several processes may commit the same key at once: one entry wins, the others'
// folders are dropped. A lookup verifies the entry against its manifest; a damaged
// entry is removed and reported as a miss. After each commit, least recently used
// entries of every kind are evicted until the folder fits CacheLimits::max_bytes,
// sparing entries in use (used within in_use_grace, or whose lock is held).
// Thread-safe: distinct objects may be used from any thread and process.
#include <chrono>
#include <optional>
#include <string>

#include "cache/limits.h"
#include "cache/manifest.h"
#include "util/files.h"
#include "util/json.h"
#include "util/result.h"

namespace kvault {

struct CacheEntry {
  std::string dir;    // <root>/<kind>/<key[0:2]>/<key>
  Manifest manifest;  // manifest.meta: the kind's own record
  std::string Path(const std::string& name) const { return dir + "/" + name; }
};

// A staging folder under <root>/<kind>/tmp/, removed on destruction unless committed.
class StagedEntry {
 public:
  StagedEntry(StagedEntry&& other) noexcept;
  StagedEntry& operator=(StagedEntry&&) = delete;
  StagedEntry(const StagedEntry&) = delete;
  ~StagedEntry();
  const std::string& path() const { return path_; }
  std::string Join(const std::string& name) const { return path_ + "/" + name; }

 private:
  friend class Cache;
  explicit StagedEntry(std::string path) : path_(std::move(path)) {}
  std::string path_;  // "" once committed
};

enum class CountLookup { kYes, kNo };

// Where the lock of `key` of `kind` lies: <root>/locks/<kind>/<key[0:2]>/<key>.lock,
// outside the kind's folder. Candidate workers see build/ (read-only), and flock needs
// no write access: a lock file there let a candidate hold other lanes' builds of that
// key (a failed or evicted one) for as long as its worker lived.
std::string CacheLockPath(const std::string& root, const std::string& kind, const std::string& key);

class Cache {
 public:
  // REQUIRES: `kind` is a non-empty name of [a-z0-9_-] and not "tmp".
  Cache(std::string root, std::string kind, CacheLimits limits = {});

  const std::string& root() const { return root_; }
  const std::string& kind() const { return kind_; }
  std::string EntryDir(const std::string& key) const;

  // The intact entry, or nullopt. A hit refreshes the entry's last-use stamp. A
  // damaged entry (no manifest, a file missing, truncated or altered) is removed.
  // Counts a hit or a miss (and a corrupt entry) in stats.json unless count is kNo.
  std::optional<CacheEntry> Lookup(const std::string& key, CountLookup count = CountLookup::kYes) const;

  // The entry's lock (CacheLockPath): held while one process makes the entry so
  // others wait instead of repeating the work; eviction and cleaning skip entries
  // whose lock is held.
  Result<FileLock> Lock(const std::string& key, std::chrono::milliseconds timeout) const;

  // A fresh staging folder on the cache's file system.
  Result<StagedEntry> Stage() const;

  // Writes the manifest of everything in `staged` (with `meta`) and moves it into
  // place as the entry of `key`. When an intact entry of the key exists already (a
  // concurrent writer won), that one is kept and returned. Then evicts to the bound.
  Result<CacheEntry> Commit(const std::string& key, StagedEntry staged, const Json& meta) const;

 private:
  std::string root_;
  std::string kind_;
  CacheLimits limits_;
};

// True for names Cache accepts as a kind.
bool IsCacheKindName(const std::string& name);

}  // namespace kvault
