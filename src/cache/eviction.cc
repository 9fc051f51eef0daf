#include "cache/eviction.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>

#include "cache/cache.h"
#include "cache/manifest.h"
#include "cache/stats.h"
#include "util/files.h"

namespace kvault {
namespace fs = std::filesystem;

namespace {

bool IsShard(const std::string& name) {
  return name.size() == 2 && name.find_first_not_of("0123456789abcdef") == std::string::npos;
}

int64_t MtimeSeconds(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return 0;
  return static_cast<int64_t>(st.st_mtim.tv_sec);
}

uint64_t FolderBytes(const std::string& dir) {
  uint64_t bytes = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it); it.increment(ec)) {
    std::error_code fec;
    if (it->is_regular_file(fec)) bytes += it->file_size(fec);
  }
  return bytes;
}

std::vector<std::string> Subdirs(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::end(it); it.increment(ec)) {
    std::error_code dec;
    if (it->is_directory(dec)) out.push_back(it->path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

int64_t Now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch()).count();
}

// Removes one entry unless it is being made (its lock held). true when removed.
bool RemoveUnlessBusy(const std::string& root, const CacheEntryInfo& e) {
  const std::string lock_path = CacheLockPath(root, e.kind, e.key);
  std::optional<FileLock> held;
  if (FileExists(lock_path)) {
    auto lock = FileLock::TryAcquire(lock_path);
    if (!lock || !lock->has_value()) return false;
    held = std::move(**lock);
  }
  return RemoveCacheEntryDir(root, e.dir).ok();
}

// The newest modification time of `dir` and everything in it.
int64_t NewestMtime(const std::string& dir) {
  int64_t newest = MtimeSeconds(dir);
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it); it.increment(ec))
    newest = std::max(newest, MtimeSeconds(it->path().string()));
  return newest;
}

}  // namespace

void SweepStaleScratch(const std::string& root, const std::vector<std::string>& kinds,
                       std::chrono::seconds older_than, CleanReport& report) {
  // (folder, prefixes of what may be swept there)
  std::vector<std::pair<std::string, std::vector<std::string>>> folders;
  for (const std::string& kind : kinds.empty() ? ListCacheKinds(root) : kinds)
    folders.push_back({root + "/" + kind + "/tmp", {"stage-", "removed-"}});
  if (kinds.empty()) folders.push_back({root + "/tmp", {std::string(kVerificationScratchPrefix) + "-"}});
  const int64_t now = Now();
  for (const auto& [tmp, prefixes] : folders) {
    for (const std::string& name : Subdirs(tmp)) {
      if (std::none_of(prefixes.begin(), prefixes.end(),
                       [&](const std::string& p) { return name.rfind(p, 0) == 0; }))
        continue;
      const std::string dir = tmp + "/" + name;
      if (now - NewestMtime(dir) < older_than.count()) continue;
      const uint64_t bytes = FolderBytes(dir);
      std::error_code ec;
      fs::remove_all(dir, ec);
      if (ec) continue;
      ++report.stale_removed;
      report.stale_bytes += bytes;
    }
  }
}

std::vector<std::string> ListCacheKinds(const std::string& root) {
  std::vector<std::string> kinds;
  for (const std::string& name : Subdirs(root))
    if (IsCacheKindName(name)) kinds.push_back(name);
  return kinds;
}

std::vector<CacheEntryInfo> ListCacheEntries(const std::string& root, const std::vector<std::string>& kinds) {
  std::vector<CacheEntryInfo> out;
  for (const std::string& kind : kinds.empty() ? ListCacheKinds(root) : kinds) {
    const std::string kind_dir = root + "/" + kind;
    for (const std::string& shard : Subdirs(kind_dir)) {
      if (!IsShard(shard)) continue;
      for (const std::string& key : Subdirs(kind_dir + "/" + shard)) {
        if (key.rfind(shard, 0) != 0) continue;
        CacheEntryInfo e;
        e.kind = kind;
        e.key = key;
        e.dir = kind_dir + "/" + shard + "/" + key;
        e.bytes = FolderBytes(e.dir);
        e.last_use = MtimeSeconds(e.dir + "/" + kStampName);
        if (e.last_use == 0) e.last_use = MtimeSeconds(e.dir);
        out.push_back(std::move(e));
      }
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const CacheEntryInfo& a, const CacheEntryInfo& b) { return a.last_use < b.last_use; });
  return out;
}

Result<CleanReport> CleanCache(const std::string& root, const CleanRequest& req) {
  for (const std::string& k : req.kinds)
    if (!IsCacheKindName(k)) return Error{"not a cache kind: '" + k + "'"};
  std::vector<CacheEntryInfo> entries = ListCacheEntries(root, req.kinds);
  uint64_t total = 0;
  for (const auto& e : entries) total += e.bytes;
  const int64_t now = Now();
  CleanReport report;
  SweepStaleScratch(root, req.kinds, kStaleScratchAge, report);
  std::map<std::string, KindCounters> evicted;
  for (const CacheEntryInfo& e : entries) {  // least recently used first
    bool wanted = false;
    switch (req.mode) {
      case CleanMode::kAll: wanted = true; break;
      case CleanMode::kOlderThan: wanted = now - e.last_use >= req.older_than.count(); break;
      case CleanMode::kToSize: wanted = total > req.to_bytes; break;
    }
    bool removed = false;
    if (wanted) {
      if (req.spare_used_within.count() > 0 && now - e.last_use < req.spare_used_within.count()) {
        ++report.spared;
      } else if (RemoveUnlessBusy(root, e)) {
        removed = true;
      } else {
        ++report.spared;
      }
    }
    if (removed) {
      ++report.removed;
      report.removed_bytes += e.bytes;
      total -= e.bytes;
      evicted[e.kind].evictions += 1;
      evicted[e.kind].evicted_bytes += e.bytes;
    } else {
      ++report.kept;
      report.kept_bytes += e.bytes;
    }
  }
  if (req.count_as_evictions)
    for (const auto& [kind, delta] : evicted) (void)AddCacheCounters(root, kind, delta);
  return report;
}

Result<CleanReport> EvictToBound(const std::string& root, const CacheLimits& limits) {
  if (Status s = EnsureDir(root); !s) return Error{s.error()};
  auto lock = FileLock::TryAcquire(root + "/evict.lock");
  if (!lock) return Error{lock.error()};
  if (!lock->has_value()) return CleanReport{};  // another process is evicting
  CleanRequest req;
  req.mode = CleanMode::kToSize;
  req.to_bytes = limits.max_bytes;
  req.spare_used_within = limits.in_use_grace;
  req.count_as_evictions = true;
  return CleanCache(root, req);
}

Status RemoveCacheEntryDir(const std::string& root, const std::string& dir) {
  if (!FileExists(dir)) return Status::Ok();
  // <kind>/tmp/, beside the shards: same file system, hidden like the entries.
  const std::string tmp = fs::path(dir).parent_path().parent_path().string() + "/tmp";
  if (Status s = EnsureDir(tmp); !s) return s;
  std::string aside = tmp + "/removed-XXXXXX";
  if (::mkdtemp(aside.data()) == nullptr) return Error{"cannot create " + aside + ": " + std::strerror(errno)};
  const std::string target = aside + "/entry";
  if (::rename(dir.c_str(), target.c_str()) != 0) {
    int err = errno;
    ::rmdir(aside.c_str());
    if (err == ENOENT) return Status::Ok();  // someone else removed it
    return Error{"cannot move " + dir + " aside: " + std::strerror(err)};
  }
  std::error_code ec;
  fs::remove_all(aside, ec);
  if (ec) return Error{"cannot delete " + aside + ": " + ec.message()};
  return Status::Ok();
}

}  // namespace kvault
