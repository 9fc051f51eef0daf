#pragma once
// Listing, evicting and cleaning the entries of a cache folder (cache/cache.h):
// `kvault cache clean` and the bound Cache::Commit enforces. Thread-safe; entries
// whose lock is held (being made) are never removed.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "cache/limits.h"
#include "util/result.h"

namespace kvault {

struct CacheEntryInfo {
  std::string kind;
  std::string key;
  std::string dir;
  uint64_t bytes = 0;     // every file in the entry folder
  int64_t last_use = 0;   // unix seconds: the last-use stamp, else the folder's mtime
};

// Kind folders under `root`: every directory named like a kind except tmp. Sorted.
std::vector<std::string> ListCacheKinds(const std::string& root);

// Every entry (<kind>/<2 hex>/<key>/) of `kinds` (empty: all), oldest use first.
std::vector<CacheEntryInfo> ListCacheEntries(const std::string& root,
                                             const std::vector<std::string>& kinds = {});

enum class CleanMode {
  kAll,        // remove every entry
  kOlderThan,  // remove entries not used for `older_than`
  kToSize,     // remove least recently used entries until the rest fits `to_bytes`
};

struct CleanRequest {
  CleanMode mode = CleanMode::kAll;
  std::vector<std::string> kinds;       // Default: empty = every kind
  std::chrono::seconds older_than{0};   // kOlderThan
  uint64_t to_bytes = 0;                // kToSize
  // Spare entries used within this time (eviction: CacheLimits::in_use_grace).
  // Default: 0 = an explicit clean spares only entries being made.
  std::chrono::seconds spare_used_within{0};
  bool count_as_evictions = false;      // add removals to the kinds' eviction counters
};

struct CleanReport {
  size_t removed = 0;
  uint64_t removed_bytes = 0;
  size_t stale_removed = 0;    // leftover folders of killed processes (SweepStaleScratch)
  uint64_t stale_bytes = 0;
  size_t spared = 0;           // in use or being made
  size_t kept = 0;             // entries left (of the selected kinds)
  uint64_t kept_bytes = 0;
};

// Also sweeps stale scratch (SweepStaleScratch) of the selected kinds, and of the
// root's tmp/ when no kind is named.
Result<CleanReport> CleanCache(const std::string& root, const CleanRequest& request);

// Leftovers of killed processes: staging and removed-entry folders (stage-*, removed-*)
// in <kind>/tmp/ and verification scratch folders (verify-*) in <root>/tmp/ in which
// nothing changed for `older_than` (no live build or verification goes that long
// without writing). Workers' private folders there (worker-*) live as long as their
// worker, possibly for days, and are left alone. `kinds` empty: every kind and the
// root's tmp/. Adds to report.stale_*.
inline constexpr std::chrono::hours kStaleScratchAge{6};
inline constexpr const char* kVerificationScratchPrefix = "verify";
void SweepStaleScratch(const std::string& root, const std::vector<std::string>& kinds,
                       std::chrono::seconds older_than, CleanReport& report);

// Least recently used entries of all kinds until the folder fits limits.max_bytes,
// sparing entries in use. Runs in one process at a time (<root>/evict.lock); a call
// that finds another eviction running returns at once with an empty report.
Result<CleanReport> EvictToBound(const std::string& root, const CacheLimits& limits);

// Moves the entry folder `dir` (<root>/<kind>/<2 hex>/<key>) aside into
// <root>/<kind>/tmp/ (one rename: readers see it whole or gone), then deletes it. OK
// when `dir` no longer exists.
Status RemoveCacheEntryDir(const std::string& root, const std::string& dir);

}  // namespace kvault
