#pragma once
// The sandbox of one worker (docs/sandbox.md): the engine's policy plus the paths of
// its role. Every worker gets a read-only root, its own /dev/shm (a bounded tmpfs
// that ends with it; HOME, TMPDIR and the PyTorch-extension and Triton build caches
// live there) and its own folder on disk (the working directory, where a candidate
// worker writes the outputs the engine asks for). A candidate worker sees
// nothing of the cache but the compiled candidates (build/) and its own folder, none
// of the other caches OtherCacheFolders finds, and not the store (SandboxOptions::hidden,
// set by the CLI). Workers' folders are made in the lane's folder
// (EngineOptions::lane_dir); the reference worker also writes that folder (its lane's
// verification scratch) and refs/, never another lane's.
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

// Confines one compile of candidate code (docs/sandbox.md, "Builds"): the candidate
// worker's view of the host (read-only root; of the cache only the compiled builds
// and precompiled headers, plus `source_path`'s folder when the cache holds it; other
// caches, the store and credentials hidden; no network) with `writable` folders
// writable, the first (the compile's scratch) also its HOME and TMPDIR. `argv`
// unchanged when the sandbox is off. Error: KVAULT_SANDBOX* is malformed, or strict
// mode and a layer is missing.
Result<std::vector<std::string>> SandboxBuildCommand(const EngineOptions& options, const std::string& source_path,
                                                     const std::vector<std::string>& argv,
                                                     const std::vector<std::string>& writable);

// Cache folders of other runs that candidate workers must not read: where
// DefaultCacheDir looks ($XDG_CACHE_HOME/kvault, ~/.cache/kvault), folders beside
// `cache` and in /tmp and /var/tmp that hold refs/ and build/ or tmp/ (one level
// deep), and every path of KVAULT_SANDBOX_HIDE
// (colon-separated); `cache` itself and missing folders left out.
std::vector<std::string> OtherCacheFolders(const std::string& cache);

// Where the engine user's keys and tokens usually are: ~/.ssh, ~/.gnupg, ~/.aws,
// ~/.azure, ~/.config/gcloud, ~/.kube, ~/.docker, ~/.netrc, ~/.git-credentials,
// ~/.pypirc, ~/.cache/huggingface, ~/.huggingface (missing ones are skipped when
// mounting). Hidden from candidate workers: they have no network, but their log
// reaches the store.
std::vector<std::string> CredentialPaths();

// Hides the store file (and its -wal/-shm companions) from candidate workers.
void HideStoreFromWorkers(EngineOptions& options, const std::string& db_path);

}  // namespace kvault
