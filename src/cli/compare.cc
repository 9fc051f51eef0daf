// kvault compare: paired comparison of two runs (docs/scoring.md).
#include <algorithm>
#include <iomanip>
#include <sstream>
#include <iostream>

#include "cli/commands.h"
#include "cli/score_input.h"
#include "score/compare.h"
#include "score/score_json.h"

namespace kvault::cli {

score::ScoreOptions MakeScoreOptions(const ScoreFlags& flags);  // score.cc

int RunCompare(const ScoreFlags& flags) {
  if (flags.runs.size() != 2 || flags.runs[0] == flags.runs[1]) {
    std::cerr << "kvault compare: give two different runs: --run A --run B\n";
    return kExitMisuse;
  }
  ScoreInput in;
  if (int rc = LoadScoreInput("compare", flags.db, flags.runs, flags.suite, in); rc != kExitOk) return rc;
  score::ScoreOptions o = MakeScoreOptions(flags);
  if (std::find(o.ks.begin(), o.ks.end(), 1) == o.ks.end()) o.ks.insert(o.ks.begin(), 1);
  o.per_category = false;
  // Without a suite each run is scored over the tasks it attempted: a task only the
  // other run tried counts nowhere (score_input.h), not as this run's failure.
  auto tasks_of = [&](const std::vector<AttemptRecord>& records) {
    if (!in.suite.empty()) return in.tasks;
    std::vector<std::string> names = score::TasksOf(records);
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
  };
  auto a = score::ScoreSuite(score::GroupByTask(in.records[0], tasks_of(in.records[0]), in.categories), o);
  auto b = score::ScoreSuite(score::GroupByTask(in.records[1], tasks_of(in.records[1]), in.categories), o);
  score::Comparison c = score::CompareRuns(a, b, o.bootstrap);
  const std::string& A = flags.runs[0];
  const std::string& B = flags.runs[1];
  if (flags.json) {
    std::cout << score::CompareJson(A, B, c).dump() << std::endl;
    return kExitOk;
  }
  auto pct = [](const std::optional<double>& v) {
    std::ostringstream s;
    if (v) s << std::fixed << std::setprecision(1) << 100 * *v << "%"; else s << "-";
    return s.str();
  };
  std::cout << A << " vs " << B << ": " << c.common << " common tasks (only in " << A << ": " << c.only_a
            << ", only in " << B << ": " << c.only_b << ")\n"
            << "  solved: both " << c.both_solved << ", only " << A << " " << c.a_only_solved << ", only " << B
            << " " << c.b_only_solved << ", neither " << c.neither_solved << "; exact sign test p = "
            << c.solved_p << "\n"
            << "  pass@1 difference (" << A << " - " << B << "): " << pct(c.pass1_diff.value);
  if (c.pass1_diff.lo) std::cout << " [" << pct(c.pass1_diff.lo) << ", " << pct(c.pass1_diff.hi) << "]";
  std::cout << "\n  best speedup ratio " << A << "/" << B << " over " << c.speed_test.n
            << " tasks solved in both: ";
  if (c.speed_ratio.value) std::cout << *c.speed_ratio.value << "x"; else std::cout << "-";
  std::cout << ", Wilcoxon signed-rank p = " << c.speed_test.p << (c.speed_test.exact ? " (exact)" : " (normal)")
            << "\n  tasks that differ:\n";
  size_t shown = 0;
  for (const auto& t : c.tasks) {
    if (!t.differs()) continue;
    ++shown;
    std::cout << "    " << std::left << std::setw(28) << t.task << A << ": pass@1 " << pct(t.pass1_a)
              << (t.solved_a ? " solved" : "") << "   " << B << ": pass@1 " << pct(t.pass1_b)
              << (t.solved_b ? " solved" : "") << "\n";
  }
  if (shown == 0) std::cout << "    (none)\n";
  return kExitOk;
}

}  // namespace kvault::cli
