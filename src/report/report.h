#pragma once
// The HTML report (`kvault report`, docs/scoring.md): one self-contained page with
// inline CSS and inline SVG, no script and no reference to anything outside the file.
//
//   ReportRun r{"run-1", records, GroupByTask(records, tasks, cats)};
//   std::string html = BuildReport({r}, ReportOptions{});
//
// Sections (each an <h2> with an id): summary (metrics with bootstrap intervals),
// pass-at-k (curves, one per run), speedups (histogram on a log scale), failures
// (attempts by status), why (the failed attempts and their messages), environment
// (model and machine of each run), categories (per-category table), compare (with
// exactly two runs), grid (task x attempt outcome grid per run).
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
  std::string model = "";              // the LLM of a `kvault gen` run; "" otherwise
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

// The outcome grid of one run: a table, task x attempt (sample order, as scored),
// colored by status; each cell's title holds its status, file and failure message.
std::string OutcomeGrid(const ReportRun& run);

// A failure's message as shown: its first line, at most `max` characters; "" for passed.
std::string FailureMessage(const AttemptRecord& r, size_t max);

// Why candidates failed: run, task, sample, status and message of each attempt that
// did not pass, the first `max_rows` of them (the full message in each cell's title).
std::string FailureTable(const std::vector<ReportRun>& runs, size_t max_rows = 500);

// Where each run ran: model, backend, arch, device, PyTorch, Python, kvault, host.
std::string EnvironmentTable(const std::vector<ReportRun>& runs);

}  // namespace kvault::report
