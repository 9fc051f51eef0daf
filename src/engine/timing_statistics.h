#pragma once
// Statistics of timing samples and the adaptive stopping rule (docs/timing.md).
// The worker's python/kvault_worker/timing/stats.py implements the same
// definitions for in-process drivers; the golden vectors of
// tests/golden/timing_statistics.json hold both to the same numbers
// (timing_golden_test.cc, python/tests/test_golden.py).
//
//   StoppingRule rule = StoppingRule::From(settings);
//   while (rule.Decide({&ref_ms, &cand_ms}, elapsed_ms) == StopReason::kContinue) ...
//   SeriesSummary s = Summarize(ref_ms);   // median, IQR, count, relative noise
// Pure functions; thread-compatible.
#include <string_view>
#include <vector>

#include "engine/options.h"

namespace kvault {

// Linear interpolation between closest ranks (numpy's default).
// REQUIRES: !values.empty(), 0 <= q <= 1.
double Quantile(std::vector<double> values, double q);
double Median(const std::vector<double>& values);
double InterquartileRange(const std::vector<double>& values);
// Estimated standard error of the median over the median:
// sqrt(pi/2) * (IQR / 1.349) / sqrt(n) / median. Infinity for n < 2 or median <= 0.
double RelativeNoise(const std::vector<double>& values);

struct SeriesSummary {
  double median_ms = 0;
  double iqr_ms = 0;
  int samples = 0;
  double noise = 0;  // RelativeNoise
};
// REQUIRES: !values.empty()
SeriesSummary Summarize(const std::vector<double>& values);

enum class StopReason { kContinue, kSettled, kMaxSamples, kWallCap };
std::string_view ToString(StopReason r);  // "continue", "settled", "max_samples", "wall_cap"

struct StoppingRule {
  int min_samples = 10;
  int max_samples = 100;
  double min_ms = 20;
  double max_ms = 2000;
  double noise_target = 0.005;

  static StoppingRule From(const TimingSettings& s);
  // Every series below min_samples: continue. Then any series at max_samples, or
  // elapsed_ms >= max_ms: stop. Then stop (settled) once elapsed_ms >= min_ms and
  // every series' RelativeNoise <= noise_target.
  StopReason Decide(const std::vector<const std::vector<double>*>& series, double elapsed_ms) const;
};

}  // namespace kvault
