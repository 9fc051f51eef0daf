#pragma once
// Hit, miss, store, eviction and corruption counters per cache kind, kept in
// <root>/stats.json and updated under the flock <root>/stats.lock, so several
// processes may count at once without losing updates. Format: docs/cache.md.
//
//   CountCacheEvent(root, "build", CacheEvent::kHit);
//   auto counters = ReadCacheCounters(root);   // {"build": {hits: 1, ...}}
#include <cstdint>
#include <map>
#include <string>

#include "util/json.h"
#include "util/result.h"

namespace kvault {

struct KindCounters {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t stores = 0;
  uint64_t evictions = 0;
  uint64_t evicted_bytes = 0;
  uint64_t corrupt = 0;  // damaged entries found by a lookup and removed

  KindCounters& operator+=(const KindCounters& o);
  Json ToJson() const;
};

using CacheCounters = std::map<std::string, KindCounters>;  // by kind

enum class CacheEvent { kHit, kMiss, kStore, kEviction, kCorrupt };

// Adds `delta` to the kind's counters. Error when the lock or file cannot be had;
// callers treat counting as best effort and go on.
Status AddCacheCounters(const std::string& root, const std::string& kind, const KindCounters& delta);
// One event; `bytes` is the evicted entry's size for kEviction.
Status CountCacheEvent(const std::string& root, const std::string& kind, CacheEvent event,
                       uint64_t bytes = 0);

// The counters so far; empty when nothing was counted yet. A stats.json that is not
// valid (damaged by hand) reads as empty and is replaced on the next update.
Result<CacheCounters> ReadCacheCounters(const std::string& root);

}  // namespace kvault
