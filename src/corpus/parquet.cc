#include "corpus/parquet.h"

#include <chrono>

#include "engine/engine_env.h"
#include "util/files.h"
#include "util/strings.h"
#include "util/subprocess.h"

namespace kvault::corpus {
namespace {

constexpr auto kConvertTimeout = std::chrono::minutes(30);

Status Convert(const PythonEnv& env, const char* mode, const std::string& in, const std::string& out) {
  CommandSpec cmd;
  cmd.argv = {env.python, "-m", "kvault_export.rows", mode, in, out};
  cmd.env_set = {{"PYTHONPATH", env.python_path}};
  auto r = RunCommand(cmd, kConvertTimeout);
  if (!r) return Error{r.error()};
  if (r->exit_code == 0) return Status::Ok();
  // Exit 2 and 3 are the module's own verdicts (a bad input file, no pyarrow), each a
  // line that says why; anything else is a failure of its own, said with how it ended.
  if ((r->exit_code == 2 || r->exit_code == 3) && !r->term_signal && !Trim(r->output).empty())
    return Error{std::string(Trim(r->output))};
  return Error{std::string(Trim(r->output)) + " (" +
               DescribeTermination(r->exit_code, r->term_signal) + ")"};
}

}  // namespace

PythonEnv PythonFromEnvironment() {
  EngineOptions o;
  ApplyEnvironment(o);
  return {o.python, o.source_root + "/python"};
}

Result<std::vector<std::string>> ReadParquetRows(const PythonEnv& env, const std::string& path) {
  auto dir = TempDir::Create("", "kvault-corpus");
  if (!dir) return Error{dir.error()};
  const std::string jsonl = dir->Join("rows.jsonl");
  if (Status s = Convert(env, "to-jsonl", path, jsonl); !s) return Error{path + ": " + s.error()};
  auto text = ReadFile(jsonl);
  if (!text) return Error{text.error()};
  std::vector<std::string> rows = Split(*text, '\n');
  if (!rows.empty() && rows.back().empty()) rows.pop_back();
  return rows;
}

Status JsonlToParquet(const PythonEnv& env, const std::string& jsonl, const std::string& parquet) {
  if (Status s = Convert(env, "to-parquet", jsonl, parquet); !s) return Error{parquet + ": " + s.error()};
  return Status::Ok();
}

}  // namespace kvault::corpus
