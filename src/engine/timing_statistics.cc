#include "engine/timing_statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kvault {

double Quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double pos = static_cast<double>(values.size() - 1) * q;
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

double Median(const std::vector<double>& values) { return Quantile(values, 0.5); }

double InterquartileRange(const std::vector<double>& values) {
  return Quantile(values, 0.75) - Quantile(values, 0.25);
}

double RelativeNoise(const std::vector<double>& values) {
  const double inf = std::numeric_limits<double>::infinity();
  if (values.size() < 2) return inf;
  const double median = Median(values);
  if (!(median > 0)) return inf;
  const double sigma = InterquartileRange(values) / 1.349;
  return std::sqrt(M_PI / 2) * sigma / std::sqrt(static_cast<double>(values.size())) / median;
}

SeriesSummary Summarize(const std::vector<double>& values) {
  return SeriesSummary{Median(values), InterquartileRange(values), static_cast<int>(values.size()),
                       RelativeNoise(values)};
}

std::string_view ToString(StopReason r) {
  switch (r) {
    case StopReason::kContinue: return "continue";
    case StopReason::kSettled: return "settled";
    case StopReason::kMaxSamples: return "max_samples";
    case StopReason::kWallCap: return "wall_cap";
  }
  return "?";
}

StoppingRule StoppingRule::From(const TimingSettings& s) {
  StoppingRule r;
  r.min_samples = std::max(1, s.min_samples);
  r.max_samples = std::max(r.min_samples, s.max_samples);
  r.min_ms = s.min_ms;
  r.max_ms = s.max_ms;
  r.noise_target = s.noise_target;
  return r;
}

StopReason StoppingRule::Decide(const std::vector<const std::vector<double>*>& series,
                                double elapsed_ms) const {
  size_t fewest = std::numeric_limits<size_t>::max(), most = 0;
  for (const auto* s : series) {
    fewest = std::min(fewest, s->size());
    most = std::max(most, s->size());
  }
  if (series.empty() || fewest < static_cast<size_t>(min_samples)) return StopReason::kContinue;
  if (most >= static_cast<size_t>(max_samples)) return StopReason::kMaxSamples;
  if (elapsed_ms >= max_ms) return StopReason::kWallCap;
  if (elapsed_ms < min_ms) return StopReason::kContinue;
  for (const auto* s : series)
    if (!(RelativeNoise(*s) <= noise_target)) return StopReason::kContinue;
  return StopReason::kSettled;
}

}  // namespace kvault
