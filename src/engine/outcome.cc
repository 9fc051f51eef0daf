#include "engine/outcome.h"

#include <array>
#include <utility>

namespace kvault {
namespace {
constexpr std::array<std::pair<OutcomeStatus, std::string_view>, 14> kNames{{
    {OutcomeStatus::kParseError, "parse_error"},
    {OutcomeStatus::kUnsupported, "unsupported"},
    {OutcomeStatus::kCompileError, "compile_error"},
    {OutcomeStatus::kCompiled, "compiled"},
    {OutcomeStatus::kLoadError, "load_error"},
    {OutcomeStatus::kRuntimeError, "runtime_error"},
    {OutcomeStatus::kCrash, "crash"},
    {OutcomeStatus::kTimeout, "timeout"},
    {OutcomeStatus::kOom, "oom"},
    {OutcomeStatus::kMismatch, "mismatch"},
    {OutcomeStatus::kPolicyViolation, "policy_violation"},
    {OutcomeStatus::kPassed, "passed"},
    {OutcomeStatus::kTaskError, "task_error"},
    {OutcomeStatus::kInfraError, "infra_error"},
}};
}  // namespace

std::string_view ToString(OutcomeStatus s) {
  for (const auto& [k, v] : kNames)
    if (k == s) return v;
  return "infra_error";
}

std::optional<OutcomeStatus> OutcomeStatusFromString(std::string_view s) {
  for (const auto& [k, v] : kNames)
    if (v == s) return k;
  return std::nullopt;
}

bool IsInfrastructure(OutcomeStatus s) {
  return s == OutcomeStatus::kTaskError || s == OutcomeStatus::kInfraError;
}

}  // namespace kvault
