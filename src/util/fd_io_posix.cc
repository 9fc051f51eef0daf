#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>

#include "util/fd_io.h"

namespace kvault {

int PollMillis(std::chrono::steady_clock::duration d) {
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(d).count();
  return static_cast<int>(std::clamp<long long>(ms, 0, 1 << 30));
}

bool SetNonBlocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

ReadState ReadAvailable(int fd, const std::function<void(std::string_view)>& sink, size_t budget) {
  char buf[1 << 16];
  while (budget > 0) {
    ssize_t n = ::read(fd, buf, std::min(sizeof buf, budget));
    if (n > 0) {
      sink(std::string_view(buf, static_cast<size_t>(n)));
      budget -= static_cast<size_t>(n);
    } else if (n == 0) {
      return ReadState::kEof;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return ReadState::kOpen;
    } else if (errno != EINTR) {
      return ReadState::kEof;
    }
  }
  return ReadState::kOpen;
}

ssize_t WriteNoSigpipe(int fd, const void* data, size_t size) {
  // SIGPIPE from write(2) is directed at the writing thread: block it here, and if this
  // write raised it, consume it before unblocking. A SIGPIPE that was already pending
  // stays pending.
  sigset_t pipe_only, old_mask, pending;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &old_mask);
  sigpending(&pending);
  bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  ssize_t n;
  do {
    n = ::write(fd, data, size);
  } while (n < 0 && errno == EINTR);
  int saved = errno;
  if (n < 0 && saved == EPIPE && !was_pending) {
    timespec zero{0, 0};
    while (sigtimedwait(&pipe_only, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  errno = saved;
  return n;
}

}  // namespace kvault
