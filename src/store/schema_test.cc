// Opening files that are not (current) KernelVault stores.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "store/schema.h"
#include "store/store.h"
#include "util/files.h"

namespace kvault {
namespace {

TempDir MakeTempDir() {
  auto dir = TempDir::Create("", "kvault-store-test");
  if (!dir) throw std::runtime_error(dir.error());
  return std::move(*dir);
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Runs constant SQL on `path` through a plain connection, bypassing Store.
void RawExec(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

std::string OpenError(const std::string& path) {
  auto store = Store::Open(path);
  return store ? std::string() : store.error();
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(StoreOpen, TextFileIsAClearError) {
  TempDir dir = MakeTempDir();
  const std::string path = dir.Join("notes.db");
  std::string text;
  for (int i = 0; i < 200; ++i) text += "this is not an SQLite database\n";
  WriteFile(path, text);
  const std::string err = OpenError(path);
  EXPECT_TRUE(Contains(err, path)) << err;
  EXPECT_TRUE(Contains(err, "not a database")) << err;
}

TEST(StoreOpen, DamagedStoreIsAClearError) {
  TempDir dir = MakeTempDir();
  const std::string path = dir.Join("kv.db");
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store) << store.error();
    AttemptRecord r;
    r.run = "r";
    r.task = "t";
    r.candidate_hash = "h";
    ASSERT_TRUE((*store)->Put(r));
  }  // closing the last connection checkpoints the WAL into the file
  // Keep the 100-byte header, scramble the schema page after it.
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_GT(bytes.size(), 4096u);
  for (size_t i = 100; i < 4096; ++i) bytes[i] = static_cast<char>(0xA5);
  WriteFile(path, bytes);
  const std::string err = OpenError(path);
  EXPECT_FALSE(err.empty());
  EXPECT_TRUE(Contains(err, path)) << err;
  EXPECT_TRUE(Contains(err, "malformed") || Contains(err, "not a database")) << err;
}

TEST(StoreOpen, ForeignSqliteDatabaseIsRefused) {
  TempDir dir = MakeTempDir();
  const std::string path = dir.Join("other.db");
  RawExec(path, "CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)");
  const std::string err = OpenError(path);
  EXPECT_TRUE(Contains(err, "not a KernelVault store")) << err;
}

TEST(StoreOpen, NewerSchemaIsRefused) {
  TempDir dir = MakeTempDir();
  const std::string path = dir.Join("kv.db");
  ASSERT_TRUE(Store::Open(path));
  RawExec(path, "UPDATE kvault_schema SET version = 99 WHERE id = 1");
  const std::string err = OpenError(path);
  EXPECT_TRUE(Contains(err, "newer")) << err;
  EXPECT_TRUE(Contains(err, "schema version 99")) << err;
}

TEST(StoreOpen, CreatesVersionedSchemaInWalMode) {
  TempDir dir = MakeTempDir();
  const std::string path = dir.Join("kv.db");
  auto store = Store::Open(path);
  ASSERT_TRUE(store) << store.error();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  auto query_text = [&](const char* sql) {
    sqlite3_stmt* st = nullptr;
    std::string out;
    if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
      out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return out;
  };
  EXPECT_EQ(query_text("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(query_text("SELECT version FROM kvault_schema"),
            std::to_string(store_schema::kSchemaVersion));
  EXPECT_EQ(query_text("SELECT name FROM sqlite_master WHERE name = 'attempts_key'"),
            "attempts_key");
  sqlite3_close(db);
  // Reopening a current store is a no-op.
  store->reset();
  EXPECT_TRUE(Store::Open(path));
}

// Found by fuzz/fuzz_store (fuzz/corpus/fuzz_store/regress_column_name_case): a store
// whose attempts table declares a column in other letter case ("compIled") opened
// fine, since SQLite identifiers are case-insensitive, but reading a record threw
// std::logic_error ("no result column named compiled") out of ListRun.
TEST(StoreOpen, ColumnNamesInOtherLetterCaseStillRead) {
  TempDir dir = MakeTempDir();
  const std::string path = dir.Join("kv.db");
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store) << store.error();
    AttemptRecord r;
    r.run = "r";
    r.task = "t";
    r.candidate_hash = "h";
    r.compiled = true;
    ASSERT_TRUE((*store)->Put(r));
  }
  RawExec(path,
          "PRAGMA writable_schema = ON;"
          "UPDATE sqlite_master SET sql = replace(sql, ' compiled ', ' compIled ')"
          " WHERE name = 'attempts';");
  auto store = Store::Open(path);
  ASSERT_TRUE(store) << store.error();
  auto rows = (*store)->ListRun("r");
  ASSERT_TRUE(rows) << rows.error();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_TRUE((*rows)[0].compiled);
}

// The fuzzer's input itself, replayed: reading it back must not throw.
TEST(StoreOpen, FuzzInputWithRenamedColumnDoesNotThrow) {
  const char* root = std::getenv("KVAULT_SOURCE_ROOT");
  if (root == nullptr) GTEST_SKIP() << "KVAULT_SOURCE_ROOT not set";
  auto bytes = ReadFile(std::string(root) + "/fuzz/corpus/fuzz_store/regress_column_name_case");
  ASSERT_TRUE(bytes) << bytes.error();
  TempDir dir = MakeTempDir();
  const std::string path = dir.Join("kv.db");
  WriteFile(path, *bytes);
  auto store = Store::Open(path);
  ASSERT_TRUE(store) << store.error();
  auto runs = (*store)->ListRuns();
  ASSERT_TRUE(runs) << runs.error();
  for (const std::string& run : *runs) EXPECT_NO_THROW((void)(*store)->ListRun(run));
}

TEST(StoreOpen, MissingDirectoryIsAClearError) {
  const std::string err = OpenError("/nonexistent-kvault-dir/sub/kv.db");
  EXPECT_TRUE(Contains(err, "cannot open")) << err;
}

}  // namespace
}  // namespace kvault
