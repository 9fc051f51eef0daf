#include "engine/device_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace kvault {
namespace {

using namespace std::chrono_literals;

TEST(DeviceGateTest, SharedHoldsCoexistAndTheExclusiveWaitsForThem) {
  auto gate = DeviceGate::For("test-coexist");
  auto a = gate->Share();
  auto b = gate->Share();
  EXPECT_EQ(gate->shared_holders(), 2);
  std::atomic<bool> timing{false};
  std::thread timer([&] {
    auto t = gate->Exclude(10s);
    timing = true;
    EXPECT_TRUE(t.drained());
    EXPECT_EQ(gate->shared_holders(), 0);
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(timing.load());  // two runs in flight
  a.Release();
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(timing.load());  // one still in flight
  b.Release();
  timer.join();
  EXPECT_TRUE(timing.load());
}

TEST(DeviceGateTest, AWaitingTimerBlocksNewRuns) {
  auto gate = DeviceGate::For("test-writer-first");
  auto run = gate->Share();
  std::atomic<bool> timed{false}, second_run{false};
  std::thread timer([&] {
    auto t = gate->Exclude(10s);
    std::this_thread::sleep_for(30ms);
    timed = true;
  });
  std::this_thread::sleep_for(30ms);  // the timer now waits for `run`
  std::thread other([&] {
    auto r = gate->Share();
    second_run = true;
    EXPECT_TRUE(timed.load());  // only after the timing
  });
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(second_run.load());
  run.Release();
  timer.join();
  other.join();
  EXPECT_TRUE(second_run.load());
}

TEST(DeviceGateTest, AHangingRunCannotStallTheTimerPastTheDrainLimit) {
  auto gate = DeviceGate::For("test-drain-limit");
  auto hanging = gate->Share();
  const auto t0 = std::chrono::steady_clock::now();
  auto t = gate->Exclude(50ms);
  EXPECT_FALSE(t.drained());
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 50ms);
  std::atomic<bool> new_run{false};
  std::thread other([&] {
    auto r = gate->Share();
    new_run = true;
  });
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(new_run.load());  // still held off while the timer holds the gate
  t.Release();
  other.join();
  EXPECT_TRUE(new_run.load());
}

TEST(DeviceGateTest, ExclusiveHoldsExcludeEachOther) {
  auto gate = DeviceGate::For("test-two-timers");
  auto first = gate->Exclude(1s);
  std::atomic<bool> second{false};
  std::thread other([&] {
    auto t = gate->Exclude(1s);
    second = true;
  });
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(second.load());
  DeviceGate::Hold moved = std::move(first);  // released by whoever holds it last
  moved.Release();
  other.join();
  EXPECT_TRUE(second.load());
}

}  // namespace
}  // namespace kvault
