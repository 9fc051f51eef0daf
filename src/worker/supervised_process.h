#pragma once
// What a ProcessWorker needs of the process behind it: to notice that it ended, to
// kill it with everything it started, and to learn how it ended. Two kinds exist: a
// process the engine started itself (SpawnedProcess, a ChildProcess) and a process a
// zygote forked on the engine's behalf (ForkedProcess, worker/zygote.h).
//
// Thread safety: one caller at a time.
#include <sys/types.h>

#include <memory>

#include "util/child_process.h"

namespace kvault {

class SupervisedProcess {
 public:
  virtual ~SupervisedProcess() = default;
  // Polls readable once the process has ended; -1: poll HasExited() on a short tick.
  virtual int exit_fd() const = 0;
  // True once the process has ended. Leaves KillGroup() safe to call.
  virtual bool HasExited() const = 0;
  // SIGKILL to the process and everything it started. Idempotent.
  virtual void KillGroup() = 0;
  // Blocks until the process has ended; how it ended. Idempotent.
  virtual ExitStatus Wait() = 0;
  // Its pid in the engine's namespace where known, else in the zygote's.
  virtual pid_t pid() const = 0;
};

// A ChildProcess of the engine.
class SpawnedProcess final : public SupervisedProcess {
 public:
  explicit SpawnedProcess(ChildProcess child) : child_(std::move(child)) {}
  int exit_fd() const override { return child_.exit_fd(); }
  bool HasExited() const override { return child_.HasExited(); }
  void KillGroup() override { child_.KillGroup(); }
  ExitStatus Wait() override { return child_.Wait(); }
  pid_t pid() const override { return child_.pid(); }

 private:
  ChildProcess child_;
};

}  // namespace kvault
