#include <unistd.h>

#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "cli/interrupt.h"
#include "cli/lanes.h"
#include "cli/report.h"
#include "engine/batch.h"
#include "engine/worker_sandbox.h"

namespace kvault::cli {

int RunEval(const EvalFlags& flags) {
  InterruptGuard interrupt;  // before any thread or child starts
  auto suite = DiscoverSuite(flags.suite);
  if (!suite) {
    std::cerr << "kvault eval: " << suite.error() << "\n";
    return kExitMisuse;
  }
  auto picked = FilterTasks(*suite, flags.tasks);
  if (!picked) {
    std::cerr << "kvault eval: " << picked.error() << "\n";
    return kExitMisuse;
  }
  std::vector<std::string> names;
  for (const TaskFile& t : *picked) names.push_back(t.name);
  std::vector<std::string> unmatched;
  auto matches = MatchCandidates(flags.candidates, names, &unmatched);
  if (!matches) {
    std::cerr << "kvault eval: " << matches.error() << "\n";
    return kExitMisuse;
  }
  if (flags.tasks.empty())  // with --tasks, the files of the other tasks are not news
    for (const auto& u : unmatched)
      std::cerr << "kvault eval: skipped " << u << "\n";
  if (matches->empty()) {
    std::cerr << "kvault eval: no candidate in " << flags.candidates << " matches a task of "
              << flags.suite << (flags.tasks.empty() ? "" : " that --tasks names") << "\n";
    return kExitMisuse;
  }
  std::vector<EvalJob> jobs;
  for (const auto& m : *matches)
    for (const TaskFile& t : *picked)
      if (t.name == m.task) jobs.push_back({.task = t, .candidate_path = m.path, .sample = ""});  // sample: the file name

  int options_exit = kExitOk;
  auto options = MakeOptions(flags.common, false, &options_exit);
  if (!options) return options_exit;
  auto lanes = ParseJobs(flags.jobs, options->backend, std::thread::hardware_concurrency());
  if (!lanes) {
    std::cerr << "kvault eval: " << lanes.error() << "\n";
    return kExitMisuse;
  }
  HideStoreFromWorkers(*options, ResolveDbPath(flags.db));
  auto store = Store::Open(ResolveDbPath(flags.db));
  if (!store) {
    std::cerr << "kvault eval: " << store.error() << "\n";
    return kExitInfra;
  }
  EvalSettings settings;
  settings.run = flags.run;
  settings.jobs = *lanes;
  settings.compile_jobs = flags.compile_jobs;
  settings.force = flags.force;
  settings.stop = interrupt.flag();
  std::cerr << "kvault eval: " << jobs.size() << " candidate(s) for " << picked->size()
            << " task(s) on backend " << ToString(options->backend) << ", " << settings.jobs
            << " lane(s), run '" << settings.run << "'\n";
  ProgressPrinter progress(std::cerr, isatty(STDERR_FILENO));
  auto records = RunBatch(jobs, *options, settings, **store,
                          [&](const EvalProgress& p) { progress.Update(p); });
  progress.Finish();
  if (interrupt.stopped()) {
    size_t recorded = 0;
    for (const AttemptRecord& r : records ? *records : std::vector<AttemptRecord>{}) recorded += !r.run.empty();
    std::cerr << "kvault eval: interrupted: " << recorded << " of " << jobs.size()
              << " recorded; run the same command again to continue\n";
    return kExitInterrupted;
  }
  if (!records) {
    std::cerr << "kvault eval: " << records.error() << "\n";
    return kExitInfra;
  }
  if (flags.common.json)
    std::cout << EvalJson(settings.run, *records).dump() << std::endl;
  else
    PrintEvalTable(std::cout, *records);
  ReportForeignLanguage(std::cerr, "kvault eval", std::string(ToString(options->backend)), *records);
  return ReportInfraFailures(std::cerr, "kvault eval", *records) ? kExitInfra : kExitOk;
}

}  // namespace kvault::cli
