// kvault score: suite-level metrics of one run (docs/scoring.md).
#include <algorithm>
#include <iomanip>
#include <sstream>
#include <iostream>

#include "cli/commands.h"
#include "cli/score_input.h"
#include "score/metrics.h"
#include "score/score_json.h"

namespace kvault::cli {
namespace {

std::string Show(const score::Estimate& e, bool percent) {
  if (!e.value) return "-";
  auto f = [&](double v) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(percent ? 1 : 2) << (percent ? 100 * v : v) << (percent ? "%" : "x");
    return s.str();
  };
  return f(*e.value) + (e.lo ? "  [" + f(*e.lo) + ", " + f(*e.hi) + "]" : "");
}

void PrintScore(std::ostream& out, const std::string& run, const score::RunScore& s,
                const score::ScoreOptions& o) {
  out << "run " << run << ": " << s.tasks << " tasks, scored " << s.scored << ", solved " << s.solved
      << ", unattempted " << s.unattempted << ", excluded " << s.excluded.size() << "\n";
  auto line = [&](const std::string& name, const score::Estimate& e, bool pct) {
    out << "  " << std::left << std::setw(34) << name << Show(e, pct) << "\n";
  };
  for (int k : o.ks) line("pass@" + std::to_string(k), s.pass_at_k.at(k), true);
  for (int k : o.ks) line("Comp@" + std::to_string(k), s.comp_at_k.at(k), true);
  for (int k : o.ks) line("Corr@" + std::to_string(k), s.corr_at_k.at(k), true);
  line("geomean speedup (correct)", s.geomean_speedup, false);
  line("geomean best speedup (solved)", s.geomean_best, false);
  line("geomean sum-ref/sum-cand (solved)", s.geomean_ratio, false);
  for (double p : o.ps) line("fast_" + score::KeyText(p), s.fast_p.at(p), true);
  for (const score::RunScore& c : s.categories)
    out << "  category " << c.label << ": " << c.scored << " tasks, pass@" << o.ks.front() << " "
        << Show(c.pass_at_k.at(o.ks.front()), true) << "\n";
  if (!s.excluded.empty()) {
    out << "  excluded (task_error / infra_error only):";
    for (const auto& t : s.excluded) out << " " << t;
    out << "\n";
  }
  out << "  intervals: " << 100 * o.bootstrap.confidence << "% percentile bootstrap over tasks, "
      << o.bootstrap.resamples << " resamples, seed " << o.bootstrap.seed << "\n";
}

}  // namespace

score::ScoreOptions MakeScoreOptions(const ScoreFlags& flags) {
  score::ScoreOptions o;
  o.ks = flags.ks;
  std::sort(o.ks.begin(), o.ks.end());
  o.ks.erase(std::unique(o.ks.begin(), o.ks.end()), o.ks.end());
  o.bootstrap.resamples = flags.resamples;
  o.bootstrap.seed = flags.seed;
  return o;
}

int RunScore(const ScoreFlags& given) {
  ScoreFlags flags = given;
  if (flags.runs.empty()) flags.runs = {kDefaultRun};
  if (flags.runs.size() != 1 || flags.ks.empty()) {
    std::cerr << "kvault score: give one --run and at least one k\n";
    return kExitMisuse;
  }
  ScoreInput in;
  if (int rc = LoadScoreInput("score", flags.db, flags.runs, flags.suite, in); rc != kExitOk) return rc;
  score::ScoreOptions o = MakeScoreOptions(flags);
  score::SuiteSamples samples = score::GroupByTask(in.records[0], in.tasks, in.categories);
  for (const auto& t : samples.unknown_tasks)
    std::cerr << "kvault score: task '" << t << "' of run " << flags.runs[0] << " is not in the suite (ignored)\n";
  score::RunScore s = score::ScoreSuite(samples, o);
  if (s.short_tasks > 0)  // pass@k's estimator needs n >= k samples; with fewer it says 1 on any pass
    std::cerr << "kvault score: warning: " << s.short_tasks << " of " << s.scored
              << " scored task(s) have fewer samples than k = " << o.ks.back() << ": their pass@"
              << o.ks.back() << " is 1 when any sample passed, not an estimate (draw at least " << o.ks.back()
              << " samples a task)\n";
  if (flags.json) {
    Json j = score::ScoreJson(s, true);
    j["run"] = flags.runs[0];
    j["suite"] = in.suite.empty() ? Json(nullptr) : Json(in.suite);
    j["unknown_tasks"] = samples.unknown_tasks;
    j["statuses"] = samples.statuses;
    j["bootstrap"] = {{"resamples", o.bootstrap.resamples}, {"seed", o.bootstrap.seed},
                      {"confidence", o.bootstrap.confidence}};
    std::cout << j.dump() << std::endl;
  } else {
    PrintScore(std::cout, flags.runs[0], s, o);
  }
  return kExitOk;
}

}  // namespace kvault::cli
