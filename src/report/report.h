#pragma once
// The HTML report (`kvault report`, docs/scoring.md): one self-contained page with
// inline CSS and inline SVG, no script and no reference to anything outside the file.
//
//   ReportRun r{"run-1", records, GroupByTask(records, tasks, cats)};
//   std::string html = BuildReport({r}, ReportOptions{});
//
// Sections (each an <h2> with an id): summary (metrics with bootstrap intervals),
// pass-at-k (curves, one per run), speedups (histogram on a log scale), failures
// (attempts by status), categories (per-category table), compare (with exactly two
// runs), grid (task x attempt outcome grid per run).
#include <string>
#include <vector>

#include "score/metrics.h"
#include "score/samples.h"
#include "store/store.h"

namespace kvault::report {

struct ReportRun {
  std::string name;
  std::vector<AttemptRecord> records;  // the run's records (any order)
  score::SuiteSamples samples;         // GroupByTask(records, ...)
};

struct ReportOptions {
  std::string title = "KernelVault report";
  std::string suite;                  // shown in the header; empty: tasks come from the runs
  score::ScoreOptions score;          // ks of the summary table, fast_p thresholds, bootstrap
  int max_curve_k = 20;               // the pass@k curve runs k = 1 .. min(this, most samples of a task)
};

std::string BuildReport(const std::vector<ReportRun>& runs, const ReportOptions& options);

// Fill color of a status in the grid and the failure chart.
std::string StatusColor(const std::string& status);

// The outcome grid of one run: a table, task x attempt (store order), colored by status.
std::string OutcomeGrid(const ReportRun& run);

}  // namespace kvault::report
