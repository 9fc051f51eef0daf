#include "cli/cache_cmd.h"

#include <cstdio>
#include <iostream>
#include <map>

#include "cache/eviction.h"
#include "cache/limits.h"
#include "cache/stats.h"
#include "cli/commands.h"
#include "util/env.h"
#include "util/json.h"

namespace kvault::cli {
namespace {

// The kinds this engine writes (docs/cache.md).
bool IsKnownKind(const std::string& kind) { return kind == "build" || kind == "pch" || kind == "refs"; }

std::string Bytes(uint64_t b) {
  char buf[32];
  if (b >= 1'000'000'000ull) std::snprintf(buf, sizeof buf, "%.2f GB", b / 1e9);
  else if (b >= 1'000'000ull) std::snprintf(buf, sizeof buf, "%.1f MB", b / 1e6);
  else if (b >= 1'000ull) std::snprintf(buf, sizeof buf, "%.1f kB", b / 1e3);
  else std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
  return buf;
}

int Stats(const CacheFlags& f, const std::string& root, const CacheLimits& limits) {
  auto counters = ReadCacheCounters(root);
  if (!counters) {
    std::cerr << "kvault cache: " << counters.error() << "\n";
    return kExitInfra;
  }
  struct Row {
    size_t entries = 0;
    uint64_t bytes = 0;
    KindCounters c;
  };
  std::map<std::string, Row> rows;
  for (const auto& e : ListCacheEntries(root)) {
    rows[e.kind].entries += 1;
    rows[e.kind].bytes += e.bytes;
  }
  for (const auto& [kind, c] : *counters) rows[kind].c = c;
  Row total;
  for (const auto& [kind, r] : rows) {
    total.entries += r.entries;
    total.bytes += r.bytes;
    total.c += r.c;
  }
  if (f.json) {
    Json kinds = Json::object();
    for (const auto& [kind, r] : rows) {
      Json k = r.c.ToJson();
      k["entries"] = r.entries;
      k["bytes"] = r.bytes;
      kinds[kind] = k;
    }
    Json out{{"location", root}, {"max_bytes", limits.max_bytes}, {"entries", total.entries},
             {"bytes", total.bytes}, {"kinds", kinds}};
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::printf("cache: %s\nbound: %s (KVAULT_CACHE_MAX_GB)\n\n", root.c_str(), Bytes(limits.max_bytes).c_str());
  std::printf("%-8s %8s %10s %8s %8s %8s %9s %8s\n", "kind", "entries", "size", "hits", "misses", "stores",
              "evictions", "corrupt");
  auto line = [](const std::string& name, const Row& r) {
    std::printf("%-8s %8zu %10s %8llu %8llu %8llu %9llu %8llu\n", name.c_str(), r.entries, Bytes(r.bytes).c_str(),
                static_cast<unsigned long long>(r.c.hits), static_cast<unsigned long long>(r.c.misses),
                static_cast<unsigned long long>(r.c.stores), static_cast<unsigned long long>(r.c.evictions),
                static_cast<unsigned long long>(r.c.corrupt));
  };
  for (const auto& [kind, r] : rows) line(kind, r);
  line("total", total);
  return kExitOk;
}

int Clean(const CacheFlags& f, const std::string& root) {
  const int modes = int(f.all) + int(f.older_than_days.has_value()) + int(f.to_size_gb.has_value());
  if (modes != 1) {
    std::cerr << "kvault cache clean: give exactly one of --all, --older-than DAYS, --to-size GB\n";
    return kExitMisuse;
  }
  CleanRequest req;
  req.kinds = f.kinds;
  for (const std::string& k : req.kinds) {
    if (!IsKnownKind(k)) {
      std::cerr << "kvault cache clean: unknown --kind '" << k << "' (build, pch, refs)\n";
      return kExitMisuse;
    }
  }
  if (f.all) {
    req.mode = CleanMode::kAll;
  } else if (f.older_than_days) {
    if (!(*f.older_than_days >= 0) || *f.older_than_days > 1e6) {
      std::cerr << "kvault cache clean: --older-than must be a number of days >= 0\n";
      return kExitMisuse;
    }
    req.mode = CleanMode::kOlderThan;
    req.older_than = std::chrono::seconds(static_cast<int64_t>(*f.older_than_days * 86400));
  } else {
    auto bytes = ParseGigabytes(*f.to_size_gb);
    if (!bytes) {
      std::cerr << "kvault cache clean: --to-size: " << bytes.error() << "\n";
      return kExitMisuse;
    }
    req.mode = CleanMode::kToSize;
    req.to_bytes = *bytes;
  }
  auto report = CleanCache(root, req);
  if (!report) {
    std::cerr << "kvault cache clean: " << report.error() << "\n";
    return kExitInfra;
  }
  if (f.json) {
    std::cout << Json{{"location", root}, {"removed", report->removed}, {"removed_bytes", report->removed_bytes},
                      {"kept", report->kept}, {"kept_bytes", report->kept_bytes}, {"spared", report->spared},
                      {"stale_removed", report->stale_removed}, {"stale_bytes", report->stale_bytes}}
                     .dump(2)
              << "\n";
  } else {
    std::printf("removed %zu entries (%s); kept %zu (%s)", report->removed, Bytes(report->removed_bytes).c_str(),
                report->kept, Bytes(report->kept_bytes).c_str());
    if (report->spared) std::printf("; %zu in use, not removed", report->spared);
    if (report->stale_removed)
      std::printf("; %zu leftover scratch folder(s) of killed processes (%s)", report->stale_removed,
                  Bytes(report->stale_bytes).c_str());
    std::printf("\n");
  }
  return kExitOk;
}

}  // namespace

CLI::App* AddCacheCommand(CLI::App& app, CacheFlags& f) {
  auto* cache = app.add_subcommand("cache", "the compile and reference cache ($KVAULT_CACHE_DIR)");
  cache->require_subcommand(1);
  auto* stats = cache->add_subcommand("stats", "entries, sizes, hits, misses and evictions per kind");
  stats->add_flag("--json", f.json, "machine-readable output");
  auto* clean = cache->add_subcommand("clean", "remove cache entries (never ones being written)");
  clean->add_flag("--all", f.all, "remove every entry");
  clean->add_option("--older-than", f.older_than_days, "remove entries not used for this many days");
  clean->add_option("--to-size", f.to_size_gb, "remove least recently used entries until this many GB remain");
  clean->add_option("--kind", f.kinds, "only this kind: build, pch, refs (repeatable)");
  clean->add_flag("--json", f.json, "machine-readable output");
  return cache;
}

int RunCache(const CLI::App& cache, const CacheFlags& f) {
  const std::string root = DefaultCacheDir();
  auto limits = CacheLimits::FromEnv();
  if (!limits) {
    std::cerr << "kvault cache: " << limits.error() << "\n";
    return kExitMisuse;
  }
  if (cache.got_subcommand("stats")) return Stats(f, root, *limits);
  if (cache.got_subcommand("clean")) return Clean(f, root);
  return kExitMisuse;
}

}  // namespace kvault::cli
