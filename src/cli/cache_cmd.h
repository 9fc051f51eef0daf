#pragma once
// `kvault cache stats` and `kvault cache clean` (docs/cli.md, docs/cache.md).
#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kvault::cli {

struct CacheFlags {
  bool json = false;
  // clean: exactly one of these three.
  bool all = false;
  std::optional<double> older_than_days;
  std::optional<std::string> to_size_gb;
  std::vector<std::string> kinds;  // Default: every kind
};

// Adds `cache` with its `stats` and `clean` subcommands to `app`.
CLI::App* AddCacheCommand(CLI::App& app, CacheFlags& flags);

// Runs whichever subcommand of `cache` was parsed.
int RunCache(const CLI::App& cache, const CacheFlags& flags);

}  // namespace kvault::cli
