#pragma once
// The result of verifying one candidate against one task: an outcome value.
#include <optional>
#include <string>

#include "engine/outcome.h"
#include "engine/verification_records.h"
#include "util/json.h"

namespace kvault {

struct Verification {
  OutcomeStatus status = OutcomeStatus::kInfraError;
  bool compiled = false;
  bool correct = false;
  std::optional<double> speedup;       // Σ reference ms / Σ candidate ms over performance cases
  std::optional<double> reference_ms;  // Σ over performance cases (medians)
  std::optional<double> candidate_ms;
  std::optional<double> reward;        // null for task_error / infra_error
  std::string message;                 // one line: why this status
  std::string diagnostics;             // compiler output or traceback, bounded
  // The custom-kernel policy the attempt ran under ("any" | "fused" | "custom_kernel"; empty
  // when it ended before its task was described; docs/adversarial.md, "Policy").
  std::string policy;
  // What it found, in the order found: per case and seed the compared calls, per
  // performance case its timing, the re-check, stages run again alone
  // (engine/verification_records.h).
  VerificationRecords records;
  Json build = Json::object();         // toolchain, command, cache hit, seconds
  // The task's held-out cases: [{case, listed, why}] as describe gave them (one not
  // listed was not run; docs/adversarial.md, "Hard-coded shapes"). Empty before describe.
  Json held_out = Json::array();
  double seconds = 0;                  // wall time of the whole verification
  // Wall seconds per stage reached (docs/cli.md); set when the Verifier ends the
  // verification, unset for an outcome decided before it ran (a file that could not
  // be read as a candidate).
  std::optional<Phases> phases;

  // `--json`'s object; its `cases` are the store's (CasesJson).
  Json ToJson() const;
};

}  // namespace kvault
