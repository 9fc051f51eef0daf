#include <algorithm>
#include <map>
#include <sstream>

#include "report/report.h"
#include "report/svg.h"
#include "util/strings.h"

namespace kvault::report {

std::string StatusColor(const std::string& status) {
  static const std::map<std::string, std::string> colors = {
      {"passed", "#2e9d4a"},        {"mismatch", "#f0a030"},    {"compile_error", "#c0392b"},
      {"runtime_error", "#e05a47"}, {"crash", "#8e1b4f"},       {"timeout", "#7a5cc7"},
      {"oom", "#b05fb5"},           {"load_error", "#d2691e"},  {"parse_error", "#6d4c41"},
      {"unsupported", "#8d99ae"},   {"compiled", "#4a90d9"},    {"task_error", "#b0b0b0"},
      {"infra_error", "#707070"},   {"policy_violation", "#5b2a86"}};
  auto it = colors.find(status);
  return it == colors.end() ? "#333333" : it->second;
}

std::string OutcomeGrid(const ReportRun& run) {
  std::map<std::string, std::vector<const AttemptRecord*>> by_task;
  for (const AttemptRecord& r : run.records) by_task[r.task].push_back(&r);
  for (const score::TaskSamples& t : run.samples.tasks) by_task[t.task];  // unattempted rows too
  size_t cols = 1;
  for (auto& [task, v] : by_task) {
    std::sort(v.begin(), v.end(), [](auto* a, auto* b) {
      if (a->sample != b->sample) return NaturalLess(a->sample, b->sample);
      return a->id < b->id;
    });
    cols = std::max(cols, v.size());
  }
  std::ostringstream o;
  o << "<table class=\"grid\"><tr><th>task</th>";
  for (size_t i = 1; i <= cols; ++i) o << "<th>" << i << "</th>";
  o << "<th>best</th></tr>";
  for (const auto& [task, v] : by_task) {
    o << "<tr><td class=\"task\">" << Escape(task) << "</td>";
    std::optional<double> best;
    for (size_t i = 0; i < cols; ++i) {
      if (i >= v.size()) {
        o << "<td></td>";
        continue;
      }
      const AttemptRecord& r = *v[i];
      if (r.correct && r.speedup && (!best || *r.speedup > *best)) best = r.speedup;
      std::string tip = r.status + " - " + r.candidate_path;
      if (r.speedup) tip += " - " + Num(*r.speedup, 2) + "x";
      if (std::string why = FailureMessage(r, 300); !why.empty()) tip += " - " + why;
      o << "<td><span class=\"cell\" style=\"background:" << StatusColor(r.status) << "\" title=\""
        << Escape(tip) << "\">" << (r.correct && r.speedup ? Escape(Num(*r.speedup, *r.speedup < 1 ? 2 : 1)) : "") << "</span></td>";
    }
    o << "<td class=\"num\">" << (best ? Num(*best, 2) + "x" : std::string(v.empty() ? "no attempt" : "-"))
      << "</td></tr>";
  }
  o << "</table>";
  return o.str();
}

}  // namespace kvault::report
