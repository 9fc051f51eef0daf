#pragma once
// An entry of the cache kind "pch" (docs/cache.md) made once per toolchain and flag set
// and shared by every candidate build after it, such as the lite extension build's
// object (toolchain/lite_ext.h). The first caller runs the commands under the entry's lock and
// says so on stderr; a compiler's verdict (a failing exit, not a signal) is kept as
// failed.json and not retried; a usable entry holds every file of `outputs`.
//
//   PreparedEntry spec{"the lite extension build", key, "about 20 s", {"kvault_lite.o"}, ...};
//   auto entry = EnsurePreparedEntry(spec, cache_root, timeout);
//   if (entry) link(entry->Path("kvault_lite.o"));
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "cache/cache.h"
#include "toolchain/flags.h"
#include "util/result.h"
#include "util/sha256.h"

namespace kvault {

struct PreparedEntry {
  std::string what;       // "the lite extension build", for messages
  KeyHasher key;          // every field that decides the entry's bytes
  std::string announce;   // what the first build says it makes, e.g. "a light header (320 MB)"
  std::vector<std::string> outputs;  // file names the commands write into the entry
  // The commands, given the staged entry's folder, run in order there.
  std::function<Result<std::vector<CompileCommand>>(const std::string& staged_dir)> commands;
};

// The entry under <cache_root>/pch/, made on first use. Error, for the caller to build
// without it: a command failed or ran past `timeout` (a compiler's failure is kept and
// reported again by later calls: "failed before"), or the cache cannot be written;
// also when the process is stopping (util/child_process.h: StopAll), silently: nothing
// is started then, and a command the stop killed is no failure (not said, not kept).
Result<CacheEntry> EnsurePreparedEntry(const PreparedEntry& spec, const std::string& cache_root,
                                       std::chrono::milliseconds timeout);

}  // namespace kvault
