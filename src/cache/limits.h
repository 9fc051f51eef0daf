#pragma once
// How big the cache folder may grow, and what eviction must leave alone.
//
//   auto limits = CacheLimits::FromEnv();   // $KVAULT_CACHE_MAX_GB, Default: 20 GB
//   if (!limits) fail(limits.error());      // "KVAULT_CACHE_MAX_GB: ..."
#include <chrono>
#include <cstdint>
#include <string_view>

#include "util/result.h"

namespace kvault {

struct CacheLimits {
  // All kinds together (build, pch, refs, ...). Default: 20 GB (20e9 bytes).
  uint64_t max_bytes = 20'000'000'000ull;
  // An entry looked up or stored this recently counts as in use and is never evicted
  // (a lane may be about to load it). Default: 10 minutes.
  std::chrono::seconds in_use_grace{600};

  // max_bytes from $KVAULT_CACHE_MAX_GB when set and not empty; Error naming the
  // variable when its value is not a number >= 0.
  static Result<CacheLimits> FromEnv();
};

// "20" -> 20e9, "0.5" -> 5e8, "0" -> 0 (keep nothing that is not in use). Error for an
// empty, negative, non-finite or non-numeric text, or more than 1e9 GB.
Result<uint64_t> ParseGigabytes(std::string_view text);

}  // namespace kvault
