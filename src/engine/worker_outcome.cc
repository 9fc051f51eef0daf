#include "engine/worker_outcome.h"

#include <csignal>

#include "util/strings.h"

namespace kvault {

constexpr size_t kDiagnosticsLimit = 16 * 1024;

bool ReplyOk(const WorkerReply& reply) {
  return reply.failure == WorkerFailure::kNone && reply.response.value("ok", false);
}

namespace {
OutcomeStatus StatusOfKind(const std::string& kind) {
  if (kind == "load_error") return OutcomeStatus::kLoadError;
  if (kind == "runtime_error") return OutcomeStatus::kRuntimeError;
  if (kind == "oom") return OutcomeStatus::kOom;
  if (kind == "unsupported") return OutcomeStatus::kUnsupported;
  if (kind == "task_error") return OutcomeStatus::kTaskError;
  return OutcomeStatus::kInfraError;  // bad_request, internal, anything unknown
}

std::string Seconds(std::chrono::milliseconds ms) {
  return std::to_string(ms.count() / 1000) + " s";
}
}  // namespace

Verification CandidateFailure(const WorkerReply& reply, std::string_view stage,
                              std::chrono::milliseconds timeout, const std::string& log) {
  Verification v;
  v.compiled = true;
  std::string diag;
  switch (reply.failure) {
    case WorkerFailure::kTimeout:
      v.status = OutcomeStatus::kTimeout;
      v.message = std::string(stage) + " ran past its limit of " + Seconds(timeout);
      break;
    case WorkerFailure::kDied:
      v.status = OutcomeStatus::kCrash;
      v.message = "worker died during " + std::string(stage) + ": " + reply.detail;
      if (reply.term_signal == SIGKILL) v.message += " (possibly the out-of-memory killer)";
      break;
    case WorkerFailure::kProtocol:
      v.status = OutcomeStatus::kInfraError;
      v.message = "worker protocol violation during " + std::string(stage) + ": " + reply.detail;
      break;
    case WorkerFailure::kNone: {
      const Json& r = reply.response;
      const std::string kind = r.value("kind", std::string("internal"));
      v.status = StatusOfKind(kind);
      v.message = std::string(stage) + ": " + r.value("message", std::string("(no message)"));
      diag = r.value("traceback", std::string());
      break;
    }
  }
  if (!log.empty()) diag += (diag.empty() ? "" : "\n--- worker output ---\n") + log;
  v.diagnostics = Truncate(diag, kDiagnosticsLimit);
  return v;
}

std::string TrustedFailureMessage(const WorkerReply& reply, std::string_view stage) {
  if (reply.failure == WorkerFailure::kTimeout)
    return std::string(stage) + " ran past its limit";
  if (reply.failure != WorkerFailure::kNone)
    return std::string(stage) + ": " + reply.detail;
  return std::string(stage) + ": " + reply.response.value("message", std::string("(no message)"));
}

}  // namespace kvault
