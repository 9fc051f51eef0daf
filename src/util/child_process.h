#pragma once
// ChildProcess: one supervised child, started in its own process group so that it and
// everything it forks can be killed together. The building block under RunCommand
// (util/subprocess.h) and the worker client (worker/process_worker.h).
//
// Thread safety: a ChildProcess is used by one thread at a time.
//
//   ChildProcess::Spec spec;
//   spec.argv = {"python3", "-m", "kvault_worker"};
//   spec.fds = {{0, devnull}, {1, log_w}, {2, log_w}, {3, req_r}, {4, resp_w}};
//   auto child = ChildProcess::Spawn(spec);
//   ...
//   child->KillGroup();
//   ExitStatus st = child->Wait();
#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "util/result.h"
#include "util/unique_fd.h"

namespace kvault {

// How a process ended: exit_code >= 0 after a normal exit, term_signal > 0 when a
// signal killed it (exit_code is then -1).
struct ExitStatus {
  int exit_code = -1;
  int term_signal = 0;
};

class ChildProcess {
 public:
  struct FdMapping {
    int child_fd;   // descriptor number in the child
    int parent_fd;  // open descriptor in the parent that it becomes a copy of
  };
  struct Spec {
    // argv[0] without a '/' is looked up in the PATH of the child's environment.
    std::vector<std::string> argv;
    // Added to (or replacing entries of) the environment.
    std::vector<std::pair<std::string, std::string>> env_set;
    // Default: true (start from this process's environment); false: env_set only.
    bool inherit_env = true;
    // Working directory; empty: this process's.
    std::string cwd;
    // The child's descriptors. Every other descriptor is closed in the child (those
    // this process opened without O_CLOEXEC included). An unmapped 0, 1 or 2 is
    // opened on /dev/null. REQUIRES: child_fd values distinct and >= 0.
    std::vector<FdMapping> fds;
  };

  // Starts the child. The child's signal mask is empty and common signals (SIGPIPE,
  // SIGINT, SIGTERM, SIGCHLD, ...) have their default dispositions, whatever this
  // process set. Every child is started by one thread that lives as long as this
  // process, so a child's PR_SET_PDEATHSIG (tied by the kernel to the starting thread)
  // fires when this process ends, not when the calling thread does. Error when it could not be started (program not found or not
  // executable, bad cwd, no resources); the message names the program.
  static Result<ChildProcess> Spawn(const Spec& spec);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  // Kills the group and reaps the child unless Wait() already returned.
  ~ChildProcess();

  pid_t pid() const { return pid_; }

  // A descriptor that polls readable once the child has terminated (a Linux pidfd),
  // or -1 when the kernel offers none; then poll HasExited() on a short tick.
  int exit_fd() const { return exit_fd_.get(); }

  // Test hook: while set, Spawn gives children no exit_fd(), exercising the polling
  // fallback that kernels without pidfd need. Process-wide; thread-safe.
  static void DisableExitFdForTesting(bool disable);

  // True once the child has terminated. Does not reap it, so KillGroup() stays safe.
  bool HasExited() const;

  // Sends SIGKILL to the child's whole process group (the child and every descendant
  // that did not leave the group). Idempotent; a no-op after Wait().
  void KillGroup();

  // Sends SIGKILL to the process group of every child that Spawn started and that
  // is not yet reaped (an interrupted command stops its builds and workers at once).
  // Thread-safe.
  static void KillAllGroups();

  // The process is stopping (an interrupted command): from the first call on, Spawn
  // starts nothing (Error "not started: stopping"), and work that sees a child it
  // started die of a signal asks Stopping() before calling that a failure, since the
  // stop killed it. Then KillAllGroups. Process-wide, not undone; thread-safe.
  static void StopAll();
  static bool Stopping();
  // Test hook: clears what StopAll set, so that one test binary can stop more than once.
  static void ResetStopForTesting();

  // Blocks until the child terminates, reaps it and returns how it ended. Idempotent.
  ExitStatus Wait();

 private:
  ChildProcess(pid_t pid, UniqueFd exit_fd) : pid_(pid), exit_fd_(std::move(exit_fd)) {}
  void Release();
  pid_t pid_ = -1;
  bool reaped_ = false;
  ExitStatus status_;
  UniqueFd exit_fd_;
};

}  // namespace kvault
