#pragma once
// Assembles compiler command lines for extension builds. Pure functions: no files
// are read and nothing is run, so every flag decision is unit-testable.
//
//   CompilerSetup setup{Tool::kNvcc, "/usr/local/cuda/bin/nvcc", "/src/include_hip", false};
//   auto cmd = AssembleCommand(request, setup, {"/tmp/relu.hip", "kv_0123", "/tmp/kv_0123.so"});
//   RunCommand({.argv = cmd->argv}, timeout);
#include <string>
#include <vector>

#include "toolchain/build_request.h"
#include "toolchain/tools.h"
#include "util/result.h"

namespace kvault {

// Facts about this machine that shape the command, gathered by BuildExtension.
struct CompilerSetup {
  Tool tool = Tool::kCxx;
  std::string tool_path;        // argv[0]
  std::string include_hip_dir;  // the HIP portability headers (include_hip/)
  bool torch_has_hip = false;   // the torch headers are a ROCm build's (c10/hip/ exists)
  std::string native_include_dir;  // native sources: the folder holding kvault/native.h
};

// The per-build names in the command. BuildExtension first assembles the command with
// placeholders (for the cache key), then with real paths.
struct CommandSlots {
  std::string source;
  std::string module_name;
  std::string output;
  // g++ only: a header whose precompiled form (<header>.gch) sits beside it, built by
  // AssemblePchCommand with this request. When set, `-Winvalid-pch -include <header>`
  // go right before the source, so a rejected .gch shows up in the diagnostics (and
  // g++ then reads the header as text: same result, no speed-up). Default: "" = none.
  std::string pch_header = "";
  // The lite extension build (g++ and nvcc; toolchain/lite_ext.h): a folder put first
  // on the include path (`-I <dir>` right after the compiler's own flags), whose
  // torch/extension.h stands in for PyTorch's, `ext_defines` right after it, and an
  // object file linked in after the source (compiled once with PyTorch's headers).
  // Default: "", {} = none.
  std::string ext_include_dir = "";
  std::string link_object = "";
  std::vector<std::string> ext_defines = {};
};

struct CompileCommand {
  std::vector<std::string> argv;
  // How the source is compiled, for labels: "", "hip-on-nvidia",
  // "compile-only shims" (hipcc against a PyTorch without HIP).
  std::string variant;
};

// Which compiler builds `language` for `backend`: cpp/cpu -> g++, cuda/cuda -> nvcc,
// hip/cuda -> nvcc with the portability headers, hip/hip -> hipcc. Error for any other
// pair (e.g. a .cu source on the cpu backend).
Result<Tool> ToolFor(Language language, Backend backend);

// The full command line. Error when the request cannot be expressed: an unsupported
// language/backend pair, a malformed arch, or a full (linked) HIP extension build
// against a PyTorch without HIP. A native request (SourceKind::kNative) gets no
// PyTorch flags, defines or libraries: optimisation, -fPIC, the arch, `-I
// native_include_dir` (plus include_hip/ for HIP on nvcc), -shared (or -c).
Result<CompileCommand> AssembleCommand(const BuildRequest& request, const CompilerSetup& setup,
                                       const CommandSlots& slots);

// The command that precompiles `header` into `output` (a .gch) for g++ candidate
// builds of `request`: exactly AssembleCommand's compile flags (optimisation, -std,
// -fPIC, the ABI and torch defines, every -isystem, the extra flags, in that order)
// minus -DTORCH_EXTENSION_NAME, then `-x c++-header <header> -o <output>`. The module
// name stays out because g++ rejects a .gch when a macro defined at its creation is
// defined differently at use; a macro defined only at use is harmless as long as the
// header never mentions it (PyTorch's headers do not). Error for nvcc/hipcc requests.
Result<CompileCommand> AssemblePchCommand(const BuildRequest& request, const CompilerSetup& setup,
                                          const std::string& header, const std::string& output);

// Whether `flag`, one compiler argument, changes only how its own translation unit is
// optimized, debugged or warned about, the C++ standard it is read under or the CPU it
// is tuned for: nothing a unit linked beside it relies on (-O*, -g*, -w, -W<warning>,
// -std=, -fPIC, -pipe, -march=, -mtune=, the instruction sets -march= would choose
// (-mavx2, -mfma, ...), -ffast-math, -funroll-loops, -fopenmp-simd; not -fopenmp, which
// makes PyTorch's inline at::parallel_for run threads). The one place
// that says which flags one unit may carry without the others (the lite object, a
// load_inline call's declaring main.cpp).
bool IsUnitLocalFlag(const std::string& flag);

// The command that compiles the lite extension build's object (`source`:
// include_lite/kvault_lite/lite.cc) with g++ (`cxx_path`) for candidate builds of
// `request`, g++ or nvcc: g++'s own flags and PyTorch's defines and -isystem folders
// (as AssemblePchCommand's); for nvcc requests
// -DKVAULT_LITE_CUDA=1 and `-isystem cuda_include_dir`, for g++ requests the extra
// flags but the unit-local ones (so candidates that differ only in -O3 or -march=native
// share one object); then `-c <source> -o <output>`. Error for other requests.
Result<CompileCommand> AssembleLiteObjectCommand(const BuildRequest& request, const std::string& cxx_path,
                                                 const std::string& cuda_include_dir, const std::string& source,
                                                 const std::string& output);

// The flags that select the GPU target: {"-gencode", "arch=compute_90,code=[sm_90,compute_90]"}
// for "sm_90", {"--offload-arch=gfx90a"} for "gfx90a", {} for "". Error when `arch`
// does not fit the tool.
Result<std::vector<std::string>> ArchFlags(Tool tool, const std::string& arch);

// Joins argv into one line a POSIX shell would split back into argv.
std::string ShellQuote(const std::vector<std::string>& argv);

}  // namespace kvault
