#include "score/compare.h"

#include <cmath>
#include <map>

namespace kvault::score {

Comparison CompareRuns(const RunScore& a, const RunScore& b, const BootstrapOptions& bootstrap) {
  Comparison out;
  std::map<std::string, const TaskScore*> in_b;
  for (const TaskScore& t : b.per_task)
    if (!t.excluded) in_b[t.task] = &t;
  TaskTerms diff, ratio = TaskTerms::Log();
  std::vector<double> log_ratios;
  size_t matched = 0;
  for (const TaskScore& ta : a.per_task) {
    if (ta.excluded) continue;
    auto it = in_b.find(ta.task);
    if (it == in_b.end()) {
      ++out.only_a;
      continue;
    }
    ++matched;
    const TaskScore& tb = *it->second;
    PairedTask p;
    p.task = ta.task;
    p.solved_a = ta.solved();
    p.solved_b = tb.solved();
    p.pass1_a = ta.pass_at_k.at(1);
    p.pass1_b = tb.pass_at_k.at(1);
    p.best_a = ta.best_speedup;
    p.best_b = tb.best_speedup;
    if (p.solved_a && p.solved_b) ++out.both_solved;
    else if (p.solved_a) ++out.a_only_solved;
    else if (p.solved_b) ++out.b_only_solved;
    else ++out.neither_solved;
    diff.Add(p.pass1_a - p.pass1_b, 1);
    bool timed = p.best_a && p.best_b;
    double lr = timed ? std::log(*p.best_a / *p.best_b) : 0;
    ratio.Add(lr, timed ? 1 : 0);
    if (timed) log_ratios.push_back(lr);
    out.tasks.push_back(std::move(p));
  }
  out.common = matched;
  out.only_b = in_b.size() - matched;
  out.solved_p = SignTestP(out.a_only_solved, out.b_only_solved);
  out.pass1_diff = BootstrapEstimate(diff, bootstrap);
  out.speed_test = SignedRankTest(log_ratios);
  out.speed_ratio = BootstrapEstimate(ratio, bootstrap);
  return out;
}

}  // namespace kvault::score
