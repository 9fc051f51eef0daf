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

// True for the statuses that are not the candidate's fault.
bool NotKernelFault(const std::string& status);

// One TaskSamples per name of `suite_tasks` (in that order), filled from `records`.
SuiteSamples GroupByTask(const std::vector<AttemptRecord>& records,
                         const std::vector<std::string>& suite_tasks, const CategoryMap& categories);

// The distinct task names of `records`, sorted: the task list when no suite is given.
std::vector<std::string> TasksOf(const std::vector<AttemptRecord>& records);

}  // namespace kvault::score
