#include "engine/phase_clock.h"

namespace kvault {

void PhaseClock::Start() {
  started_ = lap_started_ = Clock::now();
  phases_ = kvault::Phases();
  lock_wait_s_ = lock_lapped_s_ = gate_wait_s_ = 0;
}

void PhaseClock::Lap(Phase stage) {
  const auto now = Clock::now();
  // The wait for the device's lock is its own phase, wherever it happened.
  const double waited = lock_wait_s_ - lock_lapped_s_;
  lock_lapped_s_ = lock_wait_s_;
  phases_.Add(stage, std::chrono::duration<double>(now - lap_started_).count() - waited);
  if (waited > 0) phases_.Add(Phase::kTimingWait, waited);
  lap_started_ = now;
}

double PhaseClock::Elapsed() const {
  return std::chrono::duration<double>(Clock::now() - started_).count();
}

kvault::Phases PhaseClock::Phases() const {
  kvault::Phases phases = phases_;
  if (gate_wait_s_ > 0) phases.Set(Phase::kGateWait, gate_wait_s_);  // within the stages above
  return phases;
}

}  // namespace kvault
