#include "store/generation_log.h"

#include <utility>

#include "store/schema.h"
#include "store/sqlite.h"
#include "store/store.h"
#include "store/timestamp.h"

namespace kvault {
namespace {

constexpr const char* kPutSql = R"sql(
INSERT INTO generations (
  run, task, iteration, offspring, role, parent, model_requested, model_returned,
  prompt_version, prompt, response, usage, latency_s, http_attempts, error, outcome,
  candidate_path, attempt_id, created_at
) VALUES (
  :run, :task, :iteration, :offspring, :role, :parent, :model_requested, :model_returned,
  :prompt_version, :prompt, :response, :usage, :latency_s, :http_attempts, :error, :outcome,
  :candidate_path, :attempt_id, :created_at
)
ON CONFLICT (run, task, iteration, offspring, role) DO UPDATE SET
  parent = excluded.parent, model_requested = excluded.model_requested,
  model_returned = excluded.model_returned, prompt_version = excluded.prompt_version,
  prompt = excluded.prompt, response = excluded.response, usage = excluded.usage,
  latency_s = excluded.latency_s, http_attempts = excluded.http_attempts,
  error = excluded.error, outcome = excluded.outcome,
  candidate_path = excluded.candidate_path, attempt_id = excluded.attempt_id,
  created_at = excluded.created_at
RETURNING id
)sql";

constexpr const char* kFindSql = R"sql(
SELECT * FROM generations WHERE run = :run AND task = :task AND iteration = :iteration
  AND offspring = :offspring AND role = :role
)sql";
constexpr const char* kListTaskSql =
    "SELECT * FROM generations WHERE run = :run AND task = :task "
    "ORDER BY iteration, offspring, role";
constexpr const char* kListRunSql =
    "SELECT * FROM generations WHERE run = :run ORDER BY task, iteration, offspring, role";

constexpr const char* kPutTaskSql = R"sql(
INSERT INTO gen_tasks (run, task, finished, solved, candidates, best_attempt_id, best_path,
                       best_speedup, settings, updated_at)
VALUES (:run, :task, :finished, :solved, :candidates, :best_attempt_id, :best_path,
        :best_speedup, :settings, :updated_at)
ON CONFLICT (run, task) DO UPDATE SET
  finished = excluded.finished, solved = excluded.solved, candidates = excluded.candidates,
  best_attempt_id = excluded.best_attempt_id, best_path = excluded.best_path,
  best_speedup = excluded.best_speedup, settings = excluded.settings,
  updated_at = excluded.updated_at
)sql";
constexpr const char* kFindTaskSql = "SELECT * FROM gen_tasks WHERE run = :run AND task = :task";
constexpr const char* kListTasksSql = "SELECT * FROM gen_tasks WHERE run = :run ORDER BY task";

Json ParseOr(const std::string& text, Json fallback) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? fallback : j;
}

GenerationRecord ReadGeneration(const sqlite::Statement& s) {
  GenerationRecord r;
  r.id = s.Int64("id");
  r.run = s.Text("run");
  r.task = s.Text("task");
  r.iteration = static_cast<int>(s.Int64("iteration"));
  r.offspring = static_cast<int>(s.Int64("offspring"));
  r.role = s.Text("role");
  r.parent = s.Text("parent");
  r.model_requested = s.Text("model_requested");
  r.model_returned = s.Text("model_returned");
  r.prompt_version = s.Text("prompt_version");
  r.prompt = ParseOr(s.Text("prompt"), Json::array());
  r.response = s.Text("response");
  r.usage = ParseOr(s.Text("usage"), Json::object());
  r.latency_s = s.Double("latency_s");
  r.http_attempts = static_cast<int>(s.Int64("http_attempts"));
  r.error = s.Text("error");
  r.outcome = s.Text("outcome");
  r.candidate_path = s.Text("candidate_path");
  r.attempt_id = s.OptionalInt64("attempt_id");
  r.created_at = s.Text("created_at");
  return r;
}

GenTaskRecord ReadTask(const sqlite::Statement& s) {
  GenTaskRecord r;
  r.run = s.Text("run");
  r.task = s.Text("task");
  r.finished = s.Int64("finished") != 0;
  r.solved = s.Int64("solved") != 0;
  r.candidates = static_cast<int>(s.Int64("candidates"));
  r.best_attempt_id = s.OptionalInt64("best_attempt_id");
  r.best_path = s.Text("best_path");
  r.best_speedup = s.OptionalDouble("best_speedup");
  r.settings = ParseOr(s.Text("settings"), Json::object());
  r.updated_at = s.Text("updated_at");
  return r;
}

template <class T, class Read>
Result<std::vector<T>> ReadRows(sqlite::Statement& s, Read read) {
  std::vector<T> out;
  while (true) {
    auto step = s.Next();
    if (!step) return Error{step.error()};
    if (*step == sqlite::Step::kDone) return out;
    out.push_back(read(s));
  }
}

}  // namespace

struct GenerationLog::Impl {
  sqlite::Connection db;
};

GenerationLog::GenerationLog(std::string path, std::unique_ptr<Impl> impl)
    : path_(std::move(path)), impl_(std::move(impl)) {}
GenerationLog::~GenerationLog() = default;

Error GenerationLog::Fail(const std::string& what, const std::string& detail) const {
  return Error{"store " + path_ + ": " + what + ": " + detail};
}

Result<std::unique_ptr<GenerationLog>> GenerationLog::Open(const std::string& path) {
  auto db = store_schema::OpenStoreFile(path, Store::kBusyTimeoutMs);
  if (!db) return Error{db.error()};
  return std::unique_ptr<GenerationLog>(
      new GenerationLog(path, std::unique_ptr<Impl>(new Impl{std::move(*db)})));
}

Status GenerationLog::Put(GenerationRecord& r) {
  if (r.run.empty() || r.task.empty() || r.role.empty())
    return Fail("put generation", "run, task and role must not be empty");
  const std::string now = NowIso8601Utc();
  std::lock_guard<std::mutex> lock(mu_);
  auto s = sqlite::Statement::Prepare(impl_->db, kPutSql);
  if (!s) return Fail("put generation", s.error());
  s->Bind(":run", r.run);
  s->Bind(":task", r.task);
  s->Bind(":iteration", int64_t{r.iteration});
  s->Bind(":offspring", int64_t{r.offspring});
  s->Bind(":role", r.role);
  s->Bind(":parent", r.parent);
  s->Bind(":model_requested", r.model_requested);
  s->Bind(":model_returned", r.model_returned);
  s->Bind(":prompt_version", r.prompt_version);
  s->Bind(":prompt", DumpJson(r.prompt));
  s->Bind(":response", r.response);
  s->Bind(":usage", DumpJson(r.usage));
  s->Bind(":latency_s", r.latency_s);
  s->Bind(":http_attempts", int64_t{r.http_attempts});
  s->Bind(":error", r.error);
  s->Bind(":outcome", r.outcome);
  s->Bind(":candidate_path", r.candidate_path);
  s->BindOptional(":attempt_id", r.attempt_id);
  s->Bind(":created_at", now);
  auto step = s->Next();
  if (!step) return Fail("put generation", step.error());
  if (*step != sqlite::Step::kRow) return Fail("put generation", "no id returned");
  r.id = s->Int64("id");
  r.created_at = now;
  if (auto done = s->Next(); !done) return Fail("put generation", done.error());
  return Status::Ok();
}

Result<std::optional<GenerationRecord>> GenerationLog::Find(const std::string& run,
                                                            const std::string& task,
                                                            int iteration, int offspring,
                                                            const std::string& role) {
  std::lock_guard<std::mutex> lock(mu_);
  auto s = sqlite::Statement::Prepare(impl_->db, kFindSql);
  if (!s) return Fail("find generation", s.error());
  s->Bind(":run", run);
  s->Bind(":task", task);
  s->Bind(":iteration", int64_t{iteration});
  s->Bind(":offspring", int64_t{offspring});
  s->Bind(":role", role);
  auto rows = ReadRows<GenerationRecord>(*s, ReadGeneration);
  if (!rows) return Fail("find generation", rows.error());
  if (rows->empty()) return std::optional<GenerationRecord>();
  return std::optional<GenerationRecord>(std::move(rows->front()));
}

Result<std::vector<GenerationRecord>> GenerationLog::ListTask(const std::string& run,
                                                              const std::string& task) {
  std::lock_guard<std::mutex> lock(mu_);
  auto s = sqlite::Statement::Prepare(impl_->db, kListTaskSql);
  if (!s) return Fail("list generations", s.error());
  s->Bind(":run", run);
  s->Bind(":task", task);
  auto rows = ReadRows<GenerationRecord>(*s, ReadGeneration);
  if (!rows) return Fail("list generations", rows.error());
  return rows;
}

Result<std::vector<GenerationRecord>> GenerationLog::ListRun(const std::string& run) {
  std::lock_guard<std::mutex> lock(mu_);
  auto s = sqlite::Statement::Prepare(impl_->db, kListRunSql);
  if (!s) return Fail("list generations", s.error());
  s->Bind(":run", run);
  auto rows = ReadRows<GenerationRecord>(*s, ReadGeneration);
  if (!rows) return Fail("list generations", rows.error());
  return rows;
}

Status GenerationLog::PutTask(GenTaskRecord& r) {
  if (r.run.empty() || r.task.empty()) return Fail("put gen task", "run and task must not be empty");
  const std::string now = NowIso8601Utc();
  std::lock_guard<std::mutex> lock(mu_);
  auto s = sqlite::Statement::Prepare(impl_->db, kPutTaskSql);
  if (!s) return Fail("put gen task", s.error());
  s->Bind(":run", r.run);
  s->Bind(":task", r.task);
  s->Bind(":finished", int64_t{r.finished ? 1 : 0});
  s->Bind(":solved", int64_t{r.solved ? 1 : 0});
  s->Bind(":candidates", int64_t{r.candidates});
  s->BindOptional(":best_attempt_id", r.best_attempt_id);
  s->Bind(":best_path", r.best_path);
  s->BindOptional(":best_speedup", r.best_speedup);
  s->Bind(":settings", DumpJson(r.settings));
  s->Bind(":updated_at", now);
  auto step = s->Next();
  if (!step) return Fail("put gen task", step.error());
  r.updated_at = now;
  return Status::Ok();
}

Result<std::optional<GenTaskRecord>> GenerationLog::FindTask(const std::string& run,
                                                             const std::string& task) {
  std::lock_guard<std::mutex> lock(mu_);
  auto s = sqlite::Statement::Prepare(impl_->db, kFindTaskSql);
  if (!s) return Fail("find gen task", s.error());
  s->Bind(":run", run);
  s->Bind(":task", task);
  auto rows = ReadRows<GenTaskRecord>(*s, ReadTask);
  if (!rows) return Fail("find gen task", rows.error());
  if (rows->empty()) return std::optional<GenTaskRecord>();
  return std::optional<GenTaskRecord>(std::move(rows->front()));
}

Result<std::vector<GenTaskRecord>> GenerationLog::ListTasks(const std::string& run) {
  std::lock_guard<std::mutex> lock(mu_);
  auto s = sqlite::Statement::Prepare(impl_->db, kListTasksSql);
  if (!s) return Fail("list gen tasks", s.error());
  s->Bind(":run", run);
  auto rows = ReadRows<GenTaskRecord>(*s, ReadTask);
  if (!rows) return Fail("list gen tasks", rows.error());
  return rows;
}

}  // namespace kvault
