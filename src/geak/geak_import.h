#pragma once
// GEAK-eval task files (TritonBench-G, ROCmBench) turned into this project's task and
// Triton candidate formats (docs/geak-formats.md).
//
//   auto split = SplitGeakFile(text);            // implementation | 146 '#' | tests
//   auto task = MakeGeakTask(GeakFormat::kTritonBenchG, "add.py", *split);
//   auto cand = MakeGeakCandidate(GeakFormat::kTritonBenchG, candidate_text, *split);
//
// Pure string transforms; ImportGeak does the file I/O of `kvault import-geak`.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace kvault {

enum class GeakFormat { kTritonBenchG, kRocmBench };

std::string_view ToString(GeakFormat f);
std::optional<GeakFormat> GeakFormatFromString(std::string_view s);

// The separator: a line of exactly 146 '#' characters (a trailing '\r' allowed).
inline constexpr size_t kGeakSeparatorWidth = 146;

struct GeakParts {
  std::string implementation;  // the text above the separator
  std::string tests;           // the text below it
};

// Splits at the first separator line. Error when there is none, or when either side
// is blank.
Result<GeakParts> SplitGeakFile(std::string_view text);

// The implementation part of a candidate: the text above its separator, or the whole
// file when it has none (its own tests are never used). Error when blank.
Result<std::string> CandidateImplementation(std::string_view text);

// A task file (docs/task-format.md) whose Model runs the trusted tests on the
// reference implementation. `source_name` is recorded in its docstring.
std::string MakeGeakTask(GeakFormat format, std::string_view source_name, const GeakParts& task);

// A Triton candidate (module_fn entry) that runs the task's trusted tests on the
// candidate's implementation.
std::string MakeGeakCandidate(GeakFormat format, std::string_view implementation,
                              const GeakParts& task);

struct GeakImportSummary {
  std::vector<std::string> tasks_written, candidates_written;
  std::vector<std::string> problems;  // one line per file that could not be imported
};

// Imports every *.py of `tasks_dir` (not recursive, `_*` skipped) into out_dir/suite,
// and every *.py of `candidates_dir` (when not empty) whose stem names an imported
// task into out_dir/candidates (same file name). Files that cannot be imported are
// listed in `problems`, the others are still written. Error only for I/O failures.
Result<GeakImportSummary> ImportGeak(GeakFormat format, const std::string& tasks_dir,
                                     const std::string& candidates_dir,
                                     const std::string& out_dir);

}  // namespace kvault
