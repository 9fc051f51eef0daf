#pragma once
// A KernelBench candidate's load_inline call as one extension-format translation unit
// the engine builds through its compile cache (docs/toolchains.md, "load_inline
// candidates"). The call is the worker's record_inline note of its arguments
// (docs/worker-protocol.md); the unit is the text PyTorch's load_inline would compile.
#include <string>
#include <vector>

#include "util/json.h"
#include "util/result.h"

namespace kvault {

struct InlineUnit {
  std::string digest;    // the call's digest: the worker answers the call with this build
  std::string language;  // "cpp" (g++) or "cuda" (nvcc)
  std::string source;    // the translation unit
  std::vector<std::string> extra_flags;       // the call's flags for that compiler (CandidateCompileFlags)
  std::vector<std::string> extra_link_flags;  // its extra_ldflags (CandidateLinkFlags)
};

// The unit for `call`. PyTorch compiles `cpp_sources` (after #include
// <torch/extension.h>, before the bindings of `functions`) as main.cpp and
// `cuda_sources` (after torch/types.h, cuda.h, cuda_runtime.h) as cuda.cu, then links
// both. Without cuda_sources the unit is main.cpp itself. With them it is main.cpp's
// #include lines, cuda.cu's text, then the bindings, compiled by nvcc with
// extra_cuda_cflags: only when cpp_sources only declare (no braces, no directive but
// #include and #pragma once), so that one unit means what the two mean (the
// declarations are what cuda.cu defines); a PYBIND11_MODULE block of theirs, when the
// call names no functions, follows cuda.cu's text as the generated bindings would. The flags are normalised and checked
// (toolchain/candidate_flags.h). Error (the call is left to PyTorch's own
// load_inline, and says why) for anything else: arguments the engine does not build
// (extra_include_paths, with_cuda contradicting the sources, no Python module, any
// argument under `other`), cpp_sources that define code beside cuda_sources, or a
// malformed call; and for a refused flag (RefusedInlineFlag), which no build of the
// call may pass.
Result<InlineUnit> InlineUnitFor(const Json& call);

// True when `call` builds CUDA code, as PyTorch's load_inline decides: non-empty
// `cuda_sources` (given by name or by position), or `with_cuda=True`. What the file
// passed when it ran, not what its text holds (dead code, comments, strings).
bool CallBuildsCuda(const Json& call);

// Why the flags of `call` are refused (a flag off its compiler's allow-list, named:
// the candidate's compile_error), or "" when none is.
std::string RefusedInlineFlag(const Json& call);

// The #include directives of `cpp` (C++ text), outside comments and strings, in order.
std::vector<std::string> IncludeLines(const std::string& cpp);

// True when `cpp` (C++ text) holds declarations only, as InlineUnitFor requires.
bool DeclaresOnly(const std::string& cpp);

}  // namespace kvault
