#include "engine/worker_outcome.h"

#include <csignal>

#include "util/strings.h"

namespace kvault {

constexpr size_t kDiagnosticsLimit = 16 * 1024;

std::string ReplyString(const Json& response, const char* key, std::string fallback) {
  if (!response.is_object()) return fallback;
  auto it = response.find(key);
  if (it == response.end() || !it->is_string()) return fallback;
  return it->get<std::string>();
}

bool ReplyOk(const WorkerReply& reply) {
  if (reply.failure != WorkerFailure::kNone || !reply.response.is_object()) return false;
  auto ok = reply.response.find("ok");
  return ok != reply.response.end() && ok->is_boolean() && ok->get<bool>();
}

namespace {
OutcomeStatus StatusOfKind(const std::string& kind) {
  if (kind == "load_error") return OutcomeStatus::kLoadError;
  if (kind == "compile_error") return OutcomeStatus::kCompileError;  // Triton JIT
  if (kind == "runtime_error") return OutcomeStatus::kRuntimeError;
  if (kind == "oom") return OutcomeStatus::kOom;
  if (kind == "mismatch") return OutcomeStatus::kMismatch;                  // output contract
  if (kind == "policy_violation") return OutcomeStatus::kPolicyViolation;  // docs/adversarial.md
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
      // Candidate code ran in this process and can close or write the protocol fds
      // (docs/threat-model.md): the violation is the candidate's, not the engine's.
      v.status = OutcomeStatus::kCrash;
      v.message = "worker protocol violation during " + std::string(stage) + ": " + reply.detail;
      break;
    case WorkerFailure::kNone: {
      const Json& r = reply.response;
      const std::string kind = ReplyString(r, "kind", "internal");
      v.status = StatusOfKind(kind);
      v.compiled = v.status != OutcomeStatus::kCompileError;
      v.message = std::string(stage) + ": " + ReplyString(r, "message", "(no message)");
      if (v.status == OutcomeStatus::kInfraError || v.status == OutcomeStatus::kTaskError) {
        // Candidate code has run in this worker by now and can forge its answers
        // (docs/threat-model.md): an answer that blames the engine or the task would
        // let a failing candidate escape its record. Fail closed.
        v.status = OutcomeStatus::kCrash;
        v.message = std::string(stage) + ": the candidate's worker answered '" + kind + "' (" +
                    ReplyString(r, "message", "no message") +
                    "); candidate code runs in that worker and can forge such answers, so it "
                    "counts against the candidate";
      }
      diag = ReplyString(r, "traceback", "");
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
  return std::string(stage) + ": " + ReplyString(reply.response, "message", "(no message)");
}

}  // namespace kvault
