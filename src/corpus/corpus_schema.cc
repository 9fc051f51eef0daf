#include "corpus/corpus_schema.h"

#include <chrono>
#include <iterator>
#include <thread>

namespace kvault::corpus {
namespace {

struct Migration {
  int version;
  const char* sql;
};

// Append new steps; never edit a step that has shipped.
constexpr Migration kMigrations[] = {
    {1, R"sql(
-- Reference sources, once per content (a suite's task is shared by many records).
CREATE TABLE task_references (
  sha256 TEXT PRIMARY KEY,
  source TEXT NOT NULL
);
CREATE TABLE records (
  seq              INTEGER PRIMARY KEY,
  id               TEXT NOT NULL UNIQUE,
  kind             TEXT NOT NULL,
  task_name        TEXT NOT NULL,
  reference_sha256 TEXT NOT NULL,
  candidate_source TEXT NOT NULL,
  language         TEXT NOT NULL,
  format           TEXT NOT NULL,
  arch             TEXT NOT NULL,
  question         TEXT NOT NULL,
  answer           TEXT NOT NULL,
  citation         TEXT NOT NULL,
  pipeline         TEXT NOT NULL,
  model            TEXT NOT NULL,
  prompt           TEXT NOT NULL,
  parent_id        TEXT NOT NULL,
  source           TEXT NOT NULL,
  license          TEXT NOT NULL,
  origin_file      TEXT NOT NULL,
  origin_line      INTEGER NOT NULL,
  duplicate_of     TEXT NOT NULL DEFAULT '',
  duplicate_kind   TEXT NOT NULL DEFAULT ''
);
CREATE INDEX records_task ON records (task_name);
-- Verification results: many per record, one per (hardware, toolchain, backend).
CREATE TABLE results (
  record_id    TEXT NOT NULL,
  hardware     TEXT NOT NULL,
  toolchain    TEXT NOT NULL,
  backend      TEXT NOT NULL,
  status       TEXT NOT NULL,
  speedup      REAL,
  reference_ms REAL,
  candidate_ms REAL,
  environment  TEXT NOT NULL,
  verified_at  TEXT NOT NULL,
  PRIMARY KEY (record_id, hardware, toolchain, backend)
);
CREATE TABLE contamination (
  record_id TEXT NOT NULL,
  suite     TEXT NOT NULL,
  task      TEXT NOT NULL,
  reason    TEXT NOT NULL,
  score     REAL NOT NULL
);
CREATE INDEX contamination_record ON contamination (record_id);
CREATE INDEX contamination_suite ON contamination (suite);
)sql"},
    {2, R"sql(
-- Who produced each result: 'engine' (corpus verify) or 'import' (a claim, keyed by
-- the file:line that carried it). A claim never replaces the engine's result of the
-- same hardware, toolchain and backend, and claims of two rows stay apart. Results
-- of version 1 cannot show their origin: they become claims (verify again).
CREATE TABLE results_v2 (
  record_id    TEXT NOT NULL,
  hardware     TEXT NOT NULL,
  toolchain    TEXT NOT NULL,
  backend      TEXT NOT NULL,
  origin       TEXT NOT NULL,
  claim        TEXT NOT NULL,
  status       TEXT NOT NULL,
  speedup      REAL,
  reference_ms REAL,
  candidate_ms REAL,
  environment  TEXT NOT NULL,
  verified_at  TEXT NOT NULL,
  PRIMARY KEY (record_id, hardware, toolchain, backend, origin, claim)
);
INSERT INTO results_v2 (record_id, hardware, toolchain, backend, origin, claim, status, speedup,
                        reference_ms, candidate_ms, environment, verified_at)
  SELECT record_id, hardware, toolchain, backend, 'import', '', status, speedup, reference_ms,
         candidate_ms, environment, verified_at FROM results;
DROP TABLE results;
ALTER TABLE results_v2 RENAME TO results;
)sql"},
};
static_assert(kMigrations[std::size(kMigrations) - 1].version == kVaultSchemaVersion);

// 0 for an empty file, the stored version, or an Error for a foreign database. One
// statement, so one snapshot.
Result<int64_t> ReadVersion(sqlite::Connection& db) {
  auto stmt = sqlite::Statement::Prepare(
      db,
      "SELECT (SELECT count(*) FROM sqlite_master) AS objects, "
      "(SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'kvault_vault_schema') "
      "AS has_table");
  if (!stmt) return Error{stmt.error()};
  auto step = stmt->Next();
  if (!step) return Error{step.error()};
  if (stmt->Int64("has_table") == 0) {
    if (stmt->Int64("objects") > 0)
      return Error{"an SQLite database that is not a vault (no kvault_vault_schema table)"};
    return int64_t{0};
  }
  stmt->Reset();
  auto version = sqlite::Statement::Prepare(db, "SELECT version FROM kvault_vault_schema WHERE id = 1");
  if (!version) return Error{version.error()};
  auto row = version->Next();
  if (!row) return Error{row.error()};
  if (*row != sqlite::Step::kRow) return Error{"no schema version row"};
  const int64_t v = version->Int64("version");
  if (v > kVaultSchemaVersion)
    return Error{"written by a newer KernelVault (vault schema version " + std::to_string(v) +
                 "; this build reads up to " + std::to_string(kVaultSchemaVersion) + ")"};
  return v;
}

Status Migrate(sqlite::Connection& db) {
  auto version = ReadVersion(db);
  if (!version) return Error{version.error()};
  if (*version == kVaultSchemaVersion) return Status::Ok();
  Transaction txn(db);
  if (Status s = txn.Begin(); !s) return Error{"cannot lock for migration: " + s.error()};
  version = ReadVersion(db);  // another opener may have migrated meanwhile
  if (!version) return Error{version.error()};
  if (*version == 0) {
    Status s = db.Exec(
        "CREATE TABLE IF NOT EXISTS kvault_vault_schema ("
        "  id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);"
        "INSERT OR IGNORE INTO kvault_vault_schema (id, version) VALUES (1, 0);");
    if (!s) return s;
  }
  for (const Migration& m : kMigrations) {
    if (m.version <= *version) continue;
    if (Status s = db.Exec(m.sql); !s)
      return Error{"migration to version " + std::to_string(m.version) + " failed: " + s.error()};
    auto set = sqlite::Statement::Prepare(db, "UPDATE kvault_vault_schema SET version = :v WHERE id = 1");
    if (!set) return Error{set.error()};
    set->Bind(":v", int64_t{m.version});
    if (auto done = set->Next(); !done) return Error{done.error()};
  }
  return txn.Commit();
}

}  // namespace

Transaction::~Transaction() {
  if (open_) (void)db_.Exec("ROLLBACK");
}

Status Transaction::Begin() {
  Status s = db_.Exec("BEGIN IMMEDIATE");
  open_ = s.ok();
  return s;
}

Status Transaction::Commit() {
  Status s = db_.Exec("COMMIT");
  if (s.ok()) open_ = false;
  return s;
}

Result<sqlite::Connection> OpenVaultFile(const std::string& path, int busy_timeout_ms) {
  auto fail = [&](const std::string& what, const std::string& detail) {
    return Error{"vault " + path + ": " + what + ": " + detail};
  };
  auto db = sqlite::Connection::Open(path, busy_timeout_ms);
  if (!db) return fail("cannot open", db.error());
  if (Status s = db->Exec("SELECT count(*) FROM sqlite_master"); !s)
    return fail("not a readable SQLite database", s.error());
  // A fresh file's switch to WAL answers "locked" at once while another opener does
  // the same (no busy handler): retry within the busy timeout.
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

}  // namespace kvault::corpus
