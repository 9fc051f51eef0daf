#pragma once
// Whether a source the lite extension build did not compile (toolchain/lite_ext.h) is
// wrong whatever the headers, so that its compile_error can be answered with the lite
// compile's diagnostics instead of a full build with PyTorch's headers (most of a
// minute under nvcc; a cold g++ cache first makes its precompiled header). A full
// build is still made whenever anything leaves room for doubt: a source that compiles
// with PyTorch's headers must never get compile_error. docs/toolchains.md, "Compile
// errors judged from the lite build".
//
//   LiteFailureJudgement j = JudgeLiteFailure(built.diagnostics, source_path, source, lite_dir);
//   if (j.own && !j.undeclared.empty())               // ask the full build's preprocessor
//     j.own = NamesOutsideSource(full_preprocessed,   // (-E -dD) about the names
//                                source_path, j.undeclared).empty();
//   if (j.own) compile_error(built.diagnostics);      // else build the full way
//
// toolchain/lite_ext.h (JudgeLiteCompileError) runs the whole judgement.
//
// Pure functions of their text (g++ 12 and nvcc 13 diagnostics); thread-safe.
#include <string>
#include <string_view>
#include <vector>

namespace kvault {

struct LiteFailureJudgement {
  // Every error is one of the source's own kinds (the table in lite_diagnostics.cc), at
  // a line of the source, and nothing points at PyTorch's API or the lite headers.
  bool own = false;
  // own: the first error ("line 7: expected a \";\""); else what keeps the doubt.
  std::string why;
  // own only if PyTorch's headers hold none of these names the lite compile said
  // nothing declares: NamesOutsideSource over the full build's preprocessed source.
  std::vector<std::string> undeclared;
  // own only if each of these macro-like names beside a syntax error (an unknown
  // macro before a declarator reads as bad grammar) is in neither PyTorch's headers
  // nor only in theirs: the lite headers define it too.
  std::vector<std::string> macro_like;
};

// Judges the diagnostics of a failed lite compile of `source` (its text), compiled as
// `source_path` (the path the compiler names in its messages); `lite_include_dir`: the
// lite headers' folder (include_lite/), whose mention anywhere is a doubt.
LiteFailureJudgement JudgeLiteFailure(std::string_view diagnostics, std::string_view source_path,
                                      std::string_view source, std::string_view lite_include_dir);

// The names of `names` that occur as identifiers in `preprocessed` (a compiler's -E
// -dD output with line markers) outside the lines of `source_path` itself: the
// headers' declarations, macro definitions and code, and the compiler's predefined
// macros. A name not among them cannot be declared by those headers.
std::vector<std::string> NamesOutsideSource(std::string_view preprocessed, std::string_view source_path,
                                            const std::vector<std::string>& names);

// The diagnostics of a failure judged the source's own, as a build with PyTorch's
// headers words them: the lite names in g++'s "In function" lines (the only place a
// judged failure can mention them) become PyTorch's (kvault_lite::Tensor is
// at::Tensor), so that feedback to a model speaks of its own code only.
std::string WithPyTorchNames(std::string diagnostics);

}  // namespace kvault
