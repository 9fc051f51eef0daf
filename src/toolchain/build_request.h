#pragma once
// The value types of one extension build: what to build and what came of it.
#include <functional>
#include <string>
#include <vector>

#include "toolchain/backend.h"
#include "toolchain/torch_build_info.h"
#include "util/result.h"

namespace kvault {

// What the source is: a PyTorch extension (PYBIND11_MODULE, PyTorch's headers and
// libraries) or a native-format source (docs/native-format.md: a plain shared library
// exporting kvault_forward; no PyTorch headers, defines or libraries).
enum class SourceKind { kTorchExtension, kNative };

// Wraps the compiler's command line so that it runs confined (engine/worker_sandbox.h,
// SandboxBuildCommand): `writable` are the folders the compile writes (its scratch,
// also its HOME and TMPDIR, first; the staged cache entry). Error: the confinement
// cannot be set up (the build fails as infrastructure, never as the candidate's).
using BuildConfinement = std::function<Result<std::vector<std::string>>(
    const std::vector<std::string>& argv, const std::vector<std::string>& writable)>;

// One candidate: a single translation unit, either an extension that exposes `forward`
// through PYBIND11_MODULE(TORCH_EXTENSION_NAME, m), or a native-format source. The
// module name is not chosen by the caller: it is derived from the build's cache key
// (BuildResult::module_name).
struct BuildRequest {
  std::string source_path;
  SourceKind kind = SourceKind::kTorchExtension;
  Language language = Language::kCpp;
  Backend backend = Backend::kCpu;
  // "sm_90" (nvcc), "gfx90a" (hipcc), ignored for the cpu backend. Default: "" = the
  // compiler's own default target.
  std::string arch;
  TorchBuildInfo torch;
  // Compile to an object file only (-c): no link, no .so. The only way to check HIP
  // sources for AMD targets on a machine whose PyTorch has no HIP support.
  bool compile_only = false;
  // The cache folder (docs/cache.md): build entries live at
  // <cache_dir>/build/<key[0:2]>/<key>/, precompiled headers under <cache_dir>/pch/.
  // Default: "" = DefaultCacheDir() (util/env.h).
  std::string cache_dir;
  // Appended to the compiler's flags (before the source file); part of the cache key.
  std::vector<std::string> extra_flags;
  // Appended after PyTorch's libraries when linking (a load_inline call's
  // extra_ldflags: -l<library>); part of the cache key.
  std::vector<std::string> extra_link_flags;
  // The HIP portability headers (include_hip/). Default: "" = $KVAULT_SOURCE_ROOT/
  // include_hip, else <source root at build time>/include_hip.
  std::string include_hip_dir;
  // Native sources only: the folder holding kvault/native.h, put on the include path
  // and hashed into the key. Default: "" = $KVAULT_SOURCE_ROOT/include, else <source
  // root at build time>/include.
  std::string native_include_dir;
  // The lite extension build's headers (include_lite/; toolchain/lite_ext.h), used for
  // g++ and nvcc extension builds unless KVAULT_LITE_EXT=0. Default: "" =
  // $KVAULT_SOURCE_ROOT/include_lite, else <source root at build time>/include_lite.
  std::string include_lite_dir;
  // Builds made ahead on a guess (engine/inline_prebuild.h): the lite build only. A
  // source the lite way cannot build is left to the one who needs it, who builds it
  // the full way (minutes of PyTorch's headers under nvcc, for nothing when the source
  // does not compile: failures are not cached).
  bool lite_only = false;
  // The candidate's compile runs through it when set (candidate code and flags are
  // untrusted: an #include of a host file prints its lines in the diagnostics, an
  // `.incbin` embeds any readable file). Not part of the cache key: where a compile
  // runs does not change what it makes. Trusted compiles (the precompiled header, the
  // lite object) run unconfined.
  BuildConfinement confine;
};

struct BuildResult {
  bool ok = false;            // compiled (and linked unless compile_only)
  std::string artifact;       // when ok: the .so, or the .o when compile_only
  std::string module_name;    // "kv_" + first 16 hex digits of the cache key
  std::string diagnostics;    // the compiler's output, at most 16 KiB (head and tail)
  bool timed_out = false;     // the compiler ran past the timeout and was killed
  double seconds = 0;         // wall time of BuildExtension, cache lookups included
  bool cache_hit = false;     // served from the cache without compiling
  std::string command;        // the command line, shell-quoted, for the record
  std::string toolchain;      // e.g. "nvcc 13.0 (hip-on-nvidia)", "g++ 12.2.0"
  std::string key;            // the cache key (64 hex digits)
  // g++ compiled the source with the precompiled PyTorch header (toolchain/pch.h) and
  // did not reject it. On a cache hit: how the stored artifact was built.
  bool pch = false;
  std::string pch_note;       // when !pch: why not (not g++, preamble, build failed, ...)
  // Built by the lite extension build (include_lite/, the lite object linked in); when
  // not: why not (lite_ext_note), e.g. turned off, an #include the lite headers lack,
  // or their first compile error (the next way was then taken).
  bool lite_ext = false;
  std::string lite_ext_note;
  // ok = false on the lite compile's diagnostics alone: its errors were plainly the
  // source's own (toolchain/lite_diagnostics.h), so no full build was made;
  // lite_ext_note says which error.
  bool lite_verdict = false;
};

}  // namespace kvault
