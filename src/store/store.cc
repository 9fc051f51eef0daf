#include "store/store.h"

#include <utility>

#include "store/schema.h"
#include "store/sqlite.h"
#include "store/timestamp.h"

namespace kvault {
namespace {

// Columns written by Put, in the order of the attempts table after id.
constexpr const char* kPutSql = R"sql(
INSERT INTO attempts (
  run, task, task_hash, candidate_hash, candidate_path, candidate_source,
  format, language, backend, arch, status, compiled, correct,
  speedup, reference_ms, candidate_ms, reward, message, diagnostics,
  cases, environment, engine_version, seconds, created_at, policy, sample, origin
) VALUES (
  :run, :task, :task_hash, :candidate_hash, :candidate_path, :candidate_source,
  :format, :language, :backend, :arch, :status, :compiled, :correct,
  :speedup, :reference_ms, :candidate_ms, :reward, :message, :diagnostics,
  :cases, :environment, :engine_version, :seconds, :created_at, :policy, :sample, :origin
)
ON CONFLICT (run, task, sample, candidate_hash, backend, arch) DO UPDATE SET
  task_hash = excluded.task_hash, candidate_path = excluded.candidate_path,
  candidate_source = excluded.candidate_source, format = excluded.format,
  language = excluded.language, status = excluded.status,
  compiled = excluded.compiled, correct = excluded.correct,
  speedup = excluded.speedup, reference_ms = excluded.reference_ms,
  candidate_ms = excluded.candidate_ms, reward = excluded.reward,
  message = excluded.message, diagnostics = excluded.diagnostics,
  cases = excluded.cases, environment = excluded.environment,
  engine_version = excluded.engine_version, seconds = excluded.seconds,
  created_at = excluded.created_at, policy = excluded.policy, origin = excluded.origin
RETURNING id
)sql";

constexpr const char* kFindSql = R"sql(
SELECT * FROM attempts
WHERE run = :run AND task = :task AND sample = :sample AND candidate_hash = :candidate_hash
  AND backend = :backend AND arch = :arch
)sql";

// The newest attempt this store's engines verified of one content (FindVerified).
constexpr const char* kFindVerifiedSql = R"sql(
SELECT * FROM attempts
WHERE task_hash = :task_hash AND candidate_hash = :candidate_hash AND run = :run AND sample = :sample
  AND backend = :backend AND arch = :arch AND language = :language AND policy = :policy
  AND origin = ''
ORDER BY id DESC LIMIT 1
)sql";

// A named sample holds one candidate: its record of other content goes when it changes.
constexpr const char* kDropReplacedSql = R"sql(
DELETE FROM attempts
WHERE run = :run AND task = :task AND sample = :sample AND sample != ''
  AND candidate_hash != :candidate_hash AND backend = :backend AND arch = :arch
)sql";

constexpr const char* kListRunSql = "SELECT * FROM attempts WHERE run = :run ORDER BY task, id";
constexpr const char* kListRunsSql = "SELECT DISTINCT run FROM attempts ORDER BY run";

Result<Json> ParseJson(const std::string& text, const char* column, int64_t id) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Error{"row " + std::to_string(id) + ": column " + column + " is not valid JSON"};
  }
  return j;
}

// Binds every column of `r` except id; created_at comes from `created_at`.
void BindRecord(sqlite::Statement& s, const AttemptRecord& r, const std::string& created_at) {
  s.Bind(":run", r.run);
  s.Bind(":task", r.task);
  s.Bind(":task_hash", r.task_hash);
  s.Bind(":candidate_hash", r.candidate_hash);
  s.Bind(":candidate_path", r.candidate_path);
  s.Bind(":candidate_source", r.candidate_source);
  s.Bind(":format", r.format);
  s.Bind(":language", r.language);
  s.Bind(":backend", r.backend);
  s.Bind(":arch", r.arch);
  s.Bind(":status", r.status);
  s.Bind(":compiled", int64_t{r.compiled ? 1 : 0});
  s.Bind(":correct", int64_t{r.correct ? 1 : 0});
  s.BindOptional(":speedup", r.speedup);
  s.BindOptional(":reference_ms", r.reference_ms);
  s.BindOptional(":candidate_ms", r.candidate_ms);
  s.BindOptional(":reward", r.reward);
  s.Bind(":message", r.message);
  s.Bind(":diagnostics", r.diagnostics);
  s.Bind(":cases", DumpJson(r.cases));
  s.Bind(":environment", DumpJson(r.environment));
  s.Bind(":engine_version", r.engine_version);
  s.Bind(":seconds", r.seconds);
  s.Bind(":created_at", created_at);
  s.Bind(":policy", r.policy);
  s.Bind(":sample", r.sample);
  s.Bind(":origin", r.origin);
}

// Binds the key columns a find or a removal names.
void BindKey(sqlite::Statement& s, const std::string& run, const std::string& task,
             const std::string& sample, const std::string& candidate_hash,
             const std::string& backend, const std::string& arch) {
  s.Bind(":run", run);
  s.Bind(":task", task);
  s.Bind(":sample", sample);
  s.Bind(":candidate_hash", candidate_hash);
  s.Bind(":backend", backend);
  s.Bind(":arch", arch);
}

// REQUIRES: `s` is on a row of `SELECT * FROM attempts`.
Result<AttemptRecord> ReadRecord(const sqlite::Statement& s) {
  AttemptRecord r;
  r.id = s.Int64("id");
  r.run = s.Text("run");
  r.task = s.Text("task");
  r.task_hash = s.Text("task_hash");
  r.candidate_hash = s.Text("candidate_hash");
  r.candidate_path = s.Text("candidate_path");
  r.candidate_source = s.Text("candidate_source");
  r.format = s.Text("format");
  r.language = s.Text("language");
  r.backend = s.Text("backend");
  r.arch = s.Text("arch");
  r.status = s.Text("status");
  r.compiled = s.Int64("compiled") != 0;
  r.correct = s.Int64("correct") != 0;
  r.speedup = s.OptionalDouble("speedup");
  r.reference_ms = s.OptionalDouble("reference_ms");
  r.candidate_ms = s.OptionalDouble("candidate_ms");
  r.reward = s.OptionalDouble("reward");
  r.message = s.Text("message");
  r.diagnostics = s.Text("diagnostics");
  auto cases = ParseJson(s.Text("cases"), "cases", r.id);
  if (!cases) return Error{cases.error()};
  r.cases = std::move(*cases);
  auto environment = ParseJson(s.Text("environment"), "environment", r.id);
  if (!environment) return Error{environment.error()};
  r.environment = std::move(*environment);
  r.engine_version = s.Text("engine_version");
  r.seconds = s.Double("seconds");
  r.created_at = s.Text("created_at");
  r.policy = s.Text("policy");
  r.sample = s.Text("sample");
  r.origin = s.Text("origin");
  return r;
}

// Runs a SELECT * FROM attempts statement to the end.
Result<std::vector<AttemptRecord>> ReadAll(sqlite::Statement& s) {
  std::vector<AttemptRecord> out;
  while (true) {
    auto step = s.Next();
    if (!step) return Error{step.error()};
    if (*step == sqlite::Step::kDone) return out;
    auto rec = ReadRecord(s);
    if (!rec) return Error{rec.error()};
    out.push_back(std::move(*rec));
  }
}

}  // namespace

// Member order matters: statements are finalized before the connection closes.
struct Store::Impl {
  sqlite::Connection db;
  sqlite::Statement put;
  sqlite::Statement drop_replaced;
  sqlite::Statement find;
  sqlite::Statement find_verified;
  sqlite::Statement list_run;
  sqlite::Statement list_runs;
};

Store::Store(std::string path, std::unique_ptr<Impl> impl)
    : path_(std::move(path)), impl_(std::move(impl)) {}

Store::~Store() = default;

Error Store::Fail(const std::string& what, const std::string& detail) const {
  return Error{"store " + path_ + ": " + what + ": " + detail};
}

Result<std::unique_ptr<Store>> Store::Open(const std::string& path) {
  auto fail = [&](const std::string& what, const std::string& detail) {
    return Error{"store " + path + ": " + what + ": " + detail};
  };
  auto db = store_schema::OpenStoreFile(path, kBusyTimeoutMs);
  if (!db) return Error{db.error()};

  auto put = sqlite::Statement::Prepare(*db, kPutSql);
  if (!put) return fail("prepare put", put.error());
  auto drop_replaced = sqlite::Statement::Prepare(*db, kDropReplacedSql);
  if (!drop_replaced) return fail("prepare put", drop_replaced.error());
  auto find = sqlite::Statement::Prepare(*db, kFindSql);
  if (!find) return fail("prepare find", find.error());
  auto find_verified = sqlite::Statement::Prepare(*db, kFindVerifiedSql);
  if (!find_verified) return fail("prepare find", find_verified.error());
  auto list_run = sqlite::Statement::Prepare(*db, kListRunSql);
  if (!list_run) return fail("prepare list", list_run.error());
  auto list_runs = sqlite::Statement::Prepare(*db, kListRunsSql);
  if (!list_runs) return fail("prepare runs", list_runs.error());
  auto impl = std::unique_ptr<Impl>(new Impl{std::move(*db), std::move(*put), std::move(*drop_replaced), std::move(*find),
                                             std::move(*find_verified), std::move(*list_run), std::move(*list_runs)});
  return std::unique_ptr<Store>(new Store(path, std::move(impl)));
}

Status Store::Put(AttemptRecord& record) {
  if (record.run.empty() || record.task.empty() || record.candidate_hash.empty()) {
    return Fail("put", "run, task and candidate_hash must not be empty");
  }
  const std::string created_at = NowIso8601Utc();
  std::lock_guard<std::mutex> lock(mu_);
  if (!record.sample.empty()) {
    sqlite::Statement& d = impl_->drop_replaced;
    sqlite::ResetOnExit reset(d);
    BindKey(d, record.run, record.task, record.sample, record.candidate_hash, record.backend,
            record.arch);
    if (auto done = d.Next(); !done) return Fail("put", done.error());
  }
  sqlite::Statement& s = impl_->put;
  sqlite::ResetOnExit reset(s);
  BindRecord(s, record, created_at);
  auto step = s.Next();
  if (!step) return Fail("put", step.error());
  if (*step != sqlite::Step::kRow) return Fail("put", "no id returned");
  const int64_t id = s.Int64("id");
  if (auto done = s.Next(); !done) return Fail("put", done.error());
  record.id = id;
  record.created_at = created_at;
  return Status::Ok();
}

Result<std::optional<AttemptRecord>> Store::Find(const std::string& run, const std::string& task,
                                                 const std::string& candidate_hash,
                                                 const std::string& backend,
                                                 const std::string& arch) {
  return FindSample(run, task, "", candidate_hash, backend, arch);
}

Result<std::optional<AttemptRecord>> Store::FindSample(const std::string& run, const std::string& task,
                                                       const std::string& sample,
                                                       const std::string& candidate_hash,
                                                       const std::string& backend,
                                                       const std::string& arch) {
  std::lock_guard<std::mutex> lock(mu_);
  sqlite::Statement& s = impl_->find;
  sqlite::ResetOnExit reset(s);
  BindKey(s, run, task, sample, candidate_hash, backend, arch);
  return FirstRow(s);
}

Result<std::optional<AttemptRecord>> Store::FirstRow(sqlite::Statement& s) const {
  auto step = s.Next();
  if (!step) return Fail("find", step.error());
  if (*step == sqlite::Step::kDone) return std::optional<AttemptRecord>();
  auto rec = ReadRecord(s);
  if (!rec) return Fail("find", rec.error());
  return std::optional<AttemptRecord>(std::move(*rec));
}

Result<std::optional<AttemptRecord>> Store::FindVerified(const ContentKey& key) {
  std::lock_guard<std::mutex> lock(mu_);
  sqlite::Statement& s = impl_->find_verified;
  sqlite::ResetOnExit reset(s);
  s.Bind(":run", key.run);
  s.Bind(":task_hash", key.task_hash);
  s.Bind(":candidate_hash", key.candidate_hash);
  s.Bind(":backend", key.backend);
  s.Bind(":arch", key.arch);
  s.Bind(":language", key.language);
  s.Bind(":policy", key.policy);
  s.Bind(":sample", key.sample);
  return FirstRow(s);
}

Result<std::vector<AttemptRecord>> Store::ListRun(const std::string& run) {
  std::lock_guard<std::mutex> lock(mu_);
  sqlite::Statement& s = impl_->list_run;
  sqlite::ResetOnExit reset(s);
  s.Bind(":run", run);
  auto rows = ReadAll(s);
  if (!rows) return Fail("list run " + run, rows.error());
  return rows;
}

Result<std::vector<std::string>> Store::ListRuns() {
  std::lock_guard<std::mutex> lock(mu_);
  sqlite::Statement& s = impl_->list_runs;
  sqlite::ResetOnExit reset(s);
  std::vector<std::string> runs;
  while (true) {
    auto step = s.Next();
    if (!step) return Fail("list runs", step.error());
    if (*step == sqlite::Step::kDone) return runs;
    runs.push_back(s.Text("run"));
  }
}

}  // namespace kvault
