// Eviction and cleaning: least recently used first, entries in use spared, the
// bound across kinds, counters.
#include "cache/eviction.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "cache/cache.h"
#include "cache/stats.h"
#include "util/files.h"
#include "util/sha256.h"

namespace kvault {
namespace {

std::string Key(const std::string& name) { return Sha256Hex(name); }

class EvictionTest : public ::testing::Test {
 protected:
  void SetUp() override { work_ = std::make_unique<TempDir>(TempDir::Create("", "kvault-evicttest").value()); }
  std::string Root() const { return work_->Join("cache"); }

  // An entry of `bytes` bytes whose last use was `age` seconds ago. Committed with no
  // bound, so nothing is evicted yet.
  std::string Put(const std::string& kind, const std::string& name, size_t bytes, int age) {
    CacheLimits unbounded;
    unbounded.max_bytes = UINT64_MAX;
    Cache cache(Root(), kind, unbounded);
    auto staged = cache.Stage();
    EXPECT_TRUE(staged.ok());
    EXPECT_TRUE(WriteFileAtomic(staged->Join("artefact"), std::string(bytes, 'z')).ok());
    auto entry = cache.Commit(Key(name), std::move(*staged), Json::object());
    EXPECT_TRUE(entry.ok()) << entry.error();
    SetAge(entry->dir, age);
    return entry->dir;
  }

  static void SetAge(const std::string& dir, int age) { SetMtime(dir + "/" + kStampName, age); }

  // Sets `path`'s access and modification times to `age` seconds ago.
  static void SetMtime(const std::string& path, int age) {
    struct timespec times[2];
    times[0].tv_sec = times[1].tv_sec = ::time(nullptr) - age;
    times[0].tv_nsec = times[1].tv_nsec = 0;
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  }

  std::unique_ptr<TempDir> work_;
};

TEST_F(EvictionTest, ListsEntriesOldestUseFirst) {
  Put("build", "new", 10, 100);
  Put("refs", "old", 10, 5000);
  Put("build", "mid", 10, 1000);
  auto entries = ListCacheEntries(Root());
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].key, Key("old"));
  EXPECT_EQ(entries[0].kind, "refs");
  EXPECT_EQ(entries[1].key, Key("mid"));
  EXPECT_EQ(entries[2].key, Key("new"));
  EXPECT_GT(entries[0].bytes, 10u);  // the artefact and the manifest
  EXPECT_EQ(ListCacheKinds(Root()), (std::vector<std::string>{"build", "refs"}));
}

TEST_F(EvictionTest, EvictsLeastRecentlyUsedAcrossKindsUntilUnderTheBound) {
  std::string a = Put("build", "a", 1000, 4000);
  std::string b = Put("pch", "b", 1000, 3000);
  std::string c = Put("refs", "c", 1000, 2000);
  std::string d = Put("build", "d", 1000, 1000);
  uint64_t each = ListCacheEntries(Root())[0].bytes;
  CacheLimits limits;
  limits.max_bytes = 2 * each + each / 2;  // room for two
  limits.in_use_grace = std::chrono::seconds(60);
  auto report = EvictToBound(Root(), limits);
  ASSERT_TRUE(report.ok()) << report.error();
  EXPECT_EQ(report->removed, 2u);
  EXPECT_FALSE(FileExists(a));
  EXPECT_FALSE(FileExists(b));
  EXPECT_TRUE(FileExists(c));
  EXPECT_TRUE(FileExists(d));
  auto counters = *ReadCacheCounters(Root());
  EXPECT_EQ(counters["build"].evictions, 1u);
  EXPECT_EQ(counters["pch"].evictions, 1u);
  EXPECT_EQ(counters["build"].evicted_bytes, each);
}

TEST_F(EvictionTest, AHitMakesAnEntryRecent) {
  Put("build", "a", 1000, 4000);
  Put("build", "b", 1000, 3000);
  Cache cache(Root(), "build");
  ASSERT_TRUE(cache.Lookup(Key("a")).has_value());  // refreshes a's stamp
  uint64_t each = ListCacheEntries(Root())[0].bytes;
  CacheLimits limits;
  limits.max_bytes = each + each / 2;
  limits.in_use_grace = std::chrono::seconds(0);
  ASSERT_TRUE(EvictToBound(Root(), limits).ok());
  EXPECT_TRUE(cache.Lookup(Key("a")).has_value());
  EXPECT_FALSE(cache.Lookup(Key("b")).has_value());
}

TEST_F(EvictionTest, EntriesInUseAreSpared) {
  std::string recent = Put("build", "recent", 1000, 10);
  std::string locked = Put("build", "locked", 1000, 9000);
  std::string old = Put("build", "old", 1000, 8000);
  Cache cache(Root(), "build");
  auto lock = cache.Lock(Key("locked"), std::chrono::seconds(1));  // being made or read
  ASSERT_TRUE(lock.ok());
  CacheLimits limits;
  limits.max_bytes = 0;
  limits.in_use_grace = std::chrono::seconds(600);
  auto report = EvictToBound(Root(), limits);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->removed, 1u);
  EXPECT_EQ(report->spared, 2u);
  EXPECT_TRUE(FileExists(recent));
  EXPECT_TRUE(FileExists(locked));
  EXPECT_FALSE(FileExists(old));
}

TEST_F(EvictionTest, CommitEnforcesTheBound) {
  Put("build", "old", 100000, 5000);
  CacheLimits limits;
  limits.max_bytes = 150000;
  Cache cache(Root(), "build", limits);
  auto staged = cache.Stage();
  ASSERT_TRUE(staged.ok());
  ASSERT_TRUE(WriteFileAtomic(staged->Join("artefact"), std::string(100000, 'n')).ok());
  ASSERT_TRUE(cache.Commit(Key("new"), std::move(*staged), Json::object()).ok());
  EXPECT_FALSE(cache.Lookup(Key("old"), CountLookup::kNo).has_value());
  EXPECT_TRUE(cache.Lookup(Key("new"), CountLookup::kNo).has_value());
}

TEST_F(EvictionTest, CleanModes) {
  Put("build", "a", 100, 10 * 86400);
  Put("refs", "b", 100, 3 * 86400);
  Put("build", "c", 100, 60);

  CleanRequest older;
  older.mode = CleanMode::kOlderThan;
  older.older_than = std::chrono::hours(24 * 7);
  auto r1 = CleanCache(Root(), older);
  ASSERT_TRUE(r1.ok());
  EXPECT_EQ(r1->removed, 1u);
  EXPECT_EQ(r1->kept, 2u);

  CleanRequest by_kind;
  by_kind.mode = CleanMode::kAll;
  by_kind.kinds = {"refs"};
  auto r2 = CleanCache(Root(), by_kind);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2->removed, 1u);
  EXPECT_EQ(ListCacheEntries(Root()).size(), 1u);

  CleanRequest to_size;
  to_size.mode = CleanMode::kToSize;
  to_size.to_bytes = 0;
  auto r3 = CleanCache(Root(), to_size);
  ASSERT_TRUE(r3.ok());
  EXPECT_EQ(r3->removed, 1u);
  EXPECT_TRUE(ListCacheEntries(Root()).empty());
  // An explicit clean is not an eviction.
  EXPECT_EQ(ReadCacheCounters(Root())->at("build").evictions, 0u);

  CleanRequest bad;
  bad.kinds = {"../etc"};
  EXPECT_FALSE(CleanCache(Root(), bad).ok());
}

// Staging and scratch folders of killed processes go once nothing in them changed for
// kStaleScratchAge; fresh ones (a build or verification under way) stay.
TEST_F(EvictionTest, LeftoversOfKilledProcessesAreSwept) {
  Put("build", "kept", 100, 60);
  auto folder = [&](const std::string& dir, int age) {
    ASSERT_TRUE(EnsureDir(dir).ok());
    ASSERT_TRUE(WriteFileAtomic(dir + "/part", std::string(1000, 'p')).ok());
    SetMtime(dir + "/part", age);
    SetMtime(dir, age);
  };
  const int old = 7 * 3600, recent = 3600;
  folder(Root() + "/build/tmp/stage-old", old);
  folder(Root() + "/build/tmp/stage-live", recent);
  folder(Root() + "/refs/tmp/removed-old", old);
  folder(Root() + "/tmp/verify-old", old);
  folder(Root() + "/tmp/verify-live", old);
  folder(Root() + "/tmp/worker-idle", old);  // a worker's home: its worker may still run
  ASSERT_TRUE(WriteFileAtomic(Root() + "/tmp/verify-live/out.kvt", "just written").ok());

  CleanRequest only_refs;
  only_refs.mode = CleanMode::kOlderThan;
  only_refs.older_than = std::chrono::hours(24 * 365);
  only_refs.kinds = {"refs"};
  auto r1 = CleanCache(Root(), only_refs);
  ASSERT_TRUE(r1.ok());
  EXPECT_EQ(r1->stale_removed, 1u);
  EXPECT_FALSE(FileExists(Root() + "/refs/tmp/removed-old"));
  EXPECT_TRUE(FileExists(Root() + "/build/tmp/stage-old"));  // another kind

  auto r2 = EvictToBound(Root(), CacheLimits{});  // after each commit
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2->stale_removed, 2u);
  EXPECT_EQ(r2->stale_bytes, 2000u);
  EXPECT_FALSE(FileExists(Root() + "/build/tmp/stage-old"));
  EXPECT_FALSE(FileExists(Root() + "/tmp/verify-old"));
  EXPECT_TRUE(FileExists(Root() + "/build/tmp/stage-live"));
  EXPECT_TRUE(FileExists(Root() + "/tmp/verify-live"));  // one file in it is new
  EXPECT_TRUE(FileExists(Root() + "/tmp/worker-idle"));
  EXPECT_EQ(ListCacheEntries(Root()).size(), 1u);        // entries untouched
}

TEST_F(EvictionTest, AnEmptyOrMissingFolderIsFine) {
  EXPECT_TRUE(ListCacheEntries(Root()).empty());
  auto r = CleanCache(Root(), CleanRequest{});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->removed, 0u);
}

}  // namespace
}  // namespace kvault
