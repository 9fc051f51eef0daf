#pragma once
// Why an answer of `kvault serve` holds no reward (docs/serve.md, "Errors"): the `kind`
// of its `error` object. The names are the wire's, read by python/kernelvault and by
// trainers; one table (error_kind.cc) spells them.
//
//   SendError(res, 400, ErrorKind::kBadRequest, "...");
//   if (o.error_kind && Retryable(*o.error_kind)) ...
//
// Pure; thread-safe.
#include <optional>
#include <string_view>

namespace kvault::serve {

enum class ErrorKind {
  // A candidate taken but not judged (a result's `error`; ServeOutcome::error_kind).
  kInfrastructure,  // the engine or its workers failed: not the candidate's fault
  kTask,            // the task itself failed (task_error)
  kDeadline,        // the request's deadline passed first
  kCancelled,       // its batch was cancelled before a lane took it
  // A request refused before any candidate was taken (the answer is the error alone).
  kBadRequest,    // malformed JSON or fields
  kUnauthorized,  // missing or wrong token
  kNotFound,      // no such endpoint
  kUnknownBatch,  // no such batch (a restarted server knows none)
  kMethodNotAllowed,
  kLengthRequired,  // a POST body without Content-Length or chunked encoding
  kTooLarge,        // the body is over the limit
  kConflict,        // an idempotency key reused for another request
  kUnsupported,     // a request this server cannot run (backend, language)
  kOverloaded,      // the queue or the connections are full
  kStopping,        // the server is stopping
  kUnavailable,     // no lane can verify
  kInternal,        // the server failed on this request
};

std::string_view ToString(ErrorKind kind);  // "infrastructure", "bad_request", ...
std::optional<ErrorKind> ErrorKindFromString(std::string_view name);

// Whether the same request, sent again, may get a reward: the candidate was not judged
// for a reason that can pass (infrastructure, deadline, a full or stopping server).
bool Retryable(ErrorKind kind);

}  // namespace kvault::serve
