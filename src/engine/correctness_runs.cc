#include "engine/correctness_runs.h"

#include <algorithm>

namespace kvault {

constexpr int kRecheckSeed = 2001;

std::vector<CorrectnessRun> CorrectnessRuns(const TaskInfo& task) {
  std::vector<CorrectnessRun> runs;
  for (int s = 1; s <= std::max(3, task.seeds); ++s) runs.push_back({s, kTaskInputs});
  for (const std::string& d : task.input_distributions) runs.push_back({1, d});
  return runs;
}

std::vector<CorrectnessRun> RecheckRuns() { return {{kRecheckSeed, kTaskInputs}}; }

std::string RunLabel(const CorrectnessRun& run) {
  std::string label = "seed " + std::to_string(run.seed);
  if (run.distribution != kTaskInputs) label += " (" + run.distribution + " inputs)";
  return label;
}

double PlausibleSpeedupBound(const TaskInfo& task, double engine_bound) {
  return task.plausible_speedup.value_or(engine_bound);
}

}  // namespace kvault
