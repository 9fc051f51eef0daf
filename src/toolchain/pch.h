#pragma once
// Precompiled PyTorch headers for g++ (cpp on cpu) candidate builds. Parsing
// <torch/extension.h> is most of a CPU candidate's compile; g++ can load it
// precompiled instead, from a .gch made with the candidate's exact compile flags.
// docs/toolchains.md, "Precompiled PyTorch headers", has the measurements.
//
// One entry per key (compiler identity, flags, include paths, torch version) of the
// cache kind "pch" (cache/cache.h, docs/cache.md), a prepared entry
// (toolchain/prepared_entry.h: built once under the entry's lock in a staging folder
// and moved in whole, announced on stderr):
//   <cache>/pch/<key[0:2]>/<key>/kvault_torch_pch.h      #include <torch/extension.h>
//   <cache>/pch/<key[0:2]>/<key>/kvault_torch_pch.h.gch  ~650 MB
//   <cache>/pch/<key[0:2]>/<key>/build.json              key_fields, steps (command, diagnostics)
//   <cache>/pch/<key[0:2]>/<key>/failed.json             instead of the .gch: g++ rejected
//                                                        the header; not retried
//
//   if (PchApplies(source)) {
//     auto pch = EnsurePrecompiledHeader(req, setup, identity, cache_dir, timeout);
//     if (pch) slots.pch_header = *pch;   // else compile as before; pch.error() says why
//   }
#include <chrono>
#include <string>
#include <string_view>

#include "toolchain/build_request.h"
#include "toolchain/flags.h"
#include "util/result.h"
#include "util/sha256.h"

namespace kvault {

// The generated header's file name; its .gch is this name + ".gch".
inline constexpr char kPchHeaderName[] = "kvault_torch_pch.h";

// The generated header's text (part of the key).
std::string PchHeaderText();

// True when forcing the header in first (-include) cannot change what `source`
// means: its first line of code is `#include <torch/extension.h>`, preceded only by
// blank lines, comments and `#include <name>` of extension-less standard headers
// (<cmath>, <limits>, <cstdint>: the standard lets those be included in any order, and
// PyTorch includes them itself). Anything else before it (a #define or #pragma that
// could change how PyTorch's headers read, another header, code, a backslash line
// continuation), or no such include at all: false, and the source is compiled
// without the precompiled header, exactly as before. Pure.
bool PchApplies(std::string_view source);

// The entry's key: format version, header text, the AssemblePchCommand line with
// placeholders for header and output, then AddToolchainKeyFields. The source, the
// module name and compile_only are not part of it: every candidate of one toolchain
// and flag set shares one entry.
Result<KeyHasher> PchKey(const BuildRequest& request, const CompilerSetup& setup,
                         const std::string& compiler_identity);

// The path of kvault_torch_pch.h with a finished .gch beside it, under
// <cache_root>/pch/ (cache_root: the cache folder, BuildRequest::cache_dir resolved).
// Built on first use under the entry's lock; `timeout` bounds the lock wait and, again,
// the compile. Error, for the caller to compile without it, when the request is not
// g++'s, the lock or the compile ran past the timeout, g++ rejected the header (kept
// as failed.json, so later builds of the key skip it at once), or the cache cannot be
// written.
Result<std::string> EnsurePrecompiledHeader(const BuildRequest& request, const CompilerSetup& setup,
                                            const std::string& compiler_identity,
                                            const std::string& cache_root,
                                            std::chrono::milliseconds timeout);

}  // namespace kvault
