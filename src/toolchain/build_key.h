#pragma once
// Parts of the compile cache's keys shared by build entries and precompiled headers
// (the entries themselves live in cache/cache.h; docs/toolchains.md lists every field).
// Thread-safe.
#include <string>
#include <string_view>
#include <vector>

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

// SHA-256 over the relative path, size and modification time of every regular file
// under each of `dirs` (missing folders count as empty); remembered for the life of
// the process per folder list and the folders' own modification times (so a change
// deep inside a folder is seen by the next process). Cheap (stat only): PyTorch's
// ~8,000 headers take ~30 ms.
std::string DirectoryListingDigest(const std::vector<std::string>& dirs);

// Adds the fields every cache key shares, in this order: "compiler" (the compiler's
// --version output), "compiler_binary" (the executable's resolved path, size and
// modification time: a compiler rebuilt in place), "torch_version" (the worker's),
// "torch_version_header" (the text of torch/version.h from the first include path
// holding it, "" if none) and "torch_headers" (DirectoryListingDigest of the torch
// include paths). Used by build entries and precompiled headers alike.
void AddToolchainKeyFields(KeyHasher& h, const std::string& compiler_identity,
                           const std::string& compiler_path, const TorchBuildInfo& torch);

// Adds one "local_include" field per file the source pulls in with #include "name"
// (resolved against the including file's folder, followed recursively, each file
// once): its path relative to the source's folder and its bytes, or "<missing>"
// when no such file exists (the compiler then looks elsewhere or fails). Only regular
// files of at most 16 MiB inside the source's folder are read (the name is the
// candidate's, read by the engine outside the sandbox); others add the name and why. Includes in
// comments or disabled #if blocks count too (a harmless extra field).
void AddLocalIncludeFields(KeyHasher& h, const std::string& source_path, std::string_view source);

}  // namespace kvault
