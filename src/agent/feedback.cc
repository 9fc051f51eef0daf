#include "agent/feedback.h"

#include "engine/verification_records.h"
#include "util/json.h"

namespace kvault::agent {
namespace {

// The largest n <= want such that text[0, n) ends on a UTF-8 boundary.
size_t HeadCut(std::string_view text, size_t want) {
  size_t n = std::min(want, text.size());
  while (n > 0 && n < text.size() && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return n;
}

// The smallest start >= want on a UTF-8 boundary.
size_t TailCut(std::string_view text, size_t want) {
  size_t s = std::min(want, text.size());
  while (s < text.size() && (static_cast<unsigned char>(text[s]) & 0xC0) == 0x80) ++s;
  return s;
}

Json Optional(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

// A correctness run that did not match, for the model: where, and how far off.
Json RunRow(const CorrectnessRecord& run) {
  Json row{{"case", run.case_name}, {"seed", run.seed}, {"status", std::string(ToString(run.status))}};
  if (const auto& c = run.comparison) {
    row["max_abs_error"] = c->max_abs_error;
    row["max_rel_error"] = c->max_rel_error;
    row["mismatched"] = c->mismatched;
    row["compared"] = c->compared;
    if (run.status == CorrectnessRecord::Status::kMismatch) {
      row["message"] = c->message;
      row["worst_index"] = c->worst_index;
    }
  }
  return row;
}

// A timed case: both medians and their ratio.
Json TimingRow(const TimingRecord& t) {
  Json row{{"case", t.case_name}, {"speedup", Optional(t.speedup)}};
  if (t.reference.primary) row["reference_ms"] = t.reference.primary->median_ms;
  if (t.candidate.primary) row["candidate_ms"] = t.candidate.primary->median_ms;
  return row;
}

}  // namespace

std::string Truncate(std::string_view text, size_t limit) {
  if (text.size() <= limit) return std::string(text);
  const std::string marker_probe = "\n[... " + std::to_string(text.size()) + " characters cut ...]\n";
  if (limit <= marker_probe.size()) return std::string(text.substr(0, HeadCut(text, limit)));
  const size_t keep = limit - marker_probe.size();
  const size_t head = HeadCut(text, keep / 2);
  const size_t tail = TailCut(text, text.size() - (keep - keep / 2));
  const std::string marker = "\n[... " + std::to_string(tail - head) + " characters cut ...]\n";
  return std::string(text.substr(0, head)) + marker + std::string(text.substr(tail));
}

std::string FormatFeedback(const AttemptRecord& a, const FeedbackLimits& limits) {
  Json result{{"status", a.status},
              {"compiled", a.compiled},
              {"correct", a.correct},
              {"speedup", Optional(a.speedup)},
              {"latency_ms", Optional(a.candidate_ms)},
              {"baseline_latency_ms", Optional(a.reference_ms)},
              {"feedback", Truncate(a.message, limits.message)}};
  std::string out = "<execution_result>\n" + DumpJson(result) + "\n</execution_result>\n";
  if (!a.diagnostics.empty())
    out += "\nCompiler output or traceback:\n" + Truncate(a.diagnostics, limits.diagnostics) + "\n";
  std::string details;
  size_t listed = 0;
  for (const VerificationRecord& record : ReadCases(a.cases).records) {
    if (listed >= limits.max_cases) break;
    Json row;
    if (const auto* run = std::get_if<CorrectnessRecord>(&record)) {
      if (run->status == CorrectnessRecord::Status::kOk) continue;
      row = RunRow(*run);
    } else if (const auto* timing = std::get_if<TimingRecord>(&record)) {
      row = TimingRow(*timing);
    } else {
      continue;
    }
    details += Truncate(DumpJson(row), 600) + "\n";
    ++listed;
  }
  if (!details.empty()) out += "\nPer case:\n" + details;
  return Truncate(out, limits.total);
}

std::string FormatNoCode(std::string_view why, const FeedbackLimits& limits) {
  Json result{{"status", "no_code"}, {"compiled", false}, {"correct", false},
              {"feedback", Truncate(why, limits.message)}};
  return Truncate("<execution_result>\n" + DumpJson(result) + "\n</execution_result>\n", limits.total);
}

}  // namespace kvault::agent
