#pragma once
// Human and JSON output of verify and eval.
#include <chrono>
#include <ostream>
#include <string>
#include <vector>

#include "engine/batch.h"
#include "engine/verification.h"

namespace kvault::cli {

void PrintVerification(std::ostream& out, const std::string& task, const std::string& candidate,
                       const Verification& v);

struct EvalTotals {
  size_t attempts = 0, compiled = 0, passed = 0, infra = 0, tasks = 0, tasks_solved = 0;
  double geomean_speedup = 0;  // over passed attempts with a speedup; 0 if none
};
EvalTotals Summarize(const std::vector<AttemptRecord>& records);

// The per-task table and the totals.
void PrintEvalTable(std::ostream& out, const std::vector<AttemptRecord>& records);
Json EvalJson(const std::string& run, const std::vector<AttemptRecord>& records);

// Says on `err` how many attempts ended in infra_error (not the candidates' fault),
// the first one's message, and that a re-run retries them. True when there were any.
bool ReportInfraFailures(std::ostream& err, const std::string& who,
                         const std::vector<AttemptRecord>& records);

// Says on `err` how many attempts are answers whose code is in a language the
// backend cannot build (their compile_error names it, build.foreign_language), and how
// to run them where it can: a suite of CUDA answers on the cpu backend is told, never
// silently scored as failures. False when there were none.
bool ReportForeignLanguage(std::ostream& err, const std::string& who, const std::string& backend,
                           const std::vector<AttemptRecord>& records);

// One line per finished attempt; on a terminal, a progress bar redrawn in place.
// Each line: done/total, elapsed time and the estimated time left (from the pace of
// the attempts verified now, not those taken from the store), the attempt's status
// and, for a failure, its message cut short.
class ProgressPrinter {
 public:
  explicit ProgressPrinter(std::ostream& out, bool terminal)
      : out_(out), terminal_(terminal), started_(std::chrono::steady_clock::now()) {}
  void Update(const EvalProgress& p);
  void Finish();

 private:
  std::ostream& out_;
  bool terminal_;
  std::chrono::steady_clock::time_point started_;
  size_t verified_ = 0;  // attempts verified now (not skipped)
};

}  // namespace kvault::cli
