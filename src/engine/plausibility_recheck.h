#pragma once
// The plausibility bound's record (docs/adversarial.md, docs/reward.md). A speedup
// above the bound is re-checked (Verifier::RecheckImplausible, which appends a
// {"kind": "recheck", ...} record to Verification::cases); one still above it after
// the re-check in a fresh worker is kept as measured but not rewarded: the record
// says so ("still_implausible": true, "speed_rewarded": false, "why": ...).
#include "util/json.h"

namespace kvault {

// True when `cases` (Verification::cases, or a stored record's) holds a re-check
// record whose speedup stayed above the bound: the reward then has no speed term.
bool StillImplausible(const Json& cases);

}  // namespace kvault
