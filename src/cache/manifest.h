#pragma once
// The manifest of one cache entry (entry.json): what the entry holds, so a damaged
// or truncated entry is detected before it is used. Format: docs/cache.md.
//
//   {"format": "kvault-cache-entry", "version": 1, "kind": "build", "key": "<64 hex>",
//    "created": <unix seconds>, "bytes": <sum of file sizes>,
//    "files": [{"name": "kv_1234.so", "size": 123, "sha256": "<hex>", "mtime_ns": <int>}],
//    "meta": {...}}                                   // the kind's own record
//
// Every regular file under the entry folder is listed (relative names, sorted),
// except entry.json itself and the last-use stamp. Thread-compatible pure file I/O.
#include <cstdint>
#include <string>
#include <vector>

#include "util/json.h"
#include "util/result.h"

namespace kvault {

inline constexpr char kManifestName[] = "entry.json";
inline constexpr char kStampName[] = ".last-use";
// Files up to this size are re-hashed on every lookup; bigger ones (a precompiled
// header of 650 MB) are checked by size and modification time only.
inline constexpr uint64_t kFullHashLimit = 64ull << 20;

struct ManifestFile {
  std::string name;
  uint64_t size = 0;
  std::string sha256;
  int64_t mtime_ns = 0;
};

struct Manifest {
  std::string kind;
  std::string key;
  int64_t created = 0;
  uint64_t bytes = 0;
  std::vector<ManifestFile> files;
  Json meta = Json::object();
};

// Hashes every file under `dir` and writes `dir`/entry.json (atomically).
Result<Manifest> WriteManifest(const std::string& dir, const std::string& kind, const std::string& key,
                               const Json& meta);

// Parses `dir`/entry.json. Error when it is missing, not JSON, of another format or
// version, or lacks a field.
Result<Manifest> ReadManifest(const std::string& dir);

// Checks the files against the manifest: each listed file exists with its size, its
// SHA-256 (files up to kFullHashLimit) or its modification time (bigger files), and
// the manifest's key is `key`. Error says what differs.
Status VerifyEntry(const std::string& dir, const std::string& key, const Manifest& manifest);

}  // namespace kvault
