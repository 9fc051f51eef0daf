#include "engine/speedup_bound.h"

#include <algorithm>
#include <cmath>

namespace kvault {
namespace {
// A finite, non-negative time, else nullopt.
std::optional<double> Milliseconds(std::optional<double> ms) {
  if (!ms || !std::isfinite(*ms) || *ms < 0) return std::nullopt;
  return ms;
}
std::optional<double> PrimaryMedian(const TimedSide& side) {
  return side.primary ? Milliseconds(side.primary->median_ms) : std::nullopt;
}
}  // namespace

std::optional<double> ReportedSpeedup(const VerificationRecords& records, size_t from) {
  double reference = 0, candidate = 0;
  bool any = false;
  for (const TimingRecord* t : Timings(records, from)) {
    std::optional<double> ref = PrimaryMedian(t->reference);
    std::optional<double> cand =
        t->engine_clock ? Milliseconds(t->engine_clock->candidate_reported_ms) : std::nullopt;
    if (!cand) cand = PrimaryMedian(t->candidate);
    if (!ref || !cand) return std::nullopt;  // a record without its medians: judge by the kept speedup
    reference += *ref;
    candidate += *cand;
    any = true;
  }
  if (!any || candidate <= 0 || !std::isfinite(reference / candidate)) return std::nullopt;
  return reference / candidate;
}

double SpeedupAgainstBound(const Verification& v, size_t from) {
  if (!v.speedup) return 0;
  const std::optional<double> reported = ReportedSpeedup(v.records, from);
  return reported ? std::max(*v.speedup, *reported) : *v.speedup;
}

}  // namespace kvault
