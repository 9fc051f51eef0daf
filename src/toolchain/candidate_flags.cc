#include "toolchain/candidate_flags.h"

#include <algorithm>
#include <regex>
#include <sstream>

#include "util/strings.h"

namespace kvault {
namespace {

// The longest flag, folder or name judged. No honest one comes near it, and
// std::regex matches by recursion, a few hundred bytes of stack a character: a
// "-DX=aaa..." of 40,000 characters overflowed an 8 MiB stack and ended the engine
// (every lane of a run, a whole `kvault serve`). Anything longer is refused unread.
constexpr size_t kMostChars = 1024;
// The most flags (or folders) a list may hold: honest calls pass a handful; a list of
// 700,000 distinct defines (4 MiB) would be deduplicated in quadratic time, then
// exceed what exec takes.
constexpr size_t kMostFlags = 256;

bool Matches(const std::string& s, const std::regex& re) {
  return s.size() <= kMostChars && std::regex_match(s, re);
}

// A value that reaches a compiler's own command lines: no character a shell or a
// response-file reader gives a meaning (nvcc runs its stages through a shell).
const char* const kPlainValue = R"([A-Za-z0-9_.+-]*)";

// g++: optimisation, debug info, warnings (not -Wl/-Wa/-Wp, which hand options to
// other programs), the language standard, position independence, OpenMP, the CPU
// target and its instruction sets, floating-point and loop options, defines.
const std::regex& GxxFlag() {
  static const std::regex re(
      std::string(R"(-O([0-3sgz]|fast)?|-g([0-3]|gdb[0-3]?)?|-w|-W(no-)?[A-Za-z][A-Za-z0-9_+-]*(=[A-Za-z0-9_+-]+)?|)") +
      R"(-std=(c|gnu)\+\+[0-9a-z]+|-fPIC|-fpic|-pipe|-pthread|-fopenmp|-fopenmp-simd|)" +
      R"(-march=[A-Za-z0-9_.+-]+|-mtune=[A-Za-z0-9_.+-]+|)" +
      R"(-m(no-)?(avx[0-9a-z_]*|fma|f16c|sse[0-9a-z_.]*|ssse3|bmi2?|popcnt|lzcnt|prefer-vector-width=[0-9]+)|)" +
      R"(-f(no-)?(fast-math|unroll-loops|unroll-all-loops|math-errno|trapping-math|unsafe-math-optimizations|)" +
      R"(strict-aliasing|omit-frame-pointer|tree-vectorize|tree-loop-vectorize|associative-math|reciprocal-math|)" +
      R"(signed-zeros|finite-math-only|prefetch-loop-arrays|peel-loops|inline-functions|permissive|)" +
      R"(diagnostics-color)|-ffp-contract=(fast|on|off)|-fvisibility=(hidden|default)|)" +
      R"(-fvisibility-inlines-hidden|-fmax-errors=[0-9]+|)" +
      R"(-D[A-Za-z_][A-Za-z0-9_]*(=)" + kPlainValue + R"()?|-U[A-Za-z_][A-Za-z0-9_]*)");
  return re;
}

// -Wl,..., -Wa,..., -Wp,... pass options to the linker, assembler and preprocessor:
// never a warning option (-Wpedantic, -Waddress and -Wlogical-op are warnings). The
// bare names (an -Xcompiler item "-Wl" of "-Wl,-O1") and "-Wl=..." are refused too.
bool PassesToAnotherProgram(const std::string& flag) {
  static const std::regex re(R"(-W[lap]([,=].*)?)");
  return Matches(flag, re);
}

bool GxxAllowed(const std::string& flag) {
  return !PassesToAnotherProgram(flag) && Matches(flag, GxxFlag());
}

// One ptxas option (the values of -Xptxas / --ptxas-options, split at commas).
bool PtxasAllowed(const std::string& option) {
  static const std::regex re(
      R"(-v|--verbose|-O[0-3]|-warn-spills|--warn-on-spills|-warn-lmem-usage|--warn-on-local-memory-usage|)"
      R"(-dlcm=(ca|cg|cs)|--def-load-cache=(ca|cg|cs)|--allow-expensive-optimizations(=(true|false))?|)"
      R"(-?-maxrregcount=[0-9]+|-w|--disable-warnings)");
  return Matches(option, re);
}

const char* const kGpu = R"((sm|compute|lto)_[0-9]+[a-z]?)";

// nvcc's own options, in their one-token spelling (`-name=value`).
bool NvccAllowed(const std::string& flag) {
  static const std::regex re(
      std::string(R"(-O[0-3]|-g|-G|--device-debug|-lineinfo|--generate-line-info|-?-use_fast_math|)") +
      R"(-?-(ftz|prec-div|prec-sqrt|fmad)=(true|false)|-?-extra-device-vectorization|)" +
      R"(-?-expt-relaxed-constexpr|-?-expt-extended-lambda|-?-extended-lambda|-?-restrict|)" +
      R"(-?-std=c\+\+(11|14|17|20)|-?-(arch|gpu-architecture)=()" + kGpu + R"(|native|all|all-major)|)" +
      R"(-?-(code|gpu-code)=)" + kGpu + R"((,)" + kGpu + R"()*|)" +
      R"(-?-(gencode|generate-code)=arch=compute_[0-9]+[a-z]?,code=()" + kGpu + R"(|\[)" + kGpu + R"((,)" + kGpu +
      R"()*\]))" +
      R"(|-?-maxrregcount=[0-9]+|-res-usage|--resource-usage|-w|--disable-warnings|)" +
      R"(-W(no-)?(deprecated-gpu-targets|deprecated-declarations)|-Werror=[a-z-]+(,[a-z-]+)*|)" +
      R"(-?-default-stream=(legacy|null|per-thread)|-?-threads=[0-9]+|-t=?[0-9]+|)" +
      R"(-?-diag[-_]suppress=[0-9A-Za-z_,-]+|)" +
      R"(-D[A-Za-z_][A-Za-z0-9_]*(=)" + kPlainValue + R"()?|-U[A-Za-z_][A-Za-z0-9_]*)");
  return Matches(flag, re);
}

// The linker: libraries of the CUDA toolkit, the C runtime and PyTorch by `-l<name>`,
// and the `-L` folders it searches anyway.
bool LinkedLibrary(const std::string& flag) {
  static const std::regex re(
      R"(-l(cublas|cublasLt|cudart|cuda|curand|cufft|cusparse|cusolver|nvrtc|nvToolsExt|gomp|m|pthread|dl|rt|)"
      R"(c10|c10_cuda|torch|torch_cpu|torch_cuda|torch_python))");
  return Matches(flag, re);
}

bool SearchedAnyway(const std::string& flag) {
  static const std::regex re(
      R"(-L(/usr/local/cuda(-[0-9.]+)?(/targets/[a-z0-9_-]+)?/lib(64)?|/usr/lib(64)?|/usr/lib/x86_64-linux-gnu)/?)");
  return Matches(flag, re);
}

// Every comma-separated item of `list` passes `allowed`.
template <class Allowed>
bool EachItem(const std::string& list, Allowed allowed) {
  if (list.empty()) return false;
  for (const std::string& item : Split(list, ','))
    if (!allowed(item)) return false;
  return true;
}

// nvcc options that hand a list to another program: -Xcompiler (g++) and -Xptxas.
bool NvccForwarded(const std::string& name, const std::string& value) {
  if (name == "-Xcompiler" || name == "--compiler-options") return EachItem(value, GxxAllowed);
  if (name == "-Xptxas" || name == "--ptxas-options") return EachItem(value, PtxasAllowed);
  return false;
}

// nvcc options whose value may come as the next argument; the pair is checked as
// "name=value".
bool TakesSeparateValue(Tool tool, const std::string& flag) {
  static const std::vector<std::string> kNvcc = {
      "-Xcompiler", "--compiler-options", "-Xptxas", "--ptxas-options", "-gencode", "--generate-code",
      "-arch", "--gpu-architecture", "-code", "--gpu-code", "-maxrregcount", "--maxrregcount",
      "-std", "--std", "-t", "--threads", "--default-stream", "-default-stream"};
  return tool == Tool::kNvcc && std::find(kNvcc.begin(), kNvcc.end(), flag) != kNvcc.end();
}

bool CompileFlagAllowed(Tool tool, const std::string& flag) {
  if (flag.size() > kMostChars) return false;  // an -Xcompiler list of any length, too
  if (tool != Tool::kNvcc) return GxxAllowed(flag);
  const size_t eq = flag.find('=');
  if (eq != std::string::npos && NvccForwarded(flag.substr(0, eq), flag.substr(eq + 1))) return true;
  return NvccAllowed(flag);
}

std::string Refused(const std::string& flag, const std::string& tool) {
  return "flag '" + Truncate(flag, 120) + "' is not allowed for " + tool;
}

std::string TooMany(const std::string& tool) {
  return "more than " + std::to_string(kMostFlags) + " flags for " + tool;
}

// The entries of `given` split at whitespace, as PyTorch's ninja file reads them.
std::vector<std::string> Tokens(const std::vector<std::string>& given) {
  std::vector<std::string> tokens;
  for (const std::string& entry : given) {
    std::istringstream words(entry);
    for (std::string token; words >> token;) tokens.push_back(token);
  }
  return tokens;
}

void AddOnce(std::vector<std::vector<std::string>>& groups, std::vector<std::string> group) {
  if (std::find(groups.begin(), groups.end(), group) == groups.end()) groups.push_back(std::move(group));
}

}  // namespace

Result<std::vector<std::string>> CandidateCompileFlags(Tool tool, const std::vector<std::string>& given) {
  const std::string tool_name = ToolName(tool);
  const std::vector<std::string> tokens = Tokens(given);
  if (tokens.size() > kMostFlags) return Error{TooMany(tool_name)};
  std::vector<std::vector<std::string>> groups;  // a flag with its separate value, if any
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& flag = tokens[i];
    if (TakesSeparateValue(tool, flag)) {
      if (i + 1 == tokens.size()) return Error{"flag '" + flag + "' has no value"};
      const std::string& value = tokens[++i];
      if (!CompileFlagAllowed(tool, flag + "=" + value)) return Error{Refused(flag + " " + value, tool_name)};
      AddOnce(groups, {flag, value});
      continue;
    }
    // A library of the linker's list (extra_cuda_cflags=["-lcublas"]) means nothing to a
    // compile: PyTorch's (-c) ignores it and links with extra_ldflags only. Dropped.
    if (LinkedLibrary(flag) || SearchedAnyway(flag)) continue;
    if (!CompileFlagAllowed(tool, flag)) return Error{Refused(flag, tool_name)};
    AddOnce(groups, {flag});
  }
  std::vector<std::string> flags;
  for (const auto& group : groups) flags.insert(flags.end(), group.begin(), group.end());
  return flags;
}

Result<std::vector<std::string>> CandidateLinkFlags(const std::vector<std::string>& given) {
  const std::vector<std::string> tokens = Tokens(given);
  if (tokens.size() > kMostFlags) return Error{TooMany("the linker")};
  std::vector<std::string> flags;
  for (std::string flag : tokens) {
    if (SearchedAnyway(flag)) continue;
    // What g++ links for these driver options, spelled so that nvcc's link takes it too
    // (PyTorch's link runs g++, which reads them).
    if (flag == "-fopenmp") flag = "-lgomp";
    if (flag == "-pthread") flag = "-lpthread";
    if (!LinkedLibrary(flag)) return Error{Refused(flag, "the linker")};
    if (std::find(flags.begin(), flags.end(), flag) == flags.end()) flags.push_back(flag);
  }
  return flags;
}

Result<std::vector<std::string>> CandidateIncludePaths(const std::vector<std::string>& given) {
  static const std::regex kPlainPath(R"([A-Za-z0-9_./+-]+)");
  if (given.size() > kMostFlags) return Error{"more than " + std::to_string(kMostFlags) + " folders"};
  std::vector<std::string> folders;
  for (const std::string& entry : given) {
    const std::string folder(Trim(entry));
    if (folder.empty()) continue;
    if (!Matches(folder, kPlainPath)) return Error{"folder '" + Truncate(folder, 120) + "' is not a plain path"};
    folders.push_back(folder);
  }
  return folders;
}

Status CandidateExtensionName(const std::string& name) {
  static const std::regex kPlainName(std::string("[A-Za-z0-9_]") + kPlainValue);
  if (!Matches(name, kPlainName)) return Error{"name '" + Truncate(name, 120) + "' is not plain"};
  return Status::Ok();
}

}  // namespace kvault
