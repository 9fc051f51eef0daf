#pragma once
// Zygote: a pre-imported worker process that forks one fresh worker per candidate
// (python/kvault_worker/zygote.py; docs/worker-protocol.md, "Zygote"). Starting a
// worker from scratch costs a second or more of imports; a fork costs milliseconds.
//
// Each fork is a new process with the zygote's sandbox (its namespaces, read-only
// mounts, hidden paths, limits), plus its own PID namespace where the zygote may make
// one (then everything the candidate starts dies with the worker), its own folder, and
// no capabilities. The engine supervises it as any worker: ProcessWorker over a
// ForkedProcess (a pidfd to kill it, a status pipe to learn how it ended).
//
//   auto z = Zygote::Start(options, seconds(60));   // options.argv: python -m kvault_worker.zygote
//   auto w = (*z)->Fork(worker_options, seconds(10));
//   (*w)->Call(hello, ...);
//
// Zygote::Spawn starts it without waiting: it imports while the caller does other
// work, and the first Fork (or AwaitReady) waits for it to be ready.
//
// Thread safety: one caller at a time. Destroying the zygote kills it; workers it
// forked die with it (parent-death signals).
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>

#include "util/child_process.h"
#include "util/json.h"
#include "util/result.h"
#include "util/strings.h"
#include "util/unique_fd.h"
#include "worker/process_worker.h"
#include "worker/supervised_process.h"

namespace kvault {

// A worker forked by a zygote. `pid` is the keeper process's pid (in the zygote's
// namespace); `pidfd` refers to it; `status` is the read end of the pipe on which the
// keeper writes the worker's wait status. `same_namespace`: the zygote shares the
// engine's PID namespace, so `pid` is also a process group the engine may kill.
class ForkedProcess final : public SupervisedProcess {
 public:
  ForkedProcess(pid_t pid, UniqueFd pidfd, UniqueFd status, bool same_namespace);
  int exit_fd() const override { return status_.get(); }
  bool HasExited() const override;
  void KillGroup() override;
  ExitStatus Wait() override;
  pid_t pid() const override { return pid_; }

 private:
  pid_t pid_;
  UniqueFd pidfd_;
  UniqueFd status_;
  bool same_namespace_;
  bool waited_ = false;
  ExitStatus result_;
};

class Zygote {
 public:
  // Starts the zygote (`options.argv`, `env_set`, `cwd`) and waits for it to say it is
  // ready. Error: it could not start, died or did not answer within `timeout` (the
  // message carries its output).
  static Result<std::unique_ptr<Zygote>> Start(const WorkerOptions& options,
                                               std::chrono::milliseconds timeout);
  // Starts the zygote and returns at once; it must say it is ready within `timeout`
  // from now (AwaitReady). Error: it could not be started.
  static Result<std::unique_ptr<Zygote>> Spawn(const WorkerOptions& options,
                                               std::chrono::milliseconds timeout);
  ~Zygote();

  // Waits until the zygote has said it is ready; at once once it has (a ready message
  // already sent counts even past the deadline). Error: it died, said something else,
  // or said nothing by Spawn's deadline; it is then dead (the message carries its output).
  Status AwaitReady();
  bool ready() const { return ready_; }
  // A fresh worker, once the zygote is ready (AwaitReady); `worker_options.cwd`, when
  // set, names its folder (a new one directly in the zygote's working directory; the
  // zygote makes it and removes it when the worker has ended). Error: the zygote died,
  // never became ready or did not answer within `timeout`; it is then dead (alive() is
  // false) and the caller starts another or falls back.
  Result<std::unique_ptr<ProcessWorker>> Fork(const WorkerOptions& worker_options,
                                              std::chrono::milliseconds timeout);
  bool alive() const;
  // Whether each worker gets its own PID namespace.
  bool pid_namespace() const { return pid_namespace_; }
  pid_t pid() const { return child_.pid(); }

 private:
  Zygote(ChildProcess child, UniqueFd socket, UniqueFd log);
  // The next message, with at most one descriptor attached (else closed, and an error);
  // Error when none has come by `deadline` (the message names `timeout`).
  Result<Json> Receive(std::chrono::steady_clock::time_point deadline, std::chrono::milliseconds timeout,
                       UniqueFd* fd);
  void DrainLog();
  std::string Die(const std::string& why);

  ChildProcess child_;
  UniqueFd socket_;
  UniqueFd log_;
  HeadTailBuffer log_buffer_{16 * 1024};
  std::chrono::steady_clock::time_point ready_deadline_;  // Spawn's
  std::chrono::milliseconds start_timeout_{0};
  bool ready_ = false;
  bool pid_namespace_ = false;
  bool same_namespace_ = false;
  bool dead_ = false;
};

}  // namespace kvault
