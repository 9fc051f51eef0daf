#pragma once
// Which speedup the plausibility bound is held against (docs/adversarial.md,
// "plausibility bound"; Verifier::RecheckImplausible).
//
// The kept speedup is conservative for the reward: the engine's clock may raise the
// candidate's samples above what its worker reported (docs/timing.md, "What the
// engine trusts"), never lower them. On a loaded host those floors can take an
// honest-looking 37x down to 4x, below a bound of 5, and the re-check that would have
// judged it never runs. For the bound the conservative side is the other one: the
// highest speedup the timing supports, the candidate's own reports included. A
// candidate gains nothing by under-reporting here: it only draws the re-check and
// loses the speed term sooner.
//
//   double judged = SpeedupAgainstBound(v, first_timing_record);
//   if (judged > bound) ...  // re-check, or still implausible
#include <cstddef>
#include <optional>

#include "engine/verification.h"

namespace kvault {

// Σ reference median / Σ the candidate's reported median over the timing records of
// `records` from index `from` on: per record `engine_clock->candidate_reported_ms`
// (the median the worker reported, before the engine's clock or bursts bounded it),
// else its candidate median. nullopt when there is no such record or the ratio is not
// finite.
std::optional<double> ReportedSpeedup(const VerificationRecords& records, size_t from = 0);

// The higher of v.speedup and ReportedSpeedup(v.records, from); 0 when v has no
// speedup (no speed term to judge).
double SpeedupAgainstBound(const Verification& v, size_t from = 0);

}  // namespace kvault
