// Cache: commit and lookup, damaged entries, concurrent writers (several processes).
#include "cache/cache.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cache/stats.h"
#include "util/files.h"
#include "util/sha256.h"

namespace kvault {
namespace {

std::string Key(const std::string& name) { return Sha256Hex(name); }

class CacheTest : public ::testing::Test {
 protected:
  void SetUp() override { work_ = std::make_unique<TempDir>(TempDir::Create("", "kvault-cachetest").value()); }
  std::string Root() const { return work_->Join("cache"); }

  // Commits an entry holding `file` with `contents`.
  CacheEntry Put(Cache& cache, const std::string& key, const std::string& file, const std::string& contents) {
    auto staged = cache.Stage();
    EXPECT_TRUE(staged.ok()) << staged.error();
    EXPECT_TRUE(WriteFileAtomic(staged->Join(file), contents).ok());
    auto entry = cache.Commit(key, std::move(*staged), Json{{"note", "made by the test"}});
    EXPECT_TRUE(entry.ok()) << entry.error();
    return *entry;
  }

  std::unique_ptr<TempDir> work_;
};

TEST_F(CacheTest, CommitsThenFindsTheEntry) {
  Cache cache(Root(), "build");
  const std::string key = Key("a");
  EXPECT_FALSE(cache.Lookup(key).has_value());
  CacheEntry put = Put(cache, key, "kv_a.so", "shared object");
  EXPECT_EQ(put.dir, Root() + "/build/" + key.substr(0, 2) + "/" + key);
  auto hit = cache.Lookup(key);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(*ReadFile(hit->Path("kv_a.so")), "shared object");
  EXPECT_EQ(hit->manifest.meta["note"], "made by the test");
  ASSERT_EQ(hit->manifest.files.size(), 1u);
  EXPECT_EQ(hit->manifest.files[0].size, 13u);
  EXPECT_EQ(hit->manifest.files[0].sha256, Sha256Hex("shared object"));
  EXPECT_TRUE(FileExists(hit->Path(kStampName)));
  // Nothing left behind in the staging area.
  EXPECT_TRUE(std::filesystem::is_empty(Root() + "/build/tmp"));
  auto counters = ReadCacheCounters(Root());
  ASSERT_TRUE(counters.ok());
  EXPECT_EQ((*counters)["build"].misses, 1u);
  EXPECT_EQ((*counters)["build"].hits, 1u);
  EXPECT_EQ((*counters)["build"].stores, 1u);
}

TEST_F(CacheTest, KindsAreSeparate) {
  Cache build(Root(), "build"), refs(Root(), "refs");
  Put(build, Key("a"), "x", "1");
  EXPECT_FALSE(refs.Lookup(Key("a")).has_value());
  EXPECT_TRUE(build.Lookup(Key("a")).has_value());
}

TEST_F(CacheTest, AnAbandonedStageLeavesNothing) {
  Cache cache(Root(), "build");
  std::string path;
  {
    auto staged = cache.Stage();
    ASSERT_TRUE(staged.ok());
    path = staged->path();
    ASSERT_TRUE(WriteFileAtomic(staged->Join("half"), "written").ok());
  }
  EXPECT_FALSE(FileExists(path));
}

// Each kind of damage: the lookup misses, removes the entry, counts it, and a new
// commit of the key works.
TEST_F(CacheTest, ADamagedEntryIsRemovedAndRebuilt) {
  struct Damage {
    const char* what;
    void (*apply)(const std::string& dir);
  };
  const Damage damages[] = {
      {"truncated", [](const std::string& d) { std::filesystem::resize_file(d + "/kv.so", 3); }},
      {"same size, other bytes", [](const std::string& d) { ASSERT_TRUE(WriteFileAtomic(d + "/kv.so", "XXXXXXXXXXXXXX").ok()); }},
      {"file deleted", [](const std::string& d) { std::filesystem::remove(d + "/kv.so"); }},
      {"manifest deleted", [](const std::string& d) { std::filesystem::remove(d + "/" + kManifestName); }},
      {"manifest garbage", [](const std::string& d) { ASSERT_TRUE(WriteFileAtomic(d + "/" + kManifestName, "{nope").ok()); }},
  };
  Cache cache(Root(), "build");
  uint64_t corrupt = 0;
  for (const Damage& damage : damages) {
    SCOPED_TRACE(damage.what);
    const std::string key = Key(damage.what);
    CacheEntry e = Put(cache, key, "kv.so", "good artefact!");
    damage.apply(e.dir);
    EXPECT_FALSE(cache.Lookup(key).has_value());
    EXPECT_FALSE(FileExists(e.dir));
    ++corrupt;
    EXPECT_EQ(ReadCacheCounters(Root())->at("build").corrupt, corrupt);
    Put(cache, key, "kv.so", "good artefact!");
    auto hit = cache.Lookup(key);
    ASSERT_TRUE(hit.has_value());
    EXPECT_EQ(*ReadFile(hit->Path("kv.so")), "good artefact!");
  }
}

TEST_F(CacheTest, ALargeFileIsCheckedBySizeAndTime) {
  Cache cache(Root(), "pch");
  const std::string key = Key("big");
  CacheEntry e = Put(cache, key, "big.gch", std::string(kFullHashLimit + 1, 'x'));
  EXPECT_TRUE(cache.Lookup(key).has_value());
  // Rewritten with the same size: the modification time gives it away.
  std::string other(kFullHashLimit + 1, 'y');
  ASSERT_TRUE(WriteFileAtomic(e.Path("big.gch"), other).ok());
  EXPECT_FALSE(cache.Lookup(key).has_value());
}

TEST_F(CacheTest, CommittingAKeyThatExistsKeepsTheFirstEntry) {
  Cache cache(Root(), "build");
  const std::string key = Key("twice");
  Put(cache, key, "kv.so", "first");
  CacheEntry second = Put(cache, key, "kv.so", "second");
  EXPECT_EQ(*ReadFile(second.Path("kv.so")), "first");
  EXPECT_TRUE(std::filesystem::is_empty(Root() + "/build/tmp"));
}

TEST_F(CacheTest, ConcurrentWritersInSeveralProcessesLeaveOneValidEntry) {
  const std::string key = Key("contended");
  constexpr int kWriters = 6;
  std::vector<pid_t> children;
  for (int i = 0; i < kWriters; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      Cache cache(Root(), "build");
      auto staged = cache.Stage();
      if (!staged) ::_exit(2);
      // A large-ish artefact, so the writes overlap in time.
      if (!WriteFileAtomic(staged->Join("kv.so"), std::string(4 << 20, 'a')).ok()) ::_exit(3);
      auto entry = cache.Commit(key, std::move(*staged), Json{{"writer", i}});
      if (!entry) ::_exit(4);
      auto bytes = ReadFile(entry->Path("kv.so"));
      ::_exit(bytes && bytes->size() == (4u << 20) ? 0 : 5);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "writer exit " << WEXITSTATUS(status);
  }
  Cache cache(Root(), "build");
  auto hit = cache.Lookup(key);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->manifest.bytes, 4u << 20);
  int entries = 0;
  for (auto& d : std::filesystem::directory_iterator(Root() + "/build/" + key.substr(0, 2)))
    entries += d.is_directory();
  EXPECT_EQ(entries, 1);
  EXPECT_TRUE(std::filesystem::is_empty(Root() + "/build/tmp"));
  auto counters = ReadCacheCounters(Root());
  EXPECT_EQ((*counters)["build"].stores, 1u);
}

TEST_F(CacheTest, TheLockMakesOthersWait) {
  Cache cache(Root(), "build");
  const std::string key = Key("locked");
  auto held = cache.Lock(key, std::chrono::seconds(1));
  ASSERT_TRUE(held.ok()) << held.error();
  auto other = cache.Lock(key, std::chrono::milliseconds(50));
  EXPECT_FALSE(other.ok());
}

// Candidate workers see build/ read-only, and flock needs no write access: a lock file
// beside the entries let a candidate hold another lane's build of that key. Locks lie
// under locks/, which the sandbox hides from candidates.
TEST_F(CacheTest, TheLockLiesOutsideTheKindsFolder) {
  Cache cache(Root(), "build");
  const std::string key = Key("locked");
  auto held = cache.Lock(key, std::chrono::seconds(1));
  ASSERT_TRUE(held.ok()) << held.error();
  EXPECT_EQ(CacheLockPath(Root(), "build", key), Root() + "/locks/build/" + key.substr(0, 2) + "/" + key + ".lock");
  EXPECT_TRUE(FileExists(CacheLockPath(Root(), "build", key)));
  EXPECT_FALSE(std::filesystem::exists(Root() + "/build/" + key.substr(0, 2) + "/" + key + ".lock"));
}

TEST(CacheKindName, AcceptsPlainNamesOnly) {
  EXPECT_TRUE(IsCacheKindName("build"));
  EXPECT_TRUE(IsCacheKindName("native"));
  EXPECT_FALSE(IsCacheKindName("tmp"));
  EXPECT_FALSE(IsCacheKindName(""));
  EXPECT_FALSE(IsCacheKindName("../x"));
  EXPECT_FALSE(IsCacheKindName("Build"));
}

}  // namespace
}  // namespace kvault
