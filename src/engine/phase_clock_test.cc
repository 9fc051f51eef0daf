#include "engine/phase_clock.h"

#include <gtest/gtest.h>

#include <thread>

namespace kvault {
namespace {

using namespace std::chrono_literals;

TEST(PhaseClockTest, EachLapAddsToItsStage) {
  PhaseClock clock;
  std::this_thread::sleep_for(20ms);
  clock.Lap("describe");
  clock.Lap("build");
  std::this_thread::sleep_for(10ms);
  clock.Lap("describe");
  const Json phases = clock.Phases();
  EXPECT_GE(phases.value("describe", 0.0), 0.030);
  EXPECT_LT(phases.value("build", 1.0), 0.010);
  EXPECT_FALSE(phases.contains("timing_wait"));
  EXPECT_FALSE(phases.contains("gate_wait"));
  EXPECT_GE(clock.Elapsed(), phases.value("describe", 0.0));
}

TEST(PhaseClockTest, TheLocksWaitIsItsOwnPhase) {
  PhaseClock clock;
  std::this_thread::sleep_for(30ms);
  clock.AddLockWait(0.020);  // 20 of the 30 ms were spent waiting for the lock
  clock.Lap("timing");
  const Json phases = clock.Phases();
  EXPECT_DOUBLE_EQ(phases.value("timing_wait", 0.0), 0.020);
  EXPECT_GE(phases.value("timing", 0.0), 0.009);
  EXPECT_LT(phases.value("timing", 0.0), clock.Elapsed() - 0.019);
  clock.Lap("recheck");  // no new wait: none taken out
  EXPECT_DOUBLE_EQ(clock.Phases().value("timing_wait", 0.0), 0.020);
}

TEST(PhaseClockTest, GateWaitsAreReportedBesideTheirStages) {
  PhaseClock clock;
  clock.AddGateWait(0.5);
  clock.AddGateWait(0.25);
  clock.Lap("correctness");
  EXPECT_DOUBLE_EQ(clock.Phases().value("gate_wait", 0.0), 0.75);
  EXPECT_LT(clock.Phases().value("correctness", 1.0), 0.5);  // not taken out of the stage
}

TEST(PhaseClockTest, StartBeginsAgain) {
  PhaseClock clock;
  clock.AddLockWait(1);
  clock.AddGateWait(1);
  clock.Lap("timing");
  clock.Start();
  EXPECT_EQ(clock.Phases(), Json::object());
  clock.Lap("describe");
  EXPECT_FALSE(clock.Phases().contains("timing_wait"));
}

}  // namespace
}  // namespace kvault
