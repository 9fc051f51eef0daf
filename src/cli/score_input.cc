#include "cli/score_input.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <set>

#include "cli/commands.h"
#include "store/generation_log.h"
#include "task/task_file.h"
#include "util/files.h"

namespace kvault::cli {

namespace {

// One NameServeTasks over every run's records together, so that a label is read the
// same way in each run (compare pairs tasks by name).
void NameServeTasks(std::vector<std::vector<AttemptRecord>>& per_run, const std::vector<score::SuiteTask>& suite) {
  std::vector<AttemptRecord> all;
  for (auto& recs : per_run) all.insert(all.end(), std::make_move_iterator(recs.begin()), std::make_move_iterator(recs.end()));
  score::NameServeTasks(all, suite);
  size_t at = 0;
  for (auto& recs : per_run)
    for (AttemptRecord& r : recs) r = std::move(all[at++]);
}

// The suite gen recorded for every one of `runs` (one folder, still there), else "".
std::string RecordedSuite(const std::string& command, const std::string& db, const std::vector<std::string>& runs) {
  std::set<std::string> suites;
  for (const std::string& run : runs) suites.insert(GenRunSetting(db, run, "suite"));
  if (suites.size() != 1 || suites.begin()->empty()) return "";
  const std::string folder = *suites.begin();
  if (!std::filesystem::is_directory(folder)) {
    std::cerr << "kvault " << command << ": the suite recorded for the run, " << folder
              << ", is not a folder here (give --suite)\n";
    return "";
  }
  std::cerr << "kvault " << command << ": suite " << folder << " (recorded by the run)\n";
  return folder;
}

}  // namespace

int LoadScoreInput(const std::string& command, const std::optional<std::string>& db,
                   const std::vector<std::string>& runs, const std::string& suite, ScoreInput& out) {
  const std::string err = "kvault " + command + ": ";
  std::string path = ResolveDbPath(db);
  if (!FileExists(path)) {  // Store::Open would create an empty store
    std::cerr << err << "no store at " << path << " (give --db or set $KVAULT_DB)\n";
    return kExitMisuse;
  }
  auto store = Store::Open(path);
  if (!store) {
    std::cerr << err << store.error() << "\n";
    return kExitInfra;
  }
  auto known = (*store)->ListRuns();
  if (!known) {
    std::cerr << err << known.error() << "\n";
    return kExitInfra;
  }
  out.runs = runs;
  for (const std::string& run : runs) {
    if (!std::binary_search(known->begin(), known->end(), run)) {
      std::cerr << err << "no run '" << run << "' in " << path << " (runs:";
      for (const auto& k : *known) std::cerr << " " << k;
      std::cerr << ")\n";
      return kExitMisuse;
    }
    auto records = (*store)->ListRun(run);
    if (!records) {
      std::cerr << err << records.error() << "\n";
      return kExitInfra;
    }
    out.records.push_back(std::move(*records));
  }
  std::string folder = suite;
  if (folder.empty()) folder = RecordedSuite(command, path, runs);
  out.suite = folder;
  if (folder.empty()) {
    NameServeTasks(out.records, {});
    std::set<std::string> names;
    for (const auto& recs : out.records)
      for (const auto& t : score::TasksOf(recs)) names.insert(t);
    out.tasks.assign(names.begin(), names.end());
    if (command == "score")
      std::cerr << err << "no --suite and none recorded for the run: scoring the " << out.tasks.size()
                << " task(s) it attempted (give --suite to count unattempted tasks as failures)\n";
    return kExitOk;
  }
  auto files = DiscoverSuite(folder);
  if (!files) {
    std::cerr << err << files.error() << "\n";
    return kExitMisuse;
  }
  std::vector<score::SuiteTask> tasks;
  for (const TaskFile& t : *files) {
    out.tasks.push_back(t.name);
    tasks.push_back({t.name, t.hash});
  }
  NameServeTasks(out.records, tasks);
  std::string cats_path = folder + "/categories.json";
  if (FileExists(cats_path)) {
    auto text = ReadFile(cats_path);
    auto cats = text ? score::ParseCategories(*text) : Result<score::CategoryMap>(Error{text.error()});
    if (!cats) {
      std::cerr << err << cats_path << ": " << cats.error() << "\n";
      return kExitMisuse;
    }
    out.categories = std::move(*cats);
  }
  return kExitOk;
}

std::string GenRunSetting(const std::string& db, const std::string& run, const std::string& key) {
  auto log = GenerationLog::Open(db);
  if (!log) return "";
  auto tasks = (*log)->ListTasks(run);
  if (!tasks) return "";
  for (const GenTaskRecord& t : *tasks)
    if (t.settings.is_object() && t.settings.value(key, Json()).is_string())
      return t.settings[key].get<std::string>();
  return "";
}

}  // namespace kvault::cli
