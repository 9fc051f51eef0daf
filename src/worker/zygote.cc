#include "worker/zygote.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "util/fd_io.h"
#include "util/json_parse.h"
#include "util/subprocess.h"
#include "worker/pipes.h"
#include "worker/protocol.h"

#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

namespace kvault {

namespace field = protocol::field;

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMaxMessage = 1 << 16;
constexpr int kMaxFds = 4;

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// Sends `message` with `fds` attached (SCM_RIGHTS) on a SOCK_SEQPACKET socket.
bool SendWithFds(int sock, const std::string& message, const std::vector<int>& fds) {
  iovec iov{const_cast<char*>(message.data()), message.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  if (!fds.empty()) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  ssize_t n;
  do {
    n = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(message.size());
}

}  // namespace

ForkedProcess::ForkedProcess(pid_t pid, UniqueFd pidfd, UniqueFd status, bool same_namespace)
    : pid_(pid), pidfd_(std::move(pidfd)), status_(std::move(status)), same_namespace_(same_namespace) {}

bool ForkedProcess::HasExited() const {
  if (waited_) return true;
  pollfd p{status_.get(), POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && p.revents != 0;
}

void ForkedProcess::KillGroup() {
  if (waited_) return;
  if (pidfd_) ::syscall(SYS_pidfd_send_signal, pidfd_.get(), SIGKILL, nullptr, 0);
  // Without a PID namespace of its own, the worker lives in the keeper's process group.
  if (same_namespace_ && pid_ > 0) ::kill(-pid_, SIGKILL);
}

ExitStatus ForkedProcess::Wait() {
  if (waited_) return result_;
  int status = 0;
  size_t got = 0;
  while (got < sizeof status) {
    ssize_t n = ::read(status_.get(), reinterpret_cast<char*>(&status) + got, sizeof status - got);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
      pollfd p{status_.get(), POLLIN, 0};
      ::poll(&p, 1, 100);
      continue;
    }
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  if (got == sizeof status && WIFEXITED(status)) {
    result_.exit_code = WEXITSTATUS(status);
  } else if (got == sizeof status && WIFSIGNALED(status)) {
    result_.term_signal = WTERMSIG(status);
  } else {
    result_.term_signal = SIGKILL;  // the keeper was killed before it could report
  }
  waited_ = true;
  pidfd_.reset();
  status_.reset();
  return result_;
}

Zygote::Zygote(ChildProcess child, UniqueFd socket, UniqueFd log)
    : child_(std::move(child)), socket_(std::move(socket)), log_(std::move(log)) {}

Zygote::~Zygote() {
  socket_.reset();  // end of input: a healthy zygote exits by itself
  child_.KillGroup();
  child_.Wait();
}

bool Zygote::alive() const { return !dead_ && !child_.HasExited(); }

void Zygote::DrainLog() {
  if (!log_) return;
  if (ReadAvailable(log_.get(), [this](std::string_view d) { log_buffer_.Append(d); }) == ReadState::kEof)
    log_.reset();
}

std::string Zygote::Die(const std::string& why) {
  dead_ = true;
  child_.KillGroup();
  ExitStatus st = child_.Wait();
  DrainLog();
  std::string log = log_buffer_.Take();
  std::string text = "worker zygote: " + why;
  if (st.term_signal || st.exit_code > 0)
    text += " (zygote " + DescribeTermination(st.exit_code, st.term_signal) + ")";
  if (!log.empty()) text += "\n" + log;
  return text;
}

Result<std::unique_ptr<Zygote>> Zygote::Start(const WorkerOptions& options,
                                              std::chrono::milliseconds timeout) {
  auto z = Spawn(options, timeout);
  if (!z) return Error{z.error()};
  if (Status ready = (*z)->AwaitReady(); !ready) return Error{ready.error()};
  return z;
}

Result<std::unique_ptr<Zygote>> Zygote::Spawn(const WorkerOptions& options,
                                              std::chrono::milliseconds timeout) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    return Error{Errno("worker zygote: socketpair")};
  UniqueFd ours(sv[0]), theirs(sv[1]);
  auto log = MakePipe();
  if (!log) return Error{log.error()};
  ChildProcess::Spec spec;
  spec.argv = options.argv;
  spec.env_set = options.env_set;
  spec.env_set.emplace_back("KVAULT_ZYGOTE_FD", "3");
  spec.cwd = options.cwd;
  spec.fds = {{1, log->write.get()}, {2, log->write.get()}, {3, theirs.get()}};
  auto child = ChildProcess::Spawn(spec);
  if (!child) return Error{"worker zygote: " + child.error()};
  theirs.reset();
  log->write.reset();
  SetNonBlocking(log->read.get());
  std::unique_ptr<Zygote> z(new Zygote(std::move(*child), std::move(ours), std::move(log->read)));
  z->ready_deadline_ = Clock::now() + timeout;
  z->start_timeout_ = timeout;
  return z;
}

Status Zygote::AwaitReady() {
  if (ready_) return Status::Ok();
  if (dead_) return Error{"worker zygote is not running"};
  UniqueFd none;
  auto ready = Receive(ready_deadline_, start_timeout_, &none);
  if (!ready) return Error{ready.error()};
  if (!ready->value(field::kReady, false)) return Error{Die("unexpected first message " + ready->dump())};
  pid_namespace_ = ready->value(field::kPidNamespace, false);
  // Without a PID namespace between us, the zygote's own pid is its pid here.
  same_namespace_ = ready->value(field::kPid, -1) == child_.pid();
  ready_ = true;
  return Status::Ok();
}

Result<Json> Zygote::Receive(Clock::time_point deadline, std::chrono::milliseconds timeout, UniqueFd* fd) {
  while (true) {
    DrainLog();
    const auto now = Clock::now();
    // Past the deadline, a message already waiting is still taken.
    const bool last = now >= deadline;
    pollfd fds[3] = {{socket_.get(), POLLIN, 0}, {child_.exit_fd(), POLLIN, 0}, {log_.get(), POLLIN, 0}};
    const nfds_t n = log_ ? 3 : 2;
    int wait = last ? 0 : PollMillis(deadline - now);
    if (child_.exit_fd() < 0) wait = std::min(wait, 10);
    int rc = ::poll(fds, n, wait);
    if (rc < 0 && errno != EINTR) return Error{Die(Errno("poll"))};
    if (rc > 0 && fds[0].revents & POLLIN) break;
    if ((rc > 0 && fds[0].revents & (POLLHUP | POLLERR)) || child_.HasExited())
      return Error{Die("the zygote ended")};
    if (last) return Error{Die("no answer within " + FormatDuration(timeout))};
  }
  std::string buf(kMaxMessage, '\0');
  iovec iov{buf.data(), buf.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t got;
  do {
    got = ::recvmsg(socket_.get(), &msg, MSG_CMSG_CLOEXEC);
  } while (got < 0 && errno == EINTR);
  if (got <= 0) return Error{Die(got == 0 ? "the zygote closed its socket" : Errno("recvmsg"))};
  std::vector<UniqueFd> received;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int f;
      std::memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof f);
      received.emplace_back(f);
    }
  }
  if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) return Error{Die("message from the zygote was truncated")};
  auto parsed = ParseJson(std::string_view(buf.data(), static_cast<size_t>(got)), 8);
  if (!parsed || !parsed->is_object()) return Error{Die("malformed message from the zygote")};
  if (received.size() > 1) return Error{Die("the zygote sent more than one descriptor")};
  if (!received.empty()) *fd = std::move(received[0]);
  return *parsed;
}

Result<std::unique_ptr<ProcessWorker>> Zygote::Fork(const WorkerOptions& worker_options,
                                                    std::chrono::milliseconds timeout) {
  if (!alive()) return Error{"worker zygote is not running"};
  if (Status st = AwaitReady(); !st) return Error{st.error()};
  auto pipes = MakeWorkerPipes();
  if (!pipes) return Error{pipes.error()};
  auto status = MakePipe();
  if (!status) return Error{status.error()};
  Json fork{{field::kOp, protocol::op::kFork}};
  // The worker's own folder (where it writes its outputs), named by the engine.
  if (!worker_options.cwd.empty()) fork[field::kFolder] = worker_options.cwd;
  const std::string request = fork.dump();
  if (!SendWithFds(socket_.get(), request,
                   {pipes->requests.read.get(), pipes->responses.write.get(), pipes->log.write.get(),
                    status->write.get()}))
    return Error{Die(Errno("cannot send the fork request"))};
  status->write.reset();  // the keeper's copy is the only one now: EOF means it ended
  UniqueFd pidfd;
  auto reply = Receive(Clock::now() + timeout, timeout, &pidfd);
  if (!reply) return Error{reply.error()};
  if (reply->contains(field::kError) || !pidfd)
    return Error{Die("fork refused: " + reply->value(field::kError, std::string("no pidfd")))};
  auto process = std::make_unique<ForkedProcess>(reply->value(field::kPid, -1), std::move(pidfd),
                                                 std::move(status->read), same_namespace_);
  return ProcessWorker::Adopt(std::move(process), std::move(*pipes), worker_options);
}

}  // namespace kvault
