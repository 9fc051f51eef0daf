#include "cache/stats.h"

#include "util/files.h"

namespace kvault {
namespace {

constexpr char kStatsName[] = "stats.json";
constexpr char kStatsLockName[] = "stats.lock";

uint64_t Field(const Json& j, const char* name) {
  if (!j.is_object() || !j.contains(name) || !j[name].is_number_unsigned()) return 0;
  return j[name].get<uint64_t>();
}

CacheCounters Parse(const std::string& text) {
  CacheCounters out;
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("kinds") || !j["kinds"].is_object()) return out;
  for (auto& [kind, c] : j["kinds"].items()) {
    KindCounters k;
    k.hits = Field(c, "hits");
    k.misses = Field(c, "misses");
    k.stores = Field(c, "stores");
    k.evictions = Field(c, "evictions");
    k.evicted_bytes = Field(c, "evicted_bytes");
    k.corrupt = Field(c, "corrupt");
    out[kind] = k;
  }
  return out;
}

}  // namespace

KindCounters& KindCounters::operator+=(const KindCounters& o) {
  hits += o.hits;
  misses += o.misses;
  stores += o.stores;
  evictions += o.evictions;
  evicted_bytes += o.evicted_bytes;
  corrupt += o.corrupt;
  return *this;
}

Json KindCounters::ToJson() const {
  return Json{{"hits", hits}, {"misses", misses}, {"stores", stores}, {"evictions", evictions},
              {"evicted_bytes", evicted_bytes}, {"corrupt", corrupt}};
}

Status AddCacheCounters(const std::string& root, const std::string& kind, const KindCounters& delta) {
  if (Status s = EnsureDir(root); !s) return s;
  auto lock = FileLock::Acquire(root + "/" + kStatsLockName, std::chrono::seconds(10));
  if (!lock) return Error{lock.error()};
  CacheCounters all;
  if (auto text = ReadFile(root + "/" + kStatsName)) all = Parse(*text);
  all[kind] += delta;
  Json kinds = Json::object();
  for (const auto& [name, c] : all) kinds[name] = c.ToJson();
  return WriteFileAtomic(root + "/" + kStatsName, Json{{"kinds", kinds}}.dump(2) + "\n");
}

Status CountCacheEvent(const std::string& root, const std::string& kind, CacheEvent event, uint64_t bytes) {
  KindCounters d;
  switch (event) {
    case CacheEvent::kHit: d.hits = 1; break;
    case CacheEvent::kMiss: d.misses = 1; break;
    case CacheEvent::kStore: d.stores = 1; break;
    case CacheEvent::kEviction: d.evictions = 1; d.evicted_bytes = bytes; break;
    case CacheEvent::kCorrupt: d.corrupt = 1; break;
  }
  return AddCacheCounters(root, kind, d);
}

Result<CacheCounters> ReadCacheCounters(const std::string& root) {
  const std::string path = root + "/" + kStatsName;
  if (!FileExists(path)) return CacheCounters{};
  auto text = ReadFile(path);
  if (!text) return Error{text.error()};
  return Parse(*text);
}

}  // namespace kvault
