#include "cache/limits.h"

#include <cmath>
#include <string>

#include "util/env.h"
#include "util/env_vars.h"

namespace kvault {

Result<uint64_t> ParseGigabytes(std::string_view text) {
  std::string s(text);
  if (s.empty()) return Error{"empty size (expected gigabytes, e.g. 20 or 0.5)"};
  size_t used = 0;
  double gb = 0;
  try {
    gb = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || !std::isfinite(gb))
    return Error{"'" + s + "' is not a size in gigabytes (e.g. 20 or 0.5)"};
  if (gb < 0) return Error{"'" + s + "' is negative"};
  if (gb > 1e9) return Error{"'" + s + "' is more than 1e9 GB"};
  return static_cast<uint64_t>(std::llround(gb * 1e9));
}

Result<CacheLimits> CacheLimits::FromEnv() {
  CacheLimits limits;
  if (auto v = KvaultEnv("KVAULT_CACHE_MAX_GB"); v && !v->empty()) {
    auto bytes = ParseGigabytes(*v);
    if (!bytes) return Error{"KVAULT_CACHE_MAX_GB: " + bytes.error()};
    limits.max_bytes = *bytes;
  }
  return limits;
}

}  // namespace kvault
