#include "store/store.h"

#include <gtest/gtest.h>

#include <functional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "store/sqlite.h"
#include "util/files.h"

namespace kvault {
namespace {

TempDir MakeTempDir() {
  auto dir = TempDir::Create("", "kvault-store-test");
  if (!dir) throw std::runtime_error(dir.error());
  return std::move(*dir);
}

std::unique_ptr<Store> OpenOrDie(const std::string& path) {
  auto store = Store::Open(path);
  if (!store) throw std::runtime_error(store.error());
  return std::move(*store);
}

AttemptRecord FullRecord() {
  AttemptRecord r;
  r.run = "run-1";
  r.task = "level1/relu";
  r.task_hash = "sha256:aaaa";
  r.candidate_hash = "sha256:bbbb";
  r.candidate_path = "/tmp/relu.hip";
  r.candidate_source = std::string("__global__ void k() {}\n\0tail\xff", 29);  // NUL, non-UTF-8
  r.format = "extension";
  r.language = "hip";
  r.backend = "hip-on-nvidia";
  r.arch = "sm_90";
  r.status = "passed";
  r.compiled = true;
  r.correct = true;
  r.speedup = 2.5;
  r.reference_ms = 1.25;
  r.candidate_ms = 0.5;
  r.reward = 1.4 + 0.375 * 1.3219280948873624 * 1.3219280948873624;
  r.message = "all 3 cases matched";
  r.diagnostics = "warning: unused variable 'x'";
  r.policy = "custom_kernel";
  r.cases = Json::array({{{"case", 0}, {"max_abs_err", 1e-7}, {"ms", 0.5}},
                         {{"case", 1}, {"error", nullptr}}});
  r.environment = {{"gpu", "H200"}, {"torch", "2.5.1"}, {"cuda", "12.4"}};
  r.engine_version = "0.1.0";
  r.seconds = 12.75;
  return r;
}

void ExpectSameFields(const AttemptRecord& a, const AttemptRecord& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.run, b.run);
  EXPECT_EQ(a.task, b.task);
  EXPECT_EQ(a.task_hash, b.task_hash);
  EXPECT_EQ(a.candidate_hash, b.candidate_hash);
  EXPECT_EQ(a.candidate_path, b.candidate_path);
  EXPECT_EQ(a.candidate_source, b.candidate_source);
  EXPECT_EQ(a.format, b.format);
  EXPECT_EQ(a.language, b.language);
  EXPECT_EQ(a.backend, b.backend);
  EXPECT_EQ(a.arch, b.arch);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.compiled, b.compiled);
  EXPECT_EQ(a.correct, b.correct);
  EXPECT_EQ(a.speedup, b.speedup);
  EXPECT_EQ(a.reference_ms, b.reference_ms);
  EXPECT_EQ(a.candidate_ms, b.candidate_ms);
  EXPECT_EQ(a.reward, b.reward);
  EXPECT_EQ(a.message, b.message);
  EXPECT_EQ(a.diagnostics, b.diagnostics);
  EXPECT_EQ(a.policy, b.policy);
  EXPECT_EQ(a.sample, b.sample);
  EXPECT_EQ(a.origin, b.origin);
  EXPECT_EQ(a.cases, b.cases);
  EXPECT_EQ(a.environment, b.environment);
  EXPECT_EQ(a.engine_version, b.engine_version);
  EXPECT_EQ(a.seconds, b.seconds);
  EXPECT_EQ(a.created_at, b.created_at);
}

std::optional<AttemptRecord> FindKey(Store& s, const AttemptRecord& r) {
  auto found = s.FindSample(r.run, r.task, r.sample, r.candidate_hash, r.backend, r.arch);
  if (!found) throw std::runtime_error(found.error());
  return *found;
}

TEST(Store, RoundTripsEveryField) {
  TempDir dir = MakeTempDir();
  auto store = OpenOrDie(dir.Join("kv.db"));
  AttemptRecord rec = FullRecord();
  ASSERT_TRUE(store->Put(rec)) << "put failed";
  EXPECT_GT(rec.id, 0);
  EXPECT_TRUE(std::regex_match(rec.created_at,
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")))
      << rec.created_at;

  auto found = FindKey(*store, rec);
  ASSERT_TRUE(found.has_value());
  ExpectSameFields(*found, rec);

  // Also after reopening the file.
  store.reset();
  store = OpenOrDie(dir.Join("kv.db"));
  found = FindKey(*store, rec);
  ASSERT_TRUE(found.has_value());
  ExpectSameFields(*found, rec);
}

TEST(Store, OptionalsRoundTripAsNull) {
  auto store = OpenOrDie(":memory:");
  AttemptRecord rec = FullRecord();
  rec.status = "infra_error";
  rec.compiled = rec.correct = false;
  rec.speedup.reset();
  rec.reference_ms.reset();
  rec.candidate_ms.reset();
  rec.reward.reset();
  rec.cases = Json::array();
  rec.environment = Json::object();
  ASSERT_TRUE(store->Put(rec));
  auto found = FindKey(*store, rec);
  ASSERT_TRUE(found.has_value());
  ExpectSameFields(*found, rec);
  EXPECT_FALSE(found->reward.has_value());
  EXPECT_TRUE(found->cases.is_array());
  EXPECT_TRUE(found->environment.is_object());
}

// Undoes version 5 (the origin column and the content index).
constexpr const char* kBackToVersion4 =
    "DROP INDEX attempts_content; ALTER TABLE attempts DROP COLUMN origin; "
    "UPDATE kvault_schema SET version = 4 WHERE id = 1;";

// Undoes versions 5 and 4 (the sample column and the key with it).
constexpr const char* kBackToVersion3 =
    "DROP INDEX attempts_content; ALTER TABLE attempts DROP COLUMN origin; "
    "DROP INDEX attempts_key; ALTER TABLE attempts DROP COLUMN sample; "
    "CREATE UNIQUE INDEX attempts_key ON attempts (run, task, candidate_hash, backend, arch); "
    "UPDATE kvault_schema SET version = 3 WHERE id = 1;";

// Writes FullRecord() into a new store at `path`, then runs `downgrade` on it.
void MakeOldStore(const std::string& path, const std::string& downgrade) {
  {
    auto store = OpenOrDie(path);
    AttemptRecord old = FullRecord();
    ASSERT_TRUE(store->Put(old));
  }
  auto db = sqlite::Connection::Open(path, 1000);
  ASSERT_TRUE(db) << db.error();
  ASSERT_TRUE(db->Exec(downgrade.c_str()));
}

// A version-2 store (no policy column) gains it; its rows read back with "".
TEST(Store, MigratesAVersionTwoStoreToRecordThePolicy) {
  TempDir dir = MakeTempDir();
  const std::string path = dir.Join("old.db");
  MakeOldStore(path, std::string(kBackToVersion3) +
                         "ALTER TABLE attempts DROP COLUMN policy; "
                         "UPDATE kvault_schema SET version = 2 WHERE id = 1;");
  auto store = OpenOrDie(path);
  auto rows = store->ListRun("run-1");
  ASSERT_TRUE(rows) << rows.error();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].policy, "");
  AttemptRecord rec = FullRecord();
  rec.task = "level1/gelu";
  ASSERT_TRUE(store->Put(rec));
  EXPECT_EQ(FindKey(*store, rec)->policy, "custom_kernel");
}

// A version-3 store (no sample column, content in the key) gains the column; its
// rows read back with the sample "" and keep their keys.
TEST(Store, MigratesAVersionThreeStoreToKeySamples) {
  TempDir dir = MakeTempDir();
  const std::string path = dir.Join("old.db");
  MakeOldStore(path, kBackToVersion3);
  auto store = OpenOrDie(path);
  auto rows = store->ListRun("run-1");
  ASSERT_TRUE(rows) << rows.error();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].sample, "");
  EXPECT_TRUE(FindKey(*store, FullRecord()).has_value());
  AttemptRecord named = FullRecord();
  named.sample = "relu.1.cpp";
  ASSERT_TRUE(store->Put(named));
  EXPECT_EQ(store->ListRun("run-1")->size(), 2u);
}

// A version-4 store (no origin column) gains it: its rows are this store's verdicts.
TEST(Store, MigratesAVersionFourStoreToMarkImportedRows) {
  TempDir dir = MakeTempDir();
  const std::string path = dir.Join("old.db");
  MakeOldStore(path, kBackToVersion4);
  auto store = OpenOrDie(path);
  const AttemptRecord r = FullRecord();
  auto found = store->FindVerified({r.run, r.task_hash, r.candidate_hash, r.language, r.backend, r.arch, r.policy, ""});
  ASSERT_TRUE(found) << found.error();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->origin, "");
}

// Identical candidates of two samples are two attempts; content alone ("") is one;
// a named sample whose candidate changed holds the new one only.
TEST(Store, SamplesAreDistinctAttempts) {
  auto store = OpenOrDie(":memory:");
  AttemptRecord a = FullRecord(), b = FullRecord();
  a.sample = "sample_0";
  b.sample = "sample_1";
  ASSERT_TRUE(store->Put(a));
  ASSERT_TRUE(store->Put(b));
  EXPECT_NE(a.id, b.id);
  AttemptRecord c = FullRecord(), d = FullRecord();
  ASSERT_TRUE(store->Put(c));
  ASSERT_TRUE(store->Put(d));
  EXPECT_EQ(c.id, d.id);
  EXPECT_EQ(store->ListRun("run-1")->size(), 3u);

  AttemptRecord changed = FullRecord();
  changed.sample = "sample_0";
  changed.candidate_hash = "another";
  ASSERT_TRUE(store->Put(changed));
  EXPECT_FALSE(FindKey(*store, a).has_value());
  EXPECT_TRUE(FindKey(*store, changed).has_value());
  EXPECT_EQ(store->ListRun("run-1")->size(), 3u);
}

TEST(Store, NanSpeedupReadsBackAsNull) {
  auto store = OpenOrDie(":memory:");
  AttemptRecord rec = FullRecord();
  rec.speedup = std::numeric_limits<double>::quiet_NaN();
  ASSERT_TRUE(store->Put(rec));
  EXPECT_FALSE(FindKey(*store, rec)->speedup.has_value());
}

TEST(Store, PutReplacesTheRowWithTheSameKey) {
  auto store = OpenOrDie(":memory:");
  AttemptRecord first = FullRecord();
  ASSERT_TRUE(store->Put(first));

  AttemptRecord second = FullRecord();
  second.status = "mismatch";
  second.correct = false;
  second.speedup.reset();
  second.reward = 0.4;
  second.message = "case 1: max abs error 0.5";
  ASSERT_TRUE(store->Put(second));
  EXPECT_EQ(second.id, first.id);  // the replaced row keeps its id

  auto rows = store->ListRun("run-1");
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 1u);
  ExpectSameFields((*rows)[0], second);

  // A different arch is a different key.
  AttemptRecord other = FullRecord();
  other.arch = "gfx942";
  ASSERT_TRUE(store->Put(other));
  EXPECT_NE(other.id, first.id);
  EXPECT_EQ(store->ListRun("run-1")->size(), 2u);
}

TEST(Store, FindMissesAndListings) {
  auto store = OpenOrDie(":memory:");
  EXPECT_FALSE(FindKey(*store, FullRecord()).has_value());
  EXPECT_TRUE(store->ListRuns()->empty());
  EXPECT_TRUE(store->ListRun("nope")->empty());

  int n = 0;
  for (const char* run : {"b", "a", "b"}) {
    for (const char* task : {"t2", "t1"}) {
      AttemptRecord r = FullRecord();
      r.run = run;
      r.task = task;
      r.candidate_hash = "h" + std::to_string(n++);
      ASSERT_TRUE(store->Put(r));
    }
  }
  EXPECT_EQ(*store->ListRuns(), (std::vector<std::string>{"a", "b"}));
  auto b = store->ListRun("b");
  ASSERT_TRUE(b);
  ASSERT_EQ(b->size(), 4u);
  EXPECT_EQ((*b)[0].task, "t1");
  EXPECT_EQ((*b)[1].task, "t1");
  EXPECT_EQ((*b)[2].task, "t2");
  EXPECT_LT((*b)[0].id, (*b)[1].id);
}

TEST(Store, FindVerifiedMatchesContentNotLabels) {
  auto store = OpenOrDie(":memory:");
  AttemptRecord r = FullRecord();
  const ContentKey key{r.run, r.task_hash, r.candidate_hash, r.language, r.backend, r.arch, r.policy, ""};
  auto find = [&](const ContentKey& k) {
    auto found = store->FindVerified(k);
    if (!found) throw std::runtime_error(found.error());
    return *found;
  };
  ASSERT_TRUE(store->Put(r));
  // Another label of the same bytes is the same content.
  AttemptRecord relabelled = r;
  relabelled.task = "scale-relu";
  relabelled.status = "mismatch";
  ASSERT_TRUE(store->Put(relabelled));
  auto hit = find(key);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->status, "mismatch");  // the newest
  // Every other field of the key misses: language, policy, backend, arch, run.
  for (auto change : std::vector<std::function<void(ContentKey&)>>{
           [](ContentKey& k) { k.language = "cuda"; }, [](ContentKey& k) { k.policy = "any"; },
           [](ContentKey& k) { k.backend = "cpu"; }, [](ContentKey& k) { k.arch = "gfx942"; },
           [](ContentKey& k) { k.run = "run-2"; }, [](ContentKey& k) { k.task_hash = "sha256:cccc"; }}) {
    ContentKey other = key;
    change(other);
    EXPECT_FALSE(find(other).has_value());
  }
}

TEST(Store, FindVerifiedSkipsImportedClaimsAndSamples) {
  auto store = OpenOrDie(":memory:");
  AttemptRecord claim = FullRecord();
  claim.origin = "imported";
  ASSERT_TRUE(store->Put(claim));
  AttemptRecord sample = FullRecord();
  sample.task = "other-label";
  sample.sample = "sample_1";
  ASSERT_TRUE(store->Put(sample));
  const ContentKey key{claim.run,    claim.task_hash, claim.candidate_hash, claim.language,
                       claim.backend, claim.arch,      claim.policy, ""};
  auto found = store->FindVerified(key);
  ASSERT_TRUE(found);
  EXPECT_FALSE(found->has_value());
  // The sample is part of the key: its own key finds it, under its label.
  ContentKey of_sample = key;
  of_sample.sample = "sample_1";
  found = store->FindVerified(of_sample);
  ASSERT_TRUE(found && found->has_value());
  EXPECT_EQ((*found)->task, "other-label");
  // Verified here, the same row is answered again.
  AttemptRecord verified = FullRecord();
  ASSERT_TRUE(store->Put(verified));
  EXPECT_EQ(verified.id, claim.id);  // the claim's row, now verified
  found = store->FindVerified(key);
  ASSERT_TRUE(found && found->has_value());
  EXPECT_EQ((*found)->origin, "");
}

TEST(Store, RejectsAnEmptyKey) {
  auto store = OpenOrDie(":memory:");
  AttemptRecord r = FullRecord();
  r.candidate_hash.clear();
  Status s = store->Put(r);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find("candidate_hash"), std::string::npos) << s.error();
}

// Two Stores on one file, each written from two threads at once: WAL and the busy
// timeout make every Put succeed and no row is lost.
TEST(Store, ConcurrentWritersLoseNoRows) {
  TempDir dir = MakeTempDir();
  const std::string path = dir.Join("shared.db");
  constexpr int kThreadsPerStore = 2;
  constexpr int kPerThread = 150;

  std::vector<std::unique_ptr<Store>> stores(2);
  std::vector<std::thread> openers;
  std::vector<std::string> open_errors(stores.size());
  for (size_t i = 0; i < stores.size(); ++i) {
    openers.emplace_back([&, i] {  // concurrent creation of the schema, too
      auto s = Store::Open(path);
      if (s) stores[i] = std::move(*s);
      else open_errors[i] = s.error();
    });
  }
  for (auto& t : openers) t.join();
  for (size_t i = 0; i < stores.size(); ++i) ASSERT_TRUE(stores[i]) << open_errors[i];

  std::vector<std::thread> writers;
  std::vector<std::string> errors(stores.size() * kThreadsPerStore);
  for (size_t w = 0; w < errors.size(); ++w) {
    writers.emplace_back([&, w] {
      Store& store = *stores[w % stores.size()];
      for (int i = 0; i < kPerThread; ++i) {
        AttemptRecord r = FullRecord();
        r.candidate_hash = "w" + std::to_string(w) + "-" + std::to_string(i);
        if (Status s = store.Put(r); !s) {
          errors[w] = s.error();
          return;
        }
        if (i % 10 == 0 && !store.ListRun("run-1")) {
          errors[w] = "list failed";
          return;
        }
      }
    });
  }
  for (auto& t : writers) t.join();
  for (const auto& e : errors) EXPECT_EQ(e, "");

  auto rows = OpenOrDie(path)->ListRun("run-1");
  ASSERT_TRUE(rows) << rows.error();
  EXPECT_EQ(rows->size(), errors.size() * kPerThread);
}

}  // namespace
}  // namespace kvault
