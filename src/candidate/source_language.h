#pragma once
// What a candidate's content is written in, where nothing the client declared says so
// (docs/serve.md, "Answers in another language"): the one rule `kvault
// serve` (a request without `language`) and `kvault corpus import` (a row without
// one) follow. Comments and string literals never count: a marker the code does not
// use says nothing of the language. Pure; thread-safe.
#include <string>

namespace kvault {

// C/C++ text with its comments, string and character literals blanked out (newlines
// kept, so line numbers hold).
std::string CodeOnly(const std::string& cpp);

// "python" when a line starts with `class ModelNew`, `def module_fn` or `@triton.jit`
// and another with `import` or `from` (Python's `#` comments never count); else C++
// text by its code outside comments and strings: "hip" for a HIP header include
// (hip/hip_runtime.h), hipLaunchKernelGGL or __HIP_PLATFORM; "cuda" for __global__,
// a cuda_runtime include or a <<< launch; else "cpp".
std::string DetectSourceLanguage(const std::string& code);

}  // namespace kvault
