#pragma once
// The engine's verdict on outputs that share memory with inputs (check/aliasing.h,
// docs/adversarial.md): for any reply that carries the candidate's `output_aliases`
// (a correctness `run`, or wherever timed outputs are taken).
#include <functional>
#include <optional>
#include <string>

#include "engine/verification.h"
#include "engine/worker_outcome.h"
#include "util/json.h"
#include "util/result.h"

namespace kvault {

// Runs the reference once on the same inputs and returns its reply (which carries
// the reference's `output_aliases`), or its failure judged (worker_outcome.h).
using AliasReference = std::function<ReferenceReply()>;

// nullopt when the candidate's reply names no aliased output, or each one it names
// aliases an input in the reference's output too; `reference` is called only when
// the candidate's reply names one. Otherwise the outcome, its message prefixed by
// `where`: `mismatch` for an aliased output the reference does not have, `crash`
// for a malformed `output_aliases` (candidate code runs in that worker),
// the judged failure's status when the reference fails (`task_error` for the task's,
// `infra_error` for the engine's), `infra_error` when its reply is malformed.
std::optional<Verification> AliasingFailure(const Json& candidate_reply, const std::string& where,
                                            const AliasReference& reference);

}  // namespace kvault
