#include "engine/phase_clock.h"

#include <gtest/gtest.h>

#include <thread>

namespace kvault {
namespace {

using namespace std::chrono_literals;

TEST(PhaseClockTest, EachLapAddsToItsStage) {
  PhaseClock clock;
  std::this_thread::sleep_for(20ms);
  clock.Lap(Phase::kDescribe);
  clock.Lap(Phase::kBuild);
  std::this_thread::sleep_for(10ms);
  clock.Lap(Phase::kDescribe);
  const Phases phases = clock.Phases();
  EXPECT_GE(phases.Seconds(Phase::kDescribe).value_or(0.0), 0.030);
  EXPECT_LT(phases.Seconds(Phase::kBuild).value_or(1.0), 0.010);
  EXPECT_FALSE(phases.Seconds(Phase::kTimingWait));
  EXPECT_FALSE(phases.Seconds(Phase::kGateWait));
  EXPECT_GE(clock.Elapsed(), phases.Seconds(Phase::kDescribe).value_or(0.0));
}

TEST(PhaseClockTest, TheLocksWaitIsItsOwnPhase) {
  PhaseClock clock;
  std::this_thread::sleep_for(30ms);
  clock.AddLockWait(0.020);  // 20 of the 30 ms were spent waiting for the lock
  clock.Lap(Phase::kTiming);
  const Phases phases = clock.Phases();
  EXPECT_DOUBLE_EQ(phases.Seconds(Phase::kTimingWait).value_or(0.0), 0.020);
  EXPECT_GE(phases.Seconds(Phase::kTiming).value_or(0.0), 0.009);
  EXPECT_LT(phases.Seconds(Phase::kTiming).value_or(0.0), clock.Elapsed() - 0.019);
  clock.Lap(Phase::kRecheck);  // no new wait: none taken out
  EXPECT_DOUBLE_EQ(clock.Phases().Seconds(Phase::kTimingWait).value_or(0.0), 0.020);
}

TEST(PhaseClockTest, GateWaitsAreReportedBesideTheirStages) {
  PhaseClock clock;
  clock.AddGateWait(0.5);
  clock.AddGateWait(0.25);
  clock.Lap(Phase::kCorrectness);
  EXPECT_DOUBLE_EQ(clock.Phases().Seconds(Phase::kGateWait).value_or(0.0), 0.75);
  EXPECT_LT(clock.Phases().Seconds(Phase::kCorrectness).value_or(1.0), 0.5);  // not taken out of the stage
}

TEST(PhaseClockTest, StartBeginsAgain) {
  PhaseClock clock;
  clock.AddLockWait(1);
  clock.AddGateWait(1);
  clock.Lap(Phase::kTiming);
  clock.Start();
  EXPECT_TRUE(clock.Phases().empty());
  clock.Lap(Phase::kDescribe);
  EXPECT_FALSE(clock.Phases().Seconds(Phase::kTimingWait));
}

}  // namespace
}  // namespace kvault
