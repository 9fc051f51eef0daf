#include "serve/error_kind.h"

#include <array>

namespace kvault::serve {
namespace {

struct Entry {
  ErrorKind kind;
  std::string_view name;
  bool retryable;
};

constexpr std::array<Entry, 17> kKinds = {{
    {ErrorKind::kInfrastructure, "infrastructure", true},
    {ErrorKind::kTask, "task", false},
    {ErrorKind::kDeadline, "deadline", true},
    {ErrorKind::kCancelled, "cancelled", false},
    {ErrorKind::kBadRequest, "bad_request", false},
    {ErrorKind::kUnauthorized, "unauthorized", false},
    {ErrorKind::kNotFound, "not_found", false},
    {ErrorKind::kUnknownBatch, "unknown_batch", false},
    {ErrorKind::kMethodNotAllowed, "method_not_allowed", false},
    {ErrorKind::kLengthRequired, "length_required", false},
    {ErrorKind::kTooLarge, "too_large", false},
    {ErrorKind::kConflict, "conflict", false},
    {ErrorKind::kUnsupported, "unsupported", false},
    {ErrorKind::kOverloaded, "overloaded", true},
    {ErrorKind::kStopping, "stopping", true},
    {ErrorKind::kUnavailable, "unavailable", true},
    {ErrorKind::kInternal, "internal", true},
}};

const Entry& Find(ErrorKind kind) {
  for (const Entry& e : kKinds)
    if (e.kind == kind) return e;
  return kKinds[0];  // unreachable: every kind has an entry (error_kind_test.cc)
}

}  // namespace

std::string_view ToString(ErrorKind kind) {
  return Find(kind).name;
}

std::optional<ErrorKind> ErrorKindFromString(std::string_view name) {
  for (const Entry& e : kKinds)
    if (e.name == name) return e.kind;
  return std::nullopt;
}

bool Retryable(ErrorKind kind) {
  return Find(kind).retryable;
}

}  // namespace kvault::serve
