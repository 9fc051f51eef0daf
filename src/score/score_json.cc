#include "score/score_json.h"

#include <sstream>

namespace kvault::score {
namespace {

Json Opt(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }
Json Interval(const Estimate& e) { return e.lo ? Json::array({*e.lo, *e.hi}) : Json(nullptr); }

template <class K>
void PutMetric(Json& values, Json& cis, const char* name, const std::map<K, Estimate>& m) {
  Json v = Json::object(), c = Json::object();
  for (const auto& [key, est] : m) {
    v[KeyText(static_cast<double>(key))] = Opt(est.value);
    c[KeyText(static_cast<double>(key))] = Interval(est);
  }
  values[name] = v;
  cis[name] = c;
}

Json TaskJson(const TaskScore& t) {
  Json pk = Json::object();
  for (const auto& [k, v] : t.pass_at_k) pk[KeyText(k)] = v;
  return Json{{"task", t.task}, {"category", t.category}, {"samples", t.n}, {"correct", t.c},
              {"ran", t.ran}, {"not_kernel_fault", t.not_kernel_fault}, {"excluded", t.excluded},
              {"pass_at_k", pk}, {"best_speedup", Opt(t.best_speedup)}, {"sum_ratio", Opt(t.sum_ratio)}};
}

}  // namespace

std::string KeyText(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

Json ScoreJson(const RunScore& s, bool per_task) {
  Json j{{"tasks", s.tasks}, {"scored", s.scored}, {"solved", s.solved},
         {"unattempted", s.unattempted}, {"short_tasks", s.short_tasks}, {"excluded", s.excluded}};
  Json ci = Json::object();
  PutMetric(j, ci, "pass_at_k", s.pass_at_k);
  PutMetric(j, ci, "comp_at_k", s.comp_at_k);
  PutMetric(j, ci, "corr_at_k", s.corr_at_k);
  PutMetric(j, ci, "fast_p", s.fast_p);
  j["speedup"] = Json{{"geomean", Opt(s.geomean_speedup.value)},
                      {"geomean_best", Opt(s.geomean_best.value)},
                      {"geomean_sum_ratio", Opt(s.geomean_ratio.value)}};
  ci["speedup"] = Json{{"geomean", Interval(s.geomean_speedup)},
                       {"geomean_best", Interval(s.geomean_best)},
                       {"geomean_sum_ratio", Interval(s.geomean_ratio)}};
  j["ci"] = ci;
  if (!s.categories.empty()) {
    Json cats = Json::object();
    for (const RunScore& c : s.categories) cats[c.label] = ScoreJson(c, false);
    j["categories"] = cats;
  }
  if (per_task) {
    Json tasks = Json::array();
    for (const TaskScore& t : s.per_task) tasks.push_back(TaskJson(t));
    j["per_task"] = tasks;
  }
  return j;
}

Json CompareJson(const std::string& run_a, const std::string& run_b, const Comparison& c) {
  Json differ = Json::array();
  for (const PairedTask& p : c.tasks) {
    if (!p.differs()) continue;
    differ.push_back(Json{{"task", p.task}, {"solved_a", p.solved_a}, {"solved_b", p.solved_b},
                          {"pass1_a", p.pass1_a}, {"pass1_b", p.pass1_b},
                          {"best_speedup_a", Opt(p.best_a)}, {"best_speedup_b", Opt(p.best_b)}});
  }
  return Json{{"run_a", run_a}, {"run_b", run_b}, {"common_tasks", c.common},
              {"only_a", c.only_a}, {"only_b", c.only_b},
              {"solved", {{"both", c.both_solved}, {"a_only", c.a_only_solved},
                          {"b_only", c.b_only_solved}, {"neither", c.neither_solved},
                          {"sign_test_p", c.solved_p}}},
              {"pass1_diff", Opt(c.pass1_diff.value)}, {"pass1_diff_ci", Interval(c.pass1_diff)},
              {"speedup", {{"wilcoxon_n", c.speed_test.n}, {"geomean_ratio", Opt(c.speed_ratio.value)},
                           {"geomean_ratio_ci", Interval(c.speed_ratio)},
                           {"wilcoxon_w_plus", c.speed_test.w_plus},
                           {"wilcoxon_w_minus", c.speed_test.w_minus},
                           {"wilcoxon_p", c.speed_test.p}, {"wilcoxon_exact", c.speed_test.exact}}},
              {"differing_tasks", differ}};
}

}  // namespace kvault::score
