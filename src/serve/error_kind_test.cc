#include "serve/error_kind.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace kvault::serve {
namespace {

constexpr ErrorKind kLast = ErrorKind::kInternal;

std::vector<ErrorKind> EveryKind() {
  std::vector<ErrorKind> kinds;
  for (int i = 0; i <= static_cast<int>(kLast); ++i) kinds.push_back(static_cast<ErrorKind>(i));
  return kinds;
}

TEST(ErrorKind, EveryKindHasItsOwnNameAndReadsBack) {
  std::set<std::string> names;
  for (ErrorKind k : EveryKind()) {
    const std::string name(ToString(k));
    EXPECT_TRUE(names.insert(name).second) << name;
    EXPECT_EQ(ErrorKindFromString(name), k) << name;
  }
  EXPECT_FALSE(ErrorKindFromString("Infrastructure"));
  EXPECT_FALSE(ErrorKindFromString(""));
}

// The wire's spellings: python/kernelvault/client.py and docs/serve.md read them.
TEST(ErrorKind, WireNamesAreTheDocumentedOnes) {
  std::set<std::string> names;
  for (ErrorKind k : EveryKind()) names.insert(std::string(ToString(k)));
  const std::set<std::string> wire{
      "infrastructure", "task",      "deadline",      "cancelled",          "bad_request",
      "unauthorized",   "not_found", "unknown_batch", "method_not_allowed", "length_required",
      "too_large",      "conflict",  "unsupported",   "overloaded",         "stopping",
      "unavailable",    "internal"};
  EXPECT_EQ(names, wire);
}

// A result's `retry`: an unjudged candidate may pass when sent again; a task error or
// a cancelled batch ends the same way.
TEST(ErrorKind, RetryableKinds) {
  EXPECT_TRUE(Retryable(ErrorKind::kInfrastructure));
  EXPECT_TRUE(Retryable(ErrorKind::kDeadline));
  EXPECT_TRUE(Retryable(ErrorKind::kOverloaded));
  EXPECT_FALSE(Retryable(ErrorKind::kTask));
  EXPECT_FALSE(Retryable(ErrorKind::kCancelled));
  EXPECT_FALSE(Retryable(ErrorKind::kBadRequest));
  EXPECT_FALSE(Retryable(ErrorKind::kUnsupported));
}

}  // namespace
}  // namespace kvault::serve
