#pragma once
// Which inputs a candidate is checked on (docs/adversarial.md, "Defences"): every
// correctness case with the task's own inputs for seeds 1..n, then with seed 1
// redrawn from each extra distribution the task accepts (KVAULT_META
// "input_distributions": same shapes and dtypes, signed or heavy-tailed values).
// After an implausible speedup, the re-check runs every correctness case once more
// on seeds no earlier run used.
#include <string>
#include <vector>

#include "task/task_file.h"
#include "worker/protocol.h"

namespace kvault {

inline constexpr const char* kTaskInputs = protocol::kDistributionTask;  // the task's own get_inputs

struct CorrectnessRun {
  int seed = 1;
  std::string distribution = kTaskInputs;  // "task" | "signed" | "heavy_tailed"
};

std::vector<CorrectnessRun> CorrectnessRuns(const TaskInfo& task);
std::vector<CorrectnessRun> RecheckRuns();
// "seed 2", "seed 1 (signed inputs)": how messages name a run.
std::string RunLabel(const CorrectnessRun& run);

// Default bound above which a speedup is implausible and re-checked.
inline constexpr double kDefaultPlausibleSpeedup = 50.0;
// The task's bound (KVAULT_META "plausible_speedup") if it sets one, else `engine_bound`.
double PlausibleSpeedupBound(const TaskInfo& task, double engine_bound);

}  // namespace kvault
