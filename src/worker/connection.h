#pragma once
// The engine's view of a worker process (docs/worker-protocol.md): send one request,
// get its response or a failure. WorkerConnection is the seam: ProcessWorker
// (worker/process_worker.h) talks to a real process, FakeWorker
// (worker/fake_worker.h) replays scripted replies in tests.
//
//   WorkerReply r = worker->Call(Json{{"op", "run"}, {"case", 0}, {"seed", 1},
//                                     {"out", path}}, std::chrono::seconds(30));
//   if (r.failure != WorkerFailure::kNone) {   // worker is dead now: replace it
//     log(r.detail, worker->TakeLog());
//   } else if (!r.response.value("ok", false)) { ... r.response["kind"] ... }
#include <sys/types.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "util/json.h"

namespace kvault {

struct WorkerOptions {
  // Program and arguments, e.g. {"python3", "-m", "kvault_worker"}. argv[0] without a
  // '/' is looked up in PATH.
  std::vector<std::string> argv;
  // Added to the inherited environment. KVAULT_WORKER_FDS=3,4 is always set.
  std::vector<std::pair<std::string, std::string>> env_set;
  // Working directory. Default: empty, the engine's.
  std::string cwd;
  // Bytes of stdout/stderr kept between TakeLog() calls (head and tail). Default 64 KiB.
  size_t log_limit = 64 * 1024;
  // Longest response line accepted; longer is a protocol violation. Default 64 MiB.
  size_t max_response_bytes = 64 << 20;
};

enum class WorkerFailure {
  kNone,      // a response arrived (it may still say "ok": false)
  kTimeout,   // no response within the timeout; the worker was killed
  kDied,      // the worker exited or was killed by a signal before answering
  kProtocol,  // the worker broke the protocol (not JSON, wrong id, closed fd 4, line
              // too long); the worker was killed
};

struct WorkerReply {
  WorkerFailure failure = WorkerFailure::kNone;
  Json response;  // the response object, with "id"; valid when failure == kNone
  // One line on a failure, e.g. "worker killed by signal 11 (SIGSEGV)",
  // "no answer within 30 s", "invalid JSON from worker: ...".
  std::string detail;
  // How the worker process ended, when it has (after any failure it has): exit_code
  // >= 0 for a normal exit, term_signal > 0 for a signal (SIGKILL after a timeout or
  // protocol violation, since the engine kills the worker then).
  int exit_code = -1;
  int term_signal = 0;
};

// One worker. Not thread-safe: one caller at a time. After any failure the worker is
// dead for good (alive() is false) and every later Call fails with kDied at once.
class WorkerConnection {
 public:
  virtual ~WorkerConnection() = default;
  // Sets request["id"] (unique per connection) and sends it; waits up to `timeout`
  // for the response with that id.
  virtual WorkerReply Call(Json request, std::chrono::milliseconds timeout) = 0;
  // False once the worker has exited, failed or been killed.
  virtual bool alive() const = 0;
  // The worker's stdout/stderr since the last TakeLog (bounded, head and tail kept).
  virtual std::string TakeLog() = 0;
  // Kills the worker (its whole process group) and reaps it. Idempotent.
  virtual void Kill() = 0;
  // The pid, in the engine's PID namespace, of the process the engine started for the
  // worker (the sandbox helper, or the worker itself); 0 when there is none or it is
  // not in the engine's namespace.
  virtual pid_t pid() const { return 0; }
};

}  // namespace kvault
