#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "util/child_process.h"
#include "util/fd_io.h"
#include "util/strings.h"
#include "util/subprocess.h"

namespace kvault {
namespace {

using Clock = std::chrono::steady_clock;

// Without a pidfd, child exit is noticed by polling at this interval.
constexpr std::chrono::milliseconds kExitPollTick{10};
// Timeouts beyond this are treated as "no timeout" (avoids clock overflow).
constexpr std::chrono::milliseconds kMaxTimeout = std::chrono::hours(24 * 365);

const char* SignalName(int sig) {
  switch (sig) {
    case SIGHUP: return "SIGHUP";
    case SIGINT: return "SIGINT";
    case SIGQUIT: return "SIGQUIT";
    case SIGILL: return "SIGILL";
    case SIGTRAP: return "SIGTRAP";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGKILL: return "SIGKILL";
    case SIGUSR1: return "SIGUSR1";
    case SIGSEGV: return "SIGSEGV";
    case SIGUSR2: return "SIGUSR2";
    case SIGPIPE: return "SIGPIPE";
    case SIGALRM: return "SIGALRM";
    case SIGTERM: return "SIGTERM";
    case SIGCHLD: return "SIGCHLD";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    case SIGSYS: return "SIGSYS";
    default: return nullptr;
  }
}

// Reads what is available now into `out`. Returns false at end of file.
bool DrainInto(int fd, HeadTailBuffer& out, size_t budget = 4 << 20) {
  return ReadAvailable(fd, [&](std::string_view d) { out.Append(d); }, budget) == ReadState::kOpen;
}

}  // namespace

std::string DescribeTermination(int exit_code, int term_signal) {
  if (term_signal > 0) {
    std::string out = "killed by signal " + std::to_string(term_signal);
    if (const char* name = SignalName(term_signal)) out += std::string(" (") + name + ")";
    return out;
  }
  if (exit_code >= 0) return "exited with status " + std::to_string(exit_code);
  return "ended in an unknown way";
}

Result<CommandResult> RunCommand(const CommandSpec& spec, std::chrono::milliseconds timeout,
                                 size_t max_output) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Error{"cannot start '" + (spec.argv.empty() ? std::string() : spec.argv[0]) +
                 "': cannot create pipe"};
  }
  UniqueFd out_r(pipe_fds[0]), out_w(pipe_fds[1]);
  ChildProcess::Spec child_spec{spec.argv, spec.env_set, spec.inherit_env, spec.cwd,
                                {{1, out_w.get()}, {2, out_w.get()}}};
  auto start = Clock::now();
  auto child = ChildProcess::Spawn(child_spec);
  if (!child) return Error{child.error()};
  out_w.reset();  // the child holds the only write end now: EOF means it closed
  SetNonBlocking(out_r.get());

  bool no_deadline = timeout > kMaxTimeout;
  auto deadline = start + (no_deadline ? kMaxTimeout : std::max(timeout, std::chrono::milliseconds(0)));
  HeadTailBuffer output(max_output);
  CommandResult result;
  bool eof = false, exited = false;
  while (!eof || !exited) {
    auto now = Clock::now();
    if (now >= deadline) {
      // Past the deadline with the program still running is a timeout; with only
      // escaped descendants holding the pipe open, stop reading.
      result.timed_out = !exited && !no_deadline;
      break;
    }
    pollfd fds[2];
    nfds_t n = 0;
    if (!eof) fds[n++] = {out_r.get(), POLLIN, 0};
    int exit_slot = -1;
    if (!exited && child->exit_fd() >= 0) {
      exit_slot = static_cast<int>(n);
      fds[n++] = {child->exit_fd(), POLLIN, 0};
    }
    auto wait = deadline - now;
    if (!exited && child->exit_fd() < 0) wait = std::min<Clock::duration>(wait, kExitPollTick);
    int rc = ::poll(fds, n, PollMillis(wait));
    if (rc < 0 && errno != EINTR) break;
    if (!eof && rc > 0 && fds[0].revents != 0) eof = !DrainInto(out_r.get(), output);
    if (!exited) {
      exited = (exit_slot >= 0) ? (rc > 0 && fds[exit_slot].revents != 0) : child->HasExited();
      if (exited) child->KillGroup();  // leftovers in the group must not outlive the command
    }
  }
  child->KillGroup();
  ExitStatus status = child->Wait();
  if (!eof) DrainInto(out_r.get(), output);  // what the killed processes had written
  result.exit_code = status.exit_code;
  result.term_signal = status.term_signal;
  result.output = output.Take();
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace kvault
