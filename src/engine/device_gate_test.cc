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

TEST(DeviceGateTest, RunsBlockedByOneTimerStartBeforeTheNextTimer) {
  auto gate = DeviceGate::For("test-phase-fair");
  auto first = gate->Exclude(1s);
  std::atomic<int> order{0};
  std::atomic<int> run_at{0}, second_timer_at{0};
  std::atomic<bool> run_holding{false}, release_run{false};
  std::thread second_timer([&] {
    auto t = gate->Exclude(10s);
    second_timer_at = ++order;
    EXPECT_TRUE(t.drained());
    EXPECT_FALSE(run_holding.load());  // the run ended before this hold began
  });
  std::this_thread::sleep_for(30ms);  // the second timer now waits for the first
  std::thread run([&] {
    auto r = gate->Share();
    run_at = ++order;
    run_holding = true;
    while (!release_run) std::this_thread::sleep_for(1ms);
    run_holding = false;
  });
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(run_at.load(), 0);  // blocked while the first timer holds the gate
  first.Release();
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(run_at.load(), 1);           // the run went first, although a timer waited
  EXPECT_EQ(second_timer_at.load(), 0);  // the second timer waits for it to end
  release_run = true;
  run.join();
  second_timer.join();
  EXPECT_EQ(second_timer_at.load(), 2);
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
