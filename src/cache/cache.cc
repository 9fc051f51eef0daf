#include "cache/cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "cache/eviction.h"
#include "cache/stats.h"

namespace kvault {
namespace {

// Creates or refreshes the last-use stamp (its mtime is the entry's last use).
void Touch(const std::string& dir) {
  const std::string stamp = dir + "/" + kStampName;
  if (::utimensat(AT_FDCWD, stamp.c_str(), nullptr, 0) == 0) return;
  int fd = ::open(stamp.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0) ::close(fd);
}

bool IsHexKey(const std::string& key) {
  return key.size() >= 8 && key.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

bool IsCacheKindName(const std::string& name) {
  return !name.empty() && name != "tmp" &&
         name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") == std::string::npos;
}

StagedEntry::StagedEntry(StagedEntry&& other) noexcept : path_(std::exchange(other.path_, {})) {}

StagedEntry::~StagedEntry() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);  // best effort
}

Cache::Cache(std::string root, std::string kind, CacheLimits limits)
    : root_(std::move(root)), kind_(std::move(kind)), limits_(limits) {
  if (!IsCacheKindName(kind_)) std::abort();  // a programming error, not input
}

std::string Cache::EntryDir(const std::string& key) const {
  return root_ + "/" + kind_ + "/" + key.substr(0, 2) + "/" + key;
}

std::optional<CacheEntry> Cache::Lookup(const std::string& key, CountLookup count) const {
  const bool counted = count == CountLookup::kYes;
  const std::string dir = EntryDir(key);
  auto miss = [&]() -> std::optional<CacheEntry> {
    if (counted) (void)CountCacheEvent(root_, kind_, CacheEvent::kMiss);
    return std::nullopt;
  };
  if (!IsHexKey(key) || !FileExists(dir)) return miss();
  auto manifest = ReadManifest(dir);
  Status intact = manifest ? VerifyEntry(dir, key, *manifest) : Status(Error{manifest.error()});
  if (!intact) {
    // Entries are immutable once in place: whatever differs is damage. Remove it so
    // the caller rebuilds; count it even when the lookup is not counted.
    (void)RemoveCacheEntryDir(root_, dir);
    (void)CountCacheEvent(root_, kind_, CacheEvent::kCorrupt);
    return miss();
  }
  Touch(dir);
  if (counted) (void)CountCacheEvent(root_, kind_, CacheEvent::kHit);
  return CacheEntry{dir, std::move(*manifest)};
}

std::string CacheLockPath(const std::string& root, const std::string& kind, const std::string& key) {
  return root + "/locks/" + kind + "/" + key.substr(0, 2) + "/" + key + ".lock";
}

Result<FileLock> Cache::Lock(const std::string& key, std::chrono::milliseconds timeout) const {
  const std::string path = CacheLockPath(root_, kind_, key);
  if (Status s = EnsureDir(std::filesystem::path(path).parent_path().string()); !s) return Error{s.error()};
  return FileLock::Acquire(path, timeout);
}

Result<StagedEntry> Cache::Stage() const {
  // Inside the kind's folder: as hidden from candidates as the entries themselves.
  const std::string tmp = root_ + "/" + kind_ + "/tmp";
  if (Status s = EnsureDir(tmp); !s) return Error{s.error()};
  std::string templ = tmp + "/stage-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr)
    return Error{"cannot create a staging folder in " + tmp + ": " + std::strerror(errno)};
  ::chmod(templ.c_str(), 0755);
  return StagedEntry(std::move(templ));
}

Result<CacheEntry> Cache::Commit(const std::string& key, StagedEntry staged, const Json& meta) const {
  if (!IsHexKey(key)) return Error{"not a cache key: '" + key + "'"};
  const std::string dir = EntryDir(key);
  if (Status s = EnsureDir(root_ + "/" + kind_ + "/" + key.substr(0, 2)); !s) return Error{s.error()};
  auto manifest = WriteManifest(staged.path(), kind_, key, meta);
  if (!manifest) return Error{manifest.error()};
  Touch(staged.path());
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (::rename(staged.path().c_str(), dir.c_str()) == 0) {
      staged.path_.clear();
      (void)CountCacheEvent(root_, kind_, CacheEvent::kStore);
      (void)EvictToBound(root_, limits_);
      return CacheEntry{dir, std::move(*manifest)};
    }
    int err = errno;
    if (err != ENOTEMPTY && err != EEXIST)
      return Error{"cannot move " + staged.path() + " to " + dir + ": " + std::strerror(err)};
    // Another writer got there first. Keep its entry if intact; a damaged one was
    // removed by Lookup, so the rename is tried once more.
    if (auto existing = Lookup(key, CountLookup::kNo)) return *existing;
  }
  return Error{"cannot move " + staged.path() + " to " + dir + ": the place stays occupied"};
}

}  // namespace kvault
