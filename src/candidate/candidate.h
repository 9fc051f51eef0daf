#pragma once
// Candidate files (docs/candidate-formats.md): what format a file is in and which
// task it belongs to.
//
//   auto c = LoadCandidate("relu.hip");      // extension format, language "hip"
//   if (!c) -> the outcome is parse_error with c.error()
#include <optional>
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

// The language of a compiled source by its file extension (".cu" -> "cuda", ".hip" ->
// "hip", ".cpp"/".cc"/".cxx" -> "cpp"); "" for any other extension.
std::string ExtensionLanguage(const std::string& ext);

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

// Candidate files of an `eval` folder matched to a task: by stem, `<stem>.<ext>` or
// `<stem>.<label>.<ext>` (several per task), also in sub-folders named like the
// suite's level folders (`level1/19_ReLU.cu` for task "level1/19_ReLU"); or by
// KernelBench's sample name, `level_1_problem_19_sample_0_kernel.py` for the task
// of problem 19 in folder level1 ("level1/19_ReLU"), each file a sample. Sorted by
// task, then path, numbers as numbers (relu.sample_2.cpp before relu.sample_10.cpp;
// util NaturalLess).
struct CandidateMatch {
  std::string task;  // the task's name (TaskFile::name)
  std::string path;
};
// Every regular file in `dir` (and its sub-folders) that matches a task of
// `task_names`; `unmatched` receives each other file as "PATH (why)": no such task,
// or not a candidate file. Names starting with '.' are ignored.
// KernelBench's name of a generated sample: level_<L>_problem_<P>_sample_<S>_kernel.<ext>.
struct KernelBenchSampleName {
  int level = 0, problem = 0, sample = 0;
};
std::optional<KernelBenchSampleName> ParseKernelBenchSampleName(const std::string& file_name);

Result<std::vector<CandidateMatch>> MatchCandidates(const std::string& dir,
                                                    const std::vector<std::string>& task_names,
                                                    std::vector<std::string>* unmatched);

}  // namespace kvault
