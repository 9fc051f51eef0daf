#include "store/schema.h"

#include <chrono>
#include <optional>
#include <string>
#include <thread>

namespace kvault::store_schema {
namespace {

// Step `version` turns a version-(version-1) database into a version-`version` one.
// Append new steps; never edit a step that has shipped.
struct Migration {
  int version;
  const char* sql;
};

constexpr Migration kMigrations[] = {
    {1, R"sql(
CREATE TABLE attempts (
  id               INTEGER PRIMARY KEY,
  run              TEXT    NOT NULL,
  task             TEXT    NOT NULL,
  task_hash        TEXT    NOT NULL,
  candidate_hash   TEXT    NOT NULL,
  candidate_path   TEXT    NOT NULL,
  candidate_source TEXT    NOT NULL,
  format           TEXT    NOT NULL,
  language         TEXT    NOT NULL,
  backend          TEXT    NOT NULL,
  arch             TEXT    NOT NULL,
  status           TEXT    NOT NULL,
  compiled         INTEGER NOT NULL CHECK (compiled IN (0, 1)),
  correct          INTEGER NOT NULL CHECK (correct IN (0, 1)),
  speedup          REAL,
  reference_ms     REAL,
  candidate_ms     REAL,
  reward           REAL,
  message          TEXT    NOT NULL,
  diagnostics      TEXT    NOT NULL,
  cases            TEXT    NOT NULL,
  environment      TEXT    NOT NULL,
  engine_version   TEXT    NOT NULL,
  seconds          REAL    NOT NULL,
  created_at       TEXT    NOT NULL
);
-- The record key. Its leading columns (run, task) also serve per-run and
-- per-(run, task) lookups.
CREATE UNIQUE INDEX attempts_key ON attempts (run, task, candidate_hash, backend, arch);
-- All attempts at one task across runs.
CREATE INDEX attempts_task ON attempts (task);
)sql"},
    {2, R"sql(
-- Every LLM call of `kvault gen` (docs/agent.md). Key: one call per role, iteration
-- and offspring of a task's generation in a run.
CREATE TABLE generations (
  id              INTEGER PRIMARY KEY,
  run             TEXT    NOT NULL,
  task            TEXT    NOT NULL,
  iteration       INTEGER NOT NULL,
  offspring       INTEGER NOT NULL,
  role            TEXT    NOT NULL,
  parent          TEXT    NOT NULL,
  model_requested TEXT    NOT NULL,
  model_returned  TEXT    NOT NULL,
  prompt_version  TEXT    NOT NULL,
  prompt          TEXT    NOT NULL,
  response        TEXT    NOT NULL,
  usage           TEXT    NOT NULL,
  latency_s       REAL    NOT NULL,
  http_attempts   INTEGER NOT NULL,
  error           TEXT    NOT NULL,
  outcome         TEXT    NOT NULL,
  candidate_path  TEXT    NOT NULL,
  attempt_id      INTEGER,
  created_at      TEXT    NOT NULL
);
CREATE UNIQUE INDEX generations_key ON generations (run, task, iteration, offspring, role);
-- One row per task of a `kvault gen` run: its state (for --resume) and its best.
CREATE TABLE gen_tasks (
  run             TEXT    NOT NULL,
  task            TEXT    NOT NULL,
  finished        INTEGER NOT NULL CHECK (finished IN (0, 1)),
  solved          INTEGER NOT NULL CHECK (solved IN (0, 1)),
  candidates      INTEGER NOT NULL,
  best_attempt_id INTEGER,
  best_path       TEXT    NOT NULL,
  best_speedup    REAL,
  settings        TEXT    NOT NULL,
  updated_at      TEXT    NOT NULL,
  PRIMARY KEY (run, task)
);
)sql"},
    {3, R"sql(
-- The custom-kernel policy each attempt ran under (docs/adversarial.md, "Policy");
-- '' for attempts recorded before it was.
ALTER TABLE attempts ADD COLUMN policy TEXT NOT NULL DEFAULT '';
)sql"},
    {4, R"sql(
-- Which sample of its task an attempt is (docs/store.md): the candidate's file name
-- in an eval folder, its label in a gen run; '' where content alone identifies it
-- (kvault serve) and for attempts recorded before version 4. Identical candidates
-- of two samples are two attempts.
ALTER TABLE attempts ADD COLUMN sample TEXT NOT NULL DEFAULT '';
DROP INDEX attempts_key;
CREATE UNIQUE INDEX attempts_key ON attempts (run, task, sample, candidate_hash, backend, arch);
)sql"},
    {5, R"sql(
-- Where an attempt's verdict comes from (docs/store.md): '' when an engine writing this
-- store verified it, 'imported' for a row `kvault import` copied from elsewhere (a
-- claim: kvault serve never answers a request with it). Rows are looked up by content
-- (task and candidate hashes) as well as by the task's name.
ALTER TABLE attempts ADD COLUMN origin TEXT NOT NULL DEFAULT '';
CREATE INDEX attempts_content ON attempts (task_hash, candidate_hash);
)sql"},
};

constexpr int kLatest = kMigrations[std::size(kMigrations) - 1].version;
static_assert(kLatest == kSchemaVersion, "kSchemaVersion must equal the last migration");

Result<int64_t> QueryInt(sqlite::Connection& db, const char* sql) {
  auto stmt = sqlite::Statement::Prepare(db, sql);
  if (!stmt) return Error{stmt.error()};
  auto step = stmt->Next();
  if (!step) return Error{step.error()};
  if (*step != sqlite::Step::kRow) return Error{std::string("no row from: ") + sql};
  return stmt->Int64("n");
}

// The stored version: 0 for an empty database, an error for a foreign one.
Result<int64_t> ReadVersion(sqlite::Connection& db) {
  // One statement, so one snapshot: between two, another opener may create the
  // schema, and the file would look like a foreign database.
  auto state = QueryInt(db,
                        "SELECT (SELECT count(*) FROM sqlite_master) * 2 + "
                        "(SELECT count(*) FROM sqlite_master "
                        " WHERE type = 'table' AND name = 'kvault_schema') AS n");
  if (!state) return Error{state.error()};
  const bool has_table = *state % 2 == 1;
  const int64_t objects = *state / 2;
  if (!has_table) {
    if (objects > 0) {
      return Error{"an SQLite database that is not a KernelVault store (no kvault_schema table)"};
    }
    return int64_t{0};
  }
  auto version = QueryInt(db, "SELECT version AS n FROM kvault_schema WHERE id = 1");
  if (!version) return Error{"cannot read the schema version: " + version.error()};
  return *version;
}

Status CheckNotNewer(int64_t version) {
  if (version <= kSchemaVersion) return Status::Ok();
  return Error{"written by a newer KernelVault (schema version " + std::to_string(version) +
               "; this build reads up to " + std::to_string(kSchemaVersion) +
               "); use a newer kvault or another --db"};
}

// Rolls back an open transaction unless Commit() succeeded.
class Transaction {
 public:
  explicit Transaction(sqlite::Connection& db) : db_(db) {}
  ~Transaction() {
    if (open_) (void)db_.Exec("ROLLBACK");
  }
  Status Begin() {
    Status s = db_.Exec("BEGIN IMMEDIATE");
    open_ = s.ok();
    return s;
  }
  Status Commit() {
    Status s = db_.Exec("COMMIT");
    if (s.ok()) open_ = false;
    return s;
  }

 private:
  sqlite::Connection& db_;
  bool open_ = false;
};

Status SetVersion(sqlite::Connection& db, int version) {
  auto stmt = sqlite::Statement::Prepare(db, "UPDATE kvault_schema SET version = :v WHERE id = 1");
  if (!stmt) return Error{stmt.error()};
  stmt->Bind(":v", int64_t{version});
  auto step = stmt->Next();
  if (!step) return Error{step.error()};
  return Status::Ok();
}

}  // namespace

Status Migrate(sqlite::Connection& db) {
  // Fast path without a write lock: already current (also works on a file that
  // another process holds open for writing).
  auto version = ReadVersion(db);
  if (!version) return Error{version.error()};
  if (Status s = CheckNotNewer(*version); !s) return s;
  if (*version == kSchemaVersion) return Status::Ok();

  Transaction txn(db);
  if (Status s = txn.Begin(); !s) return Error{"cannot lock for migration: " + s.error()};
  version = ReadVersion(db);  // another opener may have migrated meanwhile
  if (!version) return Error{version.error()};
  if (Status s = CheckNotNewer(*version); !s) return s;
  if (*version == 0) {
    Status s = db.Exec(
        "CREATE TABLE IF NOT EXISTS kvault_schema ("
        "  id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);"
        "INSERT OR IGNORE INTO kvault_schema (id, version) VALUES (1, 0);");
    if (!s) return Error{"cannot create kvault_schema: " + s.error()};
  }
  for (const Migration& m : kMigrations) {
    if (m.version <= *version) continue;
    if (Status s = db.Exec(m.sql); !s) {
      return Error{"migration to version " + std::to_string(m.version) + " failed: " + s.error()};
    }
    if (Status s = SetVersion(db, m.version); !s) return s;
  }
  return txn.Commit();
}

Result<sqlite::Connection> OpenStoreFile(const std::string& path, int busy_timeout_ms) {
  auto fail = [&](const std::string& what, const std::string& detail) {
    return Error{"store " + path + ": " + what + ": " + detail};
  };
  auto db = sqlite::Connection::Open(path, busy_timeout_ms);
  if (!db) return fail("cannot open", db.error());
  // The first read: a non-SQLite or damaged file fails here with a clear message.
  if (Status s = db->Exec("SELECT count(*) FROM sqlite_master"); !s)
    return fail("not a readable SQLite database", s.error());
  // Switching a fresh file to WAL takes an exclusive lock, and SQLite answers "locked"
  // at once (no busy handler) when another opener is doing the same: retry.
  Status configured = Status::Ok();
  for (int waited_ms = 0;; waited_ms += 20) {
    configured = db->Exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");
    if (configured.ok() || waited_ms >= busy_timeout_ms ||
        configured.error().find("locked") == std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!configured) return fail("cannot configure", configured.error());
  if (Status s = Migrate(*db); !s) return fail("schema", s.error());
  return std::move(*db);
}

}  // namespace kvault::store_schema
