#pragma once
// The store's schema and its versioned migrations (docs/store.md).
//
// The version lives in table kvault_schema (one row, id = 1). Migration steps are
// applied in order inside one BEGIN IMMEDIATE transaction, so concurrent openers
// of a new file serialize and the schema is created exactly once.
#include <string>

#include "store/sqlite.h"
#include "util/result.h"

namespace kvault::store_schema {

// The version this build writes and reads. A file with a higher version is refused.
inline constexpr int kSchemaVersion = 5;

// Brings the database on `db` to kSchemaVersion. Errors (each names no path; the
// caller adds it):
//   - the file is not an SQLite database, or is corrupt;
//   - it is an SQLite database with other tables and no kvault_schema table;
//   - it was written by a newer schema version than kSchemaVersion.
// REQUIRES: no transaction is open on `db`.
Status Migrate(sqlite::Connection& db);

// Opens the store file at `path` the way every writer of it must: checks that it is
// a readable SQLite file, switches it to WAL (readers beside one writer; NORMAL sync,
// which a power loss cannot corrupt), waits up to `busy_timeout_ms` for locks, and
// migrates. Errors read "store PATH: what: detail".
Result<sqlite::Connection> OpenStoreFile(const std::string& path, int busy_timeout_ms);

}  // namespace kvault::store_schema
