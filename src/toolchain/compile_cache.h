#pragma once
// The compile cache: content-addressed build entries on disk. First version: entries
// are never evicted and only successful builds are stored.
//
// Layout under the root (BuildRequest::out_dir):
//   <key[0:2]>/<key>/<artifact>     the .so (or .o for compile-only builds), written
//                                   atomically, last: its presence marks the entry done
//   <key[0:2]>/<key>/build.json     {"key_fields", "command", "toolchain", "diagnostics"}
//   <key[0:2]>/<key>.lock           held while one process builds the entry
//
// Thread-safe: distinct processes and threads may use the same root; a build holds
// the entry's lock.
#include <chrono>
#include <optional>
#include <string>

#include "util/files.h"
#include "util/json.h"
#include "util/result.h"
#include "util/sha256.h"
#include "toolchain/torch_build_info.h"

namespace kvault {

// "kv_" + the first 16 hex digits of the key: the Python module name baked into the
// shared object (PyInit_<name>), so equal keys mean equal module names.
std::string ModuleNameForKey(const std::string& key);

// SHA-256 over the relative paths and contents of every regular file under `dir`, in
// sorted order; cached per directory for the life of the process. Error when `dir`
// is not a readable directory.
Result<std::string> DirectoryDigest(const std::string& dir);

// Adds the fields every cache key shares, in this order: "compiler" (the compiler's
// --version output), "torch_version" (the worker's) and "torch_version_header" (the
// text of torch/version.h from the first include path holding it, "" if none: catches
// a PyTorch upgraded in place when the worker reports no version). Used by build
// entries and precompiled headers alike.
void AddToolchainKeyFields(KeyHasher& h, const std::string& compiler_identity, const TorchBuildInfo& torch);

class CompileCache {
 public:
  struct Entry {
    std::string artifact;  // path of the stored .so / .o
    Json meta;             // build.json
  };

  explicit CompileCache(std::string root) : root_(std::move(root)) {}

  const std::string& root() const { return root_; }
  std::string EntryDir(const std::string& key) const;

  // The finished entry holding `artifact_name`, or nullopt.
  std::optional<Entry> Lookup(const std::string& key, const std::string& artifact_name) const;

  // Holds the entry's lock (creating the directories it needs).
  Result<FileLock> Lock(const std::string& key, std::chrono::milliseconds timeout) const;

  // Copies `built_file` into the entry as `artifact_name` (atomically, after writing
  // `meta` as build.json) and returns the stored path.
  Result<std::string> Store(const std::string& key, const std::string& artifact_name,
                            const std::string& built_file, const Json& meta) const;

  // As Store, but moves `built_file` into place (fsync, then rename(2)) instead of
  // copying it through memory: for artifacts of hundreds of MB (a precompiled header).
  // REQUIRES: `built_file` is on the cache's file system (e.g. in a TempDir under
  // root()); Error otherwise.
  Result<std::string> StoreByMove(const std::string& key, const std::string& artifact_name,
                                  const std::string& built_file, const Json& meta) const;

 private:
  std::string root_;
};

}  // namespace kvault
