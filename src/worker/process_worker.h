#pragma once
// ProcessWorker: a worker process supervised the way ninja supervises commands. The
// child runs in its own process group with requests on its fd 3, responses on its
// fd 4 (KVAULT_WORKER_FDS=3,4), stdout and stderr on one pipe kept as a bounded log,
// and stdin on /dev/null. While waiting for a response it polls the response pipe,
// the log pipe and the child's exit together, so a chatty child never blocks. On a
// timeout, death or protocol violation it SIGKILLs the whole group and reaps the
// child. SIGPIPE never reaches the engine from a write to a dead worker.
//
// Output is drained only inside Call() and TakeLog(): a worker that prints more than
// its log pipe holds (1 MiB where the kernel allows) while no call is in progress
// waits until the next one.
//
// Thread safety: one caller at a time (see WorkerConnection).
#include <sys/types.h>

#include <memory>
#include <optional>

#include "util/result.h"
#include "util/strings.h"
#include "util/unique_fd.h"
#include "worker/connection.h"
#include "worker/pipes.h"
#include "worker/supervised_process.h"

namespace kvault {

class ProcessWorker final : public WorkerConnection {
 public:
  // Starts the process; sends nothing (the engine's first request is `hello`). Error
  // when the program cannot be started; the message names it.
  static Result<std::unique_ptr<ProcessWorker>> Start(const WorkerOptions& options);
  // Supervises `process`, which holds the worker's ends of `pipes` (copies: the ones
  // in `pipes` are closed here). Only `options.log_limit` and
  // `options.max_response_bytes` apply. Start() and Zygote::Fork() end here.
  static std::unique_ptr<ProcessWorker> Adopt(std::unique_ptr<SupervisedProcess> process,
                                              WorkerPipes pipes, const WorkerOptions& options);
  // Sends nothing; kills the whole group and reaps the child.
  ~ProcessWorker() override = default;

  WorkerReply Call(Json request, std::chrono::milliseconds timeout) override;
  bool alive() const override;
  std::string TakeLog() override;
  void Kill() override;

  pid_t pid() const override { return child_->pid(); }

 private:
  ProcessWorker(std::unique_ptr<SupervisedProcess> child, UniqueFd requests, UniqueFd responses, UniqueFd log,
                const WorkerOptions& options);
  // The next complete response line, checked against `id`; nullopt if none yet.
  std::optional<WorkerReply> TakeResponse(int64_t id);
  // Kills and reaps the worker and returns a failure reply. For kDied, `detail` is
  // built from the exit status when empty.
  WorkerReply Fail(WorkerFailure failure, std::string detail);
  WorkerReply DeadReply() const;
  void DrainLog();

  std::unique_ptr<SupervisedProcess> child_;
  UniqueFd requests_;   // write end of the worker's fd 3
  UniqueFd responses_;  // read end of the worker's fd 4
  UniqueFd log_;        // read end of the worker's fds 1 and 2
  HeadTailBuffer log_buffer_;
  std::string pending_;     // response bytes not yet consumed as a line
  size_t scanned_ = 0;      // prefix of pending_ known to hold no '\n'
  size_t max_response_bytes_;
  int64_t next_id_ = 1;
  bool dead_ = false;
  WorkerReply last_failure_;
};

}  // namespace kvault
