#include "store/sqlite.h"

#include <stdexcept>

namespace kvault::sqlite {

Result<Connection> Connection::Open(const std::string& path, int busy_timeout_ms) {
  sqlite3* raw = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  Connection conn(raw);  // owns `raw` even on failure
  if (rc != SQLITE_OK) {
    return Error{raw ? conn.LastError() : std::string(sqlite3_errstr(rc))};
  }
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, busy_timeout_ms);
  return conn;
}

Status Connection::Exec(const char* sql) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db_.get(), sql, nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return Status::Ok();
  std::string text = message ? message : sqlite3_errstr(rc);
  sqlite3_free(message);
  return Error{text};
}

std::string Connection::LastError() const { return sqlite3_errmsg(db_.get()); }

Result<Statement> Statement::Prepare(const Connection& db, std::string_view sql) {
  sqlite3_stmt* raw = nullptr;
  const int rc = sqlite3_prepare_v3(db.get(), sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
  Statement stmt(raw);
  if (rc != SQLITE_OK) return Error{db.LastError()};
  return stmt;
}

void Statement::KeepError(int rc, const char* name) {
  if (rc == SQLITE_OK || bind_error_) return;
  bind_error_ = std::string("binding ") + name + ": " + sqlite3_errstr(rc);
}

int Statement::ParamIndex(const char* name) {
  const int index = sqlite3_bind_parameter_index(stmt_.get(), name);
  if (index == 0 && !bind_error_) bind_error_ = std::string("no SQL parameter named ") + name;
  return index;
}

void Statement::Bind(const char* name, std::string_view text) {
  if (int i = ParamIndex(name)) {
    KeepError(sqlite3_bind_text64(stmt_.get(), i, text.data(), text.size(), SQLITE_TRANSIENT,
                                  SQLITE_UTF8),
              name);
  }
}

void Statement::Bind(const char* name, int64_t value) {
  if (int i = ParamIndex(name)) KeepError(sqlite3_bind_int64(stmt_.get(), i, value), name);
}

void Statement::Bind(const char* name, double value) {
  if (int i = ParamIndex(name)) KeepError(sqlite3_bind_double(stmt_.get(), i, value), name);
}

void Statement::BindOptional(const char* name, const std::optional<double>& value) {
  if (value) return Bind(name, *value);
  if (int i = ParamIndex(name)) KeepError(sqlite3_bind_null(stmt_.get(), i), name);
}

void Statement::BindOptional(const char* name, const std::optional<int64_t>& value) {
  if (value) return Bind(name, *value);
  if (int i = ParamIndex(name)) KeepError(sqlite3_bind_null(stmt_.get(), i), name);
}

Result<Step> Statement::Next() {
  if (bind_error_) return Error{*bind_error_};
  const int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return Step::kRow;
  if (rc == SQLITE_DONE) return Step::kDone;
  return Error{sqlite3_errmsg(sqlite3_db_handle(stmt_.get()))};
}

int Statement::Column(const char* name) const {
  const int n = sqlite3_column_count(stmt_.get());
  for (int i = 0; i < n; ++i) {
    // SQLite matches names ASCII case-insensitively, so a table declared with
    // "compIled" still satisfies the statements; match the same way.
    const char* column = sqlite3_column_name(stmt_.get(), i);
    if (column != nullptr && sqlite3_stricmp(column, name) == 0) return i;
  }
  throw std::logic_error(std::string("no result column named ") + name);
}

std::string Statement::Text(const char* name) const {
  const int i = Column(name);
  const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(stmt_.get(), i));
  if (data == nullptr) return {};
  return std::string(data, static_cast<size_t>(sqlite3_column_bytes(stmt_.get(), i)));
}

int64_t Statement::Int64(const char* name) const {
  return sqlite3_column_int64(stmt_.get(), Column(name));
}

double Statement::Double(const char* name) const {
  return sqlite3_column_double(stmt_.get(), Column(name));
}

std::optional<double> Statement::OptionalDouble(const char* name) const {
  const int i = Column(name);
  if (sqlite3_column_type(stmt_.get(), i) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_double(stmt_.get(), i);
}

std::optional<int64_t> Statement::OptionalInt64(const char* name) const {
  const int i = Column(name);
  if (sqlite3_column_type(stmt_.get(), i) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_int64(stmt_.get(), i);
}

void Statement::Reset() {
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
  bind_error_.reset();
}

}  // namespace kvault::sqlite
