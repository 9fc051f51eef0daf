#include "worker/process_worker.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "util/fd_io.h"
#include "util/json_parse.h"
#include "util/subprocess.h"
#include "worker/pipes.h"

namespace kvault {
namespace {

using Clock = std::chrono::steady_clock;

// Without a pidfd, worker exit is noticed by polling at this interval.
constexpr std::chrono::milliseconds kExitPollTick{10};
// After the worker closes one of its protocol pipes, how long it may take to exit
// before the close counts as a protocol violation rather than a death.
constexpr std::chrono::milliseconds kCloseGrace{1000};
// Deepest nesting accepted in a response (real responses nest 3 levels).
constexpr size_t kMaxResponseDepth = 64;
constexpr std::chrono::milliseconds kMaxTimeout = std::chrono::hours(24 * 365);

}  // namespace

Result<std::unique_ptr<ProcessWorker>> ProcessWorker::Start(const WorkerOptions& options) {
  auto pipes = MakeWorkerPipes();
  if (!pipes) return Error{pipes.error()};
  ChildProcess::Spec spec;
  spec.argv = options.argv;
  spec.env_set = options.env_set;
  spec.env_set.emplace_back("KVAULT_WORKER_FDS", "3,4");
  spec.cwd = options.cwd;
  spec.fds = {{1, pipes->log.write.get()},
              {2, pipes->log.write.get()},
              {3, pipes->requests.read.get()},
              {4, pipes->responses.write.get()}};
  auto child = ChildProcess::Spawn(spec);
  if (!child) return Error{child.error()};
  return Adopt(std::make_unique<SpawnedProcess>(std::move(*child)), std::move(*pipes), options);
}

std::unique_ptr<ProcessWorker> ProcessWorker::Adopt(std::unique_ptr<SupervisedProcess> process,
                                                    WorkerPipes pipes, const WorkerOptions& options) {
  // Only the worker holds its ends now, so EOF and EPIPE mean the worker let go.
  pipes.requests.read.reset();
  pipes.responses.write.reset();
  pipes.log.write.reset();
  SetNonBlocking(pipes.requests.write.get());
  SetNonBlocking(pipes.responses.read.get());
  SetNonBlocking(pipes.log.read.get());
  return std::unique_ptr<ProcessWorker>(
      new ProcessWorker(std::move(process), std::move(pipes.requests.write),
                        std::move(pipes.responses.read), std::move(pipes.log.read), options));
}

ProcessWorker::ProcessWorker(std::unique_ptr<SupervisedProcess> child, UniqueFd requests, UniqueFd responses,
                             UniqueFd log, const WorkerOptions& options)
    : child_(std::move(child)),
      requests_(std::move(requests)),
      responses_(std::move(responses)),
      log_(std::move(log)),
      log_buffer_(options.log_limit),
      max_response_bytes_(options.max_response_bytes) {}

bool ProcessWorker::alive() const { return !dead_ && !child_->HasExited(); }

void ProcessWorker::DrainLog() {
  if (!log_) return;
  auto sink = [this](std::string_view d) { log_buffer_.Append(d); };
  if (ReadAvailable(log_.get(), sink) == ReadState::kEof) log_.reset();
}

std::string ProcessWorker::TakeLog() {
  DrainLog();
  return log_buffer_.Take();
}

void ProcessWorker::Kill() {
  if (dead_) return;
  Fail(WorkerFailure::kDied, "worker was killed by the engine");
}

WorkerReply ProcessWorker::DeadReply() const {
  WorkerReply r = last_failure_;
  r.failure = WorkerFailure::kDied;
  r.detail = "worker is not running (" + last_failure_.detail + ")";
  return r;
}

WorkerReply ProcessWorker::Fail(WorkerFailure failure, std::string detail) {
  child_->KillGroup();
  ExitStatus status = child_->Wait();
  dead_ = true;
  DrainLog();  // the last words of the killed processes are still in the pipe
  requests_.reset();
  responses_.reset();
  log_.reset();
  WorkerReply r;
  r.failure = failure;
  r.exit_code = status.exit_code;
  r.term_signal = status.term_signal;
  r.detail = detail.empty() ? "worker " + DescribeTermination(status.exit_code, status.term_signal)
                            : std::move(detail);
  last_failure_ = r;
  return r;
}

std::optional<WorkerReply> ProcessWorker::TakeResponse(int64_t id) {
  size_t newline = pending_.find('\n', scanned_);
  if (newline == std::string::npos) {
    scanned_ = pending_.size();
    return std::nullopt;
  }
  if (newline > max_response_bytes_) {
    return Fail(WorkerFailure::kProtocol,
                "response line longer than " + std::to_string(max_response_bytes_) + " bytes");
  }
  std::string line = pending_.substr(0, newline);
  pending_.erase(0, newline + 1);
  scanned_ = 0;
  auto parsed = ParseJson(line, kMaxResponseDepth);
  if (!parsed) {
    return Fail(WorkerFailure::kProtocol,
                "invalid JSON from worker: " + parsed.error() + " in line: " + Truncate(line, 200));
  }
  if (!parsed->is_object()) {
    return Fail(WorkerFailure::kProtocol,
                "response from worker is not a JSON object: " + Truncate(line, 200));
  }
  auto it = parsed->find("id");
  if (it == parsed->end() || !it->is_number_integer() || it->get<int64_t>() != id) {
    std::string got = it == parsed->end() ? "none" : it->dump();
    return Fail(WorkerFailure::kProtocol, "response id " + got + " does not match request id " +
                                              std::to_string(id));
  }
  WorkerReply r;
  r.response = std::move(*parsed);
  return r;
}

WorkerReply ProcessWorker::Call(Json request, std::chrono::milliseconds timeout) {
  if (dead_) return DeadReply();
  if (child_->HasExited()) return Fail(WorkerFailure::kDied, "");
  const int64_t id = next_id_++;
  request["id"] = id;
  const std::string line = DumpJson(request) + "\n";
  size_t written = 0;

  const auto start = Clock::now();
  const auto deadline = start + std::clamp(timeout, std::chrono::milliseconds(0), kMaxTimeout);
  std::optional<Clock::time_point> pipe_closed_at;  // the worker closed fd 3 or fd 4
  std::string pipe_closed_what;
  bool exited = false;
  while (true) {
    if (auto reply = TakeResponse(id)) return std::move(*reply);
    if (pending_.size() > max_response_bytes_) {
      return Fail(WorkerFailure::kProtocol, "response line longer than " +
                                                std::to_string(max_response_bytes_) + " bytes");
    }
    if (exited) {
      // A response written just before dying is still in the pipe: prefer it.
      if (responses_) {
        ReadAvailable(responses_.get(), [this](std::string_view d) { pending_.append(d); },
                      max_response_bytes_ + 1);
      }
      if (auto reply = TakeResponse(id)) return std::move(*reply);
      return Fail(WorkerFailure::kDied, "");
    }
    const auto now = Clock::now();
    if (pipe_closed_at && now - *pipe_closed_at >= kCloseGrace) {
      return Fail(WorkerFailure::kProtocol, "worker closed " + pipe_closed_what + " but kept running");
    }
    if (now >= deadline) {
      return Fail(WorkerFailure::kTimeout, "no answer within " + FormatDuration(timeout));
    }

    pollfd fds[4];
    nfds_t n = 0;
    int log_slot = -1, resp_slot = -1, req_slot = -1, exit_slot = -1;
    if (log_) log_slot = static_cast<int>(n), fds[n++] = {log_.get(), POLLIN, 0};
    if (responses_) resp_slot = static_cast<int>(n), fds[n++] = {responses_.get(), POLLIN, 0};
    if (requests_ && written < line.size()) {
      req_slot = static_cast<int>(n), fds[n++] = {requests_.get(), POLLOUT, 0};
    }
    if (child_->exit_fd() >= 0) exit_slot = static_cast<int>(n), fds[n++] = {child_->exit_fd(), POLLIN, 0};
    Clock::duration wait = deadline - now;
    if (exit_slot < 0) wait = std::min<Clock::duration>(wait, kExitPollTick);
    if (pipe_closed_at) wait = std::min<Clock::duration>(wait, *pipe_closed_at + kCloseGrace - now);
    int rc = ::poll(fds, n, PollMillis(wait));
    if (rc < 0 && errno != EINTR) return Fail(WorkerFailure::kProtocol, "poll failed");
    auto ready = [&](int slot) { return rc > 0 && slot >= 0 && fds[slot].revents != 0; };

    if (ready(log_slot)) DrainLog();
    if (ready(resp_slot)) {
      auto state = ReadAvailable(responses_.get(), [this](std::string_view d) { pending_.append(d); },
                                 max_response_bytes_ + 1);
      if (state == ReadState::kEof) {
        responses_.reset();
        if (!pipe_closed_at) pipe_closed_at = Clock::now(), pipe_closed_what = "its response pipe (fd 4)";
      }
    }
    if (ready(req_slot)) {
      ssize_t w = WriteNoSigpipe(requests_.get(), line.data() + written, line.size() - written);
      if (w > 0) {
        written += static_cast<size_t>(w);
      } else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
        requests_.reset();  // EPIPE: nobody reads fd 3 any more
        if (!pipe_closed_at) pipe_closed_at = Clock::now(), pipe_closed_what = "its request pipe (fd 3)";
      }
    }
    exited = exit_slot >= 0 ? ready(exit_slot) : child_->HasExited();
  }
}

}  // namespace kvault
