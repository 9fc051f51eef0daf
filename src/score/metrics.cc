#include "score/metrics.h"

#include <algorithm>
#include <cmath>

#include "score/pass_at_k.h"

namespace kvault::score {
namespace {

bool Positive(const std::optional<double>& v) { return v && std::isfinite(*v) && *v > 0; }

// Scores the tasks of `scores` (already per-task) into `out`'s suite-level fields.
void Aggregate(const std::vector<TaskScore>& scores, const ScoreOptions& options,
               const std::vector<std::vector<double>>& attempt_logs, RunScore& out) {
  std::map<int, TaskTerms> pass, comp, corr;
  std::map<double, TaskTerms> fast;
  TaskTerms attempts = TaskTerms::Log(), best = TaskTerms::Log(), ratio = TaskTerms::Log();
  size_t max_k = 1;
  for (int k : options.ks) max_k = std::max(max_k, static_cast<size_t>(k));
  for (size_t i = 0; i < scores.size(); ++i) {
    const TaskScore& t = scores[i];
    ++out.tasks;
    if (t.excluded) {
      out.excluded.push_back(t.task);
      continue;
    }
    ++out.scored;
    out.unattempted += (t.n == 0 && t.not_kernel_fault == 0);
    out.solved += t.solved();
    out.short_tasks += (t.n > 0 && t.n < max_k);  // an unattempted task is a failure, not short
    for (int k : options.ks) {
      pass[k].Add(t.pass_at_k.at(k), 1);
      comp[k].Add(t.comp_at_k.at(k), 1);
      corr[k].Add(t.corr_at_k.at(k), 1);
    }
    for (double p : options.ps) {
      bool fast_enough = t.solved() && (p == 0 || (t.best_speedup && *t.best_speedup > p));
      fast[p].Add(fast_enough ? 1 : 0, 1);
    }
    double log_sum = 0;
    for (double l : attempt_logs[i]) log_sum += l;
    attempts.Add(log_sum, static_cast<double>(attempt_logs[i].size()));
    best.Add(t.best_speedup ? std::log(*t.best_speedup) : 0, t.best_speedup ? 1 : 0);
    ratio.Add(t.sum_ratio ? std::log(*t.sum_ratio) : 0, t.sum_ratio ? 1 : 0);
  }
  const BootstrapOptions& b = options.bootstrap;
  for (int k : options.ks) {
    out.pass_at_k[k] = BootstrapEstimate(pass[k], b);
    out.comp_at_k[k] = BootstrapEstimate(comp[k], b);
    out.corr_at_k[k] = BootstrapEstimate(corr[k], b);
  }
  for (double p : options.ps) out.fast_p[p] = BootstrapEstimate(fast[p], b);
  out.geomean_speedup = BootstrapEstimate(attempts, b);
  out.geomean_best = BootstrapEstimate(best, b);
  out.geomean_ratio = BootstrapEstimate(ratio, b);
}

std::vector<double> AttemptLogs(const TaskSamples& t) {
  std::vector<double> logs;
  for (const Sample& s : t.samples)
    if (s.correct && Positive(s.speedup)) logs.push_back(std::log(*s.speedup));
  return logs;
}

}  // namespace

TaskScore ScoreTask(const TaskSamples& t, const ScoreOptions& options) {
  TaskScore s;
  s.task = t.task;
  s.category = t.category;
  s.n = t.samples.size();
  s.not_kernel_fault = t.not_kernel_fault;
  s.excluded = t.excluded();
  double sum_ref = 0, sum_cand = 0;
  for (const Sample& x : t.samples) {
    s.c += x.correct;
    s.ran += x.ran;
    if (!x.correct) continue;
    if (Positive(x.speedup) && (!s.best_speedup || *x.speedup > *s.best_speedup)) s.best_speedup = x.speedup;
    if (Positive(x.reference_ms) && Positive(x.candidate_ms)) {
      sum_ref += *x.reference_ms;
      sum_cand += *x.candidate_ms;
    }
  }
  if (sum_cand > 0) s.sum_ratio = sum_ref / sum_cand;
  for (int k : options.ks) {
    s.pass_at_k[k] = PassAtK(s.n, s.c, static_cast<size_t>(k));
    bool ran = false, correct = false;
    for (size_t i = 0; i < s.n && i < static_cast<size_t>(k); ++i) {
      ran = ran || t.samples[i].ran;
      correct = correct || t.samples[i].correct;
    }
    s.comp_at_k[k] = ran ? 1 : 0;
    s.corr_at_k[k] = correct ? 1 : 0;
  }
  return s;
}

RunScore ScoreSuite(const SuiteSamples& samples, const ScoreOptions& options) {
  RunScore out;
  std::vector<std::vector<double>> logs;
  for (const TaskSamples& t : samples.tasks) {
    out.per_task.push_back(ScoreTask(t, options));
    logs.push_back(AttemptLogs(t));
  }
  Aggregate(out.per_task, options, logs, out);
  if (!options.per_category) return out;
  std::map<std::string, std::vector<size_t>> members;
  for (size_t i = 0; i < out.per_task.size(); ++i) members[out.per_task[i].category].push_back(i);
  for (const auto& [name, idx] : members) {
    RunScore cat;
    cat.label = name;
    std::vector<TaskScore> scores;
    std::vector<std::vector<double>> cat_logs;
    for (size_t i : idx) {
      scores.push_back(out.per_task[i]);
      cat_logs.push_back(logs[i]);
    }
    Aggregate(scores, options, cat_logs, cat);
    out.categories.push_back(std::move(cat));
  }
  return out;
}

}  // namespace kvault::score
