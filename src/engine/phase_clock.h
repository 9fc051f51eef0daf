#pragma once
// Where one verification's time goes (Verification::phases; docs/cli.md): the wall
// seconds of each stage it reached. Two waits are kept apart: the wait for the
// device's timing lock is a phase of its own, `timing_wait`, taken out of the stage
// it happened in; the waits for shared holds of the device's gate, `gate_wait`, stay
// part of their stages and are reported beside them.
//
//   PhaseClock clock;                 // started
//   ... clock.Lap(Phase::kDescribe);
//   clock.AddLockWait(s);             // wherever the lock was waited for
//   ... clock.Lap(Phase::kTiming);    // kTiming without s, kTimingWait s
//   v.phases = clock.Phases();
// Not thread-safe (one per lane).
#include <chrono>

#include "engine/verification_records.h"

namespace kvault {

class PhaseClock {
 public:
  PhaseClock() { Start(); }

  // A new verification: every phase and wait at zero, the clock at now.
  void Start();
  // The stage since the last Lap (or Start) ends: its seconds, less the lock waits
  // added meanwhile, are added to `stage`; those waits to kTimingWait.
  void Lap(Phase stage);
  void AddLockWait(double seconds) { lock_wait_s_ += seconds; }
  void AddGateWait(double seconds) { gate_wait_s_ += seconds; }

  // Seconds since Start.
  double Elapsed() const;
  // Every stage lapped so far, and kGateWait when there was one.
  kvault::Phases Phases() const;

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point started_, lap_started_;
  kvault::Phases phases_;
  double lock_wait_s_ = 0;    // since Start
  double lock_lapped_s_ = 0;  // lock_wait_s_ at the last Lap
  double gate_wait_s_ = 0;
};

}  // namespace kvault
