#pragma once
// Suite-level scores of one run (docs/scoring.md): pass@k, Comp@k, Corr@k,
// speedups, fast_p, each with a bootstrap interval over tasks, and the same per
// category.
//
//   SuiteSamples s = GroupByTask(records, suite_tasks, categories);
//   RunScore score = ScoreSuite(s, ScoreOptions{});
//   double p1 = *score.pass_at_k.at(1).value;
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "score/bootstrap.h"
#include "score/samples.h"

namespace kvault::score {

struct ScoreOptions {
  std::vector<int> ks{1};                                   // Default: {1}. REQUIRES: each >= 1
  std::vector<double> ps{0, 0.5, 0.8, 1, 1.5, 2};          // fast_p thresholds
  BootstrapOptions bootstrap;
  bool per_category = true;                                 // fill RunScore::categories
};

// One task's numbers. "Correct samples with a speedup" have a finite speedup > 0.
struct TaskScore {
  std::string task, category;
  size_t n = 0, c = 0, ran = 0;   // samples, correct samples, samples that ran
  size_t not_kernel_fault = 0;
  bool excluded = false;          // every attempt was task_error / infra_error
  std::map<int, double> pass_at_k, comp_at_k, corr_at_k;
  std::optional<double> best_speedup;  // max speedup over correct samples
  std::optional<double> sum_ratio;     // Σ reference_ms / Σ candidate_ms over correct samples
  bool solved() const { return c > 0; }
};

struct RunScore {
  std::string label;       // the category name inside `categories`; empty for the whole suite
  size_t tasks = 0;        // suite tasks
  size_t scored = 0;       // tasks in the denominators (tasks - excluded)
  size_t unattempted = 0;  // suite tasks with no attempt (scored as failures)
  size_t solved = 0;       // scored tasks with a correct sample
  size_t short_tasks = 0;  // scored tasks with samples, fewer than the largest k
  std::vector<std::string> excluded;  // tasks left out: all attempts task_error / infra_error
  std::map<int, Estimate> pass_at_k, comp_at_k, corr_at_k;
  std::map<double, Estimate> fast_p;
  Estimate geomean_speedup;   // over every correct sample with a speedup
  Estimate geomean_best;      // over solved tasks: best_speedup
  Estimate geomean_ratio;     // over solved tasks with timings: sum_ratio
  std::vector<TaskScore> per_task;  // suite order
  std::vector<RunScore> categories; // sorted by name; their own `categories` are empty
};

TaskScore ScoreTask(const TaskSamples& t, const ScoreOptions& options);
RunScore ScoreSuite(const SuiteSamples& samples, const ScoreOptions& options);

}  // namespace kvault::score
