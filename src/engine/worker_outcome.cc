#include "engine/worker_outcome.h"

#include <csignal>

#include "util/strings.h"
#include "worker/protocol.h"

namespace kvault {

namespace field = protocol::field;
namespace kind = protocol::kind;

constexpr size_t kDiagnosticsLimit = 16 * 1024;

std::string ReplyString(const Json& response, const char* key, std::string fallback) {
  if (!response.is_object()) return fallback;
  auto it = response.find(key);
  if (it == response.end() || !it->is_string()) return fallback;
  return it->get<std::string>();
}

bool ReplyOk(const WorkerReply& reply) {
  if (reply.failure != WorkerFailure::kNone || !reply.response.is_object()) return false;
  auto ok = reply.response.find(field::kOk);
  return ok != reply.response.end() && ok->is_boolean() && ok->get<bool>();
}

namespace {
OutcomeStatus StatusOfKind(const std::string& k) {
  if (k == kind::kLoadError) return OutcomeStatus::kLoadError;
  if (k == kind::kCompileError) return OutcomeStatus::kCompileError;  // Triton JIT
  if (k == kind::kRuntimeError) return OutcomeStatus::kRuntimeError;
  if (k == kind::kOom) return OutcomeStatus::kOom;
  if (k == kind::kMismatch) return OutcomeStatus::kMismatch;                // output contract
  if (k == kind::kPolicyViolation) return OutcomeStatus::kPolicyViolation;  // docs/adversarial.md
  if (k == kind::kUnsupported) return OutcomeStatus::kUnsupported;
  if (k == kind::kTaskError) return OutcomeStatus::kTaskError;
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
      const std::string claimed = ReplyString(r, field::kKind, kind::kInternal);
      v.status = StatusOfKind(claimed);
      v.compiled = v.status != OutcomeStatus::kCompileError;
      v.message = std::string(stage) + ": " + ReplyString(r, field::kMessage, "(no message)");
      if (v.status == OutcomeStatus::kInfraError || v.status == OutcomeStatus::kTaskError) {
        // Candidate code has run in this worker by now and can forge its answers
        // (docs/threat-model.md): an answer that blames the engine or the task would
        // let a failing candidate escape its record. Fail closed.
        v.status = OutcomeStatus::kCrash;
        v.message = std::string(stage) + ": the candidate's worker answered '" + claimed + "' (" +
                    ReplyString(r, field::kMessage, "no message") +
                    "); candidate code runs in that worker and can forge such answers, so it "
                    "counts against the candidate";
      }
      diag = ReplyString(r, field::kTraceback, "");
      break;
    }
  }
  if (!log.empty()) diag += (diag.empty() ? "" : "\n--- worker output ---\n") + log;
  v.diagnostics = Truncate(diag, kDiagnosticsLimit);
  return v;
}

TrustedFailure JudgeTrustedFailure(const WorkerReply& reply, std::string_view stage) {
  const std::string at(stage);
  switch (reply.failure) {
    case WorkerFailure::kTimeout:
      return {OutcomeStatus::kTaskError, at + " ran past its limit"};
    case WorkerFailure::kDied:  // the task's code crashed it, or used memory the host lacked
      return {OutcomeStatus::kTaskError, at + ": " + reply.detail};
    case WorkerFailure::kProtocol:
      return {OutcomeStatus::kInfraError, at + ": the reference worker broke the protocol: " + reply.detail};
    case WorkerFailure::kNone:
      break;
  }
  const Json& r = reply.response;
  const std::string message = ReplyString(r, field::kMessage, "(no message)");
  const std::string k = ReplyString(r, field::kKind, "");
  if (k == kind::kTaskError || k == kind::kOom) return {OutcomeStatus::kTaskError, at + ": " + message};
  if (k == kind::kBadRequest)
    return {OutcomeStatus::kInfraError, at + ": the reference worker judged the engine's request malformed "
                                             "(bad_request, an engine bug): " + message};
  if (k == kind::kInternal)
    return {OutcomeStatus::kInfraError, at + ": the reference worker failed (internal): " + message};
  return {OutcomeStatus::kInfraError, at + ": the reference worker answered " +
                                          (k.empty() ? std::string("a failure of no kind") : "kind '" + k + "'") +
                                          ", which it never sends: " + message};
}

bool SaysOutOfMemory(std::string_view text) { return text.find("out of memory") != std::string_view::npos; }

bool ReferenceRanOutOfMemory(OutcomeStatus status, std::string_view message) {
  return status == OutcomeStatus::kTaskError && SaysOutOfMemory(message);
}

TrustedFailure TrustedReplyUnusable(std::string_view stage, const std::string& what) {
  return {OutcomeStatus::kInfraError, std::string(stage) + ": the reference worker's reply is unusable: " + what};
}

TrustedFailure TrustedStartFailure(std::string_view stage, const std::string& error) {
  return {OutcomeStatus::kInfraError, std::string(stage) + ": the reference worker could not start: " + error};
}

}  // namespace kvault
