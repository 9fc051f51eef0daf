// The generation log and the schema migration that added it (version 1 -> 2).
#include "store/generation_log.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "store/schema.h"
#include "store/store.h"
#include "util/files.h"

namespace kvault {
namespace {

TempDir MakeTempDir() {
  auto dir = TempDir::Create("", "kvault-genlog-test");
  if (!dir) throw std::runtime_error(dir.error());
  return std::move(*dir);
}

void RawExec(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

GenerationRecord Call(int iteration, const std::string& role) {
  GenerationRecord g;
  g.run = "r";
  g.task = "relu";
  g.iteration = iteration;
  g.role = role;
  g.model_requested = "m";
  g.prompt = Json::array({{{"role", "user"}, {"content", "task: relu"}}});
  g.response = "```cpp\nint x;\n```";
  g.outcome = "passed";
  g.attempt_id = 7;
  return g;
}

TEST(GenerationLog, PutFindReplaceAndList) {
  TempDir dir = MakeTempDir();
  auto log = GenerationLog::Open(dir.Join("kv.db"));
  ASSERT_TRUE(log) << log.error();
  GenerationRecord a = Call(1, "generator"), b = Call(1, "reflector"), c = Call(2, "generator");
  b.attempt_id.reset();
  ASSERT_TRUE((*log)->Put(c));
  ASSERT_TRUE((*log)->Put(a));
  ASSERT_TRUE((*log)->Put(b));
  auto found = (*log)->Find("r", "relu", 1, 0, "generator");
  ASSERT_TRUE(found && found->has_value());
  EXPECT_EQ((*found)->response, a.response);
  EXPECT_EQ((*found)->attempt_id, std::optional<int64_t>(7));
  EXPECT_EQ((*found)->prompt, a.prompt);
  auto missing = (*log)->Find("r", "relu", 3, 0, "generator");
  ASSERT_TRUE(missing);
  EXPECT_FALSE(missing->has_value());

  a.error = "timeout";
  a.response = "";
  ASSERT_TRUE((*log)->Put(a));  // same key: replaced, not added
  auto rows = (*log)->ListTask("r", "relu");
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].role, "generator");
  EXPECT_EQ((*rows)[0].error, "timeout");
  EXPECT_EQ((*rows)[1].role, "reflector");
  EXPECT_FALSE((*rows)[1].attempt_id.has_value());
  EXPECT_EQ((*rows)[2].iteration, 2);
}

TEST(GenerationLog, TaskStateRoundTrips) {
  TempDir dir = MakeTempDir();
  auto log = GenerationLog::Open(dir.Join("kv.db"));
  ASSERT_TRUE(log) << log.error();
  GenTaskRecord t;
  t.run = "r";
  t.task = "relu";
  t.candidates = 2;
  ASSERT_TRUE((*log)->PutTask(t));
  t.finished = t.solved = true;
  t.best_speedup = 1.5;
  t.best_attempt_id = 3;
  ASSERT_TRUE((*log)->PutTask(t));
  auto found = (*log)->FindTask("r", "relu");
  ASSERT_TRUE(found && found->has_value());
  EXPECT_TRUE((*found)->finished);
  EXPECT_EQ((*found)->best_speedup, std::optional<double>(1.5));
  auto all = (*log)->ListTasks("r");
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), 1u);
  GenTaskRecord empty;
  EXPECT_FALSE((*log)->PutTask(empty).ok());
}

// A version-1 store (attempts only) gains the generation tables and keeps its rows.
TEST(GenerationLog, MigratesAVersionOneStore) {
  TempDir dir = MakeTempDir();
  const std::string path = dir.Join("old.db");
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store) << store.error();
    AttemptRecord r;
    r.run = "old";
    r.task = "relu";
    r.candidate_hash = "h";
    r.status = "passed";
    ASSERT_TRUE((*store)->Put(r));
  }
  // Turn it back into what a version-1 build wrote.
  RawExec(path, "DROP TABLE generations; DROP TABLE gen_tasks; "
                "DROP INDEX attempts_content; ALTER TABLE attempts DROP COLUMN origin; "  // version 5's
                "DROP INDEX attempts_key; ALTER TABLE attempts DROP COLUMN sample; "  // version 4's
                "CREATE UNIQUE INDEX attempts_key ON attempts (run, task, candidate_hash, backend, arch); "
                "ALTER TABLE attempts DROP COLUMN policy; "  // version 3's
                "UPDATE kvault_schema SET version = 1 WHERE id = 1;");
  auto log = GenerationLog::Open(path);
  ASSERT_TRUE(log) << log.error();
  GenerationRecord g = Call(1, "generator");
  EXPECT_TRUE((*log)->Put(g));
  auto store = Store::Open(path);
  ASSERT_TRUE(store) << store.error();
  auto rows = (*store)->ListRun("old");
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->size(), 1u);
}

TEST(GenerationLog, RefusesEmptyKey) {
  TempDir dir = MakeTempDir();
  auto log = GenerationLog::Open(dir.Join("kv.db"));
  ASSERT_TRUE(log);
  GenerationRecord g;
  EXPECT_FALSE((*log)->Put(g).ok());
}

}  // namespace
}  // namespace kvault
