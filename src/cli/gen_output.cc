#include "cli/gen_output.h"

#include <cmath>
#include <cstdio>
#include <iomanip>

#include "report/report.h"

namespace kvault::cli {
namespace {

std::string Speedup(const std::optional<double>& s) {
  if (!s) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", *s);
  return buf;
}

std::string Rate(int part, int whole) {
  if (whole == 0) return "-";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%d/%d (%.0f%%)", part, whole, 100.0 * part / whole);
  return buf;
}

std::string State(const agent::GenTaskSummary& s) {
  if (!s.call_error.empty()) return s.call_infra ? "infra_failed" : "llm_failed";
  if (!s.error.empty()) return s.error;
  return s.solved ? "solved" : "unsolved";
}

}  // namespace

void PrintGenProgress(std::ostream& out, const agent::GenProgress& p) {
  if (p.offspring) {  // one iteration step of a task still running
    const agent::Offspring& o = *p.offspring;
    out << "  " << p.task << " " << o.label << " (iteration " << o.iteration << " of " << p.iterations
        << "): ";
    if (o.attempt) {
      out << o.attempt->status;
      if (o.attempt->correct) out << ", speedup " << Speedup(o.attempt->speedup);
      else out << ": " << report::FailureMessage(*o.attempt, 80);
    } else {
      out << (o.answered ? "no usable code in the answer" : "no answer");
    }
    out << "\n" << std::flush;
    return;
  }
  const agent::GenTaskSummary& s = *p.last;
  out << "[" << p.done << "/" << p.total << "] " << s.task << ": " << State(s);
  if (s.resumed) out << " (finished earlier)";
  out << ", " << s.attempts << " attempt(s), " << s.correct << " correct, best "
      << Speedup(s.best_speedup) << ", " << s.calls << " call(s) now\n";
  if (!s.call_error.empty()) out << "  " << s.call_error << "\n";
  out.flush();
}

void PrintGenTable(std::ostream& out, const std::vector<agent::GenTaskSummary>& tasks) {
  out << std::left << std::setw(24) << "task" << std::setw(12) << "state" << std::setw(10)
      << "attempts" << std::setw(10) << "compiled" << std::setw(9) << "correct" << std::setw(10)
      << "best" << "outcomes\n";
  for (const auto& s : tasks) {
    std::string outcomes;
    for (const auto& [name, n] : s.outcomes)
      outcomes += (outcomes.empty() ? "" : " ") + name + "=" + std::to_string(n);
    out << std::left << std::setw(24) << s.task << std::setw(12) << State(s) << std::setw(10)
        << s.attempts << std::setw(10) << s.compiled << std::setw(9) << s.correct << std::setw(10)
        << Speedup(s.best_speedup) << outcomes << "\n";
  }
}

void PrintGenTotals(std::ostream& out, const std::vector<agent::GenTaskSummary>& tasks) {
  int solved = 0, attempts = 0, verified = 0, compiled = 0, correct = 0, timed = 0;
  double log_sum = 0;
  for (const auto& s : tasks) {
    solved += s.solved;
    attempts += s.attempts;
    verified += s.verified;
    compiled += s.compiled;
    correct += s.correct;
    if (s.best_speedup && *s.best_speedup > 0) {
      log_sum += std::log(*s.best_speedup);
      ++timed;
    }
  }
  out << "tasks solved " << Rate(solved, static_cast<int>(tasks.size())) << "; " << attempts
      << " attempt(s), " << verified << " verified; compiled " << Rate(compiled, verified)
      << ", correct " << Rate(correct, verified) << "; best speedup geomean "
      << (timed ? Speedup(std::exp(log_sum / timed)) : std::string("-")) << " over " << timed
      << " task(s)\n";
}

}  // namespace kvault::cli
