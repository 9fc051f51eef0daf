#include "cli/report.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <map>
#include <sstream>

#include "engine/candidate_build.h"
#include "engine/verification_records.h"
#include "report/report.h"
#include "score/samples.h"

namespace kvault::cli {
namespace {

std::string Fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

std::string OptMs(const std::optional<double>& v) { return v ? Fixed(*v, 4) + " ms" : "-"; }

std::string Base(const std::string& path) { return std::filesystem::path(path).filename().string(); }

}  // namespace

void PrintVerification(std::ostream& out, const std::string& task, const std::string& candidate,
                       const Verification& v) {
  out << task << " <- " << Base(candidate) << ": " << ToString(v.status);
  if (v.speedup) out << "  speedup " << Fixed(*v.speedup, 2) << "x";
  if (v.reference_ms) out << "  (reference " << OptMs(v.reference_ms) << ", candidate "
                          << OptMs(v.candidate_ms) << ")";
  if (v.reward || v.status != OutcomeStatus::kCompiled)  // a compile-only check earns none
    out << "  reward " << (v.reward ? Fixed(*v.reward, 3) : std::string("null"));
  out << "  [" << Fixed(v.seconds, 1) << " s]\n  " << v.message << "\n";
  if (!v.diagnostics.empty() && v.status != OutcomeStatus::kPassed) {
    std::string d = v.diagnostics.substr(0, 2000);
    out << "  --- diagnostics ---\n" << d << (d.size() < v.diagnostics.size() ? "\n  [...]" : "") << "\n";
  }
}

EvalTotals Summarize(const std::vector<AttemptRecord>& records) {
  EvalTotals t;
  std::map<std::string, bool> solved;
  double log_sum = 0;
  size_t n_speed = 0;
  for (const AttemptRecord& r : records) {
    ++t.attempts;
    t.compiled += r.compiled;
    t.passed += r.correct;
    t.infra += score::NotKernelFault(r);
    solved[r.task] = solved[r.task] || r.correct;
    if (r.correct && r.speedup && *r.speedup > 0) {
      log_sum += std::log(*r.speedup);
      ++n_speed;
    }
  }
  t.tasks = solved.size();
  for (const auto& [_, s] : solved) t.tasks_solved += s;
  if (n_speed) t.geomean_speedup = std::exp(log_sum / n_speed);
  return t;
}

void PrintEvalTable(std::ostream& out, const std::vector<AttemptRecord>& records) {
  struct Row {
    size_t attempts = 0, passed = 0;
    std::optional<double> best;
    std::map<std::string, int> statuses;
    std::vector<const AttemptRecord*> failed;
  };
  std::map<std::string, Row> rows;
  for (const AttemptRecord& r : records) {
    Row& row = rows[r.task];
    ++row.attempts;
    row.passed += r.correct;
    ++row.statuses[r.status];
    if (!r.correct) row.failed.push_back(&r);
    if (r.correct && r.speedup && (!row.best || *r.speedup > *row.best)) row.best = r.speedup;
  }
  out << std::left << std::setw(24) << "task" << std::right << std::setw(9) << "attempts"
      << std::setw(8) << "passed" << std::setw(10) << "best" << "  outcomes\n";
  out << std::string(78, '-') << "\n";
  for (const auto& [task, row] : rows) {
    std::string outcomes;
    for (const auto& [s, n] : row.statuses) outcomes += s + "=" + std::to_string(n) + " ";
    out << std::left << std::setw(24) << task << std::right << std::setw(9) << row.attempts
        << std::setw(8) << row.passed << std::setw(10)
        << (row.best ? Fixed(*row.best, 2) + "x" : std::string("-")) << "  " << outcomes << "\n";
    // Why: the first failures of the task, each on a line of its own.
    constexpr size_t kShown = 3;
    for (size_t i = 0; i < row.failed.size() && i < kShown; ++i)
      out << "    " << Base(row.failed[i]->candidate_path) << ": " << row.failed[i]->status << ": "
          << report::FailureMessage(*row.failed[i], 90) << "\n";
    if (row.failed.size() > kShown)
      out << "    (" << row.failed.size() - kShown << " more failed; --json or `kvault export` has every message)\n";
  }
  EvalTotals t = Summarize(records);
  out << std::string(78, '-') << "\n";
  out << "tasks " << t.tasks << " (solved " << t.tasks_solved << ")  attempts " << t.attempts
      << "  compiled " << t.compiled << "  passed " << t.passed << "  not the kernel's fault "
      << t.infra;
  if (t.geomean_speedup > 0) out << "  geomean speedup of passed " << Fixed(t.geomean_speedup, 2) << "x";
  out << "\n";
}

bool ReportInfraFailures(std::ostream& err, const std::string& who,
                         const std::vector<AttemptRecord>& records) {
  size_t n = 0;
  const AttemptRecord* first = nullptr;
  for (const AttemptRecord& r : records) {
    if (r.status != "infra_error") continue;
    if (!first) first = &r;
    ++n;
  }
  if (!first) return false;
  err << who << ": " << n << " attempt(s) ended in infra_error, a failure of this machine or "
      << "setup, not of the candidates; the first (" << first->task << " <- " << Base(first->candidate_path)
      << "): " << first->message << "\n"
      << who << ": fix the cause and run the same command again: recorded attempts are kept, "
      << "these are retried\n";
  return true;
}

bool ReportForeignLanguage(std::ostream& err, const std::string& who, const std::string& backend,
                           const std::vector<AttemptRecord>& records) {
  std::map<std::string, size_t> by_language;
  size_t n = 0;
  for (const AttemptRecord& r : records) {
    const std::string language = ForeignLanguageOf(r.environment);
    if (language.empty()) continue;
    ++by_language[language];
    ++n;
  }
  if (n == 0) return false;
  std::string languages;
  for (const auto& [language, count] : by_language)
    languages += (languages.empty() ? "" : ", ") + language + " " + std::to_string(count);
  err << who << ": " << n << " of " << records.size() << " attempt(s) are answers in a language the " << backend
      << " backend cannot build (" << languages << "), each its own compile_error (a failed sample); "
      << "if they are meant for that language, verify them on its backend (--backend)\n";
  return true;
}

namespace {
// The stage times the engine recorded among the attempt's records, or null for
// records written before it did.
Json PhasesOf(const Json& cases) {
  const std::optional<Phases> phases = ReadCases(cases).phases;
  return phases ? phases->ToJson() : Json(nullptr);
}
}  // namespace

Json EvalJson(const std::string& run, const std::vector<AttemptRecord>& records) {
  Json attempts = Json::array();
  for (const AttemptRecord& r : records) {
    auto opt = [](const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); };
    attempts.push_back(Json{{"task", r.task}, {"candidate", r.candidate_path},
                            {"candidate_hash", r.candidate_hash}, {"status", r.status},
                            {"compiled", r.compiled}, {"correct", r.correct},
                            {"speedup", opt(r.speedup)}, {"reference_ms", opt(r.reference_ms)},
                            {"candidate_ms", opt(r.candidate_ms)}, {"reward", opt(r.reward)},
                            {"message", r.message}, {"seconds", r.seconds},
                            {"policy", r.policy.empty() ? Json(nullptr) : Json(r.policy)},
                            {"phases", PhasesOf(r.cases)}});
  }
  EvalTotals t = Summarize(records);
  return Json{{"run", run},
              {"attempts", attempts},
              {"totals", {{"tasks", t.tasks}, {"tasks_solved", t.tasks_solved},
                          {"attempts", t.attempts}, {"compiled", t.compiled},
                          {"passed", t.passed}, {"not_kernel_fault", t.infra},
                          {"geomean_speedup", t.geomean_speedup > 0 ? Json(t.geomean_speedup) : Json(nullptr)}}}};
}

namespace {
std::string Clock(double seconds) {
  const long s = std::lround(seconds);
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, s / 60 % 60);
  else std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  return buf;
}
}  // namespace

void ProgressPrinter::Update(const EvalProgress& p) {
  if (!p.last) {  // a stall report: what each busy lane is doing
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    if (terminal_) out_ << "\r\033[K";
    out_ << "[" << p.done << "/" << p.total << " " << Clock(elapsed) << "] no attempt ended for "
         << Clock(p.stalled_s) << "; " << p.stalled.size() << " lane(s) busy:\n";
    for (const std::string& lane : p.stalled) out_ << "  " << lane << "\n";
    out_ << std::flush;
    return;
  }
  const AttemptRecord& r = *p.last;
  if (!p.skipped) ++verified_;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  std::string when = Clock(elapsed);
  if (verified_ > 0 && p.done < p.total)
    when += ", ~" + Clock(elapsed / verified_ * static_cast<double>(p.total - p.done)) + " left";
  const std::string why = report::FailureMessage(r, 60);
  std::string line = "[" + std::to_string(p.done) + "/" + std::to_string(p.total) + " " + when + "] " +
                     r.task + " <- " + Base(r.candidate_path) + ": " + r.status +
                     (p.skipped ? " (recorded earlier)" : "") + (why.empty() ? "" : ": " + why);
  if (terminal_) {
    const int width = 30;
    int filled = static_cast<int>(width * p.done / std::max<size_t>(1, p.total));
    out_ << "\r\033[K[" << std::string(filled, '#') << std::string(width - filled, '.') << "] "
         << line << std::flush;
  } else {
    out_ << line << "\n" << std::flush;
  }
}

void ProgressPrinter::Finish() {
  if (terminal_) out_ << "\r\033[K" << std::flush;
}

}  // namespace kvault::cli
