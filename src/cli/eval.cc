#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <thread>

#include "candidate/candidate.h"
#include "cli/commands.h"
#include "cli/interrupt.h"
#include "cli/lanes.h"
#include "cli/report.h"
#include "engine/batch.h"
#include "engine/worker_sandbox.h"
#include "util/json.h"

namespace kvault::cli {
namespace {

// `eval --list`: the jobs as eval would verify them, in its order, one line each
// (`task<TAB>candidate<TAB>format`), or with --json one document (docs/cli.md). A
// candidate is read to tell its format and language; one that cannot be loaded is
// listed all the same, with its extension's language and why (its parse_error).
void PrintEvalUnits(std::ostream& out, const EvalFlags& flags, const std::vector<EvalJob>& jobs) {
  namespace fs = std::filesystem;
  Json units = Json::array();
  for (const EvalJob& job : jobs) {
    const fs::path path(job.candidate_path);
    Json unit = {{"task", job.task.name}, {"task_path", job.task.path}, {"candidate", job.candidate_path},
                 {"sample", path.filename().string()},  // EvalJob::sample's default, as eval records it
                 {"format", nullptr}, {"language", nullptr}};
    if (auto c = LoadCandidate(job.candidate_path)) {
      unit["format"] = std::string(ToString(c->format));
      unit["language"] = c->language;
    } else {
      const std::string ext = path.extension().string();
      const std::string language = ext == ".py" ? "python" : ExtensionLanguage(ext);
      if (!language.empty()) unit["language"] = language;
      unit["load_error"] = c.error();
    }
    if (!flags.common.json)
      out << job.task.name << "\t" << job.candidate_path << "\t"
          << (unit["format"].is_null() ? "unknown" : unit["format"].get<std::string>()) << "\n";
    units.push_back(std::move(unit));
  }
  if (flags.common.json) {
    std::error_code ec;
    out << DumpJson({{"suite", fs::absolute(flags.suite, ec).string()},
                     {"candidates", fs::absolute(flags.candidates, ec).string()},
                     {"units", std::move(units)}})
        << std::endl;
  }
}

}  // namespace

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
  if (flags.list) {  // nothing verified, nothing opened but the files
    PrintEvalUnits(std::cout, flags, jobs);
    return kExitOk;
  }

  int options_exit = kExitOk;
  // An explicit GPU backend is checked by the lanes' own workers, which open it first
  // thing, instead of by one more worker started before them (PyTorch's import: seconds
  // before any lane starts); one that none of them can open is misuse all the same.
  auto options = MakeOptions(flags.common, false, &options_exit, BackendCheck::kByWorkers);
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
    if (ReportBackendUnusable(*options)) return kExitMisuse;
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
