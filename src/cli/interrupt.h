#pragma once
// Ctrl-C for commands that spawn builds and workers (verify, eval): each child runs in
// its own process group, so the terminal's SIGINT reaches only kvault, and a kvault
// that simply died would leave g++ and workers running.
//
//   InterruptGuard guard;            // first thing, before any thread or child starts
//   ... RunBatch(..., guard.flag());
//   if (guard.stopped()) { say what was kept; return kExitInterrupted; }
//
// SIGINT and SIGTERM are blocked in every thread started after the guard and waited
// for on a thread of its own. The first one sets the flag, stops every new child from
// starting and kills the process group of every child (util/child_process.h: StopAll),
// every 50 ms until the process exits, so work in flight ends at once and nothing new
// runs; what it would have recorded must be dropped by the caller (it did not fail by
// itself), and a child the stop killed is not reported as failed (ChildProcess::
// Stopping). A second one ends the process with exit code 130.
// One per process.
#include <atomic>

namespace kvault::cli {

class InterruptGuard {
 public:
  InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  bool stopped() const { return flag_->load(); }
  const std::atomic<bool>* flag() const { return flag_; }

 private:
  const std::atomic<bool>* flag_;
};

}  // namespace kvault::cli
