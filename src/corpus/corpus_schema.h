#pragma once
// The vault file's schema and migrations (docs/corpus.md, "Vault file").
//
// The version lives in table kvault_vault_schema (one row, id = 1), so a vault and an
// attempt store (src/store) never open each other's files. Migration steps run in one
// BEGIN IMMEDIATE transaction, so concurrent openers create the schema once.
#include <string>

#include "store/sqlite.h"
#include "util/result.h"

namespace kvault::corpus {

inline constexpr int kVaultSchemaVersion = 2;

// Opens the vault file at `path` as every writer must: a readable SQLite file, WAL
// (NORMAL sync), `busy_timeout_ms` for locks, migrated to kVaultSchemaVersion.
// Errors read "vault PATH: what: detail": not SQLite, another kind of SQLite database,
// written by a newer schema.
Result<sqlite::Connection> OpenVaultFile(const std::string& path, int busy_timeout_ms);

// Rolls back an open transaction unless Commit() succeeded.
class Transaction {
 public:
  explicit Transaction(sqlite::Connection& db) : db_(db) {}
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  Status Begin();  // BEGIN IMMEDIATE: the write lock now, waiting up to the busy timeout
  Status Commit();

 private:
  sqlite::Connection& db_;
  bool open_ = false;
};

}  // namespace kvault::corpus
