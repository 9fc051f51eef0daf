#include "engine/output_aliasing.h"

#include "check/aliasing.h"

namespace kvault {
namespace {
Verification Failure(OutcomeStatus status, std::string message) {
  Verification v;
  v.status = status;
  v.message = std::move(message);
  return v;
}
}  // namespace

std::optional<Verification> AliasingFailure(const Json& candidate_reply, const std::string& where,
                                            const AliasReference& reference) {
  auto candidate = OutputAliases(candidate_reply);
  if (!candidate)
    return Failure(OutcomeStatus::kCrash,
                   where + ": the candidate's worker sent a malformed reply (" + candidate.error() + ")");
  if (candidate->empty()) return std::nullopt;
  auto reply = reference();
  if (!reply) return Failure(reply.failure().status, reply.error());
  auto allowed = OutputAliases(*reply);
  if (!allowed) {
    TrustedFailure unusable = TrustedReplyUnusable(where, allowed.error());
    return Failure(unusable.status, unusable.message);
  }
  std::string why = ForbiddenAliasing(*candidate, *allowed);
  if (why.empty()) return std::nullopt;
  return Failure(OutcomeStatus::kMismatch, where + ": " + why);
}

}  // namespace kvault
