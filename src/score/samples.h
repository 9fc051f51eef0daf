#pragma once
// Grouping a run's attempt records into per-task samples (docs/scoring.md).
//
//   auto cats = ParseCategories(text_of_categories_json);
//   SuiteSamples s = GroupByTask(store->ListRun("r1"), suite_task_names, *cats);
//
// A sample is one attempt whose status is the kernel's own outcome; task_error and
// infra_error attempts are not samples (not the candidate's fault) and are counted
// separately. Samples of a task are in the order they were generated or named: by
// their sample name, numbers as numbers (sample_2 before sample_10, iter9_0 before
// iter10_0; util NaturalLess), then ascending id (the order they were recorded).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store/store.h"
#include "util/result.h"

namespace kvault::score {

struct Sample {
  int64_t id = 0;
  std::string status;
  std::string candidate;  // candidate_path
  std::string sample;     // the record's sample name ("" when content identifies it)
  bool ran = false;       // Comp: status is passed or mismatch (built, loaded, ran to the comparison)
  bool correct = false;   // status is passed
  std::optional<double> speedup, reference_ms, candidate_ms;
};

struct TaskSamples {
  std::string task;
  std::string category;
  std::vector<Sample> samples;  // in sample order (above)
  size_t not_kernel_fault = 0;  // task_error / infra_error attempts left out
  // Every attempt was task_error / infra_error: left out of every denominator.
  bool excluded() const { return samples.empty() && not_kernel_fault > 0; }
  bool attempted() const { return !samples.empty() || not_kernel_fault > 0; }
};

struct SuiteSamples {
  std::vector<TaskSamples> tasks;          // one per suite task, in suite order
  std::vector<std::string> unknown_tasks;  // tasks in the records but not in the suite (ignored)
  std::map<std::string, size_t> statuses;  // status -> attempts of suite tasks, every status
};

using CategoryMap = std::map<std::string, std::string>;  // task -> category

// Parses a categories.json text: one JSON object mapping task name -> category name.
// Error if it is not such an object.
Result<CategoryMap> ParseCategories(const std::string& json_text);

// The category of `task`: its entry in `categories`, else the part of its name before
// the first '/', else "all".
std::string CategoryOf(const std::string& task, const CategoryMap& categories);

// True for an attempt that is not the candidate's fault (docs/outcomes.md): task_error,
// infra_error, and unsupported (this machine's backend cannot run what the suite or
// request declared: a .hip file on cpu). An `unsupported` KernelBench file is the
// candidate's failure: only its text decided it (before its recorded load_inline
// calls did), a comment naming __global__ would otherwise drop a failure from pass@k.
bool NotKernelFault(const AttemptRecord& attempt);

// One TaskSamples per name of `suite_tasks` (in that order), filled from `records`.
SuiteSamples GroupByTask(const std::vector<AttemptRecord>& records,
                         const std::vector<std::string>& suite_tasks, const CategoryMap& categories);

// A task of the suite being scored: its name and the SHA-256 (hex) of its file.
struct SuiteTask {
  std::string name;
  std::string hash;
};

// `kvault serve` names the task of each attempt `<label>-<first 12 hex digits of the
// task's hash>` (one name per task content; docs/serve.md), so a campaign's records
// carry names no suite has. Renames such records (the suffix is the record's own
// task_hash prefix) to the task they are of:
//   `suite` non-empty: the suite task of that content (its hash), else the one whose
//     name, or its part after the last '/', is the label (the same task sent with
//     other request tolerances); else the name is left as it is (an unknown task);
//   `suite` empty: the label, when every record of that label in `records` holds one
//     task content; labels that several contents share keep their full names, so
//     different tasks are never counted as one.
// Other records are left as they are.
void NameServeTasks(std::vector<AttemptRecord>& records, const std::vector<SuiteTask>& suite);

// The distinct task names of `records`, sorted: the task list when no suite is given.
std::vector<std::string> TasksOf(const std::vector<AttemptRecord>& records);

}  // namespace kvault::score
