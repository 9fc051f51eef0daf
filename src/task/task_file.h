#pragma once
// Task files and suites (docs/task-format.md). A task is one Python file in
// KernelBench's format; a suite is a folder of them. What a task *contains*
// (cases, twin, metadata) is learned from the worker's `describe` (TaskInfo).
//
//   auto suite = DiscoverSuite("examples/suite");
//   for (const TaskFile& t : *suite) ...
#include <optional>
#include <string>
#include <vector>

#include "util/json.h"
#include "util/result.h"

namespace kvault {

struct TaskFile {
  std::string name;    // file stem; "<folder>/<stem>" in a suite of level folders
  std::string path;    // absolute
  std::string source;  // file contents
  std::string hash;    // SHA-256 of source
};

// Reads one task file. Error if it cannot be read or is not a .py file.
Result<TaskFile> LoadTaskFile(const std::string& path);

// Every *.py in `dir` (names starting with '_' or '.' skipped), sorted by name with
// numbers as numbers. When `dir` holds none, the *.py of each of its sub-folders
// (KernelBench's level1/, level2/, ...), named "<folder>/<stem>" ("level1/19_ReLU";
// the folder is the task's category, docs/scoring.md). Error if `dir` is not a
// readable folder or holds no task.
Result<std::vector<TaskFile>> DiscoverSuite(const std::string& dir);

// The tasks of `suite` (in its order) whose name matches one of `patterns`: shell
// wildcards (fnmatch: `*` also crosses '/', so `*relu*` finds "level1/19_relu").
// `patterns` empty: all of them. Error naming the first pattern that matches no task
// (a misspelt name would otherwise leave work out in silence).
Result<std::vector<TaskFile>> FilterTasks(const std::vector<TaskFile>& suite,
                                          const std::vector<std::string>& patterns);

struct CaseInfo {
  std::string name;
  bool correctness = true;
  bool performance = true;
  int64_t input_bytes = 0;  // the case's tensor inputs for seed 1 (0 when not reported)
};

struct TaskInfo {
  TaskFile file;
  bool has_twin = false;
  int64_t num_parameters = 0;
  std::vector<CaseInfo> cases;
  std::optional<double> rtol, atol;  // unset: defaults by output dtype
  std::string nan_policy = "match";  // "match" | "forbid"
  int seeds = 3;                     // correctness seeds per case, >= 3
  std::string policy = "any";        // "any" | "fused" | "custom_kernel" (docs/adversarial.md)
  // Extra input distributions each correctness case also runs on (docs/adversarial.md).
  std::vector<std::string> input_distributions{"signed", "heavy_tailed"};
  std::optional<double> plausible_speedup;  // unset: the engine's bound
  // Per held-out case, whether describe listed it and why (not): [{case, listed, why}]
  // (docs/worker-protocol.md, "describe"); an empty array for a task without one.
  Json held_out = Json::array();

  std::vector<int> CorrectnessCases() const;
  std::vector<int> PerformanceCases() const;
};

// Builds a TaskInfo from the `task` object of a describe response. Error if the
// object does not follow docs/worker-protocol.md.
Result<TaskInfo> TaskInfoFromDescribe(const TaskFile& file, const Json& task);

}  // namespace kvault
