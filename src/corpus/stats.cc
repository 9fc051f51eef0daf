#include "corpus/stats.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "report/page.h"
#include "report/svg.h"

namespace kvault::corpus {
namespace {

constexpr double kQuantiles[] = {0, 0.1, 0.25, 0.5, 0.75, 0.9, 1};
constexpr size_t kTopOperations = 20;  // rows of the operation table and chart

std::string Or(const std::string& v, const char* fallback) { return v.empty() ? fallback : v; }

void Count(CorpusStats& s, const KernelRecord& r, bool count_claims) {
  ++s.records;
  s.duplicates += !r.duplicate_of.empty() && r.duplicate_kind != "near_miss";
  s.near_misses += r.duplicate_kind == "near_miss";
  s.contaminated += !r.contamination.empty();
  ++s.by_kind[r.kind];
  ++s.by_source[Or(r.provenance.source, "unknown")];
  ++s.by_license[Or(r.provenance.license, "unknown")];
  ++s.by_pipeline[Or(r.provenance.pipeline, "unknown")];
  if (r.kind == kKindQa) {
    ++s.by_status["qa"];
    return;
  }
  ++s.by_language[Or(r.language, "unknown")];
  ++s.by_operation[r.task.name];
  for (const VerificationResult& v : r.results) ++s.by_hardware[Or(v.hardware, "unknown")];
  const VerificationResult* best = BestResult(r, count_claims);
  ++s.by_status[best ? best->status : "unverified"];
  const VerificationResult* claimed = BestResult(r, true);
  ++s.by_claimed_status[claimed ? claimed->status : "none"];
  if (best && IsPassed(*best)) {
    if (SpeedStat speed = RecordSpeed(r, "", count_claims); speed.median) s.speedups.push_back(*speed.median);
  }
}

Json QuantilesJson(const std::vector<double>& sorted) {
  Json out = Json::object();
  for (double q : kQuantiles) {
    auto v = Quantile(sorted, q);
    out[std::string("p").append(std::to_string(static_cast<int>(q * 100)))] = v ? Json(*v) : Json(nullptr);
  }
  return out;
}

// The largest counts first (ties by name), at most `limit`.
std::vector<std::pair<std::string, int64_t>> Top(const std::map<std::string, int64_t>& m, size_t limit) {
  std::vector<std::pair<std::string, int64_t>> v(m.begin(), m.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (v.size() > limit) v.resize(limit);
  return v;
}

std::string TableHtml(const std::map<std::string, int64_t>& m, size_t limit) {
  std::string html = "<table><tr><th>name</th><th>records</th></tr>";
  for (const auto& [name, n] : Top(m, limit))
    html += "<tr><td>" + report::Escape(name) + "</td><td>" + std::to_string(n) + "</td></tr>";
  return html + "</table>";
}

std::string CountsChart(const std::map<std::string, int64_t>& m, size_t limit) {
  std::vector<std::string> labels;
  report::Series s{"records", "#4477aa", {}, {}};
  for (const auto& [name, n] : Top(m, limit)) {
    labels.push_back(name);
    s.y.push_back(static_cast<double>(n));
  }
  return labels.empty() ? "" : report::BarChart(labels, {s}, "records", 720, 260);
}

// Correct kernels per speedup bin: below 0.5, 0.5-1, 1-1.5, 1.5-2, 2-4, 4 and more.
std::string SpeedupChart(const std::vector<double>& speedups) {
  const std::vector<double> edges = {0.5, 1, 1.5, 2, 4};
  const std::vector<std::string> labels = {"<0.5", "0.5-1", "1-1.5", "1.5-2", "2-4", ">=4"};
  report::Series s{"correct kernels", "#228833", {}, std::vector<double>(labels.size(), 0)};
  for (double v : speedups) {
    const size_t bin = std::upper_bound(edges.begin(), edges.end(), v) - edges.begin();
    s.y[bin] += 1;
  }
  return report::BarChart(labels, {s}, "kernels", 720, 260);
}

}  // namespace

std::optional<double> Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return std::nullopt;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

Result<CorpusStats> ComputeStats(CorpusStore& vault, const RecordFilter& filter) {
  CorpusStats stats;
  Status s = vault.ForEach(filter, [&](const KernelRecord& r) {
    Count(stats, r, filter.count_claims);
    return true;
  });
  if (!s) return Error{s.error()};
  std::sort(stats.speedups.begin(), stats.speedups.end());
  auto suites = vault.ContaminationSummary();
  if (!suites) return Error{suites.error()};
  stats.contamination_by_suite = std::move(*suites);
  return stats;
}

Json StatsToJson(const CorpusStats& s) {
  Json suites = Json::object();
  for (const auto& [suite, n] : s.contamination_by_suite) suites[suite] = n;
  return {{"records", s.records},
          {"duplicates", s.duplicates},
          {"near_misses", s.near_misses},
          {"contaminated", s.contaminated},
          {"by_kind", s.by_kind},
          {"by_source", s.by_source},
          {"by_language", s.by_language},
          {"by_status", s.by_status},
          {"by_claimed_status", s.by_claimed_status},
          {"by_operation", s.by_operation},
          {"by_license", s.by_license},
          {"by_pipeline", s.by_pipeline},
          {"by_hardware", s.by_hardware},
          {"speedup", {{"correct_kernels", s.speedups.size()}, {"quantiles", QuantilesJson(s.speedups)}}},
          {"contamination_by_suite", suites}};
}

std::string StatsText(const CorpusStats& s) {
  std::ostringstream out;
  out << "records " << s.records << " (duplicates " << s.duplicates << ", near misses " << s.near_misses
      << ", contaminated " << s.contaminated << ")\n";
  auto section = [&](const char* title, const std::map<std::string, int64_t>& m) {
    out << title << ":";
    for (const auto& [name, n] : Top(m, kTopOperations)) out << "  " << name << " " << n;
    out << "\n";
  };
  section("kind", s.by_kind);
  section("source", s.by_source);
  section("language", s.by_language);
  section("status", s.by_status);
  section("claimed status", s.by_claimed_status);
  section("operation", s.by_operation);
  section("hardware", s.by_hardware);
  out << "speedup of " << s.speedups.size() << " correct kernels:";
  for (double q : kQuantiles) {
    auto v = Quantile(s.speedups, q);
    out << "  p" << static_cast<int>(q * 100) << " " << (v ? report::Num(*v, 2) : "-");
  }
  out << "\n";
  return out.str();
}

std::string StatsHtml(const CorpusStats& s, const std::string& vault_path) {
  report::Page page("KernelVault corpus: " + vault_path);
  page.Paragraph(std::to_string(s.records) + " records, " + std::to_string(s.duplicates) + " marked duplicates, " +
                 std::to_string(s.contaminated) + " marked contaminated.");
  page.Section("status", "Status of the best result", CountsChart(s.by_status, kTopOperations) + TableHtml(s.by_status, 100));
  page.Section("speedup", "Speedups of correct kernels", SpeedupChart(s.speedups));
  page.Section("source", "Sources", TableHtml(s.by_source, 100));
  page.Section("language", "Languages", CountsChart(s.by_language, kTopOperations) + TableHtml(s.by_language, 100));
  page.Section("operation", "Operations (top " + std::to_string(kTopOperations) + ")",
               CountsChart(s.by_operation, kTopOperations) + TableHtml(s.by_operation, kTopOperations));
  page.Section("kind", "Kinds", TableHtml(s.by_kind, 100));
  page.Section("hardware", "Results by hardware", TableHtml(s.by_hardware, 100));
  page.Section("license", "Licences", TableHtml(s.by_license, 100));
  return page.Html();
}

}  // namespace kvault::corpus
