#include "engine/timing_lock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "engine/testing/test_cache.h"

namespace kvault {
namespace {

class TimingLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(cache_.ok());
    options_.device_index = 3;
    options_.timing.warmup_ms = 100;
    options_.timing.rewarm_ms = 10;
    options_.timing.rewarm_within_ms = 60'000;
  }

  // Leaves `note` on the device's lock, as another process's timing would.
  void LeaveNote(const std::string& note) {
    ASSERT_TRUE(EnsureDir(cache_.path() + "/locks"));
    auto lock = FileLock::Acquire(TimingLockPath(options_));
    ASSERT_TRUE(lock) << lock.error();
    ASSERT_TRUE(lock->SetNote(note));
  }

  kvault::testing::TestCache cache_;
  EngineOptions& options_ = cache_.options;
};

TEST_F(TimingLockTest, OneLockPerBackendAndDeviceInTheCachesLockFolder) {
  EXPECT_EQ(TimingLockPath(options_), cache_.path() + "/locks/timing-cpu-3.lock");
  auto lock = TimingLock::Acquire(options_);
  ASSERT_TRUE(lock) << lock.error();
  EXPECT_TRUE(lock->held());
  EXPECT_TRUE(std::filesystem::exists(TimingLockPath(options_)));
}

TEST_F(TimingLockTest, TheFirstTimingWarmsUpFully) {
  auto lock = TimingLock::Acquire(options_);
  ASSERT_TRUE(lock);
  EXPECT_EQ(lock->WarmupMs(options_.timing), 100);
}

TEST_F(TimingLockTest, ATimingRightAfterAnotherWarmsUpBriefly) {
  auto first = TimingLock::Acquire(options_);
  ASSERT_TRUE(first);
  first->GiveBack();
  EXPECT_FALSE(first->held());
  first->GiveBack();  // no-op
  auto next = TimingLock::Acquire(options_);
  ASSERT_TRUE(next) << next.error();
  EXPECT_EQ(next->WarmupMs(options_.timing), 10);
  options_.timing.rewarm_within_ms = 0;  // "a moment ago" is now too long ago
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_EQ(next->WarmupMs(options_.timing), 100);
}

TEST_F(TimingLockTest, OldMalformedOrFutureNotesWarmUpFully) {
  for (const std::string note : {"timing ended at 5", "timing ended at soon", "something else",
                                 "timing ended at 9223372036854775807"}) {
    LeaveNote(note);
    auto lock = TimingLock::Acquire(options_);
    ASSERT_TRUE(lock);
    EXPECT_EQ(lock->WarmupMs(options_.timing), 100) << note;
  }
}

TEST_F(TimingLockTest, ADeviceBusyWithAnotherTimingIsAnError) {
  ASSERT_TRUE(EnsureDir(cache_.path() + "/locks"));
  auto other = FileLock::Acquire(TimingLockPath(options_));
  ASSERT_TRUE(other);
  options_.timeouts.time = std::chrono::milliseconds(50);
  auto lock = TimingLock::Acquire(options_);
  ASSERT_FALSE(lock);
  EXPECT_NE(lock.error().find("stayed busy with other timings"), std::string::npos) << lock.error();
}

}  // namespace
}  // namespace kvault
