#pragma once
// The plausibility bound's record (docs/adversarial.md, docs/reward.md). A speedup
// above the bound is re-checked (Verifier::RecheckImplausible, which adds a
// RecheckRecord to Verification::records); one still above it after the re-check in a
// fresh worker is kept as measured but not rewarded: the record says so
// (still_implausible, and `why`; stored as "speed_rewarded": false).
#include "engine/verification_records.h"

namespace kvault {

// True when `records` (Verification::records, or a stored record's, ReadCases) hold a
// re-check whose speedup stayed above the bound: the reward then has no speed term.
bool StillImplausible(const VerificationRecords& records);

}  // namespace kvault
