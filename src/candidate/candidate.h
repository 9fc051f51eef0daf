#pragma once
// Candidate files (docs/candidate-formats.md): what format a file is in and which
// task it belongs to.
//
//   auto c = LoadCandidate("relu.hip");      // extension format, language "hip"
//   if (!c) -> the outcome is parse_error with c.error()
#include <string>
#include <vector>

#include "util/result.h"

namespace kvault {

enum class CandidateFormat {
  kExtension,    // one C++/CUDA/HIP translation unit with a PYBIND11 `forward`
  kKernelBench,  // a Python file defining class ModelNew
  kNative,       // one C++/CUDA/HIP source defining extern "C" kvault_forward, no PyTorch
  kTriton,       // a Python file with @triton.jit kernels and ModelNew or module_fn
};

std::string_view ToString(CandidateFormat f);

struct Candidate {
  std::string path;      // absolute
  std::string source;
  CandidateFormat format = CandidateFormat::kExtension;
  std::string language;  // "cpp", "cuda", "hip" (extension, native), "python" (kernelbench)
                         // or "triton" (triton)
  std::string hash;      // SHA-256 of source
};

// Reads a candidate and decides its format from the file name and content: a
// .cpp/.cu/.hip source is the extension format when it mentions PYBIND11_MODULE, else
// the native format when it mentions kvault_forward (docs/native-format.md).
// Error (-> parse_error) for an unreadable or empty file, an unknown extension, a
// C++/CUDA/HIP source with neither PYBIND11_MODULE nor kvault_forward, or a .py file
// without ModelNew. A .py file that imports triton and has an @triton.jit kernel is
// the Triton format (docs/candidate-formats.md) and needs ModelNew or module_fn.
Result<Candidate> LoadCandidate(const std::string& path);

// LoadCandidate after reading: decides the format of `source` from the file name and
// extension of `path` (taken as is, not resolved) and the content. Same errors,
// except that it reads nothing. Used by LoadCandidate and the fuzzer.
Result<Candidate> CandidateFromSource(const std::string& path, std::string source);

// Candidate files of an `eval` folder matched to a task by stem: `<stem>.<ext>` or
// `<stem>.<label>.<ext>` (several per task). Sorted by path, numbers as numbers
// (relu.sample_2.cpp before relu.sample_10.cpp; util NaturalLess).
struct CandidateMatch {
  std::string task;  // stem
  std::string path;
};
// Every regular file in `dir` whose stem (text before the first '.') is in
// `task_names`; `unmatched` receives the other candidate-like files.
Result<std::vector<CandidateMatch>> MatchCandidates(const std::string& dir,
                                                    const std::vector<std::string>& task_names,
                                                    std::vector<std::string>* unmatched);

}  // namespace kvault
