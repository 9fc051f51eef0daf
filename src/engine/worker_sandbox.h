#pragma once
// The sandbox of one worker (docs/sandbox.md): the engine's policy plus the paths of
// its role. Both roles get a read-only root with the cache's tmp/, torch_extensions/
// and triton/ folders, /dev and a private directory (HOME, TMPDIR, working directory)
// writable; the reference worker also writes <cache>/refs, which the candidate worker
// cannot see at all, nor the store (SandboxOptions::hidden, set by the CLI).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/options.h"
#include "util/files.h"
#include "util/json.h"
#include "util/result.h"

namespace kvault {

struct SandboxedCommand {
  std::vector<std::string> argv;                              // helper + worker command
  std::vector<std::pair<std::string, std::string>> env_set;  // for the helper's environment
  std::optional<TempDir> private_dir;                        // lives as long as the worker
  Json layers = Json::array();                               // SandboxPlan::layers
};

// Wraps the worker command `argv` (with its `env_set`). `cpu_backend`: whether the
// worker opens the CPU backend (RLIMIT_AS only there). Error: KVAULT_SANDBOX* is
// malformed, strict mode and a layer is missing, or the private folder cannot be made.
Result<SandboxedCommand> SandboxWorkerCommand(const EngineOptions& options, bool candidate,
                                              bool cpu_backend, std::vector<std::string> argv,
                                              std::vector<std::pair<std::string, std::string>> env_set);

// Hides the store file (and its -wal/-shm companions) from candidate workers.
void HideStoreFromWorkers(EngineOptions& options, const std::string& db_path);

}  // namespace kvault
