#include "report/report.h"

#include <algorithm>
#include <functional>
#include <cmath>
#include <set>
#include <sstream>

#include "report/page.h"
#include "report/svg.h"
#include "score/compare.h"
#include "score/score_json.h"

namespace kvault::report {
namespace {

using score::Estimate;
using score::RunScore;

const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf"};
std::string RunColor(size_t i) { return kPalette[i % 6]; }

std::string Cell(const Estimate& e, bool percent) {
  if (!e.value) return "<td class=\"num\">-</td>";
  auto fmt = [&](double v) { return percent ? Num(100 * v, 1) + "%" : Num(v, 2) + "x"; };
  std::string s = "<td class=\"num\">" + fmt(*e.value);
  if (e.lo) s += " <span class=\"ci\">[" + fmt(*e.lo) + ", " + fmt(*e.hi) + "]</span>";
  return s + "</td>";
}

std::string Row(const std::string& name, const std::vector<RunScore>& scores,
                const std::function<Estimate(const RunScore&)>& get, bool percent) {
  std::string s = "<tr><th>" + Escape(name) + "</th>";
  for (const RunScore& r : scores) s += Cell(get(r), percent);
  return s + "</tr>";
}

std::string Summary(const std::vector<ReportRun>& runs, const std::vector<RunScore>& scores,
                    const ReportOptions& o) {
  std::ostringstream s;
  s << "<table class=\"summary\"><tr><th>metric</th>";
  for (const ReportRun& r : runs) s << "<th>" << Escape(r.name) << "</th>";
  s << "</tr><tr><th>tasks scored / solved / excluded / unattempted</th>";
  for (const RunScore& r : scores)
    s << "<td class=\"num\">" << r.scored << " / " << r.solved << " / " << r.excluded.size() << " / "
      << r.unattempted << "</td>";
  s << "</tr>";
  for (int k : o.score.ks) s << Row("pass@" + std::to_string(k), scores, [k](const RunScore& r) { return r.pass_at_k.at(k); }, true);
  for (int k : o.score.ks) s << Row("Comp@" + std::to_string(k), scores, [k](const RunScore& r) { return r.comp_at_k.at(k); }, true);
  for (int k : o.score.ks) s << Row("Corr@" + std::to_string(k), scores, [k](const RunScore& r) { return r.corr_at_k.at(k); }, true);
  s << Row("geomean speedup (correct attempts)", scores, [](const RunScore& r) { return r.geomean_speedup; }, false);
  s << Row("geomean best speedup (solved tasks)", scores, [](const RunScore& r) { return r.geomean_best; }, false);
  s << Row("geomean Σref/Σcand (solved tasks)", scores, [](const RunScore& r) { return r.geomean_ratio; }, false);
  for (double p : o.score.ps)
    s << Row("fast_" + score::KeyText(p), scores, [p](const RunScore& r) { return r.fast_p.at(p); }, true);
  s << "</table><p class=\"note\">Brackets: " << Num(100 * o.score.bootstrap.confidence, 0)
    << "% percentile bootstrap intervals over tasks (" << o.score.bootstrap.resamples
    << " resamples, seed " << o.score.bootstrap.seed << "). Definitions: docs/scoring.md.</p>";
  for (size_t i = 0; i < runs.size(); ++i)
    if (!scores[i].excluded.empty()) {
      s << "<p class=\"note\">" << Escape(runs[i].name) << ": excluded (task_error / infra_error only): ";
      for (const auto& t : scores[i].excluded) s << Escape(t) << " ";
      s << "</p>";
    }
  return s.str();
}

std::string PassCurve(const std::vector<ReportRun>& runs, const ReportOptions& o) {
  size_t most = 1;
  for (const ReportRun& r : runs)
    for (const auto& t : r.samples.tasks) most = std::max(most, t.samples.size());
  int kmax = static_cast<int>(std::min<size_t>(most, std::max(1, o.max_curve_k)));
  score::ScoreOptions so;
  so.ks.clear();
  for (int k = 1; k <= kmax; ++k) so.ks.push_back(k);
  so.bootstrap.resamples = 0;
  so.per_category = false;
  std::vector<Series> series;
  for (size_t i = 0; i < runs.size(); ++i) {
    RunScore s = score::ScoreSuite(runs[i].samples, so);
    Series line{runs[i].name, RunColor(i), {}, {}};
    for (int k = 1; k <= kmax; ++k) {
      line.x.push_back(k);
      line.y.push_back(s.pass_at_k.at(k).value.value_or(0));
    }
    series.push_back(line);
  }
  return LineChart(series, Axis{"k (samples)", 1, static_cast<double>(std::max(2, kmax)), true},
                   Axis{"pass@k", 0, 1, false}, 720, 340);
}

// Correct attempts' speedups in bins with edges on a log scale.
std::string SpeedupHistogram(const std::vector<ReportRun>& runs) {
  const std::vector<double> edges = {0.125, 0.25, 0.5, 0.8, 1, 1.25, 2, 4, 8};
  std::vector<std::string> labels = {"<" + Num(edges[0], 3)};
  for (size_t i = 0; i + 1 < edges.size(); ++i) labels.push_back(score::KeyText(edges[i]) + "-" + score::KeyText(edges[i + 1]));
  labels.push_back(">=" + score::KeyText(edges.back()));
  std::vector<Series> series;
  size_t total = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    Series s{runs[i].name, RunColor(i), {}, std::vector<double>(labels.size(), 0)};
    for (const AttemptRecord& r : runs[i].records) {
      if (!r.correct || !r.speedup || !(*r.speedup > 0)) continue;
      size_t bin = std::upper_bound(edges.begin(), edges.end(), *r.speedup) - edges.begin();
      s.y[bin] += 1;
      ++total;
    }
    series.push_back(s);
  }
  if (total == 0) return "<p class=\"note\">No correct attempt has a speedup.</p>";
  return BarChart(labels, series, "correct attempts", 720, 320) +
         "<p class=\"note\">Bins of reference ms / candidate ms, log scale; a bin holds [lower, upper).</p>";
}

std::string Failures(const std::vector<ReportRun>& runs) {
  const std::vector<std::string> order = {"passed", "compiled", "mismatch", "policy_violation",
                                          "compile_error", "load_error",
                                          "runtime_error", "crash", "timeout", "oom", "parse_error",
                                          "unsupported", "task_error", "infra_error"};
  std::set<std::string> present;
  for (const ReportRun& r : runs)
    for (const auto& [st, n] : r.samples.statuses) present.insert(st);
  std::vector<std::string> labels;
  for (const auto& st : order)
    if (present.count(st)) labels.push_back(st);
  for (const auto& st : present)
    if (std::find(order.begin(), order.end(), st) == order.end()) labels.push_back(st);
  if (labels.empty()) return "<p class=\"note\">No attempt.</p>";
  std::vector<Series> series;
  for (size_t i = 0; i < runs.size(); ++i) {
    Series s{runs[i].name, RunColor(i), {}, {}};
    for (const auto& st : labels) {
      auto it = runs[i].samples.statuses.find(st);
      s.y.push_back(it == runs[i].samples.statuses.end() ? 0 : static_cast<double>(it->second));
    }
    series.push_back(s);
  }
  return BarChart(labels, series, "attempts", 720, 320);
}

std::string Categories(const std::vector<ReportRun>& runs, const std::vector<RunScore>& scores,
                       const ReportOptions& o) {
  int kmax = *std::max_element(o.score.ks.begin(), o.score.ks.end());
  std::ostringstream s;
  s << "<table><tr><th>category</th><th>run</th><th>tasks</th><th>pass@1</th><th>Corr@" << kmax
    << "</th><th>fast_1</th><th>geomean best</th></tr>";
  for (size_t i = 0; i < runs.size(); ++i)
    for (const RunScore& c : scores[i].categories) {
      auto one = [](const std::map<int, Estimate>& m) { return m.count(1) ? m.at(1) : Estimate{}; };
      s << "<tr><td>" << Escape(c.label) << "</td><td>" << Escape(runs[i].name) << "</td><td class=\"num\">"
        << c.scored << "</td>" << Cell(one(c.pass_at_k), true) << Cell(c.corr_at_k.at(kmax), true)
        << Cell(c.fast_p.count(1.0) ? c.fast_p.at(1.0) : Estimate{}, true) << Cell(c.geomean_best, false) << "</tr>";
    }
  s << "</table><p class=\"note\">Category: the suite's categories.json entry, else the task name before "
       "its first '/', else \"all\".</p>";
  return s.str();
}

std::string Compare(const std::vector<ReportRun>& runs, const std::vector<RunScore>& scores,
                    const ReportOptions& o) {
  score::Comparison c = score::CompareRuns(scores[0], scores[1], o.score.bootstrap);
  std::ostringstream s;
  auto pct = [](const std::optional<double>& v) { return v ? Num(100 * *v, 1) + "%" : std::string("-"); };
  s << "<p>" << c.common << " tasks in both. Solved by both " << c.both_solved << ", only by "
    << Escape(runs[0].name) << " " << c.a_only_solved << ", only by " << Escape(runs[1].name) << " "
    << c.b_only_solved << ", by neither " << c.neither_solved << "; exact sign test p = " << Num(c.solved_p, 4)
    << ". pass@1 difference " << pct(c.pass1_diff.value);
  if (c.pass1_diff.lo) s << " [" << pct(c.pass1_diff.lo) << ", " << pct(c.pass1_diff.hi) << "]";
  s << ". Speedup ratio (geomean of best, " << c.speed_test.n << " tasks solved in both): "
    << (c.speed_ratio.value ? Num(*c.speed_ratio.value, 3) + "x" : std::string("-"))
    << ", Wilcoxon signed-rank p = " << Num(c.speed_test.p, 4) << ".</p>";
  s << "<table><tr><th>task</th><th>solved " << Escape(runs[0].name) << "</th><th>solved "
    << Escape(runs[1].name) << "</th><th>pass@1 " << Escape(runs[0].name) << "</th><th>pass@1 "
    << Escape(runs[1].name) << "</th></tr>";
  for (const auto& t : c.tasks)
    if (t.differs())
      s << "<tr><td>" << Escape(t.task) << "</td><td>" << (t.solved_a ? "yes" : "no") << "</td><td>"
        << (t.solved_b ? "yes" : "no") << "</td><td class=\"num\">" << Num(t.pass1_a, 2)
        << "</td><td class=\"num\">" << Num(t.pass1_b, 2) << "</td></tr>";
  s << "</table>";
  return s.str();
}

}  // namespace

std::string BuildReport(const std::vector<ReportRun>& runs, const ReportOptions& options) {
  std::vector<RunScore> scores;
  for (const ReportRun& r : runs) scores.push_back(score::ScoreSuite(r.samples, options.score));
  Page page(options.title);
  std::string names;
  for (const ReportRun& r : runs) names += (names.empty() ? "" : ", ") + r.name;
  page.Paragraph("Runs: " + names + (options.suite.empty() ? "" : ". Suite: " + options.suite) + ".");
  page.Section("summary", "Summary", Summary(runs, scores, options));
  page.Section("pass-at-k", "pass@k", PassCurve(runs, options));
  page.Section("speedups", "Speedup distribution", SpeedupHistogram(runs));
  page.Section("failures", "Outcomes by status", Failures(runs));
  page.Section("why", "Why candidates failed", FailureTable(runs));
  page.Section("environment", "Environment and model", EnvironmentTable(runs));
  page.Section("categories", "Per category", Categories(runs, scores, options));
  if (runs.size() == 2) page.Section("compare", "Comparison", Compare(runs, scores, options));
  std::string grids;
  for (const ReportRun& r : runs) grids += "<h3>" + Escape(r.name) + "</h3>" + OutcomeGrid(r);
  page.Section("grid", "Outcome per task and attempt", page.StatusLegend() + grids);
  return page.Html();
}

}  // namespace kvault::report
