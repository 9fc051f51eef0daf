#pragma once
// The compilers KernelVault drives, where they are, and what version they are.
// Thread-safe.
//
//   std::string nvcc = ToolPath(Tool::kNvcc);       // $KVAULT_NVCC, else PATH, else /usr/local/cuda
//   auto id = ToolIdentity(nvcc);                   // `nvcc --version`, run once per process
//   for (const ToolInfo& t : DiscoverTools()) ...   // for `kvault doctor`
#include <chrono>
#include <string>
#include <vector>

#include "util/result.h"

namespace kvault {

enum class Tool { kCxx, kNvcc, kHipcc };

// "g++", "nvcc", "hipcc".
std::string ToolName(Tool tool);

// The environment variable that overrides the tool: KVAULT_CXX, KVAULT_NVCC,
// KVAULT_HIPCC.
std::string ToolEnvVar(Tool tool);

// The program to run: the override variable's value when set and non-empty, else the
// first `name` on PATH, else a well-known install location ($CUDA_HOME/bin/nvcc,
// /usr/local/cuda/bin/nvcc; $ROCM_PATH/bin/hipcc, /opt/rocm/bin/hipcc) when that file
// exists, else the bare name (which then fails to start).
std::string ToolPath(Tool tool);

// The output of `<path> --version`, with the lines of a Python traceback that some
// ROCm wrappers print along the way removed. Cached per path for the life of the
// process (successes only). Error when the program cannot be started, exits
// non-zero, or runs past `timeout`.
Result<std::string> ToolIdentity(const std::string& path,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(30));

// A short version for labels: "13.0" from nvcc, "12.2.0" from g++, "5.2.21153-0"
// from hipcc; "" when none is recognized.
std::string ShortVersion(Tool tool, const std::string& identity);

struct ToolInfo {
  std::string name;     // "g++", "nvcc", "hipcc"
  std::string path;     // what ToolPath returned
  std::string version;  // the first line that names a version ("" when not found)
  bool found = false;   // `--version` ran and exited 0
  std::string note;     // e.g. which AMD targets hipcc knows
  std::vector<std::string> offload_arches;  // hipcc: probed targets it accepts
};

// Probes g++, nvcc and hipcc (in that order). For hipcc it also tries gfx90a,
// gfx940, gfx942 and gfx950 (a syntax-only compile of an empty file each, ~0.5 s)
// and says which are unknown to that compiler. Never fails; a missing tool is
// found=false with a note.
std::vector<ToolInfo> DiscoverTools();

// The clang of each LLVM installed as `<lib_dir>/llvm-N/bin/clang` (Debian's
// packages), by version, and which of gfx942 and gfx950 each compiles HIP for
// (offload_arches). For `kvault doctor` only: no build uses them. Never fails.
std::vector<ToolInfo> DiscoverOtherClangs(const std::string& lib_dir = "/usr/lib");

}  // namespace kvault
