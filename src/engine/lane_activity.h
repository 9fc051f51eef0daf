#pragma once
// What a verification lane is doing now, for the heartbeat of a batch in which no
// attempt ends for a while (RunBatch, docs/cli.md "Progress"): the attempt (task and
// candidate), the stage the verifier announced last (its Phase), and what it waits
// for, if anything (the device's gate, a memory lease, the compile pool...), each with
// when it began. The lane writes, any thread reads; cheap enough to update at every
// stage and wait.
//
//   LaneActivity activity;
//   activity.Begin("relu <- s1.py");
//   activity.Enter(Phase::kCorrectness);
//   { auto w = activity.Wait("the device gate (shared)"); gate->Share(); }
//   LaneActivity::Now now = activity.Read();   // from the reporting thread
//   std::string line = Describe(now);          // "relu <- s1.py: correctness for 12s, ..."
//   activity.End();
//
// Thread-safe.
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "engine/verification_records.h"

namespace kvault {

class LaneActivity {
 public:
  // A snapshot (Read).
  struct Now {
    bool busy = false;                 // between Begin and End
    std::string attempt;               // as Begin named it
    std::optional<Phase> phase;        // the stage entered last; none before the first
    double attempt_s = 0, phase_s = 0;
    std::string waiting_on;            // "" when not waiting
    double wait_s = 0;
  };

  // Ends a wait when destroyed (or by End).
  class Waiting {
   public:
    Waiting(Waiting&& o) noexcept : activity_(std::exchange(o.activity_, nullptr)) {}
    Waiting& operator=(Waiting&&) = delete;
    Waiting(const Waiting&) = delete;
    Waiting& operator=(const Waiting&) = delete;
    ~Waiting() { End(); }
    void End();

   private:
    friend class LaneActivity;
    explicit Waiting(LaneActivity* activity) : activity_(activity) {}
    LaneActivity* activity_ = nullptr;
  };

  void Begin(std::string attempt);
  void Enter(Phase phase);
  // Waits nest: the innermost is reported; its end restores none (the outer one's
  // wait is rare and short).
  [[nodiscard]] Waiting Wait(std::string on);
  void End();
  Now Read() const;

 private:
  using Clock = std::chrono::steady_clock;
  mutable std::mutex mu_;
  bool busy_ = false;
  std::string attempt_;
  std::optional<Phase> phase_;
  Clock::time_point begun_{}, entered_{}, wait_began_{};
  std::string waiting_on_;
};

// One line: "relu <- s1.py: correctness for 12s, waiting 10s for the device gate
// (shared)"; "idle" when not busy.
std::string Describe(const LaneActivity::Now& now);

}  // namespace kvault
