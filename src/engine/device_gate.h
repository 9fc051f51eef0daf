#pragma once
// Keeps a device quiet while one verification times on it (docs/timing.md, "Who runs
// what"). Lanes hold the gate shared around their correctness runs (work on the
// device); the lane that times holds it exclusively: it waits for the runs in flight
// to end, and no new run starts until it is done. Phase-fair: a lane asking for the
// exclusive hold blocks new shared holds at once, so a stream of correctness runs
// cannot starve the timer; and the runs blocked while one lane timed all start when it
// releases, before the next timer's hold, so a queue of timers cannot starve the runs
// either (a run waits for one exclusive hold at most, a timer for the holds queued
// before it and one batch of runs between each). One gate per device per process
// (other kvault processes on the machine are kept out of timing by the device's flock
// alone).
//
//   auto gate = DeviceGate::For("cuda-0");
//   { auto run = gate->Share(); ... }                       // a correctness run
//   { auto t = gate->Exclude(std::chrono::seconds(5)); ... } // timing
//
// Thread-safe. A hold may be released by another thread than the one that took it.
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace kvault {

class DeviceGate {
 public:
  // The gate of `device` (for example "cuda-0") in this process.
  static std::shared_ptr<DeviceGate> For(const std::string& device);

  class Hold {
   public:
    Hold() = default;
    Hold(Hold&& o) noexcept
        : gate_(std::exchange(o.gate_, nullptr)), exclusive_(o.exclusive_), drained_(o.drained_) {}
    Hold& operator=(Hold&& o) noexcept;
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
    ~Hold() { Release(); }
    // Exclusive holds: whether every shared hold had ended when it was granted (false
    // when the wait ran out: a run that hangs cannot stall timing for long).
    bool drained() const { return drained_; }
    bool held() const { return gate_ != nullptr; }
    void Release();

   private:
    friend class DeviceGate;
    Hold(DeviceGate* gate, bool exclusive, bool drained)
        : gate_(gate), exclusive_(exclusive), drained_(drained) {}
    DeviceGate* gate_ = nullptr;  // gates live as long as the process (For)
    bool exclusive_ = false;
    bool drained_ = true;
  };

  // Waits while an exclusive hold is held or asked for, until the next exclusive
  // release (which lets every run waiting then start, even if other timers wait).
  Hold Share();
  // Blocks new shared holds, then waits up to `drain` for those in flight to end.
  // Exclusive holds exclude each other (without limit on the wait).
  Hold Exclude(std::chrono::milliseconds drain);

  int shared_holders() const;

 private:
  DeviceGate() = default;
  void ReleaseShared();
  void ReleaseExclusive();

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  int shared_ = 0;             // shared holds, including those granted but not yet woken
  int shared_blocked_ = 0;     // Share calls waiting for the next exclusive release
  unsigned long long releases_ = 0;  // exclusive releases so far: the phase
  int writers_waiting_ = 0;
  bool writer_ = false;
};

}  // namespace kvault
