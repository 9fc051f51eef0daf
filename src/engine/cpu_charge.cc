#include "engine/cpu_charge.h"

#include <algorithm>
#include <cmath>

#include "engine/timing_statistics.h"

namespace kvault {

std::optional<CpuCharge> ChargeOtherThreads(const CpuSeries& reference, const CpuSeries& candidate, int cores,
                                            double slack, int graph_calls, bool flush) {
  const size_t n = reference.others.size(), m = candidate.others.size();
  if (cores < 2 || graph_calls < 1 || n == 0 || m == 0 || reference.call_others.size() != n ||
      candidate.reported.size() != m || candidate.cold.size() != m)
    return std::nullopt;
  std::vector<double> overhead;
  for (size_t i = 0; i < n; ++i) overhead.push_back(std::max(0.0, reference.others[i] - reference.call_others[i]) / cores);
  CpuCharge c;
  c.cores = cores;
  c.reference_overhead_ms = Median(overhead);
  c.allowance_ms = 2 * 1.2533 * InterquartileRange(overhead) / 1.349 / std::sqrt(static_cast<double>(n));
  std::vector<double> primary_floor, primary_reported;
  for (size_t i = 0; i < m; ++i) {
    c.floors.push_back(std::max(0.0, candidate.others[i] / cores - c.reference_overhead_ms) / graph_calls);
    if (candidate.cold[i] == flush) {
      primary_floor.push_back(c.floors.back());
      primary_reported.push_back(candidate.reported[i] / graph_calls);
    }
  }
  if (primary_floor.empty()) return std::nullopt;
  c.candidate_reported_ms = Median(primary_reported);
  c.candidate_charged_ms = Median(primary_floor);
  c.applied = c.candidate_charged_ms >
              c.candidate_reported_ms * (1 + slack) + (c.allowance_ms + kCpuFloorMs) / graph_calls;
  return c;
}

}  // namespace kvault
