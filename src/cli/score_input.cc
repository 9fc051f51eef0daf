#include "cli/score_input.h"

#include <algorithm>
#include <iostream>
#include <set>

#include "cli/commands.h"
#include "store/generation_log.h"
#include "task/task_file.h"
#include "util/files.h"

namespace kvault::cli {

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
  if (suite.empty()) {
    std::set<std::string> names;
    for (const auto& recs : out.records)
      for (const auto& t : score::TasksOf(recs)) names.insert(t);
    out.tasks.assign(names.begin(), names.end());
    return kExitOk;
  }
  auto files = DiscoverSuite(suite);
  if (!files) {
    std::cerr << err << files.error() << "\n";
    return kExitMisuse;
  }
  for (const TaskFile& t : *files) out.tasks.push_back(t.name);
  std::string cats_path = suite + "/categories.json";
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

std::string GenRunModel(const std::string& db, const std::string& run) {
  auto log = GenerationLog::Open(db);
  if (!log) return "";
  auto tasks = (*log)->ListTasks(run);
  if (!tasks) return "";
  for (const GenTaskRecord& t : *tasks)
    if (t.settings.is_object() && t.settings.value("model", Json()).is_string())
      return t.settings["model"].get<std::string>();
  return "";
}

}  // namespace kvault::cli
