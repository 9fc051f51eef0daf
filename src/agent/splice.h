#pragma once
// Kernel splicing for kernel2kernel (docs/agent.md): find the `__global__` function
// definitions of a HIP/CUDA translation unit, and put a rewritten one in place of
// the baseline's, renamed back when the model renamed it.
//
//   auto spliced = SpliceKernel(baseline_source, answer_code);
//   if (!spliced) -> the answer is not a usable single-kernel rewrite (error says why)
//
// The scan is lexical: comments, string and character literals are skipped; a
// definition starts at `__global__` (or at a `template <...>`, `static`, `inline` or
// `extern "C"` just before it) and ends at the brace closing its body. Declarations
// (`__global__ void k(int);`) are not definitions. Pure; thread-safe.
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace kvault::agent {

struct KernelSpan {
  std::string name;
  size_t begin = 0, end = 0;  // [begin, end) of the definition in the source
};

// Every `__global__` function definition, in source order. Error for unbalanced
// braces or parentheses after a `__global__`.
Result<std::vector<KernelSpan>> FindKernels(std::string_view source);

// Replaces one kernel of `baseline` with `rewrite`: a snippet holding exactly one
// `__global__` definition, optionally with helper functions. The target is the
// baseline kernel of the same name; else, when the baseline has exactly one kernel,
// that one, and every whole-word use of the new name in the snippet is renamed to
// it. Errors (written to be sent back to the model): no or several kernels in the
// snippet, a renamed kernel when the baseline has several, no kernel in the baseline.
Result<std::string> SpliceKernel(std::string_view baseline, std::string_view rewrite);

// `text` with every whole identifier `from` replaced by `to`.
std::string RenameIdentifier(std::string_view text, std::string_view from, std::string_view to);

}  // namespace kvault::agent
