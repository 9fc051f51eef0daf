#pragma once
// Maps what a worker said (or how it died) to a verification outcome. A response
// comes from an untrusted process: any JSON object is accepted, a field of the wrong
// type counts as absent, and nothing here throws.
#include <string>
#include <string_view>

#include "engine/verification.h"
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

// The one-line message of a failed reply on a trusted (reference) call.
std::string TrustedFailureMessage(const WorkerReply& reply, std::string_view stage);

}  // namespace kvault
