// kvault report: one self-contained HTML file (docs/scoring.md).
#include <iostream>

#include "cli/commands.h"
#include "cli/score_input.h"
#include "report/report.h"
#include "util/files.h"

namespace kvault::cli {

score::ScoreOptions MakeScoreOptions(const ScoreFlags& flags);  // score.cc

int RunReport(const ScoreFlags& flags) {
  if (flags.ks.empty()) {
    std::cerr << "kvault report: give at least one k\n";
    return kExitMisuse;
  }
  ScoreInput in;
  if (int rc = LoadScoreInput("report", flags.db, flags.runs, flags.suite, in); rc != kExitOk) return rc;
  report::ReportOptions o;
  o.suite = flags.suite;
  o.score = MakeScoreOptions(flags);
  std::vector<report::ReportRun> runs;
  for (size_t i = 0; i < in.runs.size(); ++i) {
    report::ReportRun r{in.runs[i], std::move(in.records[i]), {}};
    r.samples = score::GroupByTask(r.records, in.tasks, in.categories);
    r.model = GenRunSetting(ResolveDbPath(flags.db), r.name, "model");
    runs.push_back(std::move(r));
  }
  std::string html = report::BuildReport(runs, o);
  if (Status s = WriteFileAtomic(flags.output, html); !s) {
    std::cerr << "kvault report: " << s.error() << "\n";
    return kExitMisuse;
  }
  if (flags.json) {
    Json j{{"output", flags.output}, {"bytes", html.size()}, {"runs", in.runs}, {"tasks", in.tasks.size()}};
    std::cout << j.dump() << std::endl;
  } else {
    std::cerr << "kvault report: wrote " << flags.output << " (" << html.size() << " bytes)\n";
  }
  return kExitOk;
}

}  // namespace kvault::cli
