#pragma once
// Close-on-exec pipes for the worker's protocol and log, shared by ProcessWorker and
// Zygote. Internal to the worker component.
#include "util/result.h"
#include "util/unique_fd.h"

namespace kvault {

struct Pipe {
  UniqueFd read, write;
};

// A close-on-exec pipe, enlarged to 1 MiB where the kernel allows (fewer wake-ups).
Result<Pipe> MakePipe();

// The three pipes of a worker: requests (its fd 3), responses (its fd 4), and the
// log (its fds 1 and 2).
struct WorkerPipes {
  Pipe requests, responses, log;
};
Result<WorkerPipes> MakeWorkerPipes();

}  // namespace kvault
