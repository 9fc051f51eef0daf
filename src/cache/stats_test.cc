// Counters on disk, from several processes at once; the size bound's parsing.
#include "cache/stats.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache/limits.h"
#include "util/files.h"

namespace kvault {
namespace {

TEST(CacheStats, CountsPerKind) {
  auto work = TempDir::Create("", "kvault-statstest").value();
  EXPECT_TRUE(ReadCacheCounters(work.path())->empty());
  ASSERT_TRUE(CountCacheEvent(work.path(), "build", CacheEvent::kHit).ok());
  ASSERT_TRUE(CountCacheEvent(work.path(), "build", CacheEvent::kMiss).ok());
  ASSERT_TRUE(CountCacheEvent(work.path(), "refs", CacheEvent::kEviction, 42).ok());
  auto c = *ReadCacheCounters(work.path());
  EXPECT_EQ(c["build"].hits, 1u);
  EXPECT_EQ(c["build"].misses, 1u);
  EXPECT_EQ(c["refs"].evictions, 1u);
  EXPECT_EQ(c["refs"].evicted_bytes, 42u);
}

TEST(CacheStats, SeveralProcessesLoseNoUpdate) {
  auto work = TempDir::Create("", "kvault-statstest").value();
  constexpr int kProcs = 4, kEach = 50;
  std::vector<pid_t> kids;
  for (int p = 0; p < kProcs; ++p) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      for (int i = 0; i < kEach; ++i)
        if (!CountCacheEvent(work.path(), "build", CacheEvent::kHit).ok()) ::_exit(1);
      ::_exit(0);
    }
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(ReadCacheCounters(work.path())->at("build").hits, uint64_t{kProcs * kEach});
}

TEST(CacheStats, ADamagedFileStartsOver) {
  auto work = TempDir::Create("", "kvault-statstest").value();
  ASSERT_TRUE(WriteFileAtomic(work.Join("stats.json"), "not json").ok());
  EXPECT_TRUE(ReadCacheCounters(work.path())->empty());
  ASSERT_TRUE(CountCacheEvent(work.path(), "build", CacheEvent::kStore).ok());
  EXPECT_EQ(ReadCacheCounters(work.path())->at("build").stores, 1u);
}

TEST(CacheLimitsTest, ParsesGigabytes) {
  EXPECT_EQ(*ParseGigabytes("20"), 20'000'000'000ull);
  EXPECT_EQ(*ParseGigabytes("0.5"), 500'000'000ull);
  EXPECT_EQ(*ParseGigabytes("0"), 0u);
  EXPECT_FALSE(ParseGigabytes("").ok());
  EXPECT_FALSE(ParseGigabytes("-1").ok());
  EXPECT_FALSE(ParseGigabytes("10GB").ok());
  EXPECT_FALSE(ParseGigabytes("nan").ok());
  EXPECT_FALSE(ParseGigabytes("1e12").ok());
}

TEST(CacheLimitsTest, FromTheEnvironment) {
  unsetenv("KVAULT_CACHE_MAX_GB");
  EXPECT_EQ(CacheLimits::FromEnv()->max_bytes, 20'000'000'000ull);
  setenv("KVAULT_CACHE_MAX_GB", "1.5", 1);
  EXPECT_EQ(CacheLimits::FromEnv()->max_bytes, 1'500'000'000ull);
  setenv("KVAULT_CACHE_MAX_GB", "lots", 1);
  auto bad = CacheLimits::FromEnv();
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("KVAULT_CACHE_MAX_GB"), std::string::npos);
  unsetenv("KVAULT_CACHE_MAX_GB");
}

}  // namespace
}  // namespace kvault
