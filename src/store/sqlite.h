#pragma once
// RAII owners for SQLite handles; used only inside src/store/.
//
// Thread safety: none. A Connection and its Statements must be used by one thread
// at a time; Store serializes them with its mutex.
//
// Errors: every failure becomes an Error whose message includes sqlite3_errmsg().
// Values reach SQL only through bound parameters (Statement::Bind).
#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "util/result.h"

namespace kvault::sqlite {

// Owns one sqlite3 connection; closes it on destruction. Move-only.
class Connection {
 public:
  // Opens (creating if absent) the database file at `path` read-write and sets the
  // busy timeout, so a lock held by another connection is waited for, not an error.
  static Result<Connection> Open(const std::string& path, int busy_timeout_ms);

  sqlite3* get() const { return db_.get(); }
  // Runs constant SQL without parameters (DDL, PRAGMA, BEGIN/COMMIT); may hold
  // several statements. REQUIRES: `sql` contains no values from outside.
  Status Exec(const char* sql);
  // The message of the most recent failure on this connection.
  std::string LastError() const;

 private:
  struct Closer {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
  };
  explicit Connection(sqlite3* db) : db_(db) {}
  std::unique_ptr<sqlite3, Closer> db_;
};

enum class Step { kRow, kDone };

// Owns one prepared statement; finalizes it on destruction. Move-only.
// REQUIRES: destroyed before the Connection it was prepared on.
class Statement {
 public:
  static Result<Statement> Prepare(const Connection& db, std::string_view sql);

  // Bind by parameter name (":run"). The first failure (an unknown name, an SQLite
  // error) is kept and returned by the next Next(); Reset() clears it.
  void Bind(const char* name, std::string_view text);
  void Bind(const char* name, int64_t value);
  void Bind(const char* name, double value);  // NaN is stored as NULL by SQLite
  void BindOptional(const char* name, const std::optional<double>& value);  // NULL if empty
  void BindOptional(const char* name, const std::optional<int64_t>& value);  // NULL if empty

  // Runs or advances the statement.
  Result<Step> Next();

  // Column access on the current row by result-column name, compared ASCII
  // case-insensitively as SQLite compares identifiers.
  // REQUIRES: Next() returned kRow. A name not in the result is a programming error
  // and throws std::logic_error.
  std::string Text(const char* name) const;  // "" for NULL; exact bytes otherwise
  int64_t Int64(const char* name) const;
  double Double(const char* name) const;
  std::optional<double> OptionalDouble(const char* name) const;  // nullopt for NULL
  std::optional<int64_t> OptionalInt64(const char* name) const;  // nullopt for NULL

  // Rewinds the statement and clears bindings, ending any read it holds open.
  void Reset();

 private:
  struct Finalizer {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
  };
  explicit Statement(sqlite3_stmt* s) : stmt_(s) {}
  int ParamIndex(const char* name);
  int Column(const char* name) const;
  void KeepError(int rc, const char* name);

  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
  std::optional<std::string> bind_error_;
};

// Resets a statement when the scope ends, on every path.
class ResetOnExit {
 public:
  explicit ResetOnExit(Statement& s) : s_(s) {}
  ~ResetOnExit() { s_.Reset(); }
  ResetOnExit(const ResetOnExit&) = delete;
  ResetOnExit& operator=(const ResetOnExit&) = delete;

 private:
  Statement& s_;
};

}  // namespace kvault::sqlite
