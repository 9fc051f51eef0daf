#include "engine/reference_cache.h"

#include <optional>

#include "cache/cache.h"
#include "util/files.h"
#include "util/json.h"

namespace kvault {

ReferenceCache::ReferenceCache(std::string cache_dir) : root_(std::move(cache_dir)) {}

namespace {
constexpr char kOutputName[] = "output.kvt";

// The entry's record, or nullopt when the entry lacks it (then rebuilt).
std::optional<ReferenceEntry> ReadEntry(const std::optional<CacheEntry>& e) {
  if (!e) return std::nullopt;
  const Json& meta = e->manifest.meta;
  if (!meta.is_object() || !meta.contains("input_digest") || !meta["input_digest"].is_string())
    return std::nullopt;
  ReferenceEntry r;
  r.output_path = e->Path(kOutputName);
  r.input_digest = meta["input_digest"].get<std::string>();
  if (!FileExists(r.output_path)) return std::nullopt;
  r.hit = true;
  return r;
}
}  // namespace

Result<ReferenceEntry> ReferenceCache::GetOrCompute(
    const std::string& key, const std::function<Result<std::string>(const std::string&)>& compute) {
  auto limits = CacheLimits::FromEnv();
  if (!limits) return Error{limits.error()};
  Cache cache(root_, "refs", *limits);
  if (auto hit = ReadEntry(cache.Lookup(key))) return *hit;
  auto lock = cache.Lock(key, FileLock::kForever);
  if (!lock) return Error{"cannot lock reference entry " + key + ": " + lock.error()};
  if (auto hit = ReadEntry(cache.Lookup(key, CountLookup::kNo))) return *hit;  // computed meanwhile
  auto staged = cache.Stage();
  if (!staged) return Error{"reference cache: " + staged.error()};
  auto digest = compute(staged->Join(kOutputName));
  if (!digest) return Error{digest.error()};
  Json meta{{"input_digest", *digest}};
  if (auto st = WriteFileAtomic(staged->Join("meta.json"), meta.dump()); !st)
    return Error{"cannot write reference entry: " + st.error()};
  auto entry = cache.Commit(key, std::move(*staged), meta);
  if (!entry) return Error{"cannot store reference entry: " + entry.error()};
  ReferenceEntry e;
  e.output_path = entry->Path(kOutputName);
  e.input_digest = *digest;
  return e;
}

}  // namespace kvault
