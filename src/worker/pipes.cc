#include "worker/pipes.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace kvault {

Result<Pipe> MakePipe() {
  constexpr int kPipeSize = 1 << 20;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Error{std::string("cannot create pipe: ") + std::strerror(errno)};
  ::fcntl(fds[0], F_SETPIPE_SZ, kPipeSize);  // best effort
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

Result<WorkerPipes> MakeWorkerPipes() {
  auto requests = MakePipe();
  if (!requests) return Error{requests.error()};
  auto responses = MakePipe();
  if (!responses) return Error{responses.error()};
  auto log = MakePipe();
  if (!log) return Error{log.error()};
  return WorkerPipes{std::move(*requests), std::move(*responses), std::move(*log)};
}

}  // namespace kvault
