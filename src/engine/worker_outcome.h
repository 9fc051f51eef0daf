#pragma once
// Maps what a worker said (or how it died) to a verification outcome. A response
// comes from an untrusted process: any JSON object is accepted, a field of the wrong
// type counts as absent, and nothing here throws.
#include <string>
#include <string_view>

#include "engine/verification.h"
#include "util/result.h"
#include "worker/worker.h"

namespace kvault {

// True when the call succeeded: the worker answered and its "ok" is the boolean true.
bool ReplyOk(const WorkerReply& reply);

// response[key] when `response` is an object and that field is a string, else
// `fallback`.
std::string ReplyString(const Json& response, const char* key, std::string fallback);

// The outcome of a failed call on the candidate worker during `stage` ("load",
// "run case small seed 1", "timing"). `timeout` is the stage's limit, for the
// message; `log` is the worker's captured output, kept as bounded diagnostics.
// REQUIRES: !ReplyOk(reply)
Verification CandidateFailure(const WorkerReply& reply, std::string_view stage,
                              std::chrono::milliseconds timeout, const std::string& log);

// Why a call on the reference worker failed, and whose fault that is. That worker runs
// only the task's code (never a candidate's), so its answers are believed; the one
// rule for every reference call (docs/outcomes.md, "Failures of the reference worker"):
//  - the task's (`task_error`): its code raised (kind task_error), ran out of memory
//    (kind oom; the message keeps PyTorch's words, which the engine's out-of-memory
//    judgement reads), ran past the stage's limit, or killed the worker;
//  - the engine's (`infra_error`): the worker could not be started or greeted, answered
//    bad_request (the engine sent a malformed request), internal (the worker's own
//    machinery failed), a kind the reference side never sends or none, or broke the
//    protocol (an unreadable answer, a closed protocol fd).
struct TrustedFailure {
  OutcomeStatus status = OutcomeStatus::kInfraError;
  std::string message;  // one line, led by the stage
};

// A reference call's reply, or its failure judged.
using ReferenceReply = Result<Json, TrustedFailure>;

// Whether a worker's words say it ran out of memory (PyTorch's and CUDA's "out of
// memory", kept in the messages the engine builds on them).
bool SaysOutOfMemory(std::string_view text);

// Whether a reference failure (`status`, `message`, as JudgeTrustedFailure made them or
// an outcome built on them) says the reference ran out of memory: a `task_error` that
// keeps PyTorch's words "out of memory". What Verifier::JudgeOutOfMemory runs again
// alone before it is the task's.
bool ReferenceRanOutOfMemory(OutcomeStatus status, std::string_view message);

// The failure of a reference call during `stage` ("task relu", "the reference").
// REQUIRES: !ReplyOk(reply)
TrustedFailure JudgeTrustedFailure(const WorkerReply& reply, std::string_view stage);

// The reference worker answered "ok" with a reply the engine cannot use during `stage`
// (`what`: a field missing or malformed): it broke the protocol. Always `infra_error`.
TrustedFailure TrustedReplyUnusable(std::string_view stage, const std::string& what);

// The reference worker could not be (re)started or greeted for `stage`: `error` says
// why (the sandbox helper, Python, the process table...). Always `infra_error`.
TrustedFailure TrustedStartFailure(std::string_view stage, const std::string& error);

}  // namespace kvault
