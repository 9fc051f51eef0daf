#pragma once
// The fixed taxonomy of verification outcomes (docs/outcomes.md). An outcome is a
// value: kernels that fail are data, not engine errors.
#include <optional>
#include <string>
#include <string_view>

namespace kvault {

enum class OutcomeStatus {
  kParseError,
  kUnsupported,
  kCompileError,
  kCompiled,
  kLoadError,
  kRuntimeError,
  kCrash,
  kTimeout,
  kOom,
  kMismatch,
  kPolicyViolation,
  kPassed,
  kTaskError,
  kInfraError,
};

std::string_view ToString(OutcomeStatus s);
std::optional<OutcomeStatus> OutcomeStatusFromString(std::string_view s);
// True for task_error and infra_error: not the candidate's fault, no reward, retried.
bool IsInfrastructure(OutcomeStatus s);

}  // namespace kvault
