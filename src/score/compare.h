#pragma once
// Paired comparison of two runs on the tasks both scored (docs/scoring.md).
//
//   Comparison c = CompareRuns(ScoreSuite(a, o), ScoreSuite(b, o), o.bootstrap);
//   if (c.solved_p < 0.05) ...
#include <optional>
#include <string>
#include <vector>

#include "score/bootstrap.h"
#include "score/metrics.h"
#include "score/significance.h"

namespace kvault::score {

struct PairedTask {
  std::string task;
  bool solved_a = false, solved_b = false;
  double pass1_a = 0, pass1_b = 0;            // c / n
  std::optional<double> best_a, best_b;       // best speedups
  bool differs() const { return solved_a != solved_b || pass1_a != pass1_b; }
};

struct Comparison {
  size_t common = 0;          // tasks scored (not excluded) in both runs
  size_t only_a = 0, only_b = 0;  // tasks scored in one run only (left out)
  size_t a_only_solved = 0, b_only_solved = 0, both_solved = 0, neither_solved = 0;
  double solved_p = 1;        // exact sign test (McNemar) on the discordant tasks
  Estimate pass1_diff;        // mean over common tasks of pass1_a - pass1_b, paired bootstrap
  SignedRank speed_test;      // Wilcoxon on log(best_a / best_b), tasks solved with timings in both
  Estimate speed_ratio;       // geometric mean of best_a / best_b over those tasks, paired bootstrap
  std::vector<PairedTask> tasks;  // the common tasks, in run a's order
};

// REQUIRES: both scores were made with ks containing 1.
Comparison CompareRuns(const RunScore& a, const RunScore& b, const BootstrapOptions& bootstrap);

}  // namespace kvault::score
