#pragma once
// Whole-suite generation (`kvault gen`, docs/agent.md): one OptimAgent loop per
// task, many tasks at once. LLM calls are bounded by the client (its concurrency);
// verification by `jobs` lanes (LaneEvaluator); tasks run on jobs + concurrency
// threads so both stay busy. Every call goes to the GenerationLog as it ends, every
// verified candidate to the attempts table, and each task's state to gen_tasks, so
// an interrupted run loses at most the calls in flight and `resume` continues it:
// finished tasks are skipped, recorded calls are taken from the log, recorded
// verifications from the store.
#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/loop.h"
#include "agent/pipeline.h"
#include "agent/prompt_library.h"
#include "engine/options.h"

namespace kvault::agent {

struct GenSettings {
  std::string run = "gen";
  std::string mode = "torch2kernel";
  LoopSettings loop;
  int jobs = 1;            // verification lanes; Default: 1
  int concurrency = 4;     // LLM calls in flight (also given to the client); Default: 4
  bool resume = false;     // continue the run instead of refusing an existing one
  std::string gen_dir;     // candidate files: <gen_dir>/<task>/iter<i>_<k><ext>
  // kernel2kernel: the baseline source of each task, by task name.
  std::map<std::string, std::string> baselines;
  Json recorded_settings = Json::object();  // stored with each task (gen_tasks.settings)
};

struct GenTaskSummary {
  std::string task;
  bool finished = false;  // every iteration ran (now or in an earlier run)
  bool resumed = false;   // finished earlier: nothing was done now
  bool solved = false;
  int attempts = 0;       // generator answers (candidates asked for)
  int verified = 0, compiled = 0, correct = 0;
  int calls = 0;          // LLM calls made by this invocation
  std::optional<double> best_speedup;           // against PyTorch
  std::optional<double> best_baseline_speedup;  // kernel2kernel: against the baseline
  std::string best_path;
  std::map<std::string, int> outcomes;  // generator outcome -> count
  std::string error;                    // why the task did not finish, if it did not
  std::string call_error;               // an LLM call failed, or a verification ended in
  bool call_infra = false;              // infra_error (call_infra): not the task's fault; --resume retries it
  Json ToJson() const;
};

// A task that ended (`last`), or one candidate of a task still running
// (`offspring`, of task `task`; `last` null).
struct GenProgress {
  size_t done = 0, total = 0;
  const GenTaskSummary* last = nullptr;
  const Offspring* offspring = nullptr;
  std::string task;
  int iterations = 0;  // the loop's budget, for "iteration i of n"
};

struct GenSeams {
  llm::ChatClient* client = nullptr;
  Extractor extract;
  Evaluator* evaluator = nullptr;
  GenerationLog* log = nullptr;
};

// Runs every task. Returns one summary per task, in task order. Error only for an
// infrastructure failure that stops the run (the store cannot be written).
Result<std::vector<GenTaskSummary>> RunGeneration(
    const std::vector<TaskFile>& tasks, const PromptSet& prompts, const GenSettings& settings,
    const GenSeams& seams, const std::atomic<bool>* stop,
    const std::function<void(const GenProgress&)>& progress);

}  // namespace kvault::agent
