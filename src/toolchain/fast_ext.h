#pragma once
// The fast extension build for g++ (docs/toolchains.md, "Fast extension builds";
// opt-in with KVAULT_FAST_EXT=1). A translation unit that includes PyTorch's
// <torch/extension.h> costs g++ about 15 s of CPU even when empty and precompiled:
// the C++ frontend and pybind11 leave templates to instantiate and functions to
// optimise in every unit. The fast build compiles the candidate against
// include_ext/torch/extension.h instead (ATen and torch:: tensor declarations,
// PYBIND11_MODULE recording the module's functions) and links in a binding object
// compiled once with the full headers, which makes the Python module.
//
// One entry of the cache kind "pch" (docs/cache.md) per toolchain and flag set:
//   <cache>/pch/<key[0:2]>/<key>/kvault_ext_pch.h        #include <torch/extension.h>
//   <cache>/pch/<key[0:2]>/<key>/kvault_ext_pch.h.gch    the light header, precompiled
//   <cache>/pch/<key[0:2]>/<key>/kvault_ext_binding.o    include_ext/kvault_ext/binding.cc
//   <cache>/pch/<key[0:2]>/<key>/build.json | failed.json
//
//   if (FastExtRequested()) {
//     auto ext = EnsureFastExt(req, setup, identity, cache_root, timeout);
//     if (ext) { slots.ext_include_dir = ext_dir; slots.link_object = ext->binding_object; ... }
//   }
#include <chrono>
#include <string>

#include "toolchain/build_request.h"
#include "toolchain/flags.h"
#include "util/result.h"
#include "util/sha256.h"

namespace kvault {

// $KVAULT_FAST_EXT is "1".
bool FastExtRequested();

// The light headers' folder: $KVAULT_SOURCE_ROOT/include_ext, else <source root at
// build time>/include_ext.
std::string DefaultIncludeExtDir();

struct FastExtEntry {
  std::string pch_header;      // kvault_ext_pch.h, with its .gch beside it
  std::string binding_object;  // kvault_ext_binding.o
};

// The entry's key: format version, a digest of every file under `include_ext_dir`,
// the two command lines with placeholders, and AddToolchainKeyFields.
Result<KeyHasher> FastExtKey(const BuildRequest& request, const CompilerSetup& setup,
                             const std::string& compiler_identity, const std::string& include_ext_dir);

// The entry for `request` under <cache_root>/pch/, built on first use under its lock
// (said on stderr: about a minute, once). Error, for the caller to build as before,
// when the request is not g++'s, the lock or a compile ran past `timeout`, g++
// rejected the light header or the binding (kept as failed.json: not retried), or the
// cache cannot be written.
Result<FastExtEntry> EnsureFastExt(const BuildRequest& request, const CompilerSetup& setup,
                                   const std::string& compiler_identity, const std::string& include_ext_dir,
                                   const std::string& cache_root, std::chrono::milliseconds timeout);

}  // namespace kvault
