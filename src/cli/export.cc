// kvault export: a run's attempts as JSON Lines, CSV or Parquet (docs/export.md).
#include <algorithm>
#include <iostream>
#include <optional>
#include <regex>
#include <sstream>

#include "cli/commands.h"
#include "cli/score_input.h"
#include "engine/engine_env.h"
#include "export/rows.h"
#include "export/writers.h"
#include "util/files.h"
#include "util/subprocess.h"

namespace kvault::cli {
namespace {

// Parquet through pyarrow in the worker's Python (python/kvault_export).
int WriteParquet(const std::vector<exporting::Column>& columns, const std::vector<Json>& rows,
                 const std::string& out) {
  EngineOptions o;
  ApplyEnvironment(o);
  auto dir = TempDir::Create("", "kvault-export");
  if (!dir) {
    std::cerr << "kvault export: " << dir.error() << "\n";
    return kExitInfra;
  }
  std::ostringstream jsonl;
  exporting::WriteJsonl(jsonl, columns, rows);
  const std::string rows_path = dir->Join("rows.jsonl"), columns_path = dir->Join("columns.json");
  if (Status s = WriteFileAtomic(rows_path, jsonl.str()); !s) {
    std::cerr << "kvault export: " << s.error() << "\n";
    return kExitInfra;
  }
  if (Status s = WriteFileAtomic(columns_path, DumpJson(exporting::ColumnsJson(columns))); !s) {
    std::cerr << "kvault export: " << s.error() << "\n";
    return kExitInfra;
  }
  CommandSpec cmd;
  cmd.argv = {o.python, "-m", "kvault_export", "--columns", columns_path, "--rows", rows_path, "--out", out};
  cmd.env_set = {{"PYTHONPATH", o.source_root + "/python"}};
  auto r = RunCommand(cmd, std::chrono::minutes(30));
  if (!r) {
    std::cerr << "kvault export: " << r.error() << "\n";
    return kExitInfra;
  }
  if (r->exit_code == 0) return kExitOk;
  std::cerr << "kvault export: Parquet needs pyarrow: " << r->output;
  return r->exit_code == 3 ? kExitMisuse : kExitInfra;
}

// --since as a prefix of created_at's form: "2026-12-02", "2026-12-02T04:00:00Z",
// "2026-12-02T04:00:00.5". Without its "Z": created_at ("...T04:00:00.000Z") is
// ISO-8601 UTC, so text order is time order and a prefix sorts first.
std::optional<std::string> SinceKey(const std::string& since) {
  static const std::regex form(R"(\d{4}-\d{2}-\d{2}(T\d{2}(:\d{2}(:\d{2}(\.\d+)?)?)?)?Z?)");
  if (!std::regex_match(since, form)) return std::nullopt;
  return since.back() == 'Z' ? since.substr(0, since.size() - 1) : since;
}

bool Selected(const AttemptRecord& r, const ExportFlags& flags, const std::string& since) {
  if (!since.empty() && r.created_at < since) return false;
  return flags.candidates.empty() ||
         std::find(flags.candidates.begin(), flags.candidates.end(), r.candidate_hash) != flags.candidates.end();
}

}  // namespace

int RunExport(const ExportFlags& flags) {
  const std::string db = ResolveDbPath(flags.db);
  if (!FileExists(db)) {
    std::cerr << "kvault export: no store at " << db << "\n";
    return kExitMisuse;
  }
  const auto since = flags.since.empty() ? std::optional<std::string>("") : SinceKey(flags.since);
  if (!since) {
    std::cerr << "kvault export: --since '" << flags.since << "' is not a UTC time like 2026-12-02T04:00:00Z\n";
    return kExitMisuse;
  }
  auto store = Store::Open(db);
  if (!store) {
    std::cerr << "kvault export: " << store.error() << "\n";
    return kExitInfra;
  }
  auto known = (*store)->ListRuns();
  if (!known) {
    std::cerr << "kvault export: " << known.error() << "\n";
    return kExitInfra;
  }
  const std::vector<std::string> runs = flags.runs.empty() ? *known : flags.runs;
  std::vector<Json> rows;
  for (const std::string& run : runs) {
    if (std::find(known->begin(), known->end(), run) == known->end()) {
      std::cerr << "kvault export: no run '" << run << "' in " << db << "\n";
      return kExitMisuse;
    }
    auto records = (*store)->ListRun(run);
    if (!records) {
      std::cerr << "kvault export: " << records.error() << "\n";
      return kExitInfra;
    }
    const exporting::RunContext context{GenRunSetting(db, run, "model")};
    for (const AttemptRecord& r : *records)
      if (Selected(r, flags, *since)) rows.push_back(exporting::AttemptRow(r, context));
  }
  const auto& columns = exporting::AttemptColumns();
  int rc = kExitOk;
  if (flags.format == "parquet") {
    if (flags.output == "-") {
      std::cerr << "kvault export: Parquet needs a file (-o FILE), not stdout\n";
      return kExitMisuse;
    }
    rc = WriteParquet(columns, rows, flags.output);
  } else {
    std::ostringstream text;
    if (flags.format == "csv") exporting::WriteCsv(text, columns, rows);
    else exporting::WriteJsonl(text, columns, rows);
    if (flags.output == "-") {
      std::cout << text.str() << std::flush;
    } else if (Status s = WriteFileAtomic(flags.output, text.str()); !s) {
      std::cerr << "kvault export: " << s.error() << "\n";
      return kExitMisuse;
    }
  }
  if (rc == kExitOk && flags.output != "-")
    std::cerr << "kvault export: " << rows.size() << " attempt(s) of " << runs.size() << " run(s) to "
              << flags.output << " (" << flags.format << ")\n";
  return rc;
}

}  // namespace kvault::cli
